package data

import (
	"fmt"
	"math"
	"runtime"
	"slices"
)

// Frame is an in-memory, column-oriented table: the unit the importers write,
// the privatize stage transforms, and the batch source reads. Nil slices are
// absent columns. Dense features are stored row-major (X[i*D+j], D =
// len(Features)) because batches gather whole rows.
type Frame struct {
	Rows     int
	Features []string  // dense feature names, in column order
	X        []float32 // Rows×len(Features), row-major

	// Sparse features in CSR form: row i holds Indices[Offsets[i]:Offsets[i+1]].
	Indices []uint32
	Offsets []int64 // len Rows+1 when Indices is present

	// Keys are the integer columns that are neither a label nor a release
	// column (e.g. a campaign id), in file order: the groups of LLP bags
	// curated by key (llp.Keyed). They are not model features.
	Keys []KeyColumn

	// Classes is the number of label classes C: 0 (or 2) for binary
	// labels, 3..MaxClasses otherwise (classes.go). It decides which
	// columns the frame may hold: the scalar binary columns at C = 2, the
	// per-class ones (…C fields) at C ≥ 3.
	Classes int

	Label         []uint8   // raw label, a class 0..C−1 (0/1 binary); absent from privatized frames
	Eta           []float64 // true P(y=1|x), synthetic only (binary)
	BagID         []int64
	LabelRR       []uint8   // released class (rr, rr_prior, ara_event), 0..C−1; C: none (ara_event, with ARAState)
	Alpha         []float64 // binary: the bag's released proportion of label 1
	AlphaDebiased []float64 // binary: its debiased value (llp_geom)
	Row           []int64   // dataset row of each release row (simulation releases only)
	Prior         []float64 // rr_prior (binary): the public prior P(y=1|x) each row was released with
	Branch        []uint8   // rr_prior (binary): 1 = the prior's argmax label was released, 0 = RR
	Stage         []uint8   // rr_prior: the stage (1 or 2) that released the row
	SoftTarget    []float64 // binary: a float training target per row, derived from a release in memory
	// ARAState is ara_event's released state (ColARAState); with it,
	// LabelRR is its projection: the state when below C, else C (no class).
	ARAState []uint64

	// Conversion values (values.go): the raw value (column label, float64;
	// a frame holds Label or Value, not both), the synthetic law's p0, mu
	// and sigma (raw), and the releases' value_rr and bag_mean.
	Value   []float64
	P0      []float64
	Mu      []float64
	Sigma   []float64
	ValueRR []float64
	BagMean []float64

	// Per-class columns (C ≥ 3 only), row-major: C values a row (C−1 for
	// the alphas, classes 1..C−1 at 0..C−2).
	EtaC           []float64 // eta_c: true η_c(x) = P(y=c|x), synthetic only (raw)
	AlphaC         []float64 // alpha_c, c ≥ 1: the bag's released proportion of class c (LLP family)
	AlphaDebiasedC []float64 // alpha_debiased_c, c ≥ 1: its debiased value (llp_geom)
	PriorC         []float64 // prior_c: rr_prior's public prior over the classes
	SoftTargetC    []float64 // soft_target_c: a per-row soft target vector, derived from a release in memory
	PriorSet       []uint64  // prior_set: rr_prior's set of classes, bit c set ⇔ class c in it
	PriorSetSize   []uint8   // prior_set_size: its size k (1..C)

	// Meta is stored as the Arrow schema's key/value metadata.
	Meta map[string]string

	// mem is the off-heap memory of X, Indices and Offsets (a large file's;
	// nil on the heap) and the frame that owns it, carried by every view
	// (owner.go).
	mem *mapped
}

// KeyColumn is one integer key column of a Frame.
type KeyColumn struct {
	Name   string
	Values []int64 // one per row
}

// Key returns the values of the key column called name (nil if absent).
func (f *Frame) Key(name string) []int64 {
	for _, k := range f.Keys {
		if k.Name == name {
			return k.Values
		}
	}
	return nil
}

// Dim is the number of dense features.
func (f *Frame) Dim() int { return len(f.Features) }

// HasSparse reports whether the frame has the sparse `indices` column.
func (f *Frame) HasSparse() bool { return f.Offsets != nil }

// RawLabelColumns lists the raw-label columns the frame carries (label,
// eta, eta_0 … eta_{C−1}). A privatized frame must return none.
func (f *Frame) RawLabelColumns() []string {
	var cols []string
	if f.Label != nil || f.Value != nil {
		cols = append(cols, ColLabel)
	}
	if f.Eta != nil {
		cols = append(cols, ColEta)
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{ColP0, f.P0}, {ColMu, f.Mu}, {ColSigma, f.Sigma}} {
		if c.v != nil {
			cols = append(cols, c.name)
		}
	}
	for _, v := range classVecs {
		if v.raw && v.present(f) {
			for j := range v.width(f.NumClasses()) {
				cols = append(cols, v.name(j))
			}
		}
	}
	return cols
}

