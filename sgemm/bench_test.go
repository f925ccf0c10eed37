package sgemm

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMultiply reports GFLOP/s (2·batch·m·n·k per product, packing
// included) on the shapes of the Higgs MLP (batch 1024, 300-wide layers)
// and kdd_embed (50→100→50) layers: forward x·W (NN), the input gradient
// v·Wᵀ (NT) and the weight gradient xᵀ·v (TN, the batch split in halves as
// model/ did), and the logit layer's products (N=1, K=1: forward h·w,
// grad w = hᵀ·v, grad h = v·wᵀ), on every available kernel, on one thread
// and on all. The higgs_step_ shapes are those one `train bench` step of
// the Higgs MLP hands sgemm (SGEMM shapes logged from backend go: 301 =
// 300 units and the bias column, the weight gradient over the whole batch);
// scripts/torch_gemm_bench.py runs the same list on OpenBLAS. GFLOP/cpu-s divides by the
// process's CPU time instead of the wall clock: with threads=1 it moves
// less when other jobs share the machine.
//
//	go test ./sgemm/ -run '^$' -bench Multiply
func BenchmarkMultiply(b *testing.B) {
	for _, s := range []struct {
		name           string
		batch, m, n, k int
		ta, tb         bool
	}{
		{"higgs_fwd_NN", 1, 1024, 300, 300, false, false},
		{"higgs_gradx_NT", 1, 1024, 300, 300, false, true},
		{"higgs_gradw_TN", 2, 300, 300, 512, true, false},
		{"higgs_step_fwd_NN", 1, 1024, 301, 301, false, false},
		{"higgs_step_gradx_NT", 1, 1024, 301, 301, false, true},
		{"higgs_step_gradw_TN", 1, 301, 301, 1024, true, false},
		{"higgs_in_NN", 1, 1024, 300, 28, false, false},
		{"higgs_step_in_NN", 1, 1024, 301, 29, false, false},
		{"higgs_step_ingradw_TN", 1, 29, 301, 1024, true, false},
		{"higgs_logit_N1", 1, 1024, 1, 301, false, false},
		{"higgs_logitgradw_N1", 1, 301, 1, 1024, true, false},
		{"higgs_logitgrad_K1", 1, 1024, 301, 1, false, false},
		{"kdd_fwd_NN", 1, 1024, 100, 50, false, false},
		{"kdd_gradx_NT", 1, 1024, 50, 100, false, true},
		{"kdd_gradw_TN", 2, 50, 100, 512, true, false},
	} {
		rng := rand.New(rand.NewPCG(1, 1))
		p := newProblem(rng, s.batch, s.m, s.n, s.k, s.ta, s.tb, false, false, 0)
		c := outC(s.batch, s.m, s.n)
		for _, kern := range Kernels() {
			for _, threads := range []int{1, 0} {
				b.Run(fmt.Sprintf("%s/%s/threads=%d", s.name, kern, threads), func(b *testing.B) {
					cpu := processCPU()
					for b.Loop() {
						MultiplyWith(kern, s.batch, s.m, s.n, s.k, p.a, p.b, c, threads)
					}
					flops := 2 * float64(s.batch*s.m*s.n*s.k) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					if cpu := (processCPU() - cpu).Seconds(); cpu > 0 {
						b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
					}
				})
			}
		}
	}
}
