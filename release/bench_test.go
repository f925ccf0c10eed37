package release

import (
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// BenchmarkApply10M measures applying a mechanism to 10M labels in memory
// (bags and noise; the simulation layout adds no feature copy); rows/s is
// what to compare.
func BenchmarkApply10M(b *testing.B) {
	const n = 10_000_000
	r := rand.New(rand.NewPCG(1, 2))
	labels := make([]uint8, n)
	for i := range labels {
		labels[i] = uint8(r.IntN(2))
	}
	for _, p := range []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLP, K: 64}, {Kind: pets.LLPGeom, K: 64, Epsilon: 1}} {
		m := testutil.MustNew(p)
		b.Run(m.String(), func(b *testing.B) {
			for b.Loop() {
				rel, err := Apply(labels, m, Options{Noise: pets.NoiseSimulation, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				_ = rel.Simulation()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
