package pipeline

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// Every trained run keeps its learning curve: per epoch, the mean training
// loss and the test AUC and log-loss of the model at its end; the last
// point is the run's own result. learning_curves.csv/.parquet hold them
// all. A run whose loss explodes (lr 1e9: ~1e18 or more) is named in a
// warning; the others are not.
func TestLearningCurvesAndDivergence(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Epochs, c.Train.Trials = 3, 1
	c.Train.LearningRates = []float64{1e9, 0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{4}}, {Mechanism: pets.Bot}}
	s, rec := openRec(t, c)
	runs, err := Fit(context.Background(), s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := writeRunTables(s, runs); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, r := range runs {
		if r.Pet == pets.Bot {
			if r.Curve != nil {
				t.Errorf("bot trains nothing but has a curve %v", r.Curve)
			}
			continue
		}
		if len(r.Curve) != 3 {
			t.Fatalf("%s lr=%g: %d curve points, want 3", r.Setting, r.LR, len(r.Curve))
		}
		last := r.Curve[2]
		if last.Epoch != 3 || last.TrainLoss != r.TrainLoss || last.TestAUC != r.TestAUC || last.TestLogLoss != r.TestLogLoss {
			t.Fatalf("%s lr=%g: last point %+v, run loss %v AUC %v log-loss %v", r.Setting, r.LR, last, r.TrainLoss, r.TestAUC, r.TestLogLoss)
		}
		if r.Curve[0].TestAUC == last.TestAUC || r.Curve[0].TrainLoss == last.TrainLoss {
			t.Errorf("%s lr=%g: the curve does not move: %+v", r.Setting, r.LR, r.Curve)
		}
		points += 3
		warned := slices.ContainsFunc(rec.warns, func(w string) bool {
			return strings.HasPrefix(w, fmt.Sprintf("fit: %s lr=%g ", r.Setting, r.LR)) && strings.Contains(w, "diverged")
		})
		if warned != (r.LR == 1e9) {
			t.Errorf("%s lr=%g (loss %.3g): divergence warning %v; warnings %q", r.Setting, r.LR, r.TrainLoss, warned, rec.warns)
		}
	}
	tab, err := data.ReadTable(s.Out("learning_curves.parquet"))
	if err != nil || tab.Rows() != points {
		t.Fatalf("learning_curves.parquet: %v, %d rows, want %d", err, tab.Rows(), points)
	}
	var names []string
	for _, col := range tab.Columns {
		names = append(names, col.Name)
		if col.Name == "test_auc" {
			for _, v := range col.Values.([]float64) {
				if math.IsNaN(v) {
					t.Fatal("a NaN test AUC in a dense model's curve")
				}
			}
		}
	}
	want := []string{"run_id", "setting", "pet", "k", "epsilon", "lr", "trial", "epoch", "train_loss", "test_auc", "test_logloss", "test_accuracy"}
	if !slices.Equal(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	// The report draws the curves and links the figure.
	if _, err := Report(s, runs, nil); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(s.Out("report.md"))
	if err != nil || !strings.Contains(string(md), "](figures/learning_curves.png)") {
		t.Fatalf("report.md does not link the learning curves (%v)", err)
	}
	if _, err := os.Stat(s.Out("figures", "learning_curves.svg")); err != nil {
		t.Fatal(err)
	}
}

// The test set is predicted once per epoch trained: the learning curve's
// prediction after the last epoch is the run's result, not predicted again
// (the trained parameters are the last epoch's, bit for bit: model's
// TestEpochEnd). A prior model (rr_prior), which keeps no curve, is
// predicted once, after training.
func TestTestSetPredictedOncePerEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	for _, epochs := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d epochs", epochs), func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			c.Train.Epochs, c.Train.Trials = epochs, 1
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{4}},
				{Mechanism: pets.RRPrior, Epsilon: []float64{1}}}
			s, _ := openRec(t, c)
			ex, err := newModelExecutor(c.Backend)
			if err != nil {
				t.Fatal(err)
			}
			defer ex.Close()
			runs, err := Fit(context.Background(), s, FitOptions{executor: ex})
			if err != nil {
				t.Fatal(err)
			}
			replicas, err := s.Replicas()
			if err != nil {
				t.Fatal(err)
			}
			g := len(formGroups(s.runs, replicas))
			if g < 2 {
				t.Fatalf("%d groups: the test wants several", g)
			}
			// rr_prior's prior model: one pass over its stage-2 rows and the test set.
			if n := ex.predictions.Load(); n != int64(epochs*g+1) {
				t.Fatalf("%d test-set predictions for %d groups × %d epochs and a prior model, want %d", n, g, epochs, epochs*g+1)
			}
			for _, r := range runs {
				last := r.Curve[len(r.Curve)-1]
				if len(r.Curve) != epochs || last.TestAUC != r.TestAUC || last.TestLogLoss != r.TestLogLoss || last.TestAccuracy != r.TestAccuracy {
					t.Errorf("%s lr=%g: curve %+v, result AUC %v log-loss %v accuracy %v", r.Setting, r.LR, r.Curve, r.TestAUC, r.TestLogLoss, r.TestAccuracy)
				}
			}
		})
	}
}
