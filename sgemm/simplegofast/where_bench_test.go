package simplegofast

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSelect: the ReLU's Where over a [1024, 301] activation.
func BenchmarkSelect(b *testing.B) {
	const n = 1024 * 301
	rng := rand.New(rand.NewPCG(1, 1))
	c, t, o := make([]bool, n), make([]float32, n), make([]float32, n)
	for i := range c {
		c[i], t[i] = rng.IntN(2) == 0, float32(rng.NormFloat64())
	}
	f := []float32{0}
	for b.Loop() {
		selectF32(o, c, t, f)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/elem")
}
