package data

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"labelprivacy/pets"
)

// data's grid is pets': the same points, snapping, checks and law
// (ValuePMF is pets.ZeroInflatedLogNormal) on grids of several steps.
func TestValueGridIsPets(t *testing.T) {
	for _, g := range []struct{ max, step float64 }{{400, 1}, {10, 0.5}, {1, 0.1}, {7, 7}, {10, 3}, {0, 1}, {5, 0}} {
		d, p := ValueGrid{Max: g.max, Step: g.step}, pets.Grid{Max: g.max, Step: g.step}
		if (d.Check() == nil) != (p.Check() == nil) {
			t.Fatalf("%v: data says %v, pets %v", g, d.Check(), p.Check())
		}
		if d.Check() != nil {
			continue
		}
		if d.Points() != p.Points() {
			t.Fatalf("%v: %d and %d points", g, d.Points(), p.Points())
		}
		for i := range d.Points() {
			if d.Value(i) != p.Value(i) {
				t.Fatalf("%v: point %d is %v and %v", g, i, d.Value(i), p.Value(i))
			}
		}
		for _, v := range []float64{0, 0.04, 0.05, 0.25, 0.5, 1.49, 1.5, 2.999, g.max - 0.5*g.step, g.max, g.max + 3} {
			s, c, r := d.Snap(v)
			i, pc, pr := p.Snap(v)
			if s != p.Value(i) || c != pc || r != pr || !d.OnGrid(s) {
				t.Fatalf("%v: Snap(%v) = %v %v %v, pets %v %v %v", g, v, s, c, r, p.Value(i), pc, pr)
			}
		}
		a, b := make([]float64, d.Points()), pets.ZeroInflatedLogNormal(p, 0.7, math.Log(2), 0.9)
		ValuePMF(d, 0.7, math.Log(2), 0.9, a)
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-15 {
				t.Fatalf("%v: point %d has mass %v and %v", g, i, a[i], b[i])
			}
		}
	}
}

// synth --kind values: meta.json has the kind, the grid and the law; the
// values are on the grid, their share of zeros near the one asked for,
// and the drawn values follow each row's law (the frequencies of 0, of 1–9,
// 10–99, 100–399 and 400 over the rows within 6 SE of the mean of their
// laws' masses: a false failure below 2e-9 each).
func TestSynthValues(t *testing.T) {
	out := filepath.Join(t.TempDir(), "v")
	m, err := Synth(context.Background(), SynthOptions{Kind: SynthValues, Rows: 30_000, TestRows: 2_000, Features: 6, Seed: 4, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if m.LabelKind() != LabelsValues || m.ValueMax != 400 || m.ValueStep != 1 || len(m.ValuePrior) != 401 || m.BayesMSE == nil {
		t.Fatalf("meta %+v", m)
	}
	if z := *m.ValueZeroRate; math.Abs(z-DefaultZeroRate) > 0.01 {
		t.Errorf("zero rate %v, asked %v", z, DefaultZeroRate)
	}
	f, err := ReadFrame(filepath.Join(out, TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	if f.Value == nil || f.Label != nil || f.P0 == nil || f.Mu == nil || f.Sigma == nil {
		t.Fatalf("columns: value %v label %v p0 %v", f.Value != nil, f.Label != nil, f.P0 != nil)
	}
	g := m.ValueGrid()
	if err := f.CheckValues(g); err != nil {
		t.Fatal(err)
	}
	if cols := f.RawLabelColumns(); len(cols) != 4 {
		t.Errorf("raw label columns %v", cols)
	}
	edges := []int{0, 1, 10, 100, 400, 401}
	var got, want, v [5]float64
	pmf := make([]float64, g.Points())
	for i := range f.Rows {
		ValuePMF(g, f.P0[i], f.Mu[i], f.Sigma[i], pmf)
		for b := range 5 {
			var mass float64
			for j := edges[b]; j < edges[b+1]; j++ {
				mass += pmf[j]
			}
			want[b] += mass
			v[b] += mass * (1 - mass)
			if y := int(f.Value[i]); y >= edges[b] && y < edges[b+1] {
				got[b]++
			}
		}
	}
	for b := range 5 {
		if math.Abs(got[b]-want[b]) > 6*math.Sqrt(v[b]) {
			t.Errorf("values in [%d, %d): %v, their laws say %v (SD %v)", edges[b], edges[b+1], got[b], want[b], math.Sqrt(v[b]))
		}
	}
	for _, bad := range []SynthOptions{
		{Kind: SynthValues, Rows: 10, TestRows: 10, Features: 2, Out: out + "2", ValueMax: -1},
		{Kind: SynthValues, Rows: 10, TestRows: 10, Features: 2, Out: out + "3", ValueMax: 10, ValueStep: 3},
		{Kind: SynthValues, Rows: 10, TestRows: 10, Features: 2, Out: out + "4", ZeroRate: 1.5},
		{Kind: SynthLogistic, Rows: 10, TestRows: 10, Features: 2, Out: out + "5", ValueMax: 10},
	} {
		if _, err := Synth(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
