package model

import (
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gomlx/gomlx/backends"
)

// benchGroups runs Bench for each configuration as a sub-benchmark and
// reports aggregate and per-replica examples/s and compile_s. Run e.g.
//
//	go test ./model/ -run '^$' -bench 'Higgs' -benchtime 1x
func benchGroups(b *testing.B, cfg BenchConfig) {
	for _, loss := range cfg.withDefaults().Losses {
		for _, r := range cfg.withDefaults().Replicas {
			c := cfg
			c.Losses, c.Replicas = []Loss{loss}, []int{r}
			b.Run(fmt.Sprintf("%s/R=%d", loss, r), func(b *testing.B) {
				var row BenchRow
				for range b.N {
					rows, err := Bench(b.Context(), goBackend(b), c)
					if err != nil {
						b.Fatal(err)
					}
					row = rows[0]
				}
				b.ReportMetric(row.ExamplesPerS, "ex/s")
				b.ReportMetric(row.PerReplicaExamplesPerS, "ex/s/model")
				b.ReportMetric(row.CompileS, "compile_s")
				b.ReportMetric(row.CPUPerExampleUs, "cpu_us/ex")
			})
		}
	}
}

// BenchmarkHiggs measures the Higgs MLP (28→300×4→1), batch
// 1024 per replica: R ∈ {1, 8, 64} × {bce, debiased_bce, propmatch k=64}.
// R=64 takes minutes per row on 2 cores: select with -bench 'Higgs/.*/R=(1|8)$'.
func BenchmarkHiggs(b *testing.B) {
	benchGroups(b, BenchConfig{Steps: 8})
}

// BenchmarkHiggsResident compares resident features with host batches.
func BenchmarkHiggsResident(b *testing.B) {
	for _, mode := range []ResidentMode{ResidentNever, ResidentAlways} {
		b.Run(mode.String(), func(b *testing.B) {
			benchGroups(b, BenchConfig{Steps: 8, Losses: []Loss{LossBCE}, Replicas: []int{1, 8}, Resident: mode})
		})
	}
}

// BenchmarkKDD is kdd_embed at the paper's 500,000 buckets, 11 indices per
// row, batch 1024: lazy Adam with the table on the host (the default on
// "go") or on the device, and dense Adam.
func BenchmarkKDD(b *testing.B) {
	for _, tc := range []struct {
		name     string
		sparse   bool
		resident ResidentMode
		steps    int
	}{{"lazy_host", true, ResidentNever, 200}, {"lazy_device", true, ResidentAlways, 10}, {"dense", false, ResidentAuto, 6}} {
		b.Run(tc.name, func(b *testing.B) {
			benchGroups(b, BenchConfig{Model: ModelConfig{Kind: KindKDDEmbed}, Losses: []Loss{LossBCE}, Replicas: []int{1},
				Steps: tc.steps, SparseEmbedding: tc.sparse, Resident: tc.resident})
		})
	}
}

// BenchmarkHiggsRRGrid times a slice of the paper's Higgs RR grid end to end
// (sources, training, prediction of a test set, AUC): 2 ε × 8 learning
// rates = 16 models as 2 groups of 8 (one per ε), one epoch of 16,384 rows,
// and extrapolates linearly in examples to the whole grid, 10 ε × 8 LR × 10
// trials = 800 models on 1M rows, one epoch each, reported as grid_h.
func BenchmarkHiggsRRGrid(b *testing.B) {
	const rows, test, batch = 16 * 1024, 4096, 1024
	w, bias := trueModel(28, 1, 3)
	tr, te := makeLogistic(rows, w, bias, 2), makeLogistic(test, w, bias, 3)
	feat, testFeat := denseFrame(tr.X, 28), denseFrame(te.X, 28)
	lrs := []float64{1e-6, 5e-6, 1e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2}
	var wall time.Duration
	for range b.N {
		start := time.Now()
		for _, eps := range []float64{0.5, 4} {
			pi := 1 / (1 + math.Exp(eps))
			labels := randomizedResponse(tr.Y, pi, uint64(eps*10))
			reps := make([]Replica, len(lrs))
			for i, lr := range lrs {
				reps[i] = Replica{Name: fmt.Sprintf("eps=%g lr=%g", eps, lr), Seed: uint64(i), LR: lr, Params: LossParams{FlipProb: pi},
					Source: source(b, feat, srcOpts{labels: labels, batch: batch, seed: uint64(i)})}
			}
			g, err := TrainGroup(b.Context(), GroupConfig{Name: "grid", Backend: goBackend(b), Model: ModelConfig{Kind: KindHiggsMLP, InputDim: 28},
				Loss: LossDebiasedBCE, Features: feat, Replicas: reps})
			if err != nil {
				b.Fatal(err)
			}
			p, err := g.Predict(testFeat)
			if err != nil {
				b.Fatal(err)
			}
			for _, q := range p {
				_ = testAUC(b, q, te.Y)
			}
			g.Close()
		}
		wall = time.Since(start)
	}
	perExample := wall.Seconds() / float64(len(lrs)*2*rows)
	b.ReportMetric(wall.Seconds(), "s/16_models")
	b.ReportMetric(perExample*800*1e6/3600, "grid_h")
}

