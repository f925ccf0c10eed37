package figures

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// No marker is hidden under another, and none is misplaced: two settings
// at the same spot of a figure whose axes are both measured (the
// quickstart's RR ε=1 and LLP k=8, both at E[adv] ≈ realized ≈ 0.040) stay
// at their values, the later drawn as an outline (a ring around the other
// when on its centre), and each keeps its label.
func TestMarkersNeverHidden(t *testing.T) {
	as := reporttest.CheckedAudits()
	var rr, llp int
	for i, a := range as {
		switch a.Setting {
		case "rr_eps1":
			rr = i
		case "llp_k8":
			llp = i
		}
	}
	as[llp].EAdv, as[llp].RealizedGain = as[rr].EAdv*1.002, as[rr].RealizedGain*0.999
	f, err := realizedFigure(as)
	if err != nil {
		t.Fatal(err)
	}
	render(t, f)
	checkLayout(t, f)
	checkNoHiddenMarkers(t, f)
	p := f.panels[0]
	if p.drawn.moved != 0 || p.drawn.ringed == 0 {
		t.Fatalf("two markers at one spot on measured axes: %d moved (want 0), %d drawn open (want 1)", p.drawn.moved, p.drawn.ringed)
	}
	for _, m := range p.drawn.marks {
		if math.Hypot(float64(m.at.X), float64(m.at.Y)) == 0 {
			t.Fatal("a marker at the origin")
		}
	}
	var placed []string
	for _, l := range p.placed {
		placed = append(placed, l.label.text)
	}
	for _, w := range []string{"ε=1", "k=8"} {
		if !slices.Contains(placed, w) {
			t.Errorf("label %q left out (placed %q)", w, placed)
		}
	}
}

// E[adv] spanning decades (Beta(2,30) η: 1e-5 … 0.06) gets a symlog axis
// whose ticks are 0 and decades; a range within 1.5 decades stays linear.
func TestSymlogAxis(t *testing.T) {
	skewed := []float64{0, 3e-6, 2e-5, 4e-4, 0.003, 0.06}
	c := symlogConstant(skewed)
	if c != 1e-5 {
		t.Fatalf("linear range %v, want 1e-5 (3 decades below 0.06, above the smallest)", c)
	}
	a := newAdvAxis(skewed, false)
	s := a.spec("x")
	var labels []string
	for _, tk := range s.ticks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 1e-5 1e-4 0.001 0.01" && got != "0 1e-5 1e-4 0.001 0.01 0.1" {
		t.Fatalf("ticks %q", got)
	}
	if _, ok := s.scale.(symlogScale); !ok || !strings.Contains(s.label, "symlog") {
		t.Fatalf("scale %T, label %q", s.scale, s.label)
	}
	sc := symlogScale{c}
	// Near-equal steps per decade above 10c (log(1+x/c) is log(x/c) within
	// 4% from there on), and monotone through 0.
	d1 := sc.Normalize(a.min, a.max, 1e-3) - sc.Normalize(a.min, a.max, 1e-4)
	d2 := sc.Normalize(a.min, a.max, 1e-2) - sc.Normalize(a.min, a.max, 1e-3)
	if math.Abs(d1-d2) > 0.05*d2 || !(sc.Normalize(a.min, a.max, 0) < sc.Normalize(a.min, a.max, 3e-6)) {
		t.Fatalf("decades %v and %v apart", d1, d2)
	}
	for _, x := range []float64{-3e-4, 0, 2e-6, 0.5} {
		if y := sc.inv(sc.f(x)); math.Abs(y-x) > 1e-12 {
			t.Fatalf("inv(f(%v)) = %v", x, y)
		}
	}
	for _, lin := range [][]float64{{0.017, 0.04, 0.2}, {0, 0.02}, {1e-5, 1e-3}} {
		if c := symlogConstant(lin); c != 0 {
			t.Errorf("%v: symlog %v, want linear", lin, c)
		}
	}
}

