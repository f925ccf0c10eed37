package model

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// evalSource wraps test features for Predict (targets unused).
func evalSource(d logisticData, batch int) *SliceSource {
	return &SliceSource{X: d.X, Dim: d.Dim, Target: make([]float32, len(d.Y)), BatchRows: batch}
}

func mustPredict(t *testing.T, m *Trained, src BatchSource) []float32 {
	t.Helper()
	p, err := m.Predict(src)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEndToEndSynthetic trains on synthetic logistic data (known w) and
// compares test AUC with the Bayes AUC, the AUC of the true η.
func TestEndToEndSynthetic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end training skipped with -short")
	}
	const d, nTrain, nTest = 28, 50_000, 10_000
	w, b := trueModel(d, 1, 3)
	tr := makeLogistic(nTrain, w, b, 2)
	te := makeLogistic(nTest, w, b, 3)
	bayes := AUC(te.Eta, te.Y)
	var prior float64
	for _, y := range tr.Y {
		prior += float64(y)
	}
	prior /= nTrain

	const epsRR = 1.0
	pi := 1 / (1 + math.Exp(epsRR))
	const k = 8
	tests := []struct {
		name    string
		loss    Loss
		params  LossParams
		target  []float32
		bag     int
		lr      float64
		epochs  int
		maxDrop float64 // allowed AUC gap to Bayes
	}{
		{name: "clean bce", loss: LossBCE, target: labelsAsTarget(tr.Y), lr: 1e-3, epochs: 5, maxDrop: 0.01},
		{name: "rr eps=1 debiased", loss: LossDebiasedBCE, params: LossParams{FlipProb: pi},
			target: randomizedResponse(tr.Y, pi, 4), lr: 1e-3, epochs: 5, maxDrop: 0.03},
		{name: "llp k=8 propmatch", loss: LossPropMatch, target: bagProportions(tr.Y, k), bag: k, lr: 1e-3, epochs: 5, maxDrop: 0.03},
		{name: "llp k=8 easyllp", loss: LossEasyLLP, params: LossParams{Prior: prior},
			target: bagProportions(tr.Y, k), bag: k, lr: 1e-3, epochs: 5, maxDrop: 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := TrainConfig{Name: tc.name, Backend: goBackend(t),
				Model: ModelConfig{Kind: KindMLP, InputDim: d, Hidden: []int{32}},
				Loss:  tc.loss, LossParams: tc.params, LearningRate: tc.lr, Epochs: tc.epochs, Seed: 1}
			src := &SliceSource{X: tr.X, Dim: d, Target: tc.target, BagSize: tc.bag, BatchRows: 512, Shuffle: true, Seed: 9}
			m, err := Train(t.Context(), cfg, src)
			if err != nil {
				t.Fatal(err)
			}
			p := mustPredict(t, m, evalSource(te, 4096))
			auc := AUC(p, te.Y)
			t.Logf("%-18s test AUC %.4f (Bayes %.4f, gap %.4f) test logloss %.4f train loss %.4f, %d steps, %.0f ex/s, %v",
				tc.name, auc, bayes, bayes-auc, LogLoss(p, te.Y), m.FinalLoss, m.Steps, m.ExamplesPerSec, m.Wall.Round(1e6))
			if bayes-auc > tc.maxDrop {
				t.Errorf("test AUC %.4f is more than %.2f below the Bayes AUC %.4f", auc, tc.maxDrop, bayes)
			}
		})
	}
}

// TestDeterminism: same seed, same backend, same batches → identical
// predictions; another seed → different ones.
func TestDeterminism(t *testing.T) {
	w, b := trueModel(12, 2, 2)
	tr := makeLogistic(2048, w, b, 3)
	te := makeLogistic(500, w, b, 4)
	tests := []struct {
		name  string
		model ModelConfig
	}{
		{"mlp", ModelConfig{Kind: KindMLP, InputDim: 12, Hidden: []int{64, 32}}},
		{"higgs_mlp", ModelConfig{Kind: KindHiggsMLP, InputDim: 12}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := func(seed int64) []float32 {
				cfg := TrainConfig{Name: "det", Backend: goBackend(t), Model: tc.model, Loss: LossBCE, Epochs: 2, Seed: seed}
				src := &SliceSource{X: tr.X, Dim: 12, Target: labelsAsTarget(tr.Y), BatchRows: 512, Shuffle: true, Seed: 5}
				m, err := Train(t.Context(), cfg, src)
				if err != nil {
					t.Fatal(err)
				}
				return mustPredict(t, m, evalSource(te, 500))
			}
			a, b, c := run(7), run(7), run(8)
			if !slices.Equal(a, b) {
				t.Fatal("same seed gave different predictions")
			}
			if slices.Equal(a, c) {
				t.Fatal("different seeds gave identical predictions")
			}
		})
	}
}

