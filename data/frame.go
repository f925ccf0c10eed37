package data

import (
	"fmt"
	"math"
	"slices"

	"labelprivacy/internal/offheap"
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

	Label         []uint8   // raw 0/1 label; absent from privatized frames
	Eta           []float64 // true P(y=1|x), synthetic only
	BagID         []int64
	LabelRR       []uint8
	Alpha         []float64
	AlphaDebiased []float64
	Row           []int64   // dataset row of each release row (simulation releases only)
	Prior         []float64 // rr_prior: the public prior P(y=1|x) each row was released with
	Branch        []uint8   // rr_prior: 1 = the prior's argmax label was released, 0 = RR
	Stage         []uint8   // rr_prior: the stage (1 or 2) that released the row
	SoftTarget    []float64 // a float training target per row, derived from a release in memory

	// Meta is stored as the Arrow schema's key/value metadata.
	Meta map[string]string

	// mem owns arrays read outside the Go heap (package offheap: a large
	// file's features and indices), kept with every value that shares them.
	mem []*offheap.Block
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

// RawLabelColumns lists the raw-label columns the frame carries (label, eta).
// A privatized frame must return none.
func (f *Frame) RawLabelColumns() []string {
	var cols []string
	if f.Label != nil {
		cols = append(cols, ColLabel)
	}
	if f.Eta != nil {
		cols = append(cols, ColEta)
	}
	return cols
}

// Validate checks that column lengths agree and values are in range.
func (f *Frame) Validate() error {
	if f.Rows < 0 {
		return fmt.Errorf("%w: negative row count %d", ErrSchema, f.Rows)
	}
	for j, name := range f.Features {
		if columnNamed(name) != nil || name == ColIndices || slices.Contains(f.Features[:j], name) {
			return fmt.Errorf("%w: feature name %q is reserved or repeated", ErrSchema, name)
		}
	}
	for j, k := range f.Keys {
		if columnNamed(k.Name) != nil || k.Name == ColIndices || slices.Contains(f.Features, k.Name) ||
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
	for _, lab := range [][]uint8{f.Label, f.LabelRR, f.Branch} {
		for i, y := range lab {
			if y > 1 {
				return fmt.Errorf("%w: row %d has label %d", ErrLabel, i, y)
			}
		}
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
	x := f.FeaturesOnly().Slice(i, j)
	g := &Frame{Rows: x.Rows, Features: f.Features, X: x.X, Indices: x.Indices, Offsets: x.Offsets, Meta: f.Meta, mem: f.mem}
	for _, c := range rowColumns {
		c.slice(g, f, i, j)
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
	x := f.FeaturesOnly().Take(rows)
	g := &Frame{Rows: x.Rows, Features: f.Features, X: x.X, Indices: x.Indices, Offsets: x.Offsets, Meta: f.Meta}
	for _, c := range rowColumns {
		c.take(g, f, rows)
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

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