// A comparison draws both sides in one figure: each curve once per side,
// A dashed with open markers, B solid and filled, the sides named in the
// legend; each side's clean model is a reference line.
func TestSetsOverlaid(t *testing.T) {
	b := reporttest.Quickstart(t)
	var aRows []report.Row
	for _, r := range b.Rows {
		r.AUCMean -= 0.01
		aRows = append(aRows, r)
	}
	sets := []Set{{Name: "A: base (train.rr_loss=bce)", Rows: aRows}, {Name: "B: new (train.rr_loss=debiased_bce)", Rows: b.Rows}}
	for _, build := range []func([]Set) (*figure, error){
		func(s []Set) (*figure, error) { return aucVsAdvSets(s, metricEAdv, "") },
		func(s []Set) (*figure, error) { return aucBySettingSets(s, "") },
	} {
		f, err := build(sets)
		if err != nil {
			t.Fatal(err)
		}
		render(t, f)
		checkLayout(t, f)
		checkNoHiddenMarkers(t, f)
		legend := legendTexts(f.legend)
		for _, s := range sets {
			if !slices.Contains(legend, s.Name) {
				t.Errorf("%s: legend %q lacks %q", f.title, legend, s.Name)
			}
		}
		refs := 0
		var a, bb []*series
		for _, p := range f.panels {
			for _, r := range p.refs {
				if r.horizontal && (r.v == b.Rows[0].AUCMean || r.v == aRows[0].AUCMean) {
					refs++
				}
			}
			for _, s := range dataSeries(p) {
				if strings.HasSuffix(s.name, "("+sets[0].Name+")") {
					a = append(a, s)
				} else if strings.HasSuffix(s.name, "("+sets[1].Name+")") {
					bb = append(bb, s)
				}
			}
		}
		if len(a) == 0 || len(a) != len(bb) || refs < 2*len(f.panels) {
			t.Fatalf("%s: %d series of A, %d of B, %d clean lines in %d panels", f.title, len(a), len(bb), refs, len(f.panels))
		}
		for i := range a {
			if a[i].line != nil && a[i].line.Dashes == nil || bb[i].line != nil && bb[i].line.Dashes != nil {
				t.Errorf("%s: A's line should be dashed, B's solid: %v, %v", a[i].name, a[i].line, bb[i].line)
			}
			if reflect.TypeOf(a[i].glyph.Shape) == reflect.TypeOf(bb[i].glyph.Shape) && !isOpen(a[i].glyph.Shape) {
				t.Errorf("%s: A's marker %T should be open, B's %T", a[i].name, a[i].glyph.Shape, bb[i].glyph.Shape)
			}
		}
	}
}

// Every curve of a figure has its own colour, none of them near white:
// the two-parameter mechanisms' k curves are distinct hues, not light and
// dark shades of one.
func TestCurveColoursDistinct(t *testing.T) {
	keys := []curveKey{{pets.RR, 0, "", report.PriorParams{}}, {pets.LLP, 0, "random", report.PriorParams{}},
		{pets.LLP, 0, "sorted:x3", report.PriorParams{}}, {pets.LLPLap, 8, "random", report.PriorParams{}},
		{pets.LLPLap, 32, "random", report.PriorParams{}}, {pets.LLPGeom, 8, "random", report.PriorParams{}},
		{pets.LLPGeom, 32, "random", report.PriorParams{}}, {pets.RRPrior, 0, "", report.PriorParams{StageFraction: 0.5}},
		{pets.RRPrior, 0, "", report.PriorParams{StageFraction: 0.7}}}
	cols := curveColors(keys)
	seen := map[[3]uint8]bool{}
	for _, k := range keys {
		c := cols[k]
		if seen[[3]uint8{c.R, c.G, c.B}] {
			t.Errorf("%v shares its colour %v", k, c)
		}
		seen[[3]uint8{c.R, c.G, c.B}] = true
		if lum := 0.2126*float64(c.R) + 0.7152*float64(c.G) + 0.0722*float64(c.B); lum > 170 {
			t.Errorf("%v: colour %v too light on white (luminance %.0f)", k, c, lum)
		}
	}
}
