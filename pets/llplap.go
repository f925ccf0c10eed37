package pets

import "fmt"

// llp_lap is LLP with Laplace noise on each bag's proportion (Section 4
// "Mechanisms", Appendix C "Training with LLP+Lap"): α = sum/n +
// Lap(1/(nε)), unclipped, so that the noise is mean-zero and PropMatch
// stays unbiased (Appendix D, Theorem D.1); ε-label-DP at any bag size.
// On C ≥ 3 classes each released count n_c (c = 1..C−1) gets independent
// Laplace noise of rate λ = ε/Δ, Δ = 2 (countSensitivity). With
// Params.Secure the noise comes from the grid sampler SecureLaplace.
type llpLapScheme struct{}

// LLPLap is LLP with Laplace noise on the proportion.
const LLPLap Kind = 4

var _ = builtin(LLPLap, llpLapScheme{})

func (llpLapScheme) Spec() Spec {
	return Spec{Name: "llp_lap", Takes: Takes{K: true, Epsilon: true, Classes: true}, Privacy: DPLaplace, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlpha},
		Look:  Look{Name: "LLP+Lap", Color: RGB{0x2c, 0xa0, 0x2c}, Marker: MarkerPyramid}} // green
}

func (llpLapScheme) Law(p Params) (Law, error) {
	c := max(p.Classes, 2)
	delta := countSensitivity(c)
	// Noise on each integer count has scale Δ/ε whatever the bag size;
	// SecureLaplace is exact when every count lies on its grid, which
	// needs a spacing ≤ 1 (true for every ε ≥ 2^-39, far below the
	// accepted range).
	if g := LaplaceGranularity(float64(delta) / p.Epsilon); p.Secure && g > 1 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler at %d classes (spacing %v > 1)", p.Epsilon, c, g)}
	}
	return laplaceBags{eps: p.Epsilon, secure: p.Secure, c: c, delta: delta}, nil
}

// laplaceBags adds Laplace noise of scale Δ/ε to each released count.
type laplaceBags struct {
	eps    float64
	secure bool
	c      int
	delta  int // Δ
}

func (l laplaceBags) Classes() int       { return l.c }
func (laplaceBags) SumNoise() SumNoise   { return SumLaplace }
func (l laplaceBags) Sensitivity() int   { return l.delta }
func (l laplaceBags) NoiseRate() float64 { return l.eps / float64(l.delta) } // Δ = 1: ε bit for bit

// ReleaseBag writes counts[c]/n + Lap(Δ/(nε)) for c = 1..C−1 in
// increasing order, unclipped (E = counts[c]/n); with Secure,
// (counts[c] + SecureLaplace(Δ/ε))/n.
//
// Privacy. The noise density of the vector is Π_c f(x_c − n_c) with
// f ∝ e^{−λ|·|}, λ = ε/Δ, so for neighbouring count vectors n, n' (one
// label changed) the ratio at any output x is
// Π_c e^{λ(|x_c−n'_c| − |x_c−n_c|)} ≤ e^{λ‖n−n'‖₁} ≤ e^{λΔ} = e^ε by the
// triangle inequality and countSensitivity; division by n is
// post-processing. Each bag is ε-label-DP; n may be smaller than k (a kept
// remainder bag) because the noise does not depend on n.
func (l laplaceBags) ReleaseBag(dst []float64, counts []int, r Rand) {
	fn := float64(bagSize(dst, counts, l.c))
	for c := 1; c < l.c; c++ {
		s := float64(counts[c])
		if l.secure {
			dst[c-1] = (s + SecureLaplace(r, float64(l.delta)/l.eps)) / fn
		} else {
			dst[c-1] = s/fn + Laplace(r, float64(l.delta)/(fn*l.eps))
		}
	}
}

// Target is the identity: the release is already unbiased.
func (laplaceBags) Target(dst, alpha []float64, _ int) { copy(dst, alpha) }
