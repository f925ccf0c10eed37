package figures

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// svgMarker is a marker read back from an SVG file: its centre in canvas
// points (the file's path coordinates; its one transform flips y back).
type svgMarker struct{ at vg.Point }

var (
	svgPath = regexp.MustCompile(`<path d="([^"]*)"`)
	num     = `(-?[0-9.]+(?:e[-+]?[0-9]+)?)`
	// A circle or ring: two half arcs from (x+r, y) to (x−r, y) and back.
	svgCircle = regexp.MustCompile(`^M` + num + `,` + num + `A` + num + `,` + num + ` 0 1 1 ` + num + `,` + num + `A[^Z]*Z$`)
	// A square or triangle: a closed polygon of 4 or 3 points.
	svgPolygon = regexp.MustCompile(`^M` + num + `,` + num + `(?:L` + num + `,` + num + `){2,3}Z$`)
	svgPoint   = regexp.MustCompile(num + `,` + num)
	// One stroke of a cross or plus (two in a row, crossing at their
	// midpoints).
	svgSegment = regexp.MustCompile(`^M` + num + `,` + num + `L` + num + `,` + num + `$`)
)

// readSVGMarkers returns the centres of the markers (circles, rings,
// squares, triangles smaller than 40 points across, and crosses and plus
// signs: two strokes in a row of one length under 20 points crossing at
// their midpoints) drawn in an SVG file written by saveFigure.
func readSVGMarkers(t *testing.T, path string) []svgMarker {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	var out []svgMarker
	var prev []float64 // the last path, when it was one stroke: x0, y0, x1, y1
	for _, m := range svgPath.FindAllStringSubmatch(string(b), -1) {
		d := m[1]
		if sg := svgSegment.FindStringSubmatch(d); sg != nil {
			cur := []float64{f(sg[1]), f(sg[2]), f(sg[3]), f(sg[4])}
			if prev != nil {
				l0, l1 := math.Hypot(prev[2]-prev[0], prev[3]-prev[1]), math.Hypot(cur[2]-cur[0], cur[3]-cur[1])
				mx, my := (cur[0]+cur[2])/2, (cur[1]+cur[3])/2
				if l1 < 20 && math.Abs(l0-l1) < 0.01 && math.Abs((prev[0]+prev[2])/2-mx) < 0.01 && math.Abs((prev[1]+prev[3])/2-my) < 0.01 {
					out = append(out, svgMarker{vg.Point{X: vg.Length(mx), Y: vg.Length(my)}})
					prev = nil
					continue
				}
			}
			prev = cur
			continue
		}
		prev = nil
		if c := svgCircle.FindStringSubmatch(d); c != nil {
			x1, y, r, x2 := f(c[1]), f(c[2]), f(c[3]), f(c[5])
			if r < 20 {
				out = append(out, svgMarker{vg.Point{X: vg.Length((x1 + x2) / 2), Y: vg.Length(y)}})
			}
			continue
		}
		if !svgPolygon.MatchString(d) {
			continue
		}
		var xs, ys []float64
		for _, p := range svgPoint.FindAllStringSubmatch(d, -1) {
			xs, ys = append(xs, f(p[1])), append(ys, f(p[2]))
		}
		if slices.Max(xs)-slices.Min(xs) > 40 || slices.Max(ys)-slices.Min(ys) > 40 {
			continue
		}
		var cx, cy float64
		for i := range xs {
			cx, cy = cx+xs[i], cy+ys[i]
		}
		out = append(out, svgMarker{vg.Point{X: vg.Length(cx / float64(len(xs))), Y: vg.Length(cy / float64(len(ys)))}})
	}
	return out
}

// valueAt inverts an axis: the value drawn at canvas coordinate c of an
// axis spanning [lo, hi] points, by bisection on its (monotone)
// normalizer.
func valueAt(a axisSpec, lo, hi vg.Length, c vg.Length) float64 {
	var sc plot.Normalizer = plot.LinearScale{}
	if a.scale != nil {
		sc = a.scale
	}
	frac := float64((c - lo) / (hi - lo))
	l, h := a.min, a.max
	for range 200 {
		m := (l + h) / 2
		if sc.Normalize(a.min, a.max, m) < frac {
			l = m
		} else {
			h = m
		}
	}
	return (l + h) / 2
}

// svgTol is how far (points) a marker read back from the SVG may sit from
// its value's place: the file writes 5 significant digits (0.05 points at
// 1000). A nudge moves a marker 7 points or more.
const svgTol = 0.06

