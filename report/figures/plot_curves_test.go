package figures

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// curveSpec is a setting of curveRuns.
type curveSpec struct {
	id  string
	pet pets.Kind
	k   int
	eps float64
}

// curveRuns makes a grid's runs with learning curves whose values tell
// their learning rate, trial and epoch apart: test AUC 0.6 + 0.03·(LR
// index) + 0.01·epoch + 0.002·trial + 0.001·(setting index), training loss
// 0.7 − 0.05·epoch − 0.02·(LR index) + 0.003·trial; a learning rate of
// 1 or more diverges (loss 1.7e18, AUC 0.5). Bot has no curve.
func curveRuns(specs []curveSpec, lrs []float64, trials, epochs int) []report.Run {
	var runs []report.Run
	for si, s := range specs {
		for li, lr := range lrs {
			for tr := range trials {
				r := reporttest.Run(s.id, s.pet, s.k, s.eps, tr, fmt.Sprintf("%s-%g-%d", s.id, lr, tr), 0)
				r.LR, r.Epochs = lr, epochs
				if s.pet != pets.Bot {
					for e := 1; e <= epochs; e++ {
						p := report.EpochPoint{Epoch: e, TestAccuracy: math.NaN(), TestLogLoss: 0.5,
							TestAUC:   0.6 + 0.03*float64(li) + 0.01*float64(e) + 0.002*float64(tr) + 0.001*float64(si),
							TrainLoss: 0.7 - 0.05*float64(e) - 0.02*float64(li) + 0.003*float64(tr)}
						if lr >= 1 {
							p.TrainLoss, p.TestAUC = 1.7e18, 0.5
						}
						r.Curve = append(r.Curve, p)
					}
					last := r.Curve[epochs-1]
					r.TestAUC, r.TrainLoss = last.TestAUC, last.TrainLoss
				}
				runs = append(runs, r)
			}
		}
	}
	return runs
}

// The quickstart's settings (bot added: it has no curve) and a grid of 10.
var (
	quickSpecs = []curveSpec{{"none", pets.None, 0, 0}, {"rr_eps1", pets.RR, 0, 1}, {"rr_eps4", pets.RR, 0, 4},
		{"llp_k8", pets.LLP, 8, 0}, {"llp_geom_k8_eps1", pets.LLPGeom, 8, 1}, {"bot", pets.Bot, 0, 0}}
	gridSpecs = []curveSpec{{"none", pets.None, 0, 0}, {"rr_eps0.5", pets.RR, 0, 0.5}, {"rr_eps1", pets.RR, 0, 1},
		{"rr_eps2", pets.RR, 0, 2}, {"rr_eps4", pets.RR, 0, 4}, {"llp_k2", pets.LLP, 2, 0}, {"llp_k8", pets.LLP, 8, 0},
		{"llp_k32", pets.LLP, 32, 0}, {"llp_lap_k8_eps1", pets.LLPLap, 8, 1}, {"llp_geom_k8_eps1", pets.LLPGeom, 8, 1}}
	gridLRs = []float64{1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 3}
)

