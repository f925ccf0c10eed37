package offheap

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Threshold is the smallest allocation, in bytes, that Alloc maps outside
// the heap (16 MiB), unless debugging (DebugThreshold).
const Threshold = 16 << 20

// DebugThreshold is Threshold under LABELPRIVACY_OFFHEAP=debug (64 KiB:
// small enough that test data is mapped, large enough that a test suite's
// poisoned ranges stay far below the kernel's limit on mappings).
const DebugThreshold = 64 << 10

// EnvDebug is the environment variable that turns debugging on ("debug").
const EnvDebug = "LABELPRIVACY_OFFHEAP"

// settings reads EnvDebug once, on first use (not in init: go test then
// records the variable, and a cached result of another setting is not
// reused).
var settings = sync.OnceValues(func() (debugging bool, threshold uintptr) {
	if os.Getenv(EnvDebug) == "debug" {
		return true, DebugThreshold
	}
	return false, Threshold
})

// Debugging reports whether LABELPRIVACY_OFFHEAP=debug is set.
func Debugging() bool { d, _ := settings(); return d }

// Block owns one mapped array.
type Block struct{ r *region }

// state of a region.
type state uint8

const (
	live     state = iota
	poisoned       // inaccessible, its range reserved for good
)

// region is the mapping (a separate object: the cleanup must not keep the
// Block alive).
type region struct {
	mem   []byte
	base  uintptr
	size  uintptr
	state state
	freed bool // by Free (else by the collector)
}

// The registry of mapped ranges, live and poisoned, sorted by base: what
// Check consults.
var (
	mu      sync.Mutex
	regions []*region
	dropped int // Blocks collected without Free
)

func register(r *region) {
	mu.Lock()
	defer mu.Unlock()
	i, _ := slices.BinarySearchFunc(regions, r.base, func(x *region, b uintptr) int { return cmpUintptr(x.base, b) })
	regions = slices.Insert(regions, i, r)
}

func cmpUintptr(a, b uintptr) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// find returns the region holding address p, or nil. mu must be held.
func find(p uintptr) *region {
	i, ok := slices.BinarySearchFunc(regions, p, func(x *region, b uintptr) int { return cmpUintptr(x.base, b) })
	if ok {
		return regions[i]
	}
	if i == 0 {
		return nil
	}
	if r := regions[i-1]; p < r.base+r.size {
		return r
	}
	return nil
}

// release ends r: byFree is true for the owner's Free, false for the
// collector's cleanup. Free unmaps (unless debugging); the cleanup, and
// Free while debugging, poison.
func (r *region) release(byFree bool) {
	mu.Lock()
	defer mu.Unlock()
	if r.mem == nil || r.state == poisoned {
		return
	}
	if !byFree {
		dropped++
	}
	r.freed = byFree
	if byFree && !Debugging() {
		unmap(r.mem)
		if i := slices.Index(regions, r); i >= 0 {
			regions = slices.Delete(regions, i, i+1)
		}
		r.mem = nil
		return
	}
	dropPages(r.mem)
	if err := protectNone(r.mem); err != nil {
		// Not poisonable here: keep the pages mapped rather than let the
		// range be reused under a stale slice.
		return
	}
	r.state = poisoned
}

// Free ends the array: it must not be used afterwards (see the package
// doc: only the owner frees, after every reader is done). Free of a nil
// Block does nothing, and so does a second Free.
func (b *Block) Free() {
	if b != nil {
		b.r.release(true)
	}
}

// Elem is what Alloc allocates: element types without pointers.
type Elem interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Alloc returns n zeroed elements. Arrays of Threshold bytes or more are
// mapped outside the heap and come with their Block, which the caller owns
// (package doc); smaller ones, and any where the system cannot map memory,
// are made on the heap, with a nil Block.
func Alloc[T Elem](n int) ([]T, *Block) {
	var z T
	size := uintptr(n) * unsafe.Sizeof(z)
	if _, threshold := settings(); n <= 0 || size < threshold || size/unsafe.Sizeof(z) != uintptr(n) {
		return make([]T, n), nil
	}
	mem, err := mapAnon(int(size))
	if err != nil {
		return make([]T, n), nil
	}
	r := &region{mem: mem, base: uintptr(unsafe.Pointer(unsafe.SliceData(mem))), size: uintptr(len(mem))}
	register(r)
	b := &Block{r: r}
	runtime.AddCleanup(b, func(r *region) { r.release(false) }, r)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n), b
}

// Check reports whether the array s may be read by a value carrying the
// Blocks owned: nil when s lies in no mapped array (the heap, a file's
// mapping) or inside a live one of owned; an error saying which rule it
// breaks otherwise (s lies in a mapped array that was freed, or that the
// value does not carry: its owner may be collected while it reads).
func Check[T Elem](s []T, owned []*Block) error {
	if cap(s) == 0 {
		return nil
	}
	var z T
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	n := uintptr(cap(s)) * unsafe.Sizeof(z)
	mu.Lock()
	r := find(p)
	var st state
	var byFree bool
	if r != nil {
		st, byFree = r.state, r.freed
	}
	mu.Unlock()
	if r == nil {
		return nil
	}
	if st == poisoned {
		how := "was freed"
		if !byFree {
			how = "was collected without Free while a slice into it lived on"
		}
		return fmt.Errorf("offheap: an array of %d bytes at %#x is used after its block %s", n, p, how)
	}
	for _, b := range owned {
		if b != nil && b.r == r {
			if p+n > r.base+r.size {
				return fmt.Errorf("offheap: an array of %d bytes at %#x runs past its block's %d bytes", n, p, r.size)
			}
			return nil
		}
	}
	return fmt.Errorf("offheap: an array of %d bytes at %#x lies in a mapped block the value does not carry "+
		"(a view made of raw slices, without its owner: make views with the owner's methods)", n, p)
}

// Stats are the package's counts, for tests and leak checks.
type Stats struct {
	Live     int   // mapped arrays neither freed nor collected
	LiveSize int64 // their bytes
	Poisoned int   // ranges kept inaccessible
	Dropped  int   // Blocks collected without Free (a missing Free: their memory went back, their range stays reserved)
}

// ReadStats returns the counts now.
func ReadStats() Stats {
	mu.Lock()
	defer mu.Unlock()
	var s Stats
	for _, r := range regions {
		if r.state == poisoned {
			s.Poisoned++
		} else {
			s.Live++
			s.LiveSize += int64(r.size)
		}
	}
	s.Dropped = dropped
	return s
}

// DropPages gives the whole pages inside a mapped array's part s back to
// the system (their contents become zeros): for a part of an array that is
// no longer needed, before the array itself can be freed. s must lie in an
// array Alloc mapped; on a heap array it does nothing useful and is not
// called for one (b nil).
func (b *Block) DropPages(s []byte) {
	if b == nil || len(s) == 0 {
		return
	}
	const page = 4096
	p := unsafe.Pointer(unsafe.SliceData(s))
	start := uintptr(p)
	lo, hi := (start+page-1)&^(page-1), (start+uintptr(len(s)))&^(page-1)
	if hi <= lo {
		return
	}
	dropPages(unsafe.Slice((*byte)(unsafe.Add(p, lo-start)), hi-lo)) // whole pages inside s
}

// Bytes views a slice of Elem as bytes (for DropPages).
func Bytes[T Elem](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
}
