package pets

import "math"

// llp_geom is LLP with clipped two-sided geometric noise on each bag's sum
// (Section 4 "Mechanisms", Appendix C "Training with LLP+Geom"): the
// integer sum plus Z = G⁺ − G⁻ (success probability 1−e^{−ε}), clipped to
// [0, n] and released as a proportion; ε-label-DP, and identical in
// distribution to rr(ε) at k = 1. The clipping biases α, so the model
// trains on Debias(α) (alpha_debiased), which is unbiased (Theorem D.2).
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
	return geomBags{eps: p.Epsilon, overshoot: 1 / math.Expm1(p.Epsilon)}, nil
}

// geomBags adds clipped two-sided geometric noise to each bag's sum.
type geomBags struct {
	eps       float64
	overshoot float64 // E[overshoot past a clip, in sum units] = 1/(e^ε−1)
}

func (geomBags) Classes() int         { return 2 }
func (geomBags) SumNoise() SumNoise   { return SumGeometric }
func (g geomBags) NoiseRate() float64 { return g.eps }

// ReleaseBag returns clip(sum+Z, 0, n)/n (no overflow: Z is compared with
// the distances to the clip points).
func (g geomBags) ReleaseBag(sum, n int, r Rand) float64 {
	z := TwoSidedGeometric(r, g.eps)
	switch {
	case z >= int64(n-sum):
		return 1
	case z <= -int64(sum):
		return 0
	}
	return float64(sum+int(z)) / float64(n)
}

// Debias returns E[α_noise | α_clip], which is an unbiased estimate of the
// true proportion (E over the noise = sum/n): with c = α·n the clipped sum
// and a = e^{−ε}, memorylessness of the geometric tails gives, in units of
// the sum,
//
//	E[sum+Z | c] = c                       for 0 < c < n,
//	E[sum+Z | c] = −a/(1−a) = −1/(e^ε−1)   for c = 0,
//	E[sum+Z | c] = n + 1/(e^ε−1)           for c = n,
//
// independent of the true sum; Debias returns that divided by n. The
// paper's formula (Appendix C, "Training with LLP+Geom") gives −1/(e^ε−1)
// and 1 + 1/(e^ε−1) in units of the proportion: it omits the 1/k, since the
// noise Z/k lives on the grid of step 1/k. The two agree only at k = 1.
func (g geomBags) Debias(alpha float64, n int) float64 {
	fn := float64(n)
	c := math.Round(alpha * fn)
	switch {
	case c <= 0:
		return -g.overshoot / fn
	case c >= fn:
		return 1 + g.overshoot/fn
	}
	return alpha
}