// Validate checks that column lengths agree and values are in range.
func (f *Frame) Validate() error {
	defer runtime.KeepAlive(f)
	if f.Rows < 0 {
		return fmt.Errorf("%w: negative row count %d", ErrSchema, f.Rows)
	}
	for j, name := range f.Features {
		if reservedName(name) || slices.Contains(f.Features[:j], name) {
			return fmt.Errorf("%w: feature name %q is reserved or repeated", ErrSchema, name)
		}
	}
	for j, k := range f.Keys {
		if reservedName(k.Name) || slices.Contains(f.Features, k.Name) ||
			slices.ContainsFunc(f.Keys[:j], func(o KeyColumn) bool { return o.Name == k.Name }) {
			return fmt.Errorf("%w: key column name %q is reserved or repeated", ErrSchema, k.Name)
		}
		if len(k.Values) != f.Rows {
			return fmt.Errorf("%w: key column %s has %d rows, want %d", ErrSchema, k.Name, len(k.Values), f.Rows)
		}
	}
	if len(f.X) != f.Rows*f.Dim() {
		return fmt.Errorf("%w: dense features have %d values, want %d rows × %d", ErrSchema, len(f.X), f.Rows, f.Dim())
	}
	if f.Offsets != nil {
		if len(f.Offsets) != f.Rows+1 || f.Offsets[0] != 0 || f.Offsets[f.Rows] != int64(len(f.Indices)) {
			return fmt.Errorf("%w: %s offsets inconsistent", ErrSchema, ColIndices)
		}
		for i := range f.Rows {
			if f.Offsets[i+1] < f.Offsets[i] {
				return fmt.Errorf("%w: %s offsets decrease at row %d", ErrSchema, ColIndices, i)
			}
		}
	}
	for _, c := range rowColumns {
		if c.present(f) && c.length(f) != f.Rows {
			return fmt.Errorf("%w: column %s has %d rows, want %d", ErrSchema, c.name(), c.length(f), f.Rows)
		}
	}
	if err := f.validateClasses(); err != nil {
		return err
	}
	if err := f.validateValues(); err != nil {
		return err
	}
	for i, e := range f.Eta {
		if !(e >= 0 && e <= 1) {
			return fmt.Errorf("%w: row %d has %s=%v outside [0,1]", ErrInvalid, i, ColEta, e)
		}
	}
	for i, e := range f.Prior {
		if !(e >= 0 && e <= 1) {
			return fmt.Errorf("%w: row %d has %s=%v outside [0,1]", ErrInvalid, i, ColPrior, e)
		}
	}
	for i, s := range f.Stage {
		if s != 1 && s != 2 {
			return fmt.Errorf("%w: row %d has %s=%d, want 1 or 2", ErrInvalid, i, ColStage, s)
		}
	}
	return nil
}

// Slice returns rows [i, j) sharing the underlying arrays (CSR offsets are
// rebased, so they are copied).
func (f *Frame) Slice(i, j int) *Frame {
	defer runtime.KeepAlive(f)
	x := f.FeaturesOnly().Slice(i, j)
	g := &Frame{Rows: x.Rows, Features: f.Features, X: x.X, Indices: x.Indices, Offsets: x.Offsets, Meta: f.Meta, mem: f.mem, Classes: f.Classes}
	for _, c := range rowColumns {
		c.slice(g, f, i, j)
	}
	for _, v := range classVecs {
		w := v.width(f.NumClasses())
		*v.field(g) = sub(*v.field(f), i*w, j*w)
	}
	for _, k := range f.Keys {
		g.Keys = append(g.Keys, KeyColumn{Name: k.Name, Values: k.Values[i:j]})
	}
	return g
}

func sub[T any](s []T, i, j int) []T {
	if s == nil {
		return nil
	}
	return s[i:j]
}

// Take returns a new frame with the given rows in the given order (features
// and every present column copied). Used to drop rows, e.g. an LLP remainder.
func (f *Frame) Take(rows []int) *Frame {
	defer runtime.KeepAlive(f)
	x := f.FeaturesOnly().Take(rows)
	g := &Frame{Rows: x.Rows, Features: f.Features, X: x.X, Indices: x.Indices, Offsets: x.Offsets, Meta: f.Meta, Classes: f.Classes}
	for _, c := range rowColumns {
		c.take(g, f, rows)
	}
	for _, v := range classVecs {
		*v.field(g) = takeRows(*v.field(f), v.width(f.NumClasses()), rows)
	}
	for _, k := range f.Keys {
		g.Keys = append(g.Keys, KeyColumn{Name: k.Name, Values: take(k.Values, rows)})
	}
	return g
}

func take[T any](s []T, rows []int) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(rows))
	for r, src := range rows {
		out[r] = s[src]
	}
	return out
}

// takeRows is take for w values a row.
func takeRows[T any](s []T, w int, rows []int) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(rows)*w)
	for r, src := range rows {
		copy(out[r*w:(r+1)*w], s[src*w:(src+1)*w])
	}
	return out
}

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
