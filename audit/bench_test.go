package audit

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// benchEta draws n η values from a Beta(2, 30)/uniform mixture (the skewed
// and the flat synthetic distributions of Figure 1), half each.
func benchEta(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	eta := make([]float64, n)
	for i := range eta {
		if i%2 == 0 {
			eta[i] = r.Float64()
			continue
		}
		// Beta(2, 30) as X/(X+Y), X ~ Gamma(2), Y ~ Gamma(30) (sums of
		// exponentials).
		x := r.ExpFloat64() + r.ExpFloat64()
		y := 0.0
		for range 30 {
			y += r.ExpFloat64()
		}
		eta[i] = x / (x + y)
	}
	return eta
}

// BenchmarkRun times exact audits: llp on 1M examples at k = 512 and
// k = 8, llp_geom and llp_lap at k = 64 on 100k examples, rr on 1M; one
// label draw per bag, 10k samples kept, all cores (GOMAXPROCS).
func BenchmarkRun(b *testing.B) {
	big, small := benchEta(1_000_000), benchEta(100_000)
	for _, c := range []struct {
		p   pets.Params
		eta []float64
	}{
		{pets.Params{Kind: pets.LLP, K: 512}, big},
		{pets.Params{Kind: pets.LLP, K: 8}, big},
		{pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 1}, small},
		{pets.Params{Kind: pets.LLPLap, K: 64, Epsilon: 1}, small},
		{pets.Params{Kind: pets.RR, Epsilon: 1}, big},
	} {
		m := testutil.MustNew(c.p)
		b.Run(fmt.Sprintf("%s/n=%d", m, len(c.eta)), func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(c.eta, m, Options{Seed: 1, LabelDraws: 1, MaxSamples: 10_000}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
		})
	}
}

// BenchmarkRunSelfChecks times the audit's self-checks with the defaults of
// the pipeline (20 releases through release.Apply, 10000 canaries) on top
// of the exact audit: the quickstart's size (10k examples) and 1M examples,
// rr and llp_geom at k = 8 and llp at k = 512 (whose attack is capped at
// MaxAttackedPerRelease examples per release). Compare with BenchmarkRun.
func BenchmarkRunSelfChecks(b *testing.B) {
	big, small := benchEta(1_000_000), benchEta(10_000)
	for _, c := range []struct {
		p   pets.Params
		eta []float64
	}{
		{pets.Params{Kind: pets.RR, Epsilon: 1}, small},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, small},
		{pets.Params{Kind: pets.RR, Epsilon: 1}, big},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, big},
		{pets.Params{Kind: pets.LLP, K: 512}, big},
	} {
		m := testutil.MustNew(c.p)
		b.Run(fmt.Sprintf("%s/n=%d", m, len(c.eta)), func(b *testing.B) {
			for b.Loop() {
				if _, err := Run(c.eta, m, Options{Seed: 1, LabelDraws: 1, MaxSamples: 10_000,
					Sampler: releaseSampler{}, Draws: 20, Canaries: 10000}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
		})
	}
}