// TestCheckpointResume trains 2 epochs with checkpoints, then builds a run on
// the same directory: it resumes at the saved step. A run killed mid-way
// (context cancelled) and resumed ends exactly like an uninterrupted one.
func TestCheckpointResume(t *testing.T) {
	w, b := trueModel(8, 3, 2)
	tr := makeLogistic(2000, w, b, 4)
	te := makeLogistic(300, w, b, 5)
	newSrc := func() *SliceSource {
		return &SliceSource{X: tr.X, Dim: 8, Target: labelsAsTarget(tr.Y), BatchRows: 200, Shuffle: true, Seed: 3}
	}
	base := TrainConfig{Name: "ckpt", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 8, Hidden: []int{16}},
		Loss: LossBCE, Seed: 11, CheckpointEvery: 4}
	const stepsPerEpoch = 10

	t.Run("resume at saved step", func(t *testing.T) {
		cfg := base
		cfg.CheckpointDir = t.TempDir()
		cfg.Epochs = 2
		m1, err := Train(t.Context(), cfg, newSrc())
		if err != nil {
			t.Fatal(err)
		}
		if m1.Steps != 2*stepsPerEpoch || m1.ResumedFrom != 0 {
			t.Fatalf("first run: steps %d resumed from %d", m1.Steps, m1.ResumedFrom)
		}
		m2, err := Train(t.Context(), cfg, newSrc())
		if err != nil {
			t.Fatal(err)
		}
		if m2.ResumedFrom != 2*stepsPerEpoch || m2.StepsRun != 0 || m2.Steps != 2*stepsPerEpoch {
			t.Fatalf("second run: resumed from %d, ran %d, steps %d; want resume at %d, run 0", m2.ResumedFrom, m2.StepsRun, m2.Steps, 2*stepsPerEpoch)
		}
		if p1, p2 := mustPredict(t, m1, evalSource(te, 300)), mustPredict(t, m2, evalSource(te, 300)); !slices.Equal(p1, p2) {
			t.Fatal("restored model predicts differently")
		}
		if math.Abs(m2.FinalLoss-m1.FinalLoss) > 0.05 || math.IsNaN(m2.FinalLoss) {
			t.Fatalf("restored run's loss %v far from %v", m2.FinalLoss, m1.FinalLoss)
		}
	})

	t.Run("killed run resumes like an uninterrupted one", func(t *testing.T) {
		cfg := base
		cfg.Epochs = 3
		full, err := Train(t.Context(), cfg, newSrc())
		if err != nil {
			t.Fatal(err)
		}
		want := mustPredict(t, full, evalSource(te, 300))

		cfg.CheckpointDir = t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		killed := cfg
		killed.ProgressEvery = 1
		killed.Progress = func(p Progress) {
			if p.Step == 13 {
				cancel() // "kill" after step 13, mid epoch 2
			}
		}
		if _, err := Train(ctx, killed, newSrc()); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run returned %v", err)
		}
		resumed, err := Train(t.Context(), cfg, newSrc())
		if err != nil {
			t.Fatal(err)
		}
		if resumed.ResumedFrom != 13 || resumed.Steps != 3*stepsPerEpoch {
			t.Fatalf("resumed from %d to %d, want 13 to %d", resumed.ResumedFrom, resumed.Steps, 3*stepsPerEpoch)
		}
		if got := mustPredict(t, resumed, evalSource(te, 300)); !slices.Equal(got, want) {
			t.Fatal("resumed run differs from the uninterrupted run")
		}
	})

	// A process killed while GoMLX writes a checkpoint leaves it truncated;
	// the next run sets it aside and resumes from the previous one.
	t.Run("truncated newest checkpoint is skipped", func(t *testing.T) {
		for _, damage := range []string{"empty bin", "half bin", "empty json"} {
			t.Run(damage, func(t *testing.T) {
				cfg := base
				cfg.CheckpointDir = t.TempDir()
				cfg.Epochs = 2
				if _, err := Train(t.Context(), cfg, newSrc()); err != nil {
					t.Fatal(err)
				}
				jsons, _ := filepath.Glob(filepath.Join(cfg.CheckpointDir, "checkpoint-*.json"))
				slices.Sort(jsons)
				if len(jsons) < 2 {
					t.Fatalf("want ≥ 2 checkpoints, got %v", jsons)
				}
				newest := strings.TrimSuffix(jsons[len(jsons)-1], ".json")
				switch damage {
				case "empty bin":
					os.WriteFile(newest+".bin", nil, 0o644)
				case "half bin":
					b, _ := os.ReadFile(newest + ".bin")
					os.WriteFile(newest+".bin", b[:len(b)/2], 0o644)
				case "empty json":
					os.WriteFile(newest+".json", nil, 0o644)
				}
				m, err := Train(t.Context(), cfg, newSrc())
				if err != nil {
					t.Fatal(err)
				}
				// The previous checkpoint's step is in its name: ...-step-00000016.json.
				prev := jsons[len(jsons)-2]
				wantStep, err := strconv.Atoi(strings.TrimLeft(prev[strings.LastIndex(prev, "-step-")+6:len(prev)-5], "0"))
				if err != nil {
					t.Fatal(err)
				}
				if m.ResumedFrom != int64(wantStep) || m.Steps != 2*stepsPerEpoch {
					t.Fatalf("resumed from %d to %d; want the previous checkpoint's step %d, then %d", m.ResumedFrom, m.Steps, wantStep, 2*stepsPerEpoch)
				}
				if _, err := os.Stat(filepath.Join(cfg.CheckpointDir, "incomplete", filepath.Base(newest)+".bin")); err != nil {
					t.Fatalf("damaged checkpoint not set aside: %v", err)
				}
			})
		}
	})

	t.Run("other model in the directory is an error", func(t *testing.T) {
		cfg := base
		cfg.CheckpointDir = t.TempDir()
		if _, err := Train(t.Context(), cfg, newSrc()); err != nil {
			t.Fatal(err)
		}
		cfg.Model.Hidden = []int{8}
		_, err := Train(t.Context(), cfg, newSrc())
		if err == nil || !strings.Contains(err.Error(), `run "ckpt": checkpoint in`) || strings.Contains(err.Error(), "panic") {
			t.Fatalf("want a checkpoint-mismatch error naming the run, got %v", err)
		}
	})
}

