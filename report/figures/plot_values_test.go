package figures

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// valuesSummary is a summary of conversion values shaped like
// configs/values.yaml's (B = 400, τ = 10): none, bot, laplace, rr_bins
// with a public and a private prior, value_bags k = 8 exact and noisy,
// at ε ∈ {1, 2, 8}, with made-up but distinct measurements.
func valuesSummary() *report.Summary {
	nan := math.NaN()
	row := func(set string, pet pets.Kind, k int, eps, mse, r2adv, tauadv float64) report.Row {
		kappa := 0.9
		bound := math.Exp(eps)*kappa/(math.Exp(eps)*kappa+1-kappa) - kappa
		if eps == 0 {
			bound = nan
		}
		return report.Row{Setting: set, Pet: pet, K: k, Epsilon: eps, ValueMax: 400, MSEMean: mse, MSESE: mse / 100,
			R2Mean: 1 - mse/465, Tau: 10, R2Adv: r2adv, R2AdvSE: r2adv/50 + 1e-4, TauAdv: tauadv, TauAdvSE: tauadv/20 + 1e-4,
			TauAdvBound: bound, AUCMean: nan, EAdv: nan}
	}
	s := &report.Summary{Rows: []report.Row{
		row("none", pets.None, 0, 0, 442, 1, 0.051),
		row("bot", pets.Bot, 0, 0, 465, 0, 0),
		row("value_bags_k8", pets.ValueBags, 8, 0, 460, 0.14, 0.002),
	}}
	for _, e := range []float64{1, 2, 8} {
		l := math.Log2(e) // 0, 1, 3
		s.Rows = append(s.Rows,
			row("laplace_eps"+fmtParam(e), pets.LaplaceValue, 0, e, 2500-700*l, 0.002+0.06*l, 0.0001*l),
			row("rr_bins_eps"+fmtParam(e)+"_population", pets.RRBins, 0, e, 461-4*l, 0.026+0.25*l, 0.013*l),
			row("rr_bins_eps"+fmtParam(e)+"_pe0.2", pets.RRBins, 0, e, 1400-310*l, 0.014+0.22*l, 0.012*l),
			row("value_bags_k8_eps"+fmtParam(e), pets.ValueBags, 8, e, 1600-350*l, 0.002+0.02*l, 0.00003*l))
	}
	return s
}

// valuePosteriors are samples of two settings: laplace's posterior means
// stay near the prior's, rr_bins's spread.
func valuePosteriors() []report.ValuePosterior {
	var out []report.ValuePosterior
	for i := range 60 {
		prior := 2 + float64(i%12)
		out = append(out,
			report.ValuePosterior{Setting: "laplace_eps1", Pet: pets.LaplaceValue, Epsilon: 1,
				ValueSample: audit.ValueSample{Index: i, Bag: -1, PriorMean: prior, PostMean: prior * (1 + 0.01*float64(i%3-1))}},
			report.ValuePosterior{Setting: "rr_bins_eps8_population", Pet: pets.RRBins, Epsilon: 8,
				ValueSample: audit.ValueSample{Index: i, Bag: -1, PriorMean: prior, PostMean: float64(i%5) * 9}})
	}
	return out
}

// Every figure of values draws each measurement where its value is (the
// SVG's markers read back through the axes; within svgTol), one curve per
// mechanism and prior (rr_bins's public and private priors apart, exact
// bags a point or reference of their own), and is kept as
// testdata/example_values_<name>.png under -update for review.
func TestValueFigures(t *testing.T) {
	s, post := valuesSummary(), valuePosteriors()
	curves, refs, err := valueCurves(s)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range curves {
		if len(c) != 3 {
			t.Errorf("curve %s has %d points, want one per ε (3)", valueCurve(c[0]), len(c))
		}
		names = append(names, curveName(c[0]))
	}
	want := "Laplace|RR-on-Bins, public prior|RR-on-Bins, private prior|value bags k=8"
	if got := strings.Join(names, "|"); got != want || len(refs) != 3 {
		t.Fatalf("curves %q and %d references, want %q and 3 (none, bot, exact bags)", got, len(refs), want)
	}
	for _, j := range valueJobs {
		t.Run(j.name, func(t *testing.T) {
			f, err := j.build(s, post)
			if err != nil {
				t.Fatal(err)
			}
			checkMarkersAtValues(t, f, j.name)
			checkValuePoints(t, f, j.name, s, post)
			glyphs := 0
			for _, p := range f.panels {
				glyphs += p.drawn.glyphs
			}
			if glyphs == 0 {
				t.Fatalf("%s drew no marker", j.name)
			}
			keepExample(t, f, "values_"+j.name)
		})
	}
	figs, err := WriteValuePlots(t.TempDir(), s, post)
	if err != nil || len(figs) != len(valueJobs) {
		t.Fatalf("WriteValuePlots: %d figures, %v; want %d", len(figs), err, len(valueJobs))
	}
	for _, f := range figs {
		if filepath.Ext(f.Path) != ".png" || f.Caption == "" {
			t.Errorf("figure %+v", f)
		}
	}
}

