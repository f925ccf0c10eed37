package data

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// Integer columns other than the label and release columns are read as
// keys (not features), round trip through Arrow and Parquet, follow Take
// and Slice, and a key may not reuse a reserved or feature name.
func TestKeyColumns(t *testing.T) {
	f := &Frame{Rows: 4, Features: []string{"x"}, X: []float32{1, 2, 3, 4}, Label: []uint8{0, 1, 1, 0},
		Keys: []KeyColumn{{"campaign", []int64{7, -3, 7, 1 << 40}}, {"site", []int64{0, 0, 1, 1}}}}
	dir := t.TempDir()
	for _, name := range []string{"f.arrow", "f.parquet"} {
		p := filepath.Join(dir, name)
		if name == "f.arrow" {
			if err := WriteFrame(p, f, nil); err != nil {
				t.Fatal(err)
			}
		} else {
			tab := &Table{Columns: []Column{{ColLabel, []int64{0, 1, 1, 0}}, {"x", []float64{1, 2, 3, 4}},
				{"campaign", []int64{7, -3, 7, 1 << 40}}, {"site", []int64{0, 0, 1, 1}}}}
			if err := tab.WriteParquet(p); err != nil {
				t.Fatal(err)
			}
		}
		g, err := ReadFrame(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.Keys, f.Keys) || !slices.Equal(g.Features, f.Features) {
			t.Fatalf("%s: keys %v features %v; want %v, %v", name, g.Keys, g.Features, f.Keys, f.Features)
		}
	}
	if got := f.Take([]int{3, 0}).Key("campaign"); !slices.Equal(got, []int64{1 << 40, 7}) {
		t.Errorf("Take: %v", got)
	}
	if got := f.Slice(1, 3).Key("site"); !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("Slice: %v", got)
	}
	if f.Key("nope") != nil {
		t.Error("absent key not nil")
	}
	for _, bad := range []string{ColBagID, "x", "site"} {
		g := *f
		g.Keys = []KeyColumn{{"site", []int64{0, 0, 0, 0}}, {bad, []int64{1, 2, 3, 4}}}
		if bad == "site" {
			g.Keys[1].Name = "site"
		}
		if err := g.Validate(); !errors.Is(err, ErrSchema) {
			t.Errorf("key named %q: %v", bad, err)
		}
	}
	g := *f
	g.Keys = []KeyColumn{{"campaign", []int64{1}}}
	if err := g.Validate(); !errors.Is(err, ErrSchema) {
		t.Errorf("short key column: %v", err)
	}
}

// Synth's `group` key is ⌊G·Φ(x0)⌋, and adding it changes no other column.
func TestSynthGroups(t *testing.T) {
	base := t.TempDir()
	var ds [2]*Dataset
	for i, g := range []int{0, 16} {
		out := filepath.Join(base, "g"+string(rune('a'+i)))
		m, err := Synth(context.Background(), SynthOptions{Kind: SynthLogistic, Rows: 2000, TestRows: 300, Features: 3, Seed: 9, Groups: g, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		if m.Groups != g {
			t.Fatalf("meta groups %d, want %d", m.Groups, g)
		}
		if ds[i], err = Load(out); err != nil {
			t.Fatal(err)
		}
	}
	if ds[0].Train.Keys != nil {
		t.Fatal("groups 0 wrote a key column")
	}
	for _, pair := range [][2]*Frame{{ds[0].Train, ds[1].Train}, {ds[0].Test, ds[1].Test}} {
		a, b := pair[0], pair[1]
		if !slices.Equal(a.X, b.X) || !slices.Equal(a.Label, b.Label) || !slices.Equal(a.Eta, b.Eta) {
			t.Fatal("the group column changed other columns")
		}
		keys := b.Key(SynthGroupColumn)
		if len(keys) != b.Rows {
			t.Fatalf("%d group keys for %d rows", len(keys), b.Rows)
		}
		for i, k := range keys {
			want := int64(16 * 0.5 * math.Erfc(-float64(b.X[i*3])/math.Sqrt2))
			if k != min(want, 15) || k < 0 {
				t.Fatalf("row %d: group %d, want %d", i, k, want)
			}
		}
	}
	counts := make([]int, 16)
	for _, k := range ds[1].Train.Key(SynthGroupColumn) {
		counts[k]++
	}
	// Equiprobable bins: 2000/16 = 125 ± √(125·15/16) ≈ 10.8 each; 6 SD.
	for g, c := range counts {
		if math.Abs(float64(c)-125) > 6*10.83 {
			t.Errorf("group %d has %d rows, want 125 ± 65", g, c)
		}
	}
}
