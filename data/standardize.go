package data

import (
	"fmt"
	"math"
	"runtime"
	"slices"
)

// Standardizer maps each dense feature x_j to (x_j − Mean_j)/Std_j. On Higgs-like
// heavy-tailed data, standardized inputs lifted the MLP's test AUC by about
// 0.05 (measured while the model was built; the notes are in git history, docs/work-notes/model.md before issue 41); the paper does not say whether it standardized. It is fitted on the
// training frame's dense features only — never labels, targets or the test
// set — so it reveals nothing about labels and is safe to record in run
// records (it marshals to JSON as is).
type Standardizer struct {
	Features []string  `json:"features,omitempty"` // names, in order; Apply checks them when set
	Mean     []float64 `json:"mean"`
	// Std is the population standard deviation (divisor n, as sklearn's
	// StandardScaler); 1 for a constant feature, which is then only centred.
	Std      []float64 `json:"std"`
	Constant []string  `json:"constant,omitempty"` // features whose deviation was 0
	Rows     int       `json:"rows"`               // training rows fitted
}

// FitStandardizer computes each dense feature's mean and standard deviation
// over f's rows in one streaming pass (Welford's update, numerically safe for
// features with a large offset, where E[x²]−E[x]² cancels catastrophically).
// A frame without dense features gives a Standardizer that changes nothing.
func FitStandardizer(f *Frame) (*Standardizer, error) {
	if f.Rows == 0 {
		return nil, fmt.Errorf("%w: no rows to standardize from", ErrEmpty)
	}
	d := f.Dim()
	if len(f.X) != f.Rows*d {
		return nil, fmt.Errorf("%w: dense features have %d values, want %d rows × %d", ErrSchema, len(f.X), f.Rows, d)
	}
	f.checkMemory()
	defer runtime.KeepAlive(f)
	w := newWelford(d)
	for i := range f.Rows {
		w.add(f.X[i*d : (i+1)*d])
	}
	s, j := w.standardizer(f.Features)
	if j >= 0 {
		return nil, nonFinite(f, j)
	}
	return s, nil
}

// welford accumulates each feature's mean and sum of squared deviations
// over rows added in order (Welford's update).
type welford struct {
	n        int
	mean, m2 []float64
}

func newWelford(d int) *welford { return &welford{mean: make([]float64, d), m2: make([]float64, d)} }

// add adds one row.
func (w *welford) add(row []float32) {
	w.n++
	inv := 1 / float64(w.n)
	for j, v := range row {
		x := float64(v)
		delta := x - w.mean[j]
		w.mean[j] += delta * inv
		w.m2[j] += delta * (x - w.mean[j])
	}
}

// standardizer is the Standardizer of the rows added, or the first
// feature whose mean or deviation is not finite (else −1).
func (w *welford) standardizer(names []string) (*Standardizer, int) {
	s := &Standardizer{Features: slices.Clone(names), Mean: w.mean, Std: w.m2, Rows: w.n}
	for j := range w.mean {
		if !finite(w.mean[j]) || !finite(w.m2[j]) {
			return nil, j
		}
		s.Std[j] = math.Sqrt(w.m2[j] / float64(w.n))
		if s.Std[j] == 0 {
			s.Std[j] = 1
			s.Constant = append(s.Constant, names[j])
		}
	}
	return s, -1
}

// nonFinite reports the first NaN or ±Inf value of feature j.
func nonFinite(f *Frame, j int) error {
	d := f.Dim()
	for i := range f.Rows {
		if v := float64(f.X[i*d+j]); !finite(v) {
			return fmt.Errorf("%w: row %d: feature %q is %v", ErrInvalid, i, f.Features[j], v)
		}
	}
	return fmt.Errorf("%w: feature %q overflows", ErrInvalid, f.Features[j])
}

// Apply returns a frame whose dense features are standardized (a new X) and
// whose other columns are f's, shared. f must have the fitted frame's dense
// width (and feature names, when the Standardizer records them).
func (s *Standardizer) Apply(f *Frame) (*Frame, error) {
	inv, err := s.check(f)
	if err != nil {
		return nil, err
	}
	defer runtime.KeepAlive(f)
	g := *f
	g.X = make([]float32, len(f.X))
	s.apply(g.X, f.X, inv)
	return &g, nil
}

// ApplyInPlace standardizes f's dense features in place: the values Apply
// would return, without a second copy of the features (a 10M-row Higgs
// frame holds 1.1 GB of them). Every frame or Features sharing f.X sees
// the change; on error f is unchanged.
func (s *Standardizer) ApplyInPlace(f *Frame) error {
	inv, err := s.check(f)
	if err != nil {
		return err
	}
	defer runtime.KeepAlive(f)
	s.apply(f.X, f.X, inv)
	return nil
}

// apply writes the standardized rows of src to dst (which may be src).
func (s *Standardizer) apply(dst, src []float32, inv []float64) {
	d := len(inv)
	if d == 0 {
		return
	}
	for i := range len(src) / d {
		row, out := src[i*d:(i+1)*d], dst[i*d:(i+1)*d]
		for j, v := range row {
			out[j] = float32((float64(v) - s.Mean[j]) * inv[j])
		}
	}
}

// check validates f against the Standardizer and returns 1/Std.
func (s *Standardizer) check(f *Frame) ([]float64, error) {
	f.checkMemory()
	d := f.Dim()
	switch {
	case len(s.Mean) != d || len(s.Std) != d:
		return nil, fmt.Errorf("%w: standardizer of %d features (%d deviations) applied to a frame of %d", ErrSchema, len(s.Mean), len(s.Std), d)
	case s.Features != nil && !slices.Equal(s.Features, f.Features):
		return nil, fmt.Errorf("%w: standardizer fitted on features %q, frame has %q", ErrSchema, s.Features, f.Features)
	case len(f.X) != f.Rows*d:
		return nil, fmt.Errorf("%w: dense features have %d values, want %d rows × %d", ErrSchema, len(f.X), f.Rows, d)
	}
	inv := make([]float64, d)
	for j, sd := range s.Std {
		if !(sd > 0) || math.IsInf(sd, 0) || !finite(s.Mean[j]) {
			return nil, fmt.Errorf("%w: feature %d has mean %v and deviation %v", ErrInvalid, j, s.Mean[j], sd)
		}
		inv[j] = 1 / sd
	}
	return inv, nil
}
