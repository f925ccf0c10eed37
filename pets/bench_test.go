package pets

import (
	"fmt"
	"testing"
)

const benchRows = 10_000_000

var benchLabels = func() []uint8 {
	l := make([]uint8, benchRows)
	r := newRand(99)
	for i := range l {
		if r.Uint64()%10 < 3 { // 30% positives
			l[i] = 1
		}
	}
	return l
}()

func reportRows(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReleaseRR: rr(ε=1) on 10M labels, seeded PCG and crypto/rand.
func BenchmarkReleaseRR(b *testing.B) {
	m := mustNew(Params{Kind: RR, Epsilon: 1})
	dst := make([]uint8, benchRows)
	for _, src := range []string{"pcg", "crypto"} {
		b.Run(src, func(b *testing.B) {
			var r Rand = newRand(1)
			if src == "crypto" {
				r = NewSecureRand()
			}
			for b.Loop() {
				releaseRR(m, dst, benchLabels, r)
			}
			reportRows(b, benchRows)
		})
	}
}

// BenchmarkReleaseBags: per-bag label sums plus one release per bag over
// 10M rows in consecutive bags of 64 (the bags of an already shuffled
// dataset; partitioning is benchmarked in package llp).
func BenchmarkReleaseBags(b *testing.B) {
	const k = 64
	for _, p := range []Params{
		{Kind: LLP, K: k},
		{Kind: LLPGeom, K: k, Epsilon: 1},
		{Kind: LLPGeom, K: k, Epsilon: 0.0625},
		{Kind: LLPLap, K: k, Epsilon: 1},
		{Kind: LLPLap, K: k, Epsilon: 1, Secure: true},
	} {
		m := mustNew(p)
		name := m.String()
		if p.Secure {
			name += "-secure"
		}
		b.Run(name, func(b *testing.B) {
			r := newRand(2)
			out := make([]float64, benchRows/k)
			for b.Loop() {
				for i := range out {
					s := 0
					for _, y := range benchLabels[i*k : (i+1)*k] {
						s += int(y)
					}
					out[i] = m.ReleaseBag(s, k, r)
				}
			}
			reportRows(b, benchRows)
		})
	}
}

// BenchmarkLaplace compares the textbook and the secure grid sampler
// (scale 1), per draw.
func BenchmarkLaplace(b *testing.B) {
	b.Run("textbook", func(b *testing.B) {
		r := newRand(3)
		x := 0.0
		for b.Loop() {
			x += Laplace(r, 1)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
	b.Run("secure", func(b *testing.B) {
		r := newRand(3)
		x := 0.0
		for b.Loop() {
			x += SecureLaplace(r, 1)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	})
}

// BenchmarkGeometric: the exact binary-search sampler across λ.
func BenchmarkGeometric(b *testing.B) {
	for _, lambda := range []float64{0x1p-40, 0.0625, 1, 32} {
		b.Run(fmt.Sprintf("lambda=%g", lambda), func(b *testing.B) {
			r := newRand(4)
			var s int64
			for b.Loop() {
				s += Geometric(r, lambda)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}

// BenchmarkCompose: the PLD composition of histories a ledger meets (the
// cache is bypassed).
func BenchmarkCompose(b *testing.B) {
	for _, tc := range []struct {
		name  string
		steps []Step
	}{
		{"rr40", repeat(Step{RR, 0.1}, 40)},
		{"rr2000+rr3", append(repeat(Step{RR, 0.05}, 2000), Step{RR, 3})},
		{"lap10", repeat(Step{LLPLap, 1}, 10)},
		{"mixed", append(append(repeat(Step{RR, 1}, 5), repeat(Step{LLPGeom, 0.5}, 10)...), repeat(Step{LLPLap, 0.25}, 4)...)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				compose(tc.steps, 1e-6)
			}
		})
	}
}