// BenchmarkClasses compares the Higgs MLP's binary head (one logit, 28→
// 300×4→1) with a softmax head of 10 classes on the same layers (28→300×4→
// 10), batch 1024 per replica, R ∈ {1, 8}: C=2 with bce, debiased_bce and
// propmatch (k=64), C=10 with ce, forward_ce and propmatch_ce (k=64).
// Compare cpu_us/ex (robust to other load):
//
//	go test ./model/ -run '^$' -bench 'Classes' -benchtime 1x
func BenchmarkClasses(b *testing.B) {
	b.Run("C=2", func(b *testing.B) { benchGroups(b, BenchConfig{Steps: benchClassSteps, Replicas: []int{1, 8}}) })
	b.Run("C=10", func(b *testing.B) {
		benchGroups(b, BenchConfig{Steps: benchClassSteps, Model: ModelConfig{Kind: KindHiggsMLP, InputDim: 28, Classes: 10}, Replicas: []int{1, 8}})
	})
}

// TestBenchClasses: Bench trains a C-class model with its default losses
// and reports a measured row for each.
func TestBenchClasses(t *testing.T) {
	var rows []BenchRow
	got, err := Bench(t.Context(), goBackend(t), BenchConfig{Model: ModelConfig{Kind: KindMLP, InputDim: 6, Hidden: []int{8}, Classes: 5},
		Replicas: []int{2}, Batch: 64, BagSize: 8, Steps: 3, Row: func(r BenchRow) { rows = append(rows, r) }})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range got {
		names = append(names, r.Loss)
		if !(r.ExamplesPerS > 0) || r.Replicas != 2 || r.Steps != 3 {
			t.Errorf("row %+v", r)
		}
	}
	if want := []string{"ce", "forward_ce", "propmatch_ce"}; !slices.Equal(names, want) || len(rows) != 3 {
		t.Errorf("losses %v, want %v", names, want)
	}
}

// benchClassSteps is BenchmarkClasses' steps per group.
const benchClassSteps = 100

// Bench with a backend alongside trains two groups per row at once and
// reports their aggregate; combineSteady's window runs from the earliest
// end of a first step to the latest end, counting every group's steady
// examples and the process CPU between.
func TestBenchGroupsAtOnce(t *testing.T) {
	be := goBackend(t)
	more, err := NewBackend(os.Getenv("MODEL_TEST_BACKEND"))
	if err != nil {
		t.Fatal(err)
	}
	defer more.Finalize()
	cfg := BenchConfig{Model: ModelConfig{Kind: KindMLP, InputDim: 4, Hidden: []int{8}}, Losses: []Loss{LossBCE},
		Replicas: []int{2}, Batch: 64, Steps: 6, Alongside: []backends.Backend{more}}
	rows, err := Bench(t.Context(), be, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	m, _ := cfg.Model.WithDefaults()
	if r.Groups != 2 || r.StateBytes != 2*m.StateBytes(2) || !(r.ExamplesPerS > 0) ||
		math.Abs(r.PerReplicaExamplesPerS*4-r.ExamplesPerS) > 1e-9*r.ExamplesPerS {
		t.Fatalf("row %+v: want 2 groups of 2 models, their state and a rate per model a quarter of the aggregate", r)
	}

	t0 := time.Unix(1000, 0)
	g := func(from, to float64, cpuFrom, cpuTo time.Duration, examples int64) *Group {
		return &Group{steady: steadyState{from: t0.Add(time.Duration(from * float64(time.Second))),
			to: t0.Add(time.Duration(to * float64(time.Second))), cpuFrom: cpuFrom, cpuTo: cpuTo, examples: examples}}
	}
	_, eps, cpu := combineSteady([]*Group{g(1, 9, 2*time.Second, 17*time.Second, 600), g(0.5, 10, time.Second, 19*time.Second, 400)})
	// Window 0.5 s … 10 s: 1,000 examples in 9.5 s; CPU 1 s … 19 s.
	if math.Abs(eps-1000/9.5) > 1e-9 || math.Abs(cpu-18e6/1000) > 1e-6 {
		t.Fatalf("combineSteady: %v ex/s and %v µs/example, want %v and %v", eps, cpu, 1000/9.5, 18e6/1000)
	}
}
