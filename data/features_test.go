package data

import (
	"reflect"
	"slices"
	"testing"
)

// Features must not be able to hold a label or a release column: that is
// what keeps a PET model's trainer (model.GroupConfig.Features) from raw
// labels. A new field fails this test, so whoever adds one decides, here,
// that it is not label-derived.
func TestFeaturesHoldNoLabel(t *testing.T) {
	// mem owns the off-heap memory of X, Indices and Offsets (never a
	// label column: those are made on the heap).
	want := []string{"Rows", "Names", "X", "Indices", "Offsets", "mem"}
	var got []string
	typ := reflect.TypeFor[Features]()
	for i := range typ.NumField() {
		got = append(got, typ.Field(i).Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("data.Features has fields %v, want exactly %v (features only: no label, eta, key or release column)", got, want)
	}
}

// FeaturesOnly shares the frame's arrays, and Slice and Take select the
// same feature rows as the frame's own.
func TestFeaturesOnly(t *testing.T) {
	f := fullFrame()
	if f.Label == nil || f.Offsets == nil || f.Rows < 5 || f.Dim() == 0 {
		t.Fatalf("fullFrame lacks a column this test needs: %d rows, dim %d", f.Rows, f.Dim())
	}
	x := f.FeaturesOnly()
	if x.Rows != f.Rows || x.Dim() != f.Dim() || !x.HasSparse() || &x.X[0] != &f.X[0] || &x.Offsets[0] != &f.Offsets[0] {
		t.Fatalf("FeaturesOnly does not share the frame's features: %+v", x)
	}
	// rowsAre checks g row by row against rows of f, computed here.
	rowsAre := func(name string, g *Features, rows []int) {
		t.Helper()
		d := f.Dim()
		if g.Rows != len(rows) || len(g.Offsets) != len(rows)+1 || g.Offsets[0] != 0 {
			t.Fatalf("%s: %d rows, offsets %v", name, g.Rows, g.Offsets)
		}
		for r, src := range rows {
			if !slices.Equal(g.X[r*d:(r+1)*d], f.X[src*d:(src+1)*d]) ||
				!slices.Equal(g.Indices[g.Offsets[r]:g.Offsets[r+1]], f.Indices[f.Offsets[src]:f.Offsets[src+1]]) {
				t.Errorf("%s: row %d is not row %d of the frame", name, r, src)
			}
		}
	}
	rowsAre("Slice(1, 4)", x.Slice(1, 4), []int{1, 2, 3})
	rowsAre("Take", x.Take([]int{4, 0, 2, 2}), []int{4, 0, 2, 2})
	if sl := f.Slice(1, 4); !slices.Equal(sl.X, x.Slice(1, 4).X) || sl.Label == nil {
		t.Errorf("Frame.Slice lost its features or its label column")
	}
}
