package pets

import "fmt"

// llp_lap is LLP with Laplace noise on each bag's proportion (Section 4
// "Mechanisms", Appendix C "Training with LLP+Lap"): α = sum/n +
// Lap(1/(nε)), unclipped, so that the noise is mean-zero and PropMatch
// stays unbiased (Appendix D, Theorem D.1); ε-label-DP at any bag size.
// With Params.Secure the noise comes from the grid sampler SecureLaplace.
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
	// Noise on the integer sum has scale 1/ε whatever the bag size;
	// SecureLaplace is exact when every sum lies on its grid, which needs
	// a spacing ≤ 1 (true for every ε ≥ 2^-40, far below the accepted
	// range).
	if g := LaplaceGranularity(1 / p.Epsilon); p.Secure && g > 1 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler (spacing %v > 1)", p.Epsilon, g)}
	}
	return laplaceBags{eps: p.Epsilon, secure: p.Secure}, nil
}

// laplaceBags adds Laplace noise of scale 1/ε to each bag's sum.
type laplaceBags struct {
	eps    float64
	secure bool
}

func (laplaceBags) Classes() int         { return 2 }
func (laplaceBags) SumNoise() SumNoise   { return SumLaplace }
func (l laplaceBags) NoiseRate() float64 { return l.eps }

func (l laplaceBags) ReleaseBag(sum, n int, r Rand) float64 {
	fn := float64(n)
	if l.secure {
		return (float64(sum) + SecureLaplace(r, 1/l.eps)) / fn
	}
	return float64(sum)/fn + Laplace(r, 1/(fn*l.eps))
}

// Debias is the identity: the release is already unbiased.
func (laplaceBags) Debias(alpha float64, _ int) float64 { return alpha }
