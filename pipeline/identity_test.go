package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
	"labelprivacy/report"
)

func fitReal(t *testing.T, c *config.Config) []report.Run {
	t.Helper()
	s, err := Open(context.Background(), c, Exclusive, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := Fit(context.Background(), s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// groupTolerance bounds how far a run's test AUC may move when it trains
// inside a group instead of alone: batched and unbatched kernels may sum in
// another order (float32 rounding, ~1e-7 relative per operation). On
// backend go the difference measured here is 0 (bit-identical
// predictions); the bound leaves room for other kernels.
const groupTolerance = 1e-6

// A run's result does not depend on its group: the grid trained with
// train.replicas 1 and 8 gives the same run ids and, within groupTolerance,
// the same test AUCs and training losses.
func TestReplicasDoNotChangeResults(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 2 × 12 models")
	}
	base := func(r int) *config.Config {
		c := testConfig(filepath.Join(t.TempDir(), "out"))
		c.Data.Synth.Rows, c.Data.Synth.TestRows = 1500, 300
		c.Train.Epochs, c.Train.BatchSize = 2, 128
		c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{8}}}
		c.Train.Replicas = config.Replicas{N: r}
		return c
	}
	alone, grouped := fitReal(t, base(1)), fitReal(t, base(8))
	if len(alone) != 12 || len(grouped) != 12 {
		t.Fatalf("%d and %d runs", len(alone), len(grouped))
	}
	maxDiff := 0.0
	for i := range alone {
		a, g := alone[i], grouped[i]
		if a.RunID != g.RunID {
			t.Fatalf("run %d: id %s alone, %s grouped", i, a.RunID, g.RunID)
		}
		if g.Replicas < 2 || a.Replicas != 1 {
			t.Fatalf("run %s trained in groups of %d and %d", a.RunID, a.Replicas, g.Replicas)
		}
		d := max(math.Abs(a.TestAUC-g.TestAUC), math.Abs(a.TrainLoss-g.TrainLoss))
		maxDiff = max(maxDiff, d)
		if d > groupTolerance || math.IsNaN(d) {
			t.Fatalf("run %s (%s lr=%g trial %d): AUC %v alone, %v in a group of %d (loss %v, %v)",
				a.RunID, a.Setting, a.LR, a.Trial, a.TestAUC, g.TestAUC, g.Replicas, a.TrainLoss, g.TrainLoss)
		}
	}
	t.Logf("largest |ΔAUC|, |Δloss| between alone and grouped: %g", maxDiff)
}

// A run's identity is what it is, not where its data lies: the same config
// fitted on a copy of the dataset directory gives the same run ids and the
// same AUCs.
func TestIdentityIgnoresDatasetPath(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 2 × 2 models")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "a")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 800, TestRows: 200, Features: 4, Seed: 2, Out: dir}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(root, "elsewhere", "b")
	os.MkdirAll(moved, 0o755)
	for _, f := range []string{data.TrainFile, data.TestFile, data.MetaFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(moved, f), b, 0o644)
	}
	fit := func(path string) []report.Run {
		c := testConfig(filepath.Join(t.TempDir(), "out"))
		c.Data.Path = path
		c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
		c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{2}}}
		return fitReal(t, c)
	}
	a, b := fit(dir), fit(moved)
	for i := range a {
		if a[i].RunID != b[i].RunID || a[i].TestAUC != b[i].TestAUC || a[i].Dataset != b[i].Dataset {
			t.Fatalf("run %d: %s/%v/%s vs %s/%v/%s", i, a[i].RunID, a[i].TestAUC, a[i].Dataset, b[i].RunID, b[i].TestAUC, b[i].Dataset)
		}
	}
}
