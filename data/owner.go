package data

import (
	"fmt"
	"runtime"

	"labelprivacy/internal/offheap"
)

// Off-heap ownership (package offheap's rules, as this package applies
// them). A frame read from a file (ReadFrame, LoadWith, ReadFrameWithIDs)
// may hold its dense features, sparse indices and offsets outside the Go
// heap. That frame owns them: Close frees them, once every view is done
// (Dataset.Close closes a dataset's frames). Views share the memory and
// carry its owner record (Slice, FeaturesOnly, Features.Slice, a struct
// copy such as Standardizer.Apply's), which keeps it reachable while any
// view is; they never free it. Frames and Features made of raw slices
// (struct literals) carry nothing: checkMemory refuses one whose arrays lie
// in a mapped block, with a panic naming the rule (a programmer bug: make
// views with the methods here, or FrameOf). Functions here that read a
// view's arrays keep the view alive to their end. Take and Concat copy onto
// the heap: their results own nothing.

// mapped is the off-heap memory of a frame's arrays and the frame that
// owns it.
type mapped struct {
	blocks []*offheap.Block
	owner  *Frame
}

// blocksOf is m's blocks (none for nil).
func (m *mapped) blocksOf() []*offheap.Block {
	if m == nil {
		return nil
	}
	return m.blocks
}

// own returns f's memory record, making f its owner when it has none (a
// reader's new frame).
func (f *Frame) own() *mapped {
	if f.mem == nil {
		f.mem = &mapped{owner: f}
	}
	return f.mem
}

// Close frees the off-heap memory f owns (a frame read from a file) and
// drops f's dense features, sparse indices and offsets. Every view of f
// (Slice, FeaturesOnly, a copy) must be done with them first. Close of a
// view, of a frame that owns nothing, or a second Close does nothing but
// keep f alive until it returns.
func (f *Frame) Close() {
	if f == nil || f.mem == nil || f.mem.owner != f {
		runtime.KeepAlive(f)
		return
	}
	for _, b := range f.mem.blocks {
		b.Free()
	}
	f.mem.blocks, f.mem.owner = nil, nil
	f.X, f.Indices, f.Offsets = nil, nil, nil
}

// Close closes the dataset's frames (see Frame.Close).
func (d *Dataset) Close() {
	if d != nil {
		d.Train.Close()
		d.Test.Close()
	}
}

// checkMemory panics when one of f's mapped arrays lies outside the blocks
// f carries, or in a freed one (package offheap: Check): its owner may be
// collected, or be closed, while f is read.
func (f *Features) checkMemory() {
	if err := f.CheckMemory(); err != nil {
		panic(err)
	}
}

// CheckMemory reports, as an error, what checkMemory panics for: for the
// consumers of Features outside this package (the group trainer checks its
// inputs with it).
func (f *Features) CheckMemory() error {
	if f == nil {
		return nil
	}
	return checkArrays(f.X, f.Indices, f.Offsets, f.mem.blocksOf(), f.Rows)
}

func (f *Frame) checkMemory() {
	if err := checkArrays(f.X, f.Indices, f.Offsets, f.mem.blocksOf(), f.Rows); err != nil {
		panic(err)
	}
}

func checkArrays(x []float32, idx []uint32, off []int64, blocks []*offheap.Block, rows int) error {
	for _, err := range []error{offheap.Check(x, blocks), offheap.Check(idx, blocks), offheap.Check(off, blocks)} {
		if err != nil {
			return fmt.Errorf("data: features of %d rows: %w", rows, err)
		}
	}
	return nil
}

// FrameOf returns a frame holding x's dense and sparse features and no
// other column, sharing x's arrays (and their owner, whose view it is).
func FrameOf(x *Features) *Frame {
	x.checkMemory()
	return &Frame{Rows: x.Rows, Features: x.Names, X: x.X, Indices: x.Indices, Offsets: x.Offsets, mem: x.mem}
}

// Concat returns the rows of a, then those of b, copied onto the heap (a
// and b must have the same dense features and both or neither sparse
// indices).
func Concat(a, b *Features) (*Features, error) {
	if a.Dim() != b.Dim() || a.HasSparse() != b.HasSparse() {
		return nil, fmt.Errorf("%w: concatenating features of %d dense columns (sparse %v) and %d (sparse %v)", ErrSchema, a.Dim(), a.HasSparse(), b.Dim(), b.HasSparse())
	}
	a.checkMemory()
	b.checkMemory()
	f := &Features{Rows: a.Rows + b.Rows, Names: a.Names, X: make([]float32, 0, len(a.X)+len(b.X))}
	f.X = append(append(f.X, a.X...), b.X...)
	if a.Offsets != nil {
		f.Indices = append(append(make([]uint32, 0, len(a.Indices)+len(b.Indices)), a.Indices...), b.Indices...)
		f.Offsets = make([]int64, a.Rows+b.Rows+1)
		copy(f.Offsets, a.Offsets[:a.Rows+1])
		base := a.Offsets[a.Rows]
		for i := 1; i <= b.Rows; i++ {
			f.Offsets[a.Rows+i] = base + b.Offsets[i]
		}
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	return f, nil
}
