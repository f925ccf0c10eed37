package model

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchBatch is one dense batch of synthetic logistic data with per-row
// labels (bag == 0) or per-bag proportions.
func benchBatch(rows, dim, bag int) *Batch {
	w, b := trueModel(dim, 1, 3)
	d := makeLogistic(rows, w, b, 2)
	batch := &Batch{Rows: rows, X: d.X, Dim: dim, Target: labelsAsTarget(d.Y), BagSize: bag}
	if bag > 0 {
		batch.Target = bagProportions(d.Y, bag)
	}
	return batch
}

func benchSparseBatch(rows, width, buckets int) *Batch {
	r := rand.New(rand.NewPCG(1, 2))
	b := &Batch{Rows: rows, Width: width, Indices: make([]int32, rows*width), IndexMask: make([]float32, rows*width), Target: make([]float32, rows)}
	for i := range rows {
		m := width/2 + r.IntN(width/2+1)
		for j := range m {
			b.Indices[i*width+j], b.IndexMask[i*width+j] = int32(r.IntN(buckets)), 1
		}
		b.Target[i] = float32(r.IntN(2))
	}
	return b
}

// benchSteps measures training steps on one fixed batch (the data pipeline is
// not part of it) after two warm-up steps (graph compilation).
func benchSteps(b *testing.B, cfg TrainConfig, batch *Batch, fastVJP bool) {
	setFastDotVJP(fastVJP)
	defer setFastDotVJP(true)
	cfg.Backend = goBackend(b)
	r, err := newRunner(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for range 2 {
		if _, err := r.step(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := r.step(batch); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N*batch.Rows)/b.Elapsed().Seconds(), "ex/s")
}

// BenchmarkTrainStep reports training throughput (examples/s) on the
// pure-Go backend at batch 1024. Run e.g.
//
//	go test ./model/ -run '^$' -bench TrainStep -benchtime 20x
func BenchmarkTrainStep(b *testing.B) {
	const batch = 1024
	higgs := ModelConfig{Kind: KindHiggsMLP, InputDim: 28}
	cases := []struct {
		name  string
		cfg   TrainConfig
		batch *Batch
		fast  bool
	}{
		{"higgs_mlp/bce/fast_vjp", TrainConfig{Model: higgs, Loss: LossBCE}, benchBatch(batch, 28, 0), true},
		{"higgs_mlp/bce/original_vjp", TrainConfig{Model: higgs, Loss: LossBCE}, benchBatch(batch, 28, 0), false},
		{"higgs_mlp/propmatch_k64/fast_vjp", TrainConfig{Model: higgs, Loss: LossPropMatch}, benchBatch(batch, 28, 64), true},
		{"higgs_mlp/debiased_bce/fast_vjp", TrainConfig{Model: higgs, Loss: LossDebiasedBCE, LossParams: LossParams{FlipProb: 0.25}}, benchBatch(batch, 28, 0), true},
	}
	for _, buckets := range []int{50_000, DefaultBuckets} {
		cases = append(cases, struct {
			name  string
			cfg   TrainConfig
			batch *Batch
			fast  bool
		}{fmt.Sprintf("kdd_embed/buckets=%d/width=16", buckets),
			TrainConfig{Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets}, Loss: LossBCE},
			benchSparseBatch(batch, 16, buckets), true})
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) { benchSteps(b, tc.cfg, tc.batch, tc.fast) })
	}
}
