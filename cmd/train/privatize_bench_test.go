package main

import (
	"math/rand/v2"
	"testing"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// BenchmarkPrivatize10M measures the privatize stage in memory (bags, noise,
// gathering the features into bag order) on 10M rows × 4 features; the
// rows/s metric is what to compare. Arrow writing is measured by data's
// benchmarks.
func BenchmarkPrivatize10M(b *testing.B) {
	const n, d = 10_000_000, 4
	r := rand.New(rand.NewPCG(1, 2))
	f := &data.Frame{Rows: n, Features: data.SynthFeatureNames(d), X: make([]float32, n*d), Label: make([]uint8, n)}
	for i := range f.Label {
		f.Label[i] = uint8(r.IntN(2))
	}
	for _, s := range []petSetting{
		{Kind: pets.RR, Epsilon: 1},
		{Kind: pets.LLP, K: 64},
		{Kind: pets.LLPGeom, K: 64, Epsilon: 1},
	} {
		b.Run(s.ID(), func(b *testing.B) {
			m, err := s.mechanism(false)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := privatize(f, m, releaseOptions{Seed: 1}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
