package pets

import "math"

// llp_geom is LLP with clipped two-sided geometric noise on each bag's sum
// (Section 4 "Mechanisms", Appendix C "Training with LLP+Geom"): the
// integer sum plus Z = G⁺ − G⁻ (success probability 1−e^{−ε}), clipped to
// [0, n] and released as a proportion; ε-label-DP, and identical in
// distribution to rr(ε) at k = 1. On C ≥ 3 classes each released count
// n_c (c = 1..C−1) gets independent noise of rate λ = ε/Δ, Δ = 2
// (countSensitivity; the proof of llp_lap's ReleaseBag holds for the
// two-sided geometric pmf on ℤ, and clipping is post-processing). The
// clipping biases α, so the model trains on Target(α) (alpha_debiased),
// which is unbiased (Theorem D.2).
type llpGeomScheme struct{}

// LLPGeom is LLP with clipped two-sided geometric noise on the sum.
const LLPGeom Kind = 5

var _ = builtin(LLPGeom, llpGeomScheme{})

func (llpGeomScheme) Spec() Spec {
	return Spec{Name: "llp_geom", Takes: Takes{K: true, Epsilon: true, Classes: true}, Privacy: DPRR, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlphaDebiased},
		Look:  Look{Name: "LLP+Geom", Color: RGB{0xff, 0x7f, 0x0e}, Marker: MarkerCross}} // orange
}

func (llpGeomScheme) Law(p Params) (Law, error) {
	c := max(p.Classes, 2)
	delta := countSensitivity(c)
	lambda := p.Epsilon / float64(delta) // Δ = 1: ε bit for bit
	return geomBags{lambda: lambda, overshoot: 1 / math.Expm1(lambda), c: c, delta: delta}, nil
}

// geomBags adds clipped two-sided geometric noise to each released count.
type geomBags struct {
	lambda    float64 // ε/Δ
	overshoot float64 // E[overshoot past a clip, in count units] = 1/(e^λ−1)
	c, delta  int
}

func (g geomBags) Classes() int       { return g.c }
func (geomBags) SumNoise() SumNoise   { return SumGeometric }
func (g geomBags) NoiseRate() float64 { return g.lambda }
func (g geomBags) Sensitivity() int   { return g.delta }

// ReleaseBag writes clip(counts[c] + Z_c, 0, n)/n for c = 1..C−1 in
// increasing order, Z_c two-sided geometric with a = e^{−λ}, independent
// (no overflow: Z is compared with the distances to the clip points).
func (g geomBags) ReleaseBag(dst []float64, counts []int, r Rand) {
	n := bagSize(dst, counts, g.c)
	fn := float64(n)
	for c := 1; c < g.c; c++ {
		s := counts[c]
		z := TwoSidedGeometric(r, g.lambda)
		switch {
		case z >= int64(n-s):
			dst[c-1] = 1
		case z <= -int64(s):
			dst[c-1] = 0
		default:
			dst[c-1] = float64(s+int(z)) / fn
		}
	}
}

// Target returns E[α_noise | α_clip] coordinate by coordinate, an unbiased
// estimate of the true proportion (E over the noise = n_c/n): with
// t = round(α·n) the clipped count and memorylessness of the geometric
// tails, in count units,
//
//	E[n_c+Z | t] = t                       for 0 < t < n,
//	E[n_c+Z | t] = −1/(e^λ−1)              for t = 0,
//	E[n_c+Z | t] = n + 1/(e^λ−1)           for t = n,
//
// independent of the true count; Target returns that divided by n. The
// paper's formula (Appendix C, "Training with LLP+Geom") gives −1/(e^ε−1)
// and 1 + 1/(e^ε−1) in units of the proportion: it omits the 1/k, since the
// noise Z/k lives on the grid of step 1/k. The two agree only at k = 1.
func (g geomBags) Target(dst, alpha []float64, n int) {
	fn := float64(n)
	for i, a := range alpha {
		c := math.Round(a * fn)
		switch {
		case c <= 0:
			a = -g.overshoot / fn
		case c >= fn:
			a = 1 + g.overshoot/fn
		}
		dst[i] = a
	}
}
