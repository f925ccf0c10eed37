package model

import (
	"fmt"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
)

// feeder assembles one step's data inputs for all replicas from their
// batches (row ids into the shared features, and targets).
type feeder struct {
	s       trainShape
	feat    *data.Features
	buckets int

	x      []float32 // feedHost: [R·B·D]
	ids    []int32   // feedResident: [R·B] row ids; sparse: [R·B·W] table rows (dense Adam) or slots of uniq (lazy)
	uniq   []int32   // feedSparseLazy: [R·U] table rows, padded with the replica's trash row
	mask   []float32 // sparse: [R·B·W]
	target []float32 // [R·T]
	slot   []int32   // lazy Adam: bucket → slot in the replica's uniq (−1: none)
	nUniq  []int     // lazy Adam: rows of each replica's uniq in use this step
}

// lazy reports whether the step updates only the touched embedding rows.
func (s trainShape) lazy() bool { return s.feed == feedSparseLazy || s.feed == feedSparseHost }

func newFeeder(s trainShape, feat *data.Features, buckets int) *feeder {
	f := &feeder{s: s, feat: feat, buckets: buckets, target: make([]float32, s.r*s.targets())}
	switch s.feed {
	case feedHost:
		f.x = make([]float32, s.r*s.b*s.d)
	case feedResident:
		f.ids = make([]int32, s.r*s.b)
	case feedSparseLazy, feedSparseDense, feedSparseHost:
		f.ids = make([]int32, s.r*s.b*s.w)
		f.mask = make([]float32, s.r*s.b*s.w)
		if s.lazy() {
			f.uniq = make([]int32, s.r*s.u)
			f.nUniq = make([]int, s.r)
			f.slot = make([]int32, buckets)
			for i := range f.slot {
				f.slot[i] = -1
			}
		}
		if s.feed == feedSparseHost {
			f.x = make([]float32, s.r*s.b*s.e)
		}
	}
	return f
}

// fill copies replica r's batch into the step's inputs.
func (f *feeder) fill(r int, b *data.Batch) error {
	s := f.s
	if b.Rows != s.b || len(b.RowIDs) != b.Rows {
		return fmt.Errorf("%w: batch of %d rows with %d row ids, want %d rows (every batch of a group has one shape: build sources with DropLast)",
			ErrInvalidData, b.Rows, len(b.RowIDs), s.b)
	}
	if b.BagSize != s.bag || b.Sized != s.sized || len(b.Target) != s.targets() || max(b.TargetWidth, 1) != s.targetWidth() {
		return fmt.Errorf("%w: batch with bag size %d and %d targets of width %d, want bag size %d and %d targets of width %d",
			ErrInvalidData, b.BagSize, len(b.Target), max(b.TargetWidth, 1), s.bag, s.targets(), s.targetWidth())
	}
	for _, id := range b.RowIDs {
		if id < 0 || int(id) >= f.feat.Rows {
			return fmt.Errorf("%w: row id %d outside the %d feature rows", ErrInvalidData, id, f.feat.Rows)
		}
	}
	copy(f.target[r*s.targets():], b.Target)
	switch s.feed {
	case feedHost:
		d := s.d
		x := f.x[r*s.b*d:]
		for i, id := range b.RowIDs {
			copy(x[i*d:(i+1)*d], f.feat.X[int(id)*d:(int(id)+1)*d])
		}
	case feedResident:
		copy(f.ids[r*s.b:], b.RowIDs)
	case feedSparseDense, feedSparseLazy, feedSparseHost:
		f.fillSparse(r, b.RowIDs)
	}
	return nil
}

// fillSparse writes replica r's padded index rows. Replica r's table rows
// are r·(Buckets+1) + bucket, its trash row r·(Buckets+1) + Buckets. With
// lazy Adam, uniq lists each touched row once (computed here, so duplicate
// buckets in a batch sum their gradients in the gather's VJP) and ids point
// into uniq.
func (f *feeder) fillSparse(r int, rows []int32) {
	s, feat := f.s, f.feat
	base := int32(r * (f.buckets + 1))
	trash := base + int32(f.buckets)
	ids, mask := f.ids[r*s.b*s.w:(r+1)*s.b*s.w], f.mask[r*s.b*s.w:(r+1)*s.b*s.w]
	lazy := s.lazy()
	var uniq []int32
	if lazy {
		uniq = f.uniq[r*s.u : (r+1)*s.u]
	}
	n := 0 // unique rows so far
	for i, row := range rows {
		idx := feat.Indices[feat.Offsets[row]:feat.Offsets[row+1]]
		out, om := ids[i*s.w:(i+1)*s.w], mask[i*s.w:(i+1)*s.w]
		for t := range out {
			if t >= len(idx) {
				out[t], om[t] = trash, 0
				if lazy {
					out[t] = int32(r * s.u) // slot 0: a valid row, masked out
				}
				continue
			}
			bucket := int32(idx[t])
			om[t] = 1
			if !lazy {
				out[t] = base + bucket
				continue
			}
			if f.slot[bucket] < 0 {
				f.slot[bucket] = int32(n)
				uniq[n] = base + bucket
				n++
			}
			out[t] = int32(r*s.u) + f.slot[bucket]
		}
	}
	if lazy {
		f.nUniq[r] = n
		for _, u := range uniq[:n] {
			f.slot[u-base] = -1
		}
		for j := n; j < len(uniq); j++ {
			uniq[j] = trash
		}
	}
}

// buffers uploads the step's data inputs and targets (in the training
// program's order, after the resident features when feed is resident).
func (f *feeder) buffers(be backends.Backend) ([]backends.Buffer, error) {
	s := f.s
	var bufs []backends.Buffer
	put := func(flat any, dims ...int) error {
		shape := f32(dims...)
		if _, ok := flat.([]int32); ok {
			shape = i32(dims...)
		}
		b, err := be.BufferFromFlatData(0, flat, shape)
		if err != nil {
			for _, b := range bufs {
				_ = be.BufferFinalize(b)
			}
			return err
		}
		bufs = append(bufs, b)
		return nil
	}
	var err error
	switch s.feed {
	case feedHost:
		err = put(f.x, s.r, s.b, s.d)
	case feedResident:
		err = put(f.ids, s.r*s.b)
	case feedSparseLazy:
		if err = put(f.uniq, s.r*s.u); err == nil {
			if err = put(f.ids, s.r, s.b, s.w); err == nil {
				err = put(f.mask, s.r, s.b, s.w)
			}
		}
	case feedSparseDense:
		if err = put(f.ids, s.r, s.b, s.w); err == nil {
			err = put(f.mask, s.r, s.b, s.w)
		}
	case feedSparseHost:
		err = put(f.x, s.r, s.b, s.e)
	}
	if err == nil {
		err = put(f.target, s.r, s.targets())
	}
	return bufs, err
}
