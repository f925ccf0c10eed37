package figures

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// multiSets are the 10-class results as figure sets, with posteriors.
func multiSets(t *testing.T) (*report.Summary, []Set) {
	t.Helper()
	s := reporttest.Multiclass(t)
	return s, GroupSets(s, reporttest.MultiPosteriors(1, 400))
}

// plottedY returns the y values of a figure's data series (not context
// dots, worst-case rings or their joins) and their error half-widths,
// sorted together by y.
func plottedY(f *figure) (ys, errs []float64) {
	type pe struct{ y, e float64 }
	var v []pe
	for _, p := range f.panels {
		for _, s := range dataSeries(p) {
			for i, q := range s.pts {
				v = append(v, pe{q.Y, errAt(s.yerr, i)})
			}
		}
	}
	slices.SortFunc(v, func(a, b pe) int { return cmpFloat(a.y, b.y) })
	for _, x := range v {
		ys, errs = append(ys, x.y), append(errs, x.e)
	}
	return ys, errs
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// For C = 10 classes the cost figures plot each setting's mean test
// accuracy ± its SE (never the macro AUC), label the axis "test accuracy"
// and say C = 10 in the title; the clean model's line is its accuracy.
func TestMulticlassCostFigures(t *testing.T) {
	s, sets := multiSets(t)
	var accs, ses []float64
	var audited []float64
	cleanAcc := math.NaN()
	for _, r := range s.Rows {
		if r.Setting == "none" {
			cleanAcc = r.AccuracyMean
			continue
		}
		accs, ses = append(accs, r.AccuracyMean), append(ses, r.AccuracySE)
		if r.Audited {
			audited = append(audited, r.AccuracyMean)
		}
	}
	slices.Sort(accs)
	slices.Sort(audited)
	const ylabel = "test accuracy (mean ± SE over trials, best LR)"
	cases := []struct {
		name, title string
		build       func([]Set) (*figure, error)
		want        []float64
	}{
		{"auc_by_setting", "Test accuracy per privacy setting (C = 10 classes)",
			func(ss []Set) (*figure, error) { return aucBySettingSets(ss, "") }, accs},
		{"auc_vs_eadv", "Test accuracy vs expected additive advantage (C = 10 classes)",
			func(ss []Set) (*figure, error) { return aucVsAdvSets(ss, metricEAdv, "") }, audited},
		{"auc_vs_ma_p98", "Test accuracy vs 98th-percentile multiplicative advantage (C = 10 classes)",
			func(ss []Set) (*figure, error) { return aucVsAdvSets(ss, metricMAP98, "") }, audited},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := tc.build(sets)
			if err != nil {
				t.Fatal(err)
			}
			if f.title != tc.title {
				t.Errorf("title %q, want %q", f.title, tc.title)
			}
			ys, errs := plottedY(f)
			if len(ys) != len(tc.want) {
				t.Fatalf("plotted %d points %v, want the %d accuracies %v", len(ys), ys, len(tc.want), tc.want)
			}
			for i := range ys {
				if !reporttest.Near(ys[i], tc.want[i]) || math.Abs(errs[i]-ses[0]) > 1e-12 {
					t.Errorf("point %d: %g ± %g, want accuracy %g ± %g", i, ys[i], errs[i], tc.want[i], ses[0])
				}
			}
			for _, p := range f.panels {
				if p.y.label != ylabel {
					t.Errorf("panel %q: y label %q, want %q", p.title, p.y.label, ylabel)
				}
				if !slices.ContainsFunc(p.refs, func(r refLine) bool { return r.horizontal && r.v == cleanAcc }) {
					t.Errorf("panel %q: no line at the clean model's accuracy %g", p.title, cleanAcc)
				}
				if strings.Contains(p.x.label, "Δ log-odds") && !strings.Contains(p.x.label, "between two classes") {
					t.Errorf("panel %q: x label %q does not say the MA of C classes", p.title, p.x.label)
				}
			}
			if !slices.ContainsFunc(f.legend, func(it legendItem) bool { return it.text == "no PET (clean labels): accuracy 0.802" }) {
				t.Errorf("legend %q lacks the clean model's accuracy", legendTexts(f.legend))
			}
			render(t, f)
			checkLayout(t, f)
			keepExample(t, f, "multiclass_"+tc.name)
		})
	}
}

