package pets

// llp is learning from label proportions (Section 2): rows are partitioned
// into bags of k (at random, or by a curated bag rule: the rule is a
// parameter of the release, not of the mechanism, since the law of a
// bag's release given its labels does not depend on how the bag was
// formed) and only the proportion α = (sum of labels)/n of each bag is
// released. Not differentially private (ε = +Inf: a bag whose labels are
// all equal shows them). The model trains per bag with train.llp_loss
// (PropMatch, Section 2).
type llpScheme struct{}

// LLP is label proportions of bags of k.
const LLP Kind = 3

var _ = builtin(LLP, llpScheme{})

func (llpScheme) Spec() Spec {
	return Spec{Name: "llp", Takes: Takes{K: true, Classes: true}, Privacy: NotDP, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlpha},
		Look:  Look{Name: "LLP", Color: RGB{0x1f, 0x77, 0xb4}, Marker: MarkerBox}} // blue
}

func (llpScheme) Law(Params) (Law, error) { return exactBags{}, nil }

// exactBags releases each bag's exact proportion.
type exactBags struct{}

func (exactBags) Classes() int                          { return 2 }
func (exactBags) SumNoise() SumNoise                    { return SumExact }
func (exactBags) NoiseRate() float64                    { return 0 }
func (exactBags) ReleaseBag(sum, n int, _ Rand) float64 { return float64(sum) / float64(n) }
func (exactBags) Debias(alpha float64, _ int) float64   { return alpha }
