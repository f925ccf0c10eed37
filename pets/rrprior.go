package pets

import (
	"fmt"
	"math/bits"
)

// rr_prior is randomized response with a prior (beyond the paper:
// RRWithPrior of Ghazi et al., "Deep Learning with Label Differential
// Privacy", NeurIPS 2021): given a public prior over the classes that does
// not depend on the row's label, it releases by RR within the prior's
// top-k classes Y, k chosen to maximise the chance of releasing the true
// label (priorSet); on two classes with prior p = P(y=1|x), the prior's
// argmax label when max(p, 1−p) ≥ e^ε/(1+e^ε), RR(ε) otherwise
// (priorLaw.branch). ε-label-DP. Its release has two stages: the first
// through the uniform prior (RR over every class), the second through the
// priors of a model trained on the first (package release, StartRRPrior).
// The model trains with BCE (ce on C classes) on soft targets built from
// the release through each row's channel (train.rr_prior_targets).
type rrPriorScheme struct{}

// RRPrior is randomized response with a prior (RRWithPrior): RR within the
// prior's top classes, the prior's argmax label where it is confident
// enough.
const RRPrior Kind = 6

var _ = builtin(RRPrior, rrPriorScheme{})

func (rrPriorScheme) Spec() Spec {
	return Spec{Name: "rr_prior", Takes: Takes{Epsilon: true, Classes: true}, Privacy: DPRR, Release: ReleaseLabelsWithPrior,
		Train: Train{Loss: LossBCE, Target: TargetSoft},
		Look:  Look{Name: "RR+prior", Family: "rr", Color: RGB{0x94, 0x67, 0xbd}, Marker: MarkerTriangle}} // purple
}

func (rrPriorScheme) Law(p Params) (Law, error) {
	if c := max(p.Classes, 2); c >= 3 {
		return &setPriorLaw{t: newRRTables(p.Epsilon, c)}, nil
	}
	rr := newFlipLaw(p.Epsilon)
	return &priorLaw{rr: rr, ch: [3]Channel{
		rr.ch,
		{C: 2, Z: 2, P: []float64{1, 1, 0, 0}, Form: FormSetRR}, // argmax 0: z = 0 whatever y
		{C: 2, Z: 2, P: []float64{0, 0, 1, 1}, Form: FormSetRR}, // argmax 1
	}}, nil
}

// priorLaw is rr_prior's law on two classes: channel 0 is RR(ε) (the RR
// branch), channels 1 and 2 release the prior's argmax label 0 or 1
// whatever the label.
type priorLaw struct {
	rr *flipLaw
	ch [3]Channel
}

func (l *priorLaw) Classes() int               { return 2 }
func (l *priorLaw) Channel(key uint64) Channel { return l.ch[key] }

// ChannelOf is branch's choice for the prior (1 − p, p): 0 on the RR
// branch, 1 + the argmax label on the argmax branch.
func (l *priorLaw) ChannelOf(prior []float64) uint64 {
	lab, argmax := l.branch(prior1(prior))
	if !argmax {
		return 0
	}
	return 1 + uint64(lab)
}

// prior1 is p = P(y = 1 | x) of a binary prior vector (1 − p, p).
func prior1(prior []float64) float64 {
	if len(prior) != 2 {
		panic(fmt.Sprintf("pets: rr_prior on two classes takes priors of 2 values, got %d", len(prior)))
	}
	return prior[1]
}

// branch is rr_prior's rule for one row whose public prior is
// p = P(y = 1 | x) ∈ [0, 1] (RRWithPrior with two classes): it compares
// the prior's top-1 mass max(p, 1−p) with the top-2 mass 1 times RR's keep
// probability q = e^ε/(1+e^ε) = 1 − π. If max(p, 1−p) ≥ q (computed as
// min(p, 1−p) ≤ π, exact near 0 and 1) the row takes the argmax branch:
// argmax is true and label the prior's argmax (1 iff p > ½), released
// whatever the true label. Otherwise it takes the RR branch (argmax false,
// label 0): RR(ε) of the true label. The branch depends on p only, so a
// prior that does not depend on the row's own label keeps the release
// ε-label-DP: the likelihood ratio is 1 on the argmax branch and e^{±ε} on
// the RR branch. p = ½ (no information) always takes the RR branch, so
// rr_prior with a uniform prior is rr. Panics for p outside [0, 1] (NaN
// included).
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

