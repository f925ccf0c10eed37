package audit

import (
	"math"

	"labelprivacy/pets"
)

// bagWork is the O(k) per-worker workspace of the LLP family (llp, llp_geom,
// llp_lap). For one bag it holds the law of the bag sum and, member by
// member, the leave-one-out law and the quantities derived from it.
//
// Notation (member i of a bag of k, e = η_i, f = 1−e): q[j] = P(S₋ᵢ = j),
// j = 0..k−1, with q[−1] = q[k] = 0. The joint law of (y_i = b, true sum s)
// is e·q[s−1] for b = 1 and f·q[s] for b = 0. For the noisy kinds, with
// a = e^{−ε} (ε of the mechanism, in units of the sum):
//
//	FQ(j) = Σ_{s ≤ j} q[s]·a^{j−s}  (fq[j+1], j = −1..k)
//	BQ(j) = Σ_{s ≥ j} q[s]·a^{s−j}  (bq[j+1], j = −1..k)
//
// computed by one forward and one backward pass of non-negative
// accumulations; every likelihood sum below is a combination of them, so a
// member costs O(k) whatever the noise.
type bagWork struct {
	k      int
	eta    []float64 // the bag's η values, in bag order
	p      []float64 // P(S = s), s = 0..k
	q      []float64 // P(S₋ᵢ = j), j = 0..k−1, for the current member
	fq, bq []float64 // FQ, BQ shifted by one (len k+2)
	f1, f0 []float64 // llp_geom: Σ_s q[s−b]·GeomPMF(k, s)[r] for b = 1, 0 (len k+1)

	eps, a   float64 // ε and e^{−ε}
	oneMinA  float64 // 1 − a = −expm1(−ε)
	interior float64 // (1−a)/(1+a): llp_geom pmf factor for 0 < r < k
	inv1pa   float64 // 1/(1+a): llp_geom pmf factor at the clip points
}

func newBagWork(k int, eps float64) *bagWork {
	w := &bagWork{
		k:   k,
		eta: make([]float64, k), p: make([]float64, k+1), q: make([]float64, k),
		fq: make([]float64, k+2), bq: make([]float64, k+2),
		f1: make([]float64, k+1), f0: make([]float64, k+1),
		eps: eps,
	}
	if eps > 0 {
		w.a = math.Exp(-eps)
		w.oneMinA = -math.Expm1(-eps)
		w.inv1pa = 1 / (1 + w.a)
		w.interior = w.oneMinA * w.inv1pa
	}
	return w
}

// member computes the leave-one-out law of member i of the current bag
// (w.p must hold the bag-sum law) and the kind-specific tables, and returns
// IEAdv_i = min(η,1−η) − Σ_z min(P(y_i=1, z), P(y_i=0, z)) (Lemma A.1 with
// the Bayes attacker), z ranging over the releases of the mechanism.
func (w *bagWork) member(noise pets.SumNoise, e float64) float64 {
	w.leaveOut(noise, e)
	f := 1 - e
	var lost float64 // Σ_z min(joint1, joint0): the Bayes attacker's error
	switch noise {
	case pets.SumExact:
		prev := 0.0
		for _, v := range w.q {
			lost += min(e*prev, f*v)
			prev = v
		}
	case pets.SumGeometric:
		for r, v1 := range w.f1 {
			lost += min(e*v1, f*w.f0[r])
		}
	case pets.SumLaplace:
		lost = w.lapLost(e, f)
	}
	return max(0, min(e, f)-lost)
}

// leaveOut computes the leave-one-out law of a member of prior e (w.p must
// hold the bag-sum law) and the tables likelihoods reads, in O(k).
func (w *bagWork) leaveOut(noise pets.SumNoise, e float64) {
	leaveOneOut(w.q, w.p, e)
	w.tables(noise)
}

// tables fills the tables likelihoods reads from the leave-one-out law q.
func (w *bagWork) tables(noise pets.SumNoise) {
	switch noise {
	case pets.SumGeometric:
		w.fillFB()
		w.fillGeom()
	case pets.SumLaplace:
		w.fillFB()
	}
}

// fillFB fills fq and bq from q.
func (w *bagWork) fillFB() {
	k, a, q, fq, bq := w.k, w.a, w.q, w.fq, w.bq
	acc := 0.0
	fq[0] = 0 // FQ(−1)
	for j := 0; j < k; j++ {
		acc = q[j] + a*acc
		fq[j+1] = acc
	}
	fq[k+1] = a * acc // FQ(k): q[k] = 0
	acc = 0
	bq[k+1] = 0 // BQ(k)
	for j := k - 1; j >= 0; j-- {
		acc = q[j] + a*acc
		bq[j+1] = acc
	}
	bq[0] = a * acc // BQ(−1)
}

// fillGeom fills f1[r] = Σ_s q[s−1]·L(r|s) and f0[r] = Σ_s q[s]·L(r|s) with
// the clipped two-sided geometric likelihood of pets' GeomPMF:
// L(r|s) = (1−a)/(1+a)·a^|r−s| for 0 < r < k, a^s/(1+a) at r = 0 and
// a^(k−s)/(1+a) at r = k. Interior sums split at s = r into FQ and BQ
// (e.g. Σ_s q[s]a^|r−s| = a·FQ(r−1) + BQ(r)); the clip points are
// BQ(−1), BQ(0), FQ(k−1), FQ(k).
func (w *bagWork) fillGeom() {
	k, a, fq, bq, f1, f0 := w.k, w.a, w.fq, w.bq, w.f1, w.f0
	c := w.interior
	f1[0] = bq[0] * w.inv1pa
	f0[0] = bq[1] * w.inv1pa
	for r := 1; r < k; r++ {
		f1[r] = c * (a*fq[r-1] + bq[r])
		f0[r] = c * (a*fq[r] + bq[r+1])
	}
	f1[k] = fq[k] * w.inv1pa
	f0[k] = fq[k+1] * w.inv1pa
}

