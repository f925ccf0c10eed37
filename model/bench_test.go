package model

import (
	"fmt"
	"testing"
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
			})
		}
	}
}

// BenchmarkHiggs is issue 11's table on the Higgs MLP (28→300×4→1), batch
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
	}{{"lazy_host", true, ResidentNever, 40}, {"lazy_device", true, ResidentAlways, 10}, {"dense", false, ResidentAuto, 6}} {
		b.Run(tc.name, func(b *testing.B) {
			benchGroups(b, BenchConfig{Model: ModelConfig{Kind: KindKDDEmbed}, Losses: []Loss{LossBCE}, Replicas: []int{1},
				Steps: tc.steps, SparseEmbedding: tc.sparse, Resident: tc.resident})
		})
	}
}
