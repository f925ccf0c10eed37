package pets

import "fmt"

// rr_prior is randomized response with a prior (beyond the paper:
// RRWithPrior of Ghazi et al., "Deep Learning with Label Differential
// Privacy", NeurIPS 2021, two classes): given a public prior
// p = P(y=1|x) that does not depend on the row's label, release the
// prior's argmax label when max(p, 1−p) ≥ e^ε/(1+e^ε), RR(ε) otherwise
// (PriorBranch, ReleaseRRPrior); ε-label-DP. Its release has two stages:
// the first through the prior ½ (RR), the second through the priors of a
// model trained on the first (package release, StartRRPrior). The model
// trains with BCE on soft targets built from the release
// (train.rr_prior_targets).
type rrPriorScheme struct{}

// RRPrior is randomized response with a prior (RRWithPrior, two classes):
// the prior's argmax label where the prior is confident enough, RR(ε)
// elsewhere.
const RRPrior Kind = 6

var _ = builtin(RRPrior, rrPriorScheme{})

func (rrPriorScheme) Spec() Spec {
	return Spec{Name: "rr_prior", Takes: Takes{Epsilon: true, Classes: true}, Privacy: DPRR, Release: ReleaseLabelsWithPrior,
		Train: Train{Loss: LossBCE, Target: TargetSoft},
		Look:  Look{Name: "RR+prior", Family: "rr", Color: RGB{0x94, 0x67, 0xbd}, Marker: MarkerTriangle}} // purple
}

func (rrPriorScheme) Law(p Params) (Law, error) {
	rr := newFlipLaw(p.Epsilon)
	return &priorLaw{rr: rr, ch: []Channel{
		rr.ch[0],
		{C: 2, Z: 2, P: []float64{1, 1, 0, 0}}, // argmax 0: z = 0 whatever y
		{C: 2, Z: 2, P: []float64{0, 0, 1, 1}}, // argmax 1
	}}, nil
}

// priorLaw is rr_prior's law: channel 0 is RR(ε) (the RR branch), channels
// 1 and 2 release the prior's argmax label 0 or 1 whatever the label.
type priorLaw struct {
	rr *flipLaw
	ch []Channel
}

func (l *priorLaw) Classes() int        { return 2 }
func (l *priorLaw) Channels() []Channel { return l.ch }

// ChannelOf is PriorBranch's choice: 0 on the RR branch, 1 + the argmax
// label on the argmax branch.
func (l *priorLaw) ChannelOf(p float64) int {
	lab, argmax := l.branch(p)
	if !argmax {
		return 0
	}
	return 1 + int(lab)
}

func (l *priorLaw) Release(dst, labels []uint8, prior []float64, r Rand) {
	l.release(dst, labels, prior, nil, r)
}

// branch is PriorBranch (see there); panics for p outside [0, 1].
func (l *priorLaw) branch(p float64) (label uint8, argmax bool) {
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("pets: prior %v is not in [0, 1]", p))
	}
	if min(p, 1-p) > l.rr.pi {
		return 0, false
	}
	if p > 0.5 {
		return 1, true
	}
	return 0, true
}

// release is ReleaseRRPrior; argmax may be nil.
func (l *priorLaw) release(dst, labels []uint8, prior []float64, argmax []bool, r Rand) {
	if len(dst) != len(labels) || len(prior) != len(labels) || (argmax != nil && len(argmax) != len(labels)) {
		panic(fmt.Sprintf("pets: ReleaseRRPrior: lengths dst=%d labels=%d prior=%d argmax=%d differ",
			len(dst), len(labels), len(prior), len(argmax)))
	}
	var one [1]uint8
	for i, y := range labels {
		if y > 1 {
			panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
		}
		lab, am := l.branch(prior[i])
		if argmax != nil {
			argmax[i] = am
		}
		if am {
			dst[i] = lab
			continue
		}
		one[0] = y
		l.rr.flip(one[:], one[:], r)
		dst[i] = one[0]
	}
}

// priorLaw returns rr_prior's law; panics for other kinds.
func (m *Mechanism) priorLaw(what string) *priorLaw {
	l, ok := m.ex.(*priorLaw)
	if !ok {
		panic("pets: " + what + " on " + m.p.Kind.String())
	}
	return l
}

// PriorBranch is rr_prior's rule for one row whose public prior is
// p = P(y = 1 | x) ∈ [0, 1] (RRWithPrior of Ghazi et al. 2021 with two
// classes): it compares the prior's top-1 mass max(p, 1−p) with the top-2
// mass 1 times RR's keep probability q = e^ε/(1+e^ε) = 1 − π. If
// max(p, 1−p) ≥ q (computed as min(p, 1−p) ≤ π, exact near 0 and 1) the
// row takes the argmax branch: argmax is true and label the prior's argmax
// (1 iff p > ½), released whatever the true label. Otherwise it takes the
// RR branch (argmax false, label 0): RR(ε) of the true label. The branch
// depends on p only, so a prior that does not depend on the row's own
// label keeps the release ε-label-DP: the likelihood ratio is 1 on the
// argmax branch and e^{±ε} on the RR branch. p = ½ (no information)
// always takes the RR branch, so rr_prior with a uniform prior is rr.
// Panics for other kinds or a p outside [0, 1] (NaN included).
func (m *Mechanism) PriorBranch(p float64) (label uint8, argmax bool) {
	return m.priorLaw("PriorBranch").branch(p)
}

// ReleaseRRPrior writes rr_prior's released labels into dst and each row's
// branch into argmax (true: the prior's argmax label was released, see
// PriorBranch): prior[i] is row i's public prior P(y = 1 | x_i), which must
// not depend on labels[i]. Labels must be 0 or 1; dst, labels, prior and
// argmax have equal lengths (dst may alias labels). RR-branch rows consume
// the words of r that ReleaseRR would consume for them, in row order;
// argmax rows consume none. Panics for other kinds, bad labels or priors.
func (m *Mechanism) ReleaseRRPrior(dst, labels []uint8, prior []float64, argmax []bool, r Rand) {
	l := m.priorLaw("ReleaseRRPrior")
	if argmax == nil {
		argmax = []bool{} // the lengths must agree, as always
	}
	l.release(dst, labels, prior, argmax, r)
}