// Release writes rr_prior's released labels into dst: prior holds each
// row's (1 − p_i, p_i). RR-branch rows consume the words of r that rr's
// release would consume for them, in row order; argmax rows consume none.
func (l *priorLaw) Release(dst, labels []uint8, prior []float64, r Rand) {
	if len(dst) != len(labels) || len(prior) != 2*len(labels) {
		panic(fmt.Sprintf("pets: rr_prior: lengths dst=%d labels=%d prior=%d (want 2·labels) differ", len(dst), len(labels), len(prior)))
	}
	checkLabels(labels, 2)
	var one [1]uint8
	for i, y := range labels {
		lab, am := l.branch(prior1(prior[2*i : 2*i+2]))
		if am {
			dst[i] = lab
			continue
		}
		one[0] = y
		l.rr.flip(one[:], one[:], r)
		dst[i] = one[0]
	}
}

// setPriorLaw is rr_prior on C ≥ 3 classes: a row's channel is RR within
// its prior's set (priorSet), keyed by the set's bit mask.
type setPriorLaw struct{ t *rrTables }

func (l *setPriorLaw) Classes() int { return l.t.c }

// ChannelOf returns the bit mask of the row's set: priorSet(prior).
func (l *setPriorLaw) ChannelOf(prior []float64) uint64 { return l.priorSet(prior) }

// Channel returns RR within the set of bit mask key (k = |Y| members):
//
//	y ∈ Y, z = y:      e^ε/(e^ε+k−1)
//	y ∈ Y, z ∈ Y∖{y}:  1/(e^ε+k−1)
//	y ∉ Y, z ∈ Y:      1/k
//	z ∉ Y:             0
//
// Privacy: Y depends on the prior only. For z ∉ Y every likelihood is 0;
// for z ∈ Y they take the values e^ε/(e^ε+k−1), 1/(e^ε+k−1) and 1/k,
// whose pairwise ratios are at most e^ε (k·e^ε ≥ e^ε+k−1 for k ≥ 1):
// ε-label-DP.
func (l *setPriorLaw) Channel(key uint64) Channel {
	c := l.t.c
	k := bits.OnesCount64(key)
	ch := Channel{C: c, Z: c, P: make([]float64, c*c), Flip: l.t.flip[k], Form: FormSetRR}
	for z := range c {
		if key>>z&1 == 0 {
			continue
		}
		for y := range c {
			var p float64
			switch {
			case key>>y&1 == 0:
				p = 1 / float64(k)
			case z == y:
				p = l.t.keep[k]
			default:
				p = l.t.other[k]
			}
			ch.P[z*c+y] = p
		}
	}
	return ch
}