// checkMarkersAtValues renders f to SVG and checks, panel by panel, that
// every marker drawn maps back to the value it stands for on each measured
// axis (y only for a panel whose x holds a parameter, nudgeX; both
// otherwise), one marker per point drawn.
func checkMarkersAtValues(t *testing.T, f *figure, name string) {
	t.Helper()
	base := filepath.Join(t.TempDir(), name)
	if err := saveFigure(base, f); err != nil {
		t.Fatal(err)
	}
	markers := readSVGMarkers(t, base+".svg")
	for _, p := range f.panels {
		a := p.area
		var got []svgMarker
		for _, m := range markers {
			if m.at.X >= a.Min.X-0.01 && m.at.X <= a.Max.X+0.01 && m.at.Y >= a.Min.Y-0.01 && m.at.Y <= a.Max.Y+0.01 {
				got = append(got, m)
			}
		}
		if len(got) != p.drawn.glyphs {
			t.Errorf("%s %q: %d markers in the SVG's panel, %d drawn", name, p.title, len(got), p.drawn.glyphs)
		}
		type val struct{ x, y float64 }
		var want []val
		for _, s := range p.series {
			if s.glyph == nil {
				continue
			}
			for _, q := range s.pts {
				if q.X >= p.x.min && q.X <= p.x.max && q.Y >= p.y.min && q.Y <= p.y.max {
					want = append(want, val{q.X, q.Y})
				}
			}
		}
		// Each value's place on the canvas; a marker is a point's when it is
		// within svgTol points of it on every measured axis.
		place := func(ax axisSpec, lo, hi vg.Length, v float64) vg.Length {
			var sc plot.Normalizer = plot.LinearScale{}
			if ax.scale != nil {
				sc = ax.scale
			}
			return lo + vg.Length(sc.Normalize(ax.min, ax.max, v))*(hi-lo)
		}
		used := make([]bool, len(want))
		for _, m := range got {
			x, y := valueAt(p.x, a.Min.X, a.Max.X, m.at.X), valueAt(p.y, a.Min.Y, a.Max.Y, m.at.Y)
			best, bestD := -1, math.Inf(1)
			for i, w := range want {
				if used[i] {
					continue
				}
				d := math.Abs(float64(m.at.Y-place(p.y, a.Min.Y, a.Max.Y, w.y))) / svgTol
				if p.nudge != nudgeX {
					d = math.Max(d, math.Abs(float64(m.at.X-place(p.x, a.Min.X, a.Max.X, w.x)))/svgTol)
				}
				if d < bestD {
					best, bestD = i, d
				}
			}
			if best < 0 || bestD > 1 {
				t.Errorf("%s %q: a marker at (%.5g, %.5g) is no point's value (nearest off by %.3g tolerances)", name, p.title, x, y, bestD)
				continue
			}
			used[best] = true
		}
	}
}

