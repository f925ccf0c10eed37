package figures

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/pets"
	"labelprivacy/report/internal/reporttest"
)

// TestRealizedFigure: one point per setting with a realized attack (none
// left out), at (EAdv, realized) with both 95% bars, the y = x line, every
// point labelled, and ink of each mechanism's colour.
func TestRealizedFigure(t *testing.T) {
	f, err := realizedFigure(reporttest.CheckedAudits())
	if err != nil {
		t.Fatal(err)
	}
	p := f.panels[0]
	var diag *series
	pts := map[string]xy{}
	for _, s := range p.series {
		if s.name == "y = x" {
			diag = s
			continue
		}
		pts[s.name] = s.pts[0]
		if len(s.xerr) != 1 || len(s.yerr) != 1 || !(s.xerr[0] > 0 && s.yerr[0] > 0) {
			t.Errorf("%s: bars %v %v", s.name, s.xerr, s.yerr)
		}
	}
	if diag == nil || diag.pts[0].X != diag.pts[0].Y || diag.pts[1].X != diag.pts[1].Y {
		t.Fatalf("no y = x line: %+v", diag)
	}
	if len(pts) != 4 || pts["rr_eps4"] != (xy{0.198, 0.1966}) {
		t.Fatalf("points %v", pts)
	}
	img := render(t, f)
	if placed, dropped := checkLayout(t, f); placed != 4 || dropped != 0 {
		t.Errorf("%d labels placed, %d left out", placed, dropped)
	}
	for _, pet := range []pets.Kind{pets.RR, pets.LLP, pets.LLPGeom} {
		if inkOf(img, f, p, petColor(pet)) == 0 {
			t.Errorf("no ink of %s", pet)
		}
	}
	keepExample(t, f, "realized_vs_predicted")
	if _, err := realizedFigure(reporttest.CheckedAudits()[:1]); !errors.Is(err, ErrNoData) {
		t.Fatalf("none only: err %v", err)
	}
}

// TestCalibrationFigure: the non-empty bins at (mean η, rate) with
// binomial bars, the diagonal, ECE and Brier in the title.
func TestCalibrationFigure(t *testing.T) {
	f, err := calibrationFigure(reporttest.CheckedCalibration(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := f.panels[0]
	if !strings.Contains(p.title, "ECE 0.0165") || !strings.Contains(p.title, "Brier 0.1530") {
		t.Errorf("title %q", p.title)
	}
	var bins *series
	for _, s := range p.series {
		if s.name == "bins" {
			bins = s
		}
	}
	if bins == nil || len(bins.pts) != 9 || bins.pts[0] != (xy{0.05, 0.05}) {
		t.Fatalf("bins %+v", bins)
	}
	// Wilson's 95% interval of 50 in 1000 (computed independently).
	if b := bins.yband[0]; math.Abs(b[0]-0.03813026239274882) > 1e-12 || math.Abs(b[1]-0.06531382024425081) > 1e-12 {
		t.Errorf("bar %v, want Wilson's [0.03813, 0.06531]", b)
	}
	render(t, f)
	checkLayout(t, f)
	keepExample(t, f, "calibration")
	if _, err := calibrationFigure(nil, nil); !errors.Is(err, ErrNoData) {
		t.Fatalf("no table: err %v", err)
	}
	dir := t.TempDir()
	figs, err := WriteAuditPlots(dir, reporttest.CheckedAudits(), reporttest.CheckedCalibration())
	if err != nil || len(figs) != 2 {
		t.Fatalf("WriteAuditPlots: %v, %v", figs, err)
	}
	for _, n := range []string{"realized_vs_predicted", "calibration"} {
		checkFigureFiles(t, filepath.Join(dir, n))
	}
	if figs, err := WriteAuditPlots(t.TempDir(), nil, nil); err != nil || len(figs) != 0 {
		t.Fatalf("nothing to draw: %v %v", figs, err)
	}
}

// Wilson's score interval stays within [0, 1] where the Wald interval
// (±1.96 SE) of a small bin runs below 0, and is not a point at 0 or 1.
// Reference values: the textbook 1 of 4 at 95% is [0.0456, 0.6994].
func TestWilson(t *testing.T) {
	cases := []struct {
		p      float64
		n      int
		lo, hi float64
	}{
		{0.25, 4, 0.04558726080970055, 0.6993581574175981},
		{0.05, 1000, 0.03813026239274882, 0.06531382024425081},
		{0, 10, 0, 0.2775327998628892},
		{1, 3, 0.4385029682449546, 1},
	}
	for _, tc := range cases {
		lo, hi := wilson(tc.p, tc.n, z95)
		if math.Abs(lo-tc.lo) > 1e-12 || math.Abs(hi-tc.hi) > 1e-12 {
			t.Errorf("wilson(%v, %d) = [%v, %v], want [%v, %v]", tc.p, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
	if lo, _ := wilson(0.25, 4, z95); 0.25-z95*math.Sqrt(0.25*0.75/4) >= 0 || lo < 0 {
		t.Error("the case should show Wald below 0 and Wilson not")
	}
}

// TestWorstCaseInAUCFigure: the AUC-vs-E[adv] figure draws each DP
// setting's ε-DP worst case as a ring at (EAdvBound, AUC) joined to its
// point; llp (no ε) gets none; rr's ring sits on its point.
func TestWorstCaseInAUCFigure(t *testing.T) {
	s := reporttest.Quickstart(t)
	for i := range s.Rows {
		r := &s.Rows[i]
		switch r.Pet {
		case pets.RR:
			r.EAdvBound = r.EAdv
		case pets.LLPGeom, pets.LLPLap:
			r.EAdvBound = 0.03
		default:
			r.EAdvBound = math.NaN()
		}
	}
	f, err := aucVsAdvFigure(s.Rows, metricEAdv, "")
	if err != nil {
		t.Fatal(err)
	}
	rings, links := 0, 0
	for _, sr := range f.panels[0].series {
		if strings.HasSuffix(sr.name, "ε-DP worst case") {
			rings += len(sr.pts)
			for _, q := range sr.pts {
				if q.X != 0.03 && q.X != 0.012 && q.X != 0.04 {
					t.Errorf("ring at %v", q)
				}
			}
		}
		if sr.name == "to worst case" {
			links++
		}
	}
	if rings != 4 || links != 4 {
		t.Fatalf("%d rings, %d links, want 4 (2 rr, llp_lap, llp_geom)", rings, links)
	}
	if f.panels[0].x.max < 0.03 {
		t.Fatalf("x axis ends at %v, before the worst case", f.panels[0].x.max)
	}
	render(t, f)
	if _, dropped := checkLayout(t, f); dropped > 0 {
		t.Errorf("%d labels left out", dropped)
	}
	ma, _ := aucVsAdvFigure(s.Rows, metricMAP98, "")
	for _, sr := range ma.panels[0].series {
		if strings.Contains(sr.name, "worst") {
			t.Fatal("the MA figure draws the additive worst case")
		}
	}
}
