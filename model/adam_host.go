package model

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
)

// On backend go the dense parameters' Adam step runs on the host, fused:
// the program returns the gradients and one pass per parameter updates
// θ, m and v in place (simplego's buffers are host memory). In the
// program Adam is 13 element-wise passes over every parameter per step
// (≈ 2 µs of CPU per example on the Higgs MLP, 10% of a step once the
// products run on sgemm); here it is one, split across the cores. The
// arithmetic is the program's, operation for operation in float32 (the
// conversions keep the compiler from fusing a multiply and an add), so
// the results are the same bits. XLA backends and the device-table
// kdd_embed feeds keep Adam in the program.

// hostAdamFeed reports whether a group on backend be with feed f applies
// Adam on the host.
func hostAdamFeed(be backends.Backend, f feedKind) bool {
	return !programAdamOnly && isGoBackend(be) && (f == feedHost || f == feedResident || f == feedSparseHost)
}

// programAdamOnly keeps Adam in the program everywhere (tests compare).
var programAdamOnly bool

// adamOnHost applies one Adam step to the program's parameters (t.state:
// params, first moments, second moments, then the loss accumulator) from
// their gradients grads (same order and shapes), with each replica's
// bias-corrected step size stepScale[r] = lr_r/(1−β1^t) and
// vScale = 1/√(1−β2^t).
func (t *trainer) adamOnHost(grads []backends.Buffer, stepScale []float32, vScale float32) error {
	np := len(t.gspecs)
	type slot struct{ p, m, v, g []float32 }
	slots := make([]slot, np)
	for i := range np {
		var s [4][]float32
		for j, b := range []backends.Buffer{t.state[i], t.state[np+i], t.state[2*np+i], grads[i]} {
			flat, err := t.be.BufferData(b)
			if err != nil {
				return err
			}
			f, ok := flat.([]float32)
			if !ok {
				return fmt.Errorf("model: host Adam: buffer holds %T, want []float32", flat)
			}
			s[j] = f
		}
		slots[i] = slot{s[0], s[1], s[2], s[3]}
	}
	a := t.cfg.Adam
	// Elements of all parameters, as one range split across the cores.
	offsets := make([]int, np+1)
	for i, s := range slots {
		offsets[i+1] = offsets[i] + len(s.p)
	}
	parallel(threadsOf(t.be), offsets[np], func(lo, hi int) {
		for i, s := range slots {
			a0, a1 := max(lo, offsets[i]), min(hi, offsets[i+1])
			if a0 >= a1 {
				continue
			}
			size := len(s.p) / t.s.r // one replica's values
			for e := a0 - offsets[i]; e < a1-offsets[i]; {
				r := e / size
				end := min(a1-offsets[i], (r+1)*size)
				adamRange(s.p[e:end], s.m[e:end], s.v[e:end], s.g[e:end], stepScale[r], vScale, a)
				e = end
			}
		}
	})
	return nil
}

// adamRange is the program's Adam (buildTrain) on one replica's values:
//
//	m ← m·β1 + g·(1−β1);  v ← v·β2 + g²·(1−β2);  θ ← θ − (m·s)/(√v·vs + ε)
//
// in float32, each operation rounded as the program's element-wise ops
// round it.
func adamRange(p, m, v, g []float32, s, vs float32, a AdamConfig) {
	b1, c1 := float32(a.Beta1), float32(1-a.Beta1)
	b2, c2 := float32(a.Beta2), float32(1-a.Beta2)
	eps := float32(a.Epsilon)
	p, m, v = p[:len(g)], m[:len(g)], v[:len(g)]
	if n := adamVector(p, m, v, g, &[8]float32{b1, c1, b2, c2, s, vs, eps}); n > 0 {
		p, m, v, g = p[n:], m[n:], v[n:], g[n:]
	}
	for i, gi := range g {
		mi := float32(m[i]*b1) + float32(gi*c1)
		vi := float32(v[i]*b2) + float32(float32(gi*gi)*c2)
		m[i], v[i] = mi, vi
		den := float32(float32(math.Sqrt(float64(vi)))*vs) + eps
		p[i] -= float32(mi*s) / den
	}
}