// The posterior figures of C = 10 classes read a sample's prior and
// posterior as those of its drawn label and say so, with C in the title.
func TestMulticlassPosteriorFigures(t *testing.T) {
	_, sets := multiSets(t)
	f, err := scatterSets(sets, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(f.title, "(C = 10 classes)") {
		t.Errorf("scatter title %q", f.title)
	}
	n := 0
	for _, p := range f.panels {
		if p.x.label != "prior η_y(x) of the drawn label y" || p.y.label != "posterior P(y | x, release) of the drawn label" {
			t.Errorf("scatter panel %q: axes %q, %q", p.title, p.x.label, p.y.label)
		}
		for _, s := range p.series {
			if s.cloud {
				n += len(s.pts)
			}
		}
	}
	if n != 3*400 { // rr ε=1, rr ε=4, llp k=8: 400 samples each
		t.Errorf("scatter shows %d samples, want 1200", n)
	}
	render(t, f)
	checkLayout(t, f)
	keepExample(t, f, "multiclass_posterior_scatter")

	c, err := cdfSets(sets, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(c.title, "(C = 10 classes)") || c.panels[1].x.label != maCDFLabel(10) || !strings.Contains(c.note, "rules a class out") {
		t.Errorf("CDFs: title %q, |MA| label %q, note %q", c.title, c.panels[1].x.label, c.note)
	}
	render(t, c)
	checkLayout(t, c)
	keepExample(t, c, "multiclass_advantage_cdfs")

	r, err := realizedFigure(reporttest.MultiAudits())
	if err != nil || !strings.HasSuffix(r.title, "(C = 10 classes)") {
		t.Errorf("realized figure: %v, title %q", err, r.title)
	}
}

// WritePlots of a 10-class summary writes every figure, titled and
// captioned for accuracy and C = 10; result sets of different class
// counts are not drawn together.
func TestMulticlassWritePlots(t *testing.T) {
	s, _ := multiSets(t)
	figs, err := WritePlots(t.TempDir(), s, reporttest.MultiPosteriors(1, 200))
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != len(figureJobs) {
		t.Fatalf("%d figures, want %d", len(figs), len(figureJobs))
	}
	for _, f := range figs {
		checkFigureFiles(t, strings.TrimSuffix(f.Path, ".png"))
		if !strings.HasSuffix(f.Title, " (C = 10 classes)") || strings.Contains(f.Title, "AUC") {
			t.Errorf("%s: title %q", filepath.Base(f.Path), f.Title)
		}
		for _, bad := range []string{"test AUC", "P(y=1", "the prior η(x)"} {
			if strings.Contains(f.Caption, bad) {
				t.Errorf("%s: caption says %q: %s", filepath.Base(f.Path), bad, f.Caption)
			}
		}
	}
	// Every rewording applies to some figure: none is stale.
	for i := 0; i < len(multiclassWording); i += 2 {
		used := false
		for _, j := range figureJobs {
			used = used || strings.Contains(j.title+j.caption, multiclassWording[i])
		}
		if !used {
			t.Errorf("the wording %q is in no figure's title or caption", multiclassWording[i])
		}
	}
	// Binary titles and captions are the figure jobs' own.
	for _, j := range figureJobs {
		if title, caption := j.forClasses(2); title != j.title || caption != j.caption {
			t.Errorf("%s: binary wording changed", j.name)
		}
	}

	bin := synthSummary(t, true)
	sets := append(GroupSets(bin, nil), GroupSets(s, nil)...)
	if _, err := WriteSets(t.TempDir(), sets); err == nil || !strings.Contains(err.Error(), "label classes") {
		t.Fatalf("binary and 10-class sets drawn together: err %v", err)
	}
	if _, err := aucBySettingSets(sets, ""); err == nil || errors.Is(err, ErrNoData) {
		t.Fatalf("aucBySettingSets of mixed class counts: err %v", err)
	}
}
