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
	f, err := calibrationFigure(reporttest.CheckedCalibration())
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
	if want := z95 * math.Sqrt(0.05*0.95/1000); math.Abs(bins.yerr[0]-want) > 1e-12 {
		t.Errorf("bar %v, want %v", bins.yerr[0], want)
	}
	render(t, f)
	checkLayout(t, f)
	keepExample(t, f, "calibration")
	if _, err := calibrationFigure(nil); !errors.Is(err, ErrNoData) {
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
