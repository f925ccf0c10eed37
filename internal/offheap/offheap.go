package offheap

import (
	"runtime"
	"sync"
	"unsafe"
)

// Threshold is the smallest allocation, in bytes, that Alloc maps outside
// the heap (16 MiB).
const Threshold = 16 << 20

// Block owns one mapped array.
type Block struct{ r *region }

// region is the mapping (a separate object: the cleanup must not keep the
// Block alive).
type region struct {
	once sync.Once
	mem  []byte
}

func (r *region) free() { r.once.Do(func() { unmap(r.mem); r.mem = nil }) }

// Free unmaps the array now; it must not be used afterwards. Free of a nil
// Block does nothing, and so does a second Free.
func (b *Block) Free() {
	if b != nil {
		b.r.free()
	}
}

// Elem is what Alloc allocates: element types without pointers.
type Elem interface {
	~float32 | ~float64 | ~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

// Alloc returns n zeroed elements. Arrays of Threshold bytes or more are
// mapped outside the heap and come with their Block (keep it reachable
// while using the array); smaller ones, and any where the system cannot
// map memory, are made on the heap, with a nil Block.
func Alloc[T Elem](n int) ([]T, *Block) {
	var z T
	size := uintptr(n) * unsafe.Sizeof(z)
	if n <= 0 || size < Threshold || size/unsafe.Sizeof(z) != uintptr(n) {
		return make([]T, n), nil
	}
	mem, err := mapAnon(int(size))
	if err != nil {
		return make([]T, n), nil
	}
	b := &Block{r: &region{mem: mem}}
	runtime.AddCleanup(b, func(r *region) { r.free() }, b.r)
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(mem))), n), b
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