// lapLost returns ∫ min(g1(t), g0(t)) dt for llp_lap, exactly (up to
// rounding), where t = k·α is the release in units of the sum and
// g_b(t) = w_b·Σ_s q[s−b]·(ε/2)e^{−ε|t−s|} (w_1 = e, w_0 = f) is the joint
// density of (y_i = b, t); (ε/2)e^{−ε|t−s|} is pets' LapDensity(k, s, t/k)
// divided by k. Between consecutive atoms, t = j + u with u ∈ [0, 1],
//
//	g_b = (ε/2)·(A_b e^{−εu} + B_b e^{−ε(1−u)}),
//	A_1 = e·FQ(j−1), A_0 = f·FQ(j), B_1 = e·BQ(j), B_0 = f·BQ(j+1),
//
// so g1 − g0 changes sign at most once per interval, at
// u* = (ln(−ΔA/ΔB) + ε)/(2ε); each piece integrates in closed form:
// ε∫_{u0}^{u1}(A e^{−εu} + B e^{−ε(1−u)})du =
// (1 − e^{−ε(u1−u0)})·(A e^{−εu0} + B e^{−ε(1−u1)}). Left of 0 and right of
// k the ratio g1/g0 is constant and the tails integrate to ½·BQ-/FQ-sums.
func (w *bagWork) lapLost(e, f float64) float64 {
	k, a, eps, fq, bq := w.k, w.a, w.eps, w.fq, w.bq
	tot := min(e*bq[0], f*bq[1]) + min(e*fq[k], f*fq[k+1])
	whole := 0.0
	for j := 0; j < k; j++ {
		a1, a0 := e*fq[j], f*fq[j+1]
		b1, b0 := e*bq[j+1], f*bq[j+2]
		h0 := (a1 + a*b1) - (a0 + a*b0)
		h1 := (a*a1 + b1) - (a*a0 + b0)
		if (h0 < 0 && h1 > 0) || (h0 > 0 && h1 < 0) {
			dA, dB := a1-a0, b1-b0
			us := (math.Log(-dA/dB) + eps) / (2 * eps)
			us = min(1, max(0, us))
			m1, m2 := -math.Expm1(-eps*us), -math.Expm1(-eps*(1-us))
			eu, ev := math.Exp(-eps*us), math.Exp(-eps*(1-us))
			tot += m1*min(a1+b1*ev, a0+b0*ev) + m2*min(a1*eu+b1, a0*eu+b0)
			continue
		}
		whole += min(a1+b1, a0+b0)
	}
	return 0.5 * (tot + w.oneMinA*whole)
}

// likelihoods returns P(release | y_i = 1) and P(release | y_i = 0) for the
// current member, up to a common positive factor, for a release given in
// units of the sum (t = k·α): the bag sum s for llp, the clipped noisy sum r
// for llp_geom (both integers), the real t for llp_lap.
func (w *bagWork) likelihoods(noise pets.SumNoise, t float64) (l1, l0 float64) {
	k := w.k
	switch noise {
	case pets.SumExact:
		s := int(t)
		if s > 0 {
			l1 = w.q[s-1]
		}
		if s < k {
			l0 = w.q[s]
		}
	case pets.SumGeometric:
		r := int(t)
		l1, l0 = w.f1[r], w.f0[r]
	case pets.SumLaplace:
		switch {
		case t < 0:
			l1, l0 = w.bq[0], w.bq[1]
		case t > float64(k):
			l1, l0 = w.fq[k], w.fq[k+1]
		default:
			j := int(t)
			if j >= k {
				j = k - 1
			}
			u := t - float64(j)
			eu, ev := math.Exp(-w.eps*u), math.Exp(-w.eps*(1-u))
			l1 = w.fq[j]*eu + w.bq[j+1]*ev
			l0 = w.fq[j+1]*eu + w.bq[j+2]*ev
		}
	}
	return l1, l0
}

// logLR returns the multiplicative advantage I = log(l1/l0) of Definition
// 3.6 in its likelihood-ratio form: ±Inf when exactly one likelihood is 0,
// and 0 in the (unreachable for a realized release) case that both are.
func logLR(l1, l0 float64) float64 {
	switch {
	case l1 == 0 && l0 == 0:
		return 0
	case l0 == 0:
		return math.Inf(1)
	case l1 == 0:
		return math.Inf(-1)
	}
	return math.Log(l1) - math.Log(l0)
}

// posterior returns P(y_i = 1 | release) = e·l1 / (e·l1 + (1−e)·l0)
// (the prior e if both likelihoods vanish).
func posterior(e, l1, l0 float64) float64 {
	j1, j0 := e*l1, (1-e)*l0
	if j1+j0 == 0 {
		return e
	}
	return j1 / (j1 + j0)
}
