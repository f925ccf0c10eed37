package model

import (
	"fmt"
	"io"
	"math/rand/v2"
)

// SliceSource is an in-memory BatchSource over whole arrays, for tests,
// benchmarks and small data. Fill the exported fields, then call Reset
// (or just Next) to start the first epoch. The arrays are not copied.
//
// Without Shuffle, batches are consecutive BatchRows rows and alias the
// arrays (callers must not modify them). With Shuffle, each Reset draws a
// fresh permutation of the units (rows, or whole bags when BagSize > 0) from a
// PCG source seeded by (Seed, epoch number), so runs are reproducible and bags
// stay whole.
type SliceSource struct {
	X   []float32 // Rows×Dim, or nil
	Dim int

	Indices   []int32 // Rows×Width, or nil
	IndexMask []float32
	Width     int

	// Target: one per row (BagSize 0) or one per bag (BagSize k, Rows/k bags).
	Target  []float32
	BagSize int

	// BatchRows is the rows per batch; it must be a multiple of BagSize. The
	// last batch of an epoch may be smaller.
	BatchRows int

	Shuffle bool
	Seed    uint64

	rows    int
	order   []int // unit order of the current epoch (nil: identity)
	pos     int   // next unit
	epoch   uint64
	started bool
}

var _ BatchSource = (*SliceSource)(nil)

func (s *SliceSource) unitRows() int { return max(s.BagSize, 1) }

func (s *SliceSource) validate() error {
	switch {
	case s.X != nil && s.Dim > 0:
		s.rows = len(s.X) / s.Dim
		if len(s.X) != s.rows*s.Dim {
			return fmt.Errorf("model: SliceSource: len(X)=%d is not a multiple of Dim=%d", len(s.X), s.Dim)
		}
	case s.Indices != nil && s.Width > 0:
		s.rows = len(s.Indices) / s.Width
	default:
		return fmt.Errorf("model: SliceSource needs X with Dim > 0 or Indices with Width > 0")
	}
	if s.Indices != nil {
		if s.Width <= 0 || len(s.Indices) != s.rows*s.Width || len(s.IndexMask) != len(s.Indices) {
			return fmt.Errorf("model: SliceSource: Indices/IndexMask need %d×%d entries, got %d/%d",
				s.rows, s.Width, len(s.Indices), len(s.IndexMask))
		}
	}
	u := s.unitRows()
	if s.BagSize < 0 || s.rows%u != 0 {
		return fmt.Errorf("model: SliceSource: %d rows are not whole bags of %d", s.rows, s.BagSize)
	}
	if len(s.Target) != s.rows/u {
		return fmt.Errorf("model: SliceSource: want %d targets, got %d", s.rows/u, len(s.Target))
	}
	if s.BatchRows <= 0 || s.BatchRows%u != 0 {
		return fmt.Errorf("model: SliceSource: BatchRows=%d must be a positive multiple of the bag size %d", s.BatchRows, u)
	}
	return nil
}

// Reset starts the next epoch.
func (s *SliceSource) Reset() error {
	if err := s.validate(); err != nil {
		return err
	}
	if s.started {
		s.epoch++
	}
	s.started = true
	s.pos = 0
	s.order = nil
	if s.Shuffle {
		units := s.rows / s.unitRows()
		r := rand.New(rand.NewPCG(s.Seed, s.epoch))
		s.order = r.Perm(units)
	}
	return nil
}

// Rows is the number of rows of one epoch.
func (s *SliceSource) Rows() int {
	if s.rows == 0 {
		_ = s.validate()
	}
	return s.rows
}

// Next returns the next batch, or io.EOF at the end of the epoch.
func (s *SliceSource) Next() (*Batch, error) {
	if !s.started {
		if err := s.Reset(); err != nil {
			return nil, err
		}
	}
	u := s.unitRows()
	units := s.rows / u
	if s.pos >= units {
		return nil, io.EOF
	}
	n := min(s.BatchRows/u, units-s.pos)
	b := &Batch{Rows: n * u, Dim: s.Dim, Width: s.Width, BagSize: s.BagSize}
	if s.X == nil {
		b.Dim = 0
	}
	if s.Indices == nil {
		b.Width = 0
	}
	if s.order == nil {
		r0, r1 := s.pos*u, (s.pos+n)*u
		if s.X != nil {
			b.X = s.X[r0*s.Dim : r1*s.Dim]
		}
		if s.Indices != nil {
			b.Indices = s.Indices[r0*s.Width : r1*s.Width]
			b.IndexMask = s.IndexMask[r0*s.Width : r1*s.Width]
		}
		b.Target = s.Target[s.pos : s.pos+n]
	} else {
		if s.X != nil {
			b.X = make([]float32, 0, b.Rows*s.Dim)
		}
		if s.Indices != nil {
			b.Indices = make([]int32, 0, b.Rows*s.Width)
			b.IndexMask = make([]float32, 0, b.Rows*s.Width)
		}
		b.Target = make([]float32, 0, n)
		for _, unit := range s.order[s.pos : s.pos+n] {
			r0, r1 := unit*u, (unit+1)*u
			if s.X != nil {
				b.X = append(b.X, s.X[r0*s.Dim:r1*s.Dim]...)
			}
			if s.Indices != nil {
				b.Indices = append(b.Indices, s.Indices[r0*s.Width:r1*s.Width]...)
				b.IndexMask = append(b.IndexMask, s.IndexMask[r0*s.Width:r1*s.Width]...)
			}
			b.Target = append(b.Target, s.Target[unit])
		}
	}
	s.pos += n
	return b, nil
}