// The 10-class grid: rr_eps1 and two rr_prior settings at ε = 1
// that differ only in their stage fraction (0.5, 0.7), with test
// accuracies 0.451, 0.462 and 0.448 — markers that would overlap.
func stageFractionSummary(t *testing.T) *report.Summary {
	t.Helper()
	// rr_prior_eps1's fixture means per learning rate, and the issue's.
	from, to := map[float64]float64{1e-3: 0.575, 1e-2: 0.566}, map[float64]float64{1e-3: 0.462, 1e-2: 0.455}
	var runs []report.Run
	for _, r := range reporttest.MultiRuns() {
		if r.Setting == "rr_prior_eps1" {
			r.TestAccuracy += to[r.LR] - from[r.LR] // the trials' spread kept
			s7 := r
			s7.Setting, s7.RunID = "rr_prior_eps1_s0.7", r.RunID+"-s0.7"
			s7.TestAccuracy -= 0.014
			runs = append(runs, s7)
		}
		runs = append(runs, r)
	}
	var audits []report.Audit
	for _, a := range reporttest.MultiAudits() {
		audits = append(audits, a)
		if a.Setting == "rr_prior_eps1" {
			a.Setting = "rr_prior_eps1_s0.7"
			a.EAdv *= 1.01
			a.RealizedGain *= 1.01
			audits = append(audits, a)
		}
	}
	s, err := report.Summarize(runs, audits, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Figures never misplace a measurement: markers that would hide one
// another move along a parameter axis only (auc_by_setting's ε, k), and on
// figures whose axes are both measured they stay put (drawn open). The
// SVG's marker coordinates, read back through the axes, are the measured
// values.
func TestMarkersAtTheirValues(t *testing.T) {
	multi := stageFractionSummary(t)
	audits := slices.Clone(reporttest.CheckedAudits())
	for i := range audits { // LLP+Geom on rr ε=1's spot, as in the realized_vs_predicted
		if audits[i].Setting == "llp_geom_k8_eps1" {
			audits[i].EAdv, audits[i].RealizedGain = 0.0401, 0.0399
		}
	}
	sets := []Set{{Rows: multi.Rows}}
	cases := []struct {
		name   string
		build  func() (*figure, error)
		nudged bool // some marker had to give way (moved or drawn open)
	}{
		{"auc_by_setting", func() (*figure, error) { return aucBySettingSets(sets, "") }, true},
		{"auc_vs_eadv", func() (*figure, error) { return aucVsAdvSets(sets, metricEAdv, "") }, false},
		{"auc_vs_ma_p98", func() (*figure, error) { return aucVsAdvSets(sets, metricMAP98, "") }, true},
		{"realized_vs_predicted", func() (*figure, error) { return realizedFigure(audits) }, true},
		{"synthetic auc_vs_eadv", func() (*figure, error) { return aucVsAdvFigure(synthSummary(t, true).Rows, metricEAdv, "") }, true},
		{"quickstart auc_by_setting", func() (*figure, error) { return aucBySettingFigure(reporttest.Quickstart(t).Rows, "") }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.build()
			if err != nil {
				t.Fatal(err)
			}
			checkMarkersAtValues(t, f, strings.ReplaceAll(tc.name, " ", "_"))
			gave := 0
			for _, p := range f.panels {
				gave += p.drawn.moved + p.drawn.ringed
				if p.nudge != nudgeX && p.drawn.moved > 0 {
					t.Errorf("%q: %d markers moved on a panel of two measured axes", p.title, p.drawn.moved)
				}
			}
			if tc.nudged && gave == 0 {
				t.Errorf("no marker gave way: the case does not exercise the nudge")
			}
			checkNoHiddenMarkers(t, f)
		})
	}
}

// Two settings that differ only in rr_prior's stage fraction are two
// curves, each named by its stage fraction (not both "ε=1"), in the
// legend and the labels of every figure that shows them.
func TestStageFractionNamed(t *testing.T) {
	multi := stageFractionSummary(t)
	sets := []Set{{Rows: multi.Rows}}
	for _, build := range []func() (*figure, error){
		func() (*figure, error) { return aucBySettingSets(sets, "") },
		func() (*figure, error) { return aucVsAdvSets(sets, metricEAdv, "") },
	} {
		f, err := build()
		if err != nil {
			t.Fatal(err)
		}
		legend := strings.Join(legendTexts(f.legend), "\n")
		var labels []string
		for _, p := range f.panels {
			for _, l := range p.labels {
				labels = append(labels, l.text)
			}
		}
		for _, sf := range []string{"stage fraction 0.5", "stage fraction 0.7"} {
			if !strings.Contains(legend, sf) {
				t.Errorf("%s: legend lacks %q:\n%s", f.title, sf, legend)
			}
			if !slices.ContainsFunc(labels, func(l string) bool { return strings.Contains(l, sf) }) {
				t.Errorf("%s: no label names %q: %q", f.title, sf, labels)
			}
		}
		for _, l := range labels {
			if strings.Contains(l, "stage fraction") && strings.Contains(legend, "RR+prior (ε varies)") {
				t.Errorf("%s: an unnamed RR+prior curve beside named ones", f.title)
			}
		}
	}
	var audits []report.Audit
	for _, a := range reporttest.MultiAudits() {
		audits = append(audits, a)
		if a.Setting == "rr_prior_eps1" {
			a.Setting = "rr_prior_eps1_s0.7"
			audits = append(audits, a)
		}
	}
	r, err := realizedFigure(audits)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, l := range r.panels[0].labels {
		labels = append(labels, l.text)
	}
	// rr ε=1 is alone of its kind at ε = 1: its label stays "ε=1".
	for _, want := range []string{"ε=1, stage fraction 0.5", "ε=1, stage fraction 0.7", "ε=1"} {
		if !slices.Contains(labels, want) {
			t.Errorf("realized_vs_predicted labels %q lack %q", labels, want)
		}
	}
}

// The calibration figure of a C-class audit is top-label and says so: no
// "fraction labelled 1" nor "P(y=1)" on its axes; a binary one keeps them.
func TestCalibrationAxesForClasses(t *testing.T) {
	cals := reporttest.CheckedCalibration()
	bin, err := calibrationFigure(cals, reporttest.CheckedAudits())
	if err != nil {
		t.Fatal(err)
	}
	if p := bin.panels[0]; p.x.label != "mean η in the bin (predicted P(y=1))" || p.y.label != "fraction labelled 1 (95% Wilson interval)" {
		t.Errorf("binary axes %q, %q", p.x.label, p.y.label)
	}
	multi := reporttest.MultiAudits()
	for i := range cals {
		cals[i].Dataset = reporttest.MultiDataset
	}
	f, err := calibrationFigure(cals, multi)
	if err != nil {
		t.Fatal(err)
	}
	p := f.panels[0]
	for _, l := range []string{p.x.label, p.y.label} {
		if strings.Contains(l, "P(y=1)") || strings.Contains(l, "labelled 1") {
			t.Errorf("10-class axis says %q", l)
		}
	}
	if !strings.Contains(p.x.label, "top-class") || !strings.Contains(p.x.label, "C = 10") || !strings.Contains(p.title, "top label") {
		t.Errorf("10-class axes %q, %q, title %q", p.x.label, p.y.label, p.title)
	}
	figs, err := WriteAuditPlots(t.TempDir(), multi, cals)
	if err != nil {
		t.Fatal(err)
	}
	for _, fig := range figs {
		if strings.HasSuffix(fig.Path, "calibration.png") && strings.Contains(fig.Caption, "fraction labelled 1") {
			t.Errorf("10-class caption: %s", fig.Caption)
		}
	}
}
