package pets

import "fmt"

// laplace is the Laplace mechanism on a conversion value, the baseline of
// label-DP regression: z = y + Lap(B/ε), y clipped to [0, B] (the grid),
// unclipped noise so that E[z | y] = y. Changing one label moves y by at
// most B, so noise of scale B/ε makes it ε-label-DP (the density ratio at
// any z is e^{(|z−y'| − |z−y|)ε/B} ≤ e^{|y−y'|ε/B} ≤ e^ε); its privacy loss
// is the Laplace mechanism's at ε, composed through its PLD. A model
// trains with squared loss on z (unbiased). With Params.Secure the noise
// comes from SecureLaplace on a grid 2^-40 of the scale fine.
type laplaceScheme struct{}

// LaplaceValue is the Laplace mechanism on values (kind laplace).
const LaplaceValue Kind = 9

var _ = builtin(LaplaceValue, laplaceScheme{})

func (laplaceScheme) Spec() Spec {
	return Spec{Name: "laplace", Takes: Takes{Epsilon: true, Values: true}, Privacy: DPLaplace, Release: ReleaseValues,
		Train: Train{Loss: LossSquared, Target: TargetValueRR},
		Look:  Look{Name: "Laplace", Color: RGB{0x8c, 0x56, 0x4b}, Marker: MarkerBox}} // brown
}

func (laplaceScheme) Law(p Params) (Law, error) {
	g, err := valueGrid(p, "laplace")
	if err != nil {
		return nil, err
	}
	b := g.Max / p.Epsilon
	if gr := LaplaceGranularity(b); p.Secure && gr > g.Step {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler on %s (spacing %v > the step)", p.Epsilon, g, gr)}
	}
	return &laplaceValues{valueBase: valueBase{g}, b: b, secure: p.Secure}, nil
}

// laplaceValues adds Laplace noise of scale b = B/ε to each value.
type laplaceValues struct {
	valueBase
	b      float64
	secure bool
}

func (*laplaceValues) Form() ValueForm  { return ValueLaplace }
func (l *laplaceValues) Scale() float64 { return l.b }

// Release writes y + Lap(b) for each value: two words of r (the
// magnitude's uniform and the sign) per value, or SecureLaplace's.
func (l *laplaceValues) Release(dst, labels []float64, _ *Bins, r Rand) {
	checkValues(dst, labels, l.g)
	for i, y := range labels {
		if l.secure {
			dst[i] = y + SecureLaplace(r, l.b)
		} else {
			dst[i] = y + Laplace(r, l.b)
		}
	}
}

func (l *laplaceValues) ReleaseBag(float64, int, Rand) float64 { l.notPerBag(ValueLaplace); return 0 }
