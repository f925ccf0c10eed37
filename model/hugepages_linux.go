package model

import (
	"syscall"
	"unsafe"
)

// adviseHugePages asks Linux to back v with transparent huge pages
// (madvise(MADV_HUGEPAGE) on the 2 MiB-aligned part of v). kdd_embed's host
// table is 300 MB read and written at ~11k random rows a step: with 4 KiB
// pages nearly every row access misses the TLB. Call it before v is first
// written (the kernel then faults huge pages in). Best effort: where THP is
// "never" or the call fails, nothing changes.
func adviseHugePages(v []float32) {
	const huge = 2 << 20
	if len(v)*4 < 2*huge {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(v))
	start := uintptr(p)
	end := start + uintptr(len(v))*4
	lo, hi := (start+huge-1)&^(huge-1), end&^(huge-1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, lo-start)), hi-lo) // a range inside v
	_ = syscall.Madvise(b, 14 /* MADV_HUGEPAGE */)
}