// TestLearningCurvesFigure: one pair of panels (training loss, test AUC)
// per setting with a curve, in canonical order; one series per learning
// rate whose points are the means over trials of that learning rate's
// runs (epoch by epoch, or against the learning rate with one epoch), in
// that learning rate's own hue and marker in every panel; a diverged loss
// drawn at the top, not stretching the axis; every marker visible and
// every label clear, and ink of every learning rate's hue.
func TestLearningCurvesFigure(t *testing.T) {
	cases := []struct {
		name            string
		runs            []report.Run
		settings        int
		oneEpoch, off   bool
		lrs             []float64
		trials, example string // trials: "" for one trial
	}{
		{"quickstart: 5 runs, 2 epochs", curveRuns(quickSpecs, []float64{1e-3}, 1, 2), 5, false, false, []float64{1e-3}, "", "learning_curves_quickstart"},
		{"grid: 10 settings × 8 LRs × 2 trials, 1 epoch", curveRuns(gridSpecs, gridLRs, 2, 1), 10, true, true, gridLRs, "2 trials", ""}, // 570 KB: too big for testdata
		{"3 LRs × 2 trials, 4 epochs, one diverged", curveRuns(quickSpecs[:3], []float64{1e-3, 0.01, 1e9}, 2, 4), 3, false, true, []float64{1e-3, 0.01, 1e9}, "2 trials", "learning_curves_diverged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The specs are in canonical order; the figure must restore it.
			rev := slices.Clone(tc.runs)
			slices.Reverse(rev)
			f, err := learningCurvesFigure(rev)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.panels) != 2*tc.settings {
				t.Fatalf("%d panels, want 2 per setting (%d)", len(f.panels), tc.settings)
			}
			if !strings.Contains(f.note, "One epoch") != !tc.oneEpoch {
				t.Errorf("one epoch %v, note %q", tc.oneEpoch, f.note)
			}
			if strings.Contains(f.note, "Open triangles") != tc.off || strings.Contains(f.note, "Mean ± SE over up to 2 trials") != (tc.trials != "") {
				t.Errorf("note %q", f.note)
			}
			if len(f.legend) != len(tc.lrs) {
				t.Errorf("legend %v, want one item per learning rate", legendTexts(f.legend))
			}
			// Expected means, computed here from the runs.
			type key struct {
				setting, lr string
				x           float64
			}
			loss, auc := map[key][]float64{}, map[key][]float64{}
			titles := map[string]string{}
			for _, r := range tc.runs {
				if len(r.Curve) == 0 {
					continue
				}
				s := &curveSetting{id: r.Setting, run: r}
				titles[r.Setting] = s.title(nil)
				for _, p := range r.Curve {
					x := float64(p.Epoch)
					if tc.oneEpoch {
						x = r.LR
					}
					k := key{s.title(nil), "lr=" + fmtParam(r.LR), x}
					loss[k], auc[k] = append(loss[k], p.TrainLoss), append(auc[k], p.TestAUC)
				}
			}
			mean := func(v []float64) float64 { return aggregate(v).mean }
			var order []string
			for i, p := range f.panels {
				st, what, ok := strings.Cut(p.title, ": ")
				if !ok || what != []string{"training loss", "test AUC"}[i%2] {
					t.Fatalf("panel %d titled %q", i, p.title)
				}
				if i%2 == 0 {
					order = append(order, st)
				}
				if (p.x.scale != nil) != tc.oneEpoch {
					t.Errorf("%s: x scale %T (one epoch %v)", p.title, p.x.scale, tc.oneEpoch)
				}
				seen := 0
				for _, s := range p.series {
					if s.name == "across learning rates" {
						continue
					}
					lrName, offScale := strings.CutSuffix(s.name, " off the scale")
					li := slices.IndexFunc(tc.lrs, func(lr float64) bool { return "lr="+fmtParam(lr) == lrName })
					if li < 0 {
						t.Fatalf("%s: series %q", p.title, s.name)
					}
					if clr, g := lrStyle(li); s.glyph.Color != clr || !offScale && s.glyph.Shape != g {
						t.Errorf("%s %s: colour %v marker %T, want the learning rate's %v %T", p.title, s.name, s.glyph.Color, s.glyph.Shape, clr, g)
					}
					for _, q := range s.pts {
						k := key{st, lrName, q.X}
						want := mean(auc[k])
						if i%2 == 0 {
							want = mean(loss[k])
						}
						if offScale {
							if !(math.Abs(want) > lossCap) || !(q.Y <= p.y.max && q.Y > p.y.min) {
								t.Errorf("%s %s: off-scale marker at %v for a loss of %v (axis %v…%v)", p.title, s.name, q, want, p.y.min, p.y.max)
							}
						} else if math.IsNaN(want) || math.Abs(q.Y-want) > 1e-12 {
							t.Errorf("%s %s: point %v, want y = %v (the mean of its runs)", p.title, s.name, q, want)
						}
						seen++
					}
				}
				per := 1
				if !tc.oneEpoch {
					per = tc.runs[0].Epochs
				}
				if seen != per*len(tc.lrs) {
					t.Errorf("%s: %d points, want %d", p.title, seen, per*len(tc.lrs))
				}
				if i%2 == 0 && p.y.max > 100 {
					t.Errorf("%s: a diverged loss stretched the axis to %v", p.title, p.y.max)
				}
			}
			var want []string
			for _, r := range tc.runs {
				if tt, ok := titles[r.Setting]; ok && !slices.Contains(want, tt) {
					want = append(want, tt)
				}
			}
			if !slices.Equal(order, want) {
				t.Errorf("settings %q, want %q (canonical order)", order, want)
			}
			img := render(t, f)
			checkLayout(t, f)
			checkNoHiddenMarkers(t, f)
			for i := range tc.lrs {
				clr, _ := lrStyle(i)
				ink := 0
				for _, p := range f.panels {
					ink += inkOf(img, f, p, clr)
				}
				if ink == 0 {
					t.Errorf("no ink of lr=%g's hue", tc.lrs[i])
				}
			}
			keepExample(t, f, tc.example)
		})
	}
}

// The learning rates' hues are distinct and the palette ordered; bot
// alone, or no curves, is nothing to draw; runs of different class counts
// are refused; WriteCurvePlots writes PNG and SVG, or nothing.
func TestLearningCurvesEdges(t *testing.T) {
	for i := range lrHues {
		for j := range i {
			if lrHues[i] == lrHues[j] {
				t.Fatalf("hues %d and %d equal", j, i)
			}
		}
	}
	if _, err := learningCurvesFigure(curveRuns(quickSpecs[5:], []float64{1e-3}, 1, 2)); !errors.Is(err, ErrNoData) {
		t.Fatalf("bot only: %v", err)
	}
	runs := curveRuns(quickSpecs[:2], []float64{1e-3}, 1, 2)
	runs[1] = reporttest.Multi(runs[1], 3, 0.5)
	if _, err := learningCurvesFigure(runs); err == nil || !strings.Contains(err.Error(), "label classes") {
		t.Fatalf("mixed classes: %v", err)
	}
	dir := t.TempDir()
	figs, err := WriteCurvePlots(dir, curveRuns(quickSpecs, []float64{1e-3}, 1, 2))
	if err != nil || len(figs) != 1 || figs[0].Path != filepath.Join(dir, "learning_curves.png") {
		t.Fatalf("WriteCurvePlots: %v %v", figs, err)
	}
	checkFigureFiles(t, filepath.Join(dir, "learning_curves"))
	if figs, err := WriteCurvePlots(t.TempDir(), nil); err != nil || len(figs) != 0 {
		t.Fatalf("no runs: %v %v", figs, err)
	}
}