func TestTrainErrors(t *testing.T) {
	w, b := trueModel(4, 1, 1)
	tr := makeLogistic(256, w, b, 1)
	nanTarget := labelsAsTarget(tr.Y)
	nanTarget[3] = float32(math.NaN())
	tests := []struct {
		name    string
		cfg     TrainConfig
		src     *SliceSource
		wantErr []string
	}{
		{
			name:    "nan loss names the run",
			cfg:     TrainConfig{Name: "run-nan", Model: ModelConfig{Kind: KindMLP, InputDim: 4}, Loss: LossBCE},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: nanTarget, BatchRows: 64},
			wantErr: []string{"run-nan", "non-finite"},
		},
		{
			name:    "wrong input dim",
			cfg:     TrainConfig{Name: "run-dim", Model: ModelConfig{Kind: KindMLP, InputDim: 5}, Loss: LossBCE},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: labelsAsTarget(tr.Y), BatchRows: 64},
			wantErr: []string{"run-dim", "X of"},
		},
		{
			name:    "propmatch without bags",
			cfg:     TrainConfig{Name: "run-bags", Model: ModelConfig{Kind: KindMLP, InputDim: 4}, Loss: LossPropMatch},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: labelsAsTarget(tr.Y), BatchRows: 64},
			wantErr: []string{"run-bags", "bag"},
		},
		{
			name:    "bad flip probability",
			cfg:     TrainConfig{Name: "run-pi", Model: ModelConfig{Kind: KindMLP, InputDim: 4}, Loss: LossDebiasedBCE, LossParams: LossParams{FlipProb: 0.5}},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: labelsAsTarget(tr.Y), BatchRows: 64},
			wantErr: []string{"run-pi", "flip"},
		},
		{
			name:    "higgs_mlp with other layers",
			cfg:     TrainConfig{Name: "run-h", Model: ModelConfig{Kind: KindHiggsMLP, InputDim: 4, Hidden: []int{3}}, Loss: LossBCE},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: labelsAsTarget(tr.Y), BatchRows: 64},
			wantErr: []string{"run-h", "higgs_mlp"},
		},
		{
			name:    "unknown backend",
			cfg:     TrainConfig{Name: "run-b", BackendName: "nope", Model: ModelConfig{Kind: KindMLP, InputDim: 4}, Loss: LossBCE},
			src:     &SliceSource{X: tr.X, Dim: 4, Target: labelsAsTarget(tr.Y), BatchRows: 64},
			wantErr: []string{"nope"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Train(t.Context(), tc.cfg, tc.src)
			if err == nil {
				t.Fatal("Train succeeded, want an error")
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not mention %q", err, s)
				}
			}
		})
	}
}

