package report

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/pets"
)

// checkedAudits is a quickstart-like audit with the self-check figures.
func checkedAudits() []Audit {
	mk := func(setting string, pet pets.Kind, k int, eps, eadv, real, bound, epsLo float64) Audit {
		a := Audit{Dataset: dsA, Setting: setting, Pet: pet, K: k, Epsilon: eps, EtaSource: "clean_model(lr=0.001)"}
		a.Summary = audit.Summary{Kind: pet, K: k, Epsilon: eps, EAdv: eadv, EAdvSE: eadv / 50, EAdvBound: bound,
			RealizedDraws: 20, RealizedGain: real, RealizedGainSE: eadv / 30, RealizedZ: (real - eadv) / (eadv / 30),
			Canaries: 10000, EpsLower: epsLo}
		a.CalibrationRows, a.EtaECE, a.EtaBrier, a.EAdvCalibrated, a.EAdvTrue = 10000, 0.0165, 0.153, eadv*1.02, eadv*1.04
		a.EAdvTrialMin, a.EAdvTrialMax = math.NaN(), math.NaN()
		return a
	}
	none := mk("none", pets.None, 0, 0, 0.2157, math.NaN(), math.NaN(), math.NaN())
	none.Summary.Epsilon, none.RealizedDraws, none.Canaries, none.RealizedGainSE, none.RealizedZ = math.Inf(1), 0, 0, math.NaN(), math.NaN()
	llp := mk("llp_k8", pets.LLP, 8, 0, 0.0398, 0.0400, math.NaN(), 2.76)
	llp.Summary.Epsilon = math.Inf(1)
	return []Audit{
		none,
		mk("rr_eps1", pets.RR, 0, 1, 0.0400, 0.0398, 0.0400, 0.908),
		mk("rr_eps4", pets.RR, 0, 4, 0.198, 0.1966, 0.198, 3.83),
		llp,
		mk("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 0.0168, 0.0164, 0.0400, 0.45),
	}
}

func checkedCalibration() []Calibration {
	c := Calibration{Dataset: dsA, EtaSource: "clean_model(lr=0.001)", Calibration: audit.Calibration{N: 10000, ECE: 0.0165, Brier: 0.153}}
	for b := range 10 {
		lo := float64(b) / 10
		c.Bins = append(c.Bins, audit.CalBin{Lo: lo, Hi: lo + 0.1, N: 1000, MeanEta: lo + 0.05, Rate: lo + 0.05 + 0.02*math.Sin(float64(b))})
	}
	c.Bins[3].N, c.Bins[3].MeanEta, c.Bins[3].Rate = 0, math.NaN(), math.NaN()
	return []Calibration{c}
}

// TestRealizedFigure: one point per setting with a realized attack (none
// left out), at (EAdv, realized) with both 95% bars, the y = x line, every
// point labelled, and ink of each mechanism's colour.
func TestRealizedFigure(t *testing.T) {
	f, err := realizedFigure(checkedAudits())
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
	if _, err := realizedFigure(checkedAudits()[:1]); !errors.Is(err, ErrNoData) {
		t.Fatalf("none only: err %v", err)
	}
}

// TestCalibrationFigure: the non-empty bins at (mean η, rate) with
// binomial bars, the diagonal, ECE and Brier in the title.
func TestCalibrationFigure(t *testing.T) {
	f, err := calibrationFigure(checkedCalibration())
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
	figs, err := WriteAuditPlots(dir, checkedAudits(), checkedCalibration())
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
	s := quickstart(t)
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

// TestMarkdownAuditSections: report.md gets the audit checks table (E[adv]
// beside the realized gain, the worst case and E[adv]/worst, eps_lower),
// the η section naming the headline η with E[adv] under other η, and the
// reliability table; without calibration rows it says so.
func TestMarkdownAuditSections(t *testing.T) {
	s := quickstart(t)
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(path, Markdown{Summary: s, Audits: checkedAudits(), Calibration: checkedCalibration()}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	md := string(b)
	for _, want := range []string{
		"## Audit checks", "drew 20 fresh releases",
		"| `rr_eps1` | 1 | 0.04 | 0.0008 | 0.0398 | 0.0013 | -0.15 | 0.04 | 1.000 | 0.908 | 10000 |",
		"| `llp_geom_k8_eps1` | 1 | 0.0168 | 0.00034 | 0.0164 | 0.00056 | -0.71 | 0.04 | 0.420 | 0.450 | 10000 |",
		"| `llp_k8` | ∞ | 0.0398 | 0.0008 | 0.04 | 0.0013 | 0.15 | — | — | 2.760 | 10000 |",
		"| `none` | ∞ | 0.2157 | 0.0043 | — | — | — | — | — | — | — |",
		"## The attacker's η", "The headline E[adv] uses η = `clean_model(lr=0.001)`",
		"bracket the truth", "below its value under the true η for 5 of 5 settings",
		"| setting | E[adv] | recalibrated | true η |",
		"ECE 0.0165, Brier 0.1530", "| [0.3, 0.4) | 0 | — | — | — |", "| [0.9, 1.0] | 1000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	as := checkedAudits()
	for i := range as {
		as[i].CalibrationRows = 0
	}
	if err := WriteMarkdown(path, Markdown{Summary: s, Audits: as}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "calibration was not measured") {
		t.Error("no note on the missing calibration rows")
	}
	if err := WriteMarkdown(path, Markdown{Summary: s}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "## Audit checks") {
		t.Error("audit sections without audits")
	}
}
