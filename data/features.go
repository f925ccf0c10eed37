package data

import "runtime"

// Features are the model inputs of a table's rows, dense features and
// sparse indices, and nothing else. The type has no field for a label, η,
// key or release column, so code handed Features (the group trainer, its
// predictions, the feature side of a batch source) cannot read a raw label:
// the rule "a PET model's trainer never sees raw labels" is a fact of the
// types, not a check. (*Frame).FeaturesOnly makes one sharing the frame's
// memory.
type Features struct {
	Rows  int
	Names []string  // dense feature names, in column order
	X     []float32 // Rows×len(Names), row-major

	// Sparse features in CSR form: row i holds Indices[Offsets[i]:Offsets[i+1]].
	Indices []uint32
	Offsets []int64 // len Rows+1 when Indices is present

	// mem is the off-heap memory of X, Indices and Offsets and its owner,
	// carried by every view (owner.go); nil on the heap.
	mem *mapped
}

// FeaturesOnly returns the frame's dense and sparse features, sharing its
// arrays; none of its other columns.
func (f *Frame) FeaturesOnly() *Features {
	f.checkMemory()
	return &Features{Rows: f.Rows, Names: f.Features, X: f.X, Indices: f.Indices, Offsets: f.Offsets, mem: f.mem}
}

// Dim is the number of dense features.
func (f *Features) Dim() int { return len(f.Names) }

// HasSparse reports whether the rows have sparse indices.
func (f *Features) HasSparse() bool { return f.Offsets != nil }

// Slice returns rows [i, j) sharing the underlying arrays (CSR offsets are
// rebased, so they are copied).
func (f *Features) Slice(i, j int) *Features {
	f.checkMemory()
	defer runtime.KeepAlive(f)
	d := f.Dim()
	g := &Features{Rows: j - i, Names: f.Names, X: f.X[i*d : j*d], mem: f.mem}
	if f.Offsets != nil {
		lo, hi := f.Offsets[i], f.Offsets[j]
		g.Indices = f.Indices[lo:hi]
		g.Offsets = make([]int64, j-i+1)
		for r := range g.Offsets {
			g.Offsets[r] = f.Offsets[i+r] - lo
		}
	}
	return g
}

// resize returns s with length n, reusing its array when it has room (the
// contents are to be overwritten).
func resize[T any](s []T, n int) []T {
	if s != nil && cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}

// Take returns new features holding the given rows in the given order
// (copied onto the heap: they own nothing).
func (f *Features) Take(rows []int) *Features { return f.TakeInto(nil, rows) }

// TakeInto is Take into dst's arrays when they have room (dst, which owns
// nothing, a Take's or TakeInto's result, is overwritten and returned; nil:
// new ones): a loop over ranges of rows allocates once.
func (f *Features) TakeInto(dst *Features, rows []int) *Features {
	f.checkMemory()
	defer runtime.KeepAlive(f)
	if dst == nil {
		dst = &Features{}
	} else if dst.mem != nil {
		panic("data: TakeInto over features that share a frame's memory")
	}
	d := f.Dim()
	x, idx, off := dst.X, dst.Indices, dst.Offsets
	g := dst
	*g = Features{Rows: len(rows), Names: f.Names, X: resize(x, len(rows)*d)}
	for r, src := range rows {
		copy(g.X[r*d:(r+1)*d], f.X[src*d:(src+1)*d])
	}
	if f.Offsets != nil {
		g.Offsets = resize(off, len(rows)+1)
		g.Offsets[0] = 0
		n := int64(0)
		for _, src := range rows {
			n += f.Offsets[src+1] - f.Offsets[src]
		}
		g.Indices = resize(idx, int(n))[:0] // their final size: no growth by doubling
		for r, src := range rows {
			g.Indices = append(g.Indices, f.Indices[f.Offsets[src]:f.Offsets[src+1]]...)
			g.Offsets[r+1] = int64(len(g.Indices))
		}
	}
	return g
}