func TestRecoverGraphPanic(t *testing.T) {
	f := func() (err error) {
		defer recoverErr("run-panic", &err)
		panic(errors.New("boom"))
	}
	if err := f(); err == nil || !strings.Contains(err.Error(), "run-panic") || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("got %v", err)
	}
}

func TestProgressAndPredictShapes(t *testing.T) {
	w, b := trueModel(6, 1, 2)
	tr := makeLogistic(1000, w, b, 2)
	var reports []Progress
	var buf bytes.Buffer
	cfg := TrainConfig{Name: "prog", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 6}, Loss: LossBCE,
		Epochs: 2, ProgressEvery: 3, Progress: func(p Progress) { reports = append(reports, p) }, ProgressWriter: &buf}
	// 1000 rows in batches of 300: 300, 300, 300, 100 (smaller last batch).
	m, err := Train(t.Context(), cfg, &SliceSource{X: tr.X, Dim: 6, Target: labelsAsTarget(tr.Y), BatchRows: 300})
	if err != nil {
		t.Fatal(err)
	}
	if m.Steps != 8 || m.Examples != 2000 || m.ExamplesPerSec <= 0 || m.Wall <= 0 {
		t.Fatalf("summary: steps %d examples %d ex/s %v wall %v", m.Steps, m.Examples, m.ExamplesPerSec, m.Wall)
	}
	// Reports at steps 3 and 6, plus the final one.
	if len(reports) != 3 || reports[0].Step != 3 || reports[1].Step != 6 || !reports[2].Done || reports[2].Step != 8 {
		t.Fatalf("progress reports: %+v", reports)
	}
	if !strings.Contains(buf.String(), "prog: epoch 2/2 step 8") {
		t.Fatalf("progress writer got %q", buf.String())
	}
	defer func() {
		m.Close()
		m.Close() // idempotent
		if _, err := m.Predict(evalSource(tr, 100)); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Errorf("Predict after Close: %v", err)
		}
	}()
	for _, batch := range []int{1000, 300, 7, 1} {
		p := mustPredict(t, m, evalSource(tr, batch))
		if len(p) != 1000 {
			t.Fatalf("batch %d: %d predictions", batch, len(p))
		}
		for _, v := range p {
			if !(v >= 0 && v <= 1) {
				t.Fatalf("probability %v", v)
			}
		}
	}
}

