package pets

import "fmt"

// value_bags is the aggregate of conversion values over bags of k, the
// core of an aggregate (summary) report: rows are partitioned into bags
// (at random, sorted or by key, as the LLP family's: a parameter of the
// release) and each bag releases the mean of its clipped values, exactly
// (no ε: not DP, like llp) or with Laplace noise of scale B/ε on the sum
// (ε-label-DP: one label moves the sum by at most B), unclipped, so the
// released mean is unbiased. A model trains with a bag-level squared loss
// on the bag's mean (the aggregate-response analogue of PropMatch: Σ_bags
// (mean predicted value − released mean)², unbiased under the mean-zero
// noise up to a constant).
type valueBagsScheme struct{}

// ValueBags is the mean of values over bags of k.
const ValueBags Kind = 11

var _ = builtin(ValueBags, valueBagsScheme{})

func (valueBagsScheme) Spec() Spec {
	return Spec{Name: "value_bags", Takes: Takes{K: true, Epsilon: true, OptionalEpsilon: true, Values: true}, Privacy: DPLaplace,
		Release: ReleaseValueBags, Train: Train{Loss: LossBagSquared, Target: TargetBagMean},
		Look: Look{Name: "value bags", Color: RGB{0xe3, 0x77, 0xc2}, Marker: MarkerPyramid}} // pink
}

func (valueBagsScheme) Law(p Params) (Law, error) {
	g, err := valueGrid(p, "value_bags")
	if err != nil {
		return nil, err
	}
	var b float64
	if p.Epsilon > 0 {
		b = g.Max / p.Epsilon
		if gr := LaplaceGranularity(b); p.Secure && gr > g.Step {
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler on %s", p.Epsilon, g)}
		}
	}
	return &bagValues{valueBase: valueBase{g}, b: b, secure: p.Secure}, nil
}

// bagValues releases a bag's mean, with Laplace noise of scale b on its
// sum when b > 0.
type bagValues struct {
	valueBase
	b      float64
	secure bool
}

func (*bagValues) Form() ValueForm  { return ValueBagMean }
func (l *bagValues) Scale() float64 { return l.b }

func (l *bagValues) Release([]float64, []float64, *Bins, Rand) { l.notPerExample(ValueBagMean) }

// ReleaseBag returns (sum + Lap(b))/n, or sum/n for an exact bag: two
// words of r per noisy bag (SecureLaplace's with Secure), none for an
// exact one. n is the bag's actual size (a kept remainder bag may be
// smaller than k); the noise is on the sum, so each bag is ε-label-DP
// whatever n.
func (l *bagValues) ReleaseBag(sum float64, n int, r Rand) float64 {
	if n < 1 || !(sum >= 0 && sum <= float64(n)*l.g.Max*(1+1e-12)) {
		panic(fmt.Sprintf("pets: value_bags: a bag of %d rows cannot sum to %v on %s", n, sum, l.g))
	}
	switch {
	case l.b == 0:
	case l.secure:
		sum += SecureLaplace(r, l.b)
	default:
		sum += Laplace(r, l.b)
	}
	return sum / float64(n)
}
