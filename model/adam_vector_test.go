package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamVectorBits: the AVX Adam steps (dense and lazy) give the scalar
// loops' bits on lengths around the 8-lane blocks, including zero
// gradients and moments (v = 0: the division by ε alone).
func TestAdamVectorBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	a, err := AdamConfig{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	for n := range 51 {
		mk := func(scale float64, zeros bool) []float32 {
			x := make([]float32, n)
			for i := range x {
				if !zeros || rng.IntN(3) > 0 {
					x[i] = float32(rng.NormFloat64() * scale)
				}
			}
			return x
		}
		p, m, g := mk(1, false), mk(0.1, true), mk(1, true)
		v := mk(0.01, true)
		for i := range v {
			v[i] = float32(math.Abs(float64(v[i])))
		}
		s, vs := float32(rng.Float64()*1e-2), float32(1+rng.Float64())

		// Dense: adamRange (vector head) against its scalar expressions.
		p1, m1, v1 := clone(p), clone(m), clone(v)
		adamRange(p1, m1, v1, g, s, vs, a)
		b1, c1, b2, c2, eps := float32(a.Beta1), float32(1-a.Beta1), float32(a.Beta2), float32(1-a.Beta2), float32(a.Epsilon)
		p2, m2, v2 := clone(p), clone(m), clone(v)
		for i, gi := range g {
			mi := float32(m2[i]*b1) + float32(gi*c1)
			vi := float32(v2[i]*b2) + float32(float32(gi*gi)*c2)
			m2[i], v2[i] = mi, vi
			p2[i] -= float32(mi*s) / (float32(float32(math.Sqrt(float64(vi)))*vs) + eps)
		}
		sameBits(t, "dense", n, p1, p2, m1, m2, v1, v2)

		// Lazy: lazyAdamVector plus adamRows' scalar loop against the loop.
		p1, m1, v1 = clone(p), clone(m), clone(v)
		k := lazyAdamVector(p1, m1, v1, g, &[8]float32{c1, c2, s, vs, eps})
		lazyScalar(p1[k:], m1[k:], v1[k:], g[k:], c1, c2, s, vs, eps)
		p2, m2, v2 = clone(p), clone(m), clone(v)
		lazyScalar(p2, m2, v2, g, c1, c2, s, vs, eps)
		sameBits(t, "lazy", n, p1, p2, m1, m2, v1, v2)
	}
}

// lazyScalar is hostEmbedding.adamRows' per-row loop.
func lazyScalar(p, m, v, g []float32, b1, b2, sc, vScale, eps float32) {
	for c, gc := range g {
		dm := b1 * (gc - m[c])
		dv := b2 * (gc*gc - v[c])
		mc, vc := m[c]+dm, v[c]+dv
		m[c], v[c] = mc, vc
		p[c] -= sc * mc / (float32(math.Sqrt(float64(vc)))*vScale + eps)
	}
}

func clone(x []float32) []float32 { return append([]float32(nil), x...) }

func sameBits(t *testing.T, what string, n int, pairs ...[]float32) {
	t.Helper()
	for j := 0; j < len(pairs); j += 2 {
		for i := range pairs[j] {
			if math.Float32bits(pairs[j][i]) != math.Float32bits(pairs[j+1][i]) {
				t.Fatalf("%s n=%d: tensor %d element %d = %g, scalar %g", what, n, j/2, i, pairs[j][i], pairs[j+1][i])
			}
		}
	}
}