// sparseData draws kdd_embed-like data: each row has 1..width hashed indices;
// the label depends on a per-bucket weight summed over the row's indices.
func sparseData(n, width, buckets int, seed uint64) (idx []int32, mask []float32, y []uint8) {
	r := rand.New(rand.NewPCG(seed, 1))
	wr := rand.New(rand.NewPCG(99, 1)) // the same bucket weights for every call
	bw := make([]float64, buckets)
	for i := range bw {
		bw[i] = wr.NormFloat64()
	}
	idx, mask, y = make([]int32, n*width), make([]float32, n*width), make([]uint8, n)
	for i := range n {
		m := 1 + r.IntN(width)
		z := 0.0
		for j := range m {
			ix := r.IntN(buckets)
			idx[i*width+j], mask[i*width+j] = int32(ix), 1
			z += bw[ix]
		}
		if r.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return idx, mask, y
}

func TestKDDEmbedLearns(t *testing.T) {
	const width, buckets = 6, 200
	idx, mask, y := sparseData(8000, width, buckets, 1)
	tidx, tmask, ty := sparseData(2000, width, buckets, 2)
	cfg := TrainConfig{Name: "kdd", Backend: goBackend(t), Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets},
		Loss: LossBCE, Epochs: 4, Seed: 1, LearningRate: 3e-3}
	m, err := Train(t.Context(), cfg, &SliceSource{Indices: idx, IndexMask: mask, Width: width, Target: labelsAsTarget(y), BatchRows: 256, Shuffle: true})
	if err != nil {
		t.Fatal(err)
	}
	p := mustPredict(t, m, &SliceSource{Indices: tidx, IndexMask: tmask, Width: width, Target: make([]float32, len(ty)), BatchRows: 500})
	auc := AUC(p, ty)
	t.Logf("kdd_embed (%d buckets): test AUC %.4f, train loss %.4f", buckets, auc, m.FinalLoss)
	if auc < 0.75 {
		t.Fatalf("kdd_embed test AUC %.4f, want >= 0.75", auc)
	}
	bad := &SliceSource{Indices: []int32{buckets}, IndexMask: []float32{1}, Width: 1, Target: []float32{1}, BatchRows: 1}
	if _, err := m.Predict(bad); err == nil || !strings.Contains(err.Error(), "bucket") {
		t.Fatalf("out-of-range bucket: got %v", err)
	}
}

func TestSliceSource(t *testing.T) {
	const rows, k = 40, 4
	x := make([]float32, rows)
	for i := range x {
		x[i] = float32(i)
	}
	bags := make([]float32, rows/k)
	for i := range bags {
		bags[i] = float32(i)
	}
	epoch := func(s *SliceSource) (batches []*Batch) {
		if err := s.Reset(); err != nil {
			t.Fatal(err)
		}
		for {
			b, err := s.Next()
			if errors.Is(err, io.EOF) {
				return batches
			}
			if err != nil {
				t.Fatal(err)
			}
			batches = append(batches, b)
		}
	}
	tests := []struct {
		name    string
		shuffle bool
		batch   int
		sizes   []int
	}{
		{"ordered", false, 12, []int{12, 12, 12, 4}},
		{"shuffled bags", true, 8, []int{8, 8, 8, 8, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &SliceSource{X: x, Dim: 1, Target: bags, BagSize: k, BatchRows: tc.batch, Shuffle: tc.shuffle, Seed: 2}
			e1, e2 := epoch(s), epoch(s)
			var sizes []int
			var seen []float32
			for _, b := range e1 {
				sizes = append(sizes, b.Rows)
				if b.BagSize != k || len(b.Target) != b.Rows/k {
					t.Fatalf("batch %+v", b)
				}
				for j, tgt := range b.Target { // each bag's rows are whole and match its target
					for r := range k {
						if b.X[j*k+r] != tgt*k+float32(r) {
							t.Fatalf("bag %v split: rows %v", tgt, b.X[j*k:(j+1)*k])
						}
					}
				}
				seen = append(seen, b.X...)
			}
			if !slices.Equal(sizes, tc.sizes) {
				t.Fatalf("batch sizes %v, want %v", sizes, tc.sizes)
			}
			slices.Sort(seen)
			if !slices.Equal(seen, x) {
				t.Fatal("an epoch does not cover every row once")
			}
			if tc.shuffle {
				if slices.Equal(e1[0].X, e2[0].X) {
					t.Fatal("two epochs drew the same order")
				}
				again := epoch(&SliceSource{X: x, Dim: 1, Target: bags, BagSize: k, BatchRows: tc.batch, Shuffle: true, Seed: 2})
				if !slices.Equal(again[0].X, e1[0].X) {
					t.Fatal("same seed drew a different order")
				}
			}
		})
	}
	if err := (&SliceSource{X: x, Dim: 1, Target: bags, BagSize: k, BatchRows: 6}).Reset(); err == nil {
		t.Fatal("BatchRows not a multiple of the bag size should fail")
	}
}