// A summary that holds a row of classes (no value_max) is refused: values
// and classes are never drawn together.
func TestValueFiguresRefuseClasses(t *testing.T) {
	s := valuesSummary()
	s.Rows = append(s.Rows, report.Row{Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1, AUCMean: 0.8})
	for _, j := range valueJobs[:4] {
		if _, err := j.build(s, nil); err == nil || !strings.Contains(err.Error(), "mixes classes") {
			t.Errorf("%s: %v, want a refusal of the mixed summary", j.name, err)
		}
	}
}

// checkValuePoints checks that the figure's series hold every measurement
// of the summary (or samples) at its value: each row's (log₂ ε, test MSE)
// on mse_by_setting, (R²-adv, MSE) and (τ-adv, MSE) and the worst case on
// the scatter plots, (log₂ ε, τ-adv) and (log₂ ε, bound) on tau_vs_bound,
// (prior mean, posterior mean) on value_posteriors.
func checkValuePoints(t *testing.T, f *figure, name string, s *report.Summary, post []report.ValuePosterior) {
	t.Helper()
	var want []xy
	for _, r := range s.Rows {
		dp := r.Epsilon > 0
		switch name {
		case "mse_by_setting":
			if dp {
				want = append(want, xy{math.Log2(r.Epsilon), r.MSEMean})
			}
		case "mse_vs_r2adv":
			want = append(want, xy{r.R2Adv, r.MSEMean})
		case "mse_vs_tauadv":
			want = append(want, xy{r.TauAdv, r.MSEMean})
			if dp {
				want = append(want, xy{r.TauAdvBound, r.MSEMean})
			}
		case "tau_vs_bound":
			if dp {
				want = append(want, xy{math.Log2(r.Epsilon), r.TauAdv}, xy{math.Log2(r.Epsilon), r.TauAdvBound})
			}
		}
	}
	if name == "value_posteriors" {
		for _, p := range post {
			want = append(want, xy{p.PriorMean, p.PostMean})
		}
	}
	have := map[xy]bool{}
	for _, p := range f.panels {
		for _, sr := range p.series {
			for _, q := range sr.pts {
				have[q] = true
			}
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("%s: no point at (%v, %v)", name, w.X, w.Y)
		}
	}
}

// value_posteriors compares mechanisms at one ε: the ε most DP settings
// share (ties: nearest 1, then the larger), at most maxValuePostPanels of
// them; with every ε of one setting, spread over the samples' order.
func TestValuePostSettings(t *testing.T) {
	one := func(set string, k pets.Kind, e float64) report.ValuePosterior {
		return report.ValuePosterior{Setting: set, Pet: k, Epsilon: e}
	}
	cases := []struct {
		name string
		post []report.ValuePosterior
		want []string
		eps  float64
	}{
		{"the ε the mechanisms share", []report.ValuePosterior{one("none", pets.None, 0), one("laplace_eps1", pets.LaplaceValue, 1),
			one("laplace_eps8", pets.LaplaceValue, 8), one("rr_bins_eps1", pets.RRBins, 1), one("rr_bins_eps8", pets.RRBins, 8),
			one("value_bags_k8_eps1", pets.ValueBags, 1), one("value_bags_k8", pets.ValueBags, 0)},
			[]string{"laplace_eps1", "rr_bins_eps1", "value_bags_k8_eps1"}, 1},
		{"a tie goes to the ε nearest 1", []report.ValuePosterior{one("laplace_eps4", pets.LaplaceValue, 4), one("laplace_eps0.5", pets.LaplaceValue, 0.5),
			one("rr_bins_eps4", pets.RRBins, 4), one("rr_bins_eps0.5", pets.RRBins, 0.5)},
			[]string{"laplace_eps0.5", "rr_bins_eps0.5"}, 0.5},
		{"as near 1: the larger", []report.ValuePosterior{one("a_eps0.5", pets.LaplaceValue, 0.5), one("a_eps2", pets.LaplaceValue, 2),
			one("b_eps0.5", pets.RRBins, 0.5), one("b_eps2", pets.RRBins, 2)},
			[]string{"a_eps2", "b_eps2"}, 2},
		{"one setting at each ε: spread", []report.ValuePosterior{one("s1", pets.LaplaceValue, 1), one("s2", pets.LaplaceValue, 2),
			one("s3", pets.LaplaceValue, 3), one("s4", pets.LaplaceValue, 4), one("s5", pets.LaplaceValue, 5), one("s6", pets.LaplaceValue, 6), one("s7", pets.LaplaceValue, 7)},
			[]string{"s1", "s3", "s5", "s7"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var order []string
			by := map[string][]report.ValuePosterior{}
			for _, p := range tc.post {
				order = append(order, p.Setting)
				by[p.Setting] = append(by[p.Setting], p)
			}
			got, eps := valuePostSettings(order, by)
			if !slices.Equal(got, tc.want) || eps != tc.eps {
				t.Errorf("got %v at ε %v, want %v at ε %v", got, eps, tc.want, tc.eps)
			}
		})
	}
}