// priorSet returns RRWithPrior's set for a row whose public prior over the
// C classes is prior (it must not depend on the row's own label), as a
// bit mask:
//
//	k* = argmax_{k=1..C} M_k·e^ε/(e^ε+k−1),  Y = the prior's top-k* classes,
//
// where M_k is the prior mass of the top k classes: the probability that
// RR_k over the top-k set releases the true label when the label is drawn
// from the prior. Classes are ranked by decreasing prior, ties by
// increasing class index; ties between values of k go to the smallest k.
// M_k is evaluated as 1 − T_k with T_k the mass outside the top k summed
// from the smallest entry up (accurate where the prior is confident), and
// k' beats the best k < k' so far iff
//
//	T_k − T_{k'}·(e^ε+k−1)/(e^ε+k'−1) > (k'−k)/(e^ε+k'−1)
//
// (the comparison M_k/(e^ε+k−1) < M_{k'}/(e^ε+k'−1) multiplied out), so at
// C = 2 with prior (1−p, p) the rule is exactly branch's: k* = 1 (the
// argmax branch) iff min(p, 1−p) ≤ π = 1/(1+e^ε), k* = 2 (RR) otherwise,
// and the top-1 class is 1 iff p > ½. A uniform prior gives every class
// (M_k = k/C, and k/(e^ε+k−1) grows with k): k-ary RR. Panics for a prior
// CheckPrior rejects.
func (l *setPriorLaw) priorSet(prior []float64) uint64 {
	c := l.t.c
	if err := CheckPrior(prior, c); err != nil {
		panic(err.Error())
	}
	var order [MaxClasses]uint8
	for i := range c {
		order[i] = uint8(i)
	}
	// Insertion sort (C ≤ 64), decreasing prior, stable: ties keep
	// increasing class order.
	for i := 1; i < c; i++ {
		x := order[i]
		j := i
		for ; j > 0 && prior[order[j-1]] < prior[x]; j-- {
			order[j] = order[j-1]
		}
		order[j] = x
	}
	var tail [MaxClasses + 1]float64 // tail[k] = T_k = Σ_{i ≥ k} prior[order[i]]
	for k := c - 1; k >= 0; k-- {
		tail[k] = tail[k+1] + prior[order[k]]
	}
	E := l.t.expEps
	best := 1
	for k := 2; k <= c; k++ {
		d := E + float64(k-1)
		if tail[best]-tail[k]*((E+float64(best-1))/d) > float64(k-best)/d {
			best = k
		}
	}
	var mask uint64
	for _, cl := range order[:best] {
		mask |= 1 << cl
	}
	return mask
}

// Release writes the released labels into dst: row i's public prior over
// the C classes is prior[i·C:(i+1)·C] (not depending on labels[i]); with
// Y = priorSet of it and k = |Y|, a label y ∈ Y is kept with probability
// e^ε/(e^ε+k−1), else replaced by a uniformly drawn other member of Y; a
// label y ∉ Y is replaced by a uniformly drawn member of Y. k = 1 (the
// argmax branch) consumes no randomness; otherwise y ∈ Y consumes one word
// for the keep decision (as rr) plus, when it flips and k ≥ 3, an exact
// uniform draw among k−1; y ∉ Y consumes an exact uniform draw among k.
func (l *setPriorLaw) Release(dst, labels []uint8, prior []float64, r Rand) {
	c := l.t.c
	if len(dst) != len(labels) || len(prior) != c*len(labels) {
		panic(fmt.Sprintf("pets: rr_prior: lengths dst=%d labels=%d prior=%d (want %d·labels) differ", len(dst), len(labels), len(prior), c))
	}
	checkLabels(labels, c)
	for i, y := range labels {
		dst[i] = releaseInSet(l.t, l.priorSet(prior[i*c:(i+1)*c]), y, r)
	}
}

// releaseInSet is RR_k over the set of bit mask s for a label y (a uniform
// member of s when y ∉ s), with k-ary RR's tables t.
func releaseInSet(t *rrTables, s uint64, y uint8, r Rand) uint8 {
	k := bits.OnesCount64(s)
	if k == 1 {
		return nthMember(s, 0)
	}
	if s>>y&1 == 0 {
		return nthMember(s, int(uniformIntn(r, uint64(k))))
	}
	if !flipWith(r, t.flip[k], t.flipWord[k]) {
		return y
	}
	if k == 2 {
		return uint8(bits.TrailingZeros64(s &^ (1 << y)))
	}
	j := int(uniformIntn(r, uint64(k-1)))
	if z := nthMember(s, j); z < y {
		return z
	}
	return nthMember(s, j+1) // skip y
}

// nthMember returns the j-th smallest class (0-based) of the bit mask s.
func nthMember(s uint64, j int) uint8 {
	for ; j > 0; j-- {
		s &= s - 1
	}
	return uint8(bits.TrailingZeros64(s))
}
