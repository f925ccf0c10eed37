package pets

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
)

// Labels with C classes (0..C−1, 2 ≤ C ≤ MaxClasses): the mechanisms of this
// package generalised as their authors or the label-DP literature do, each
// reducing exactly to the binary mechanism at C = 2 (same law and, given the
// same Rand stream, the same release bit for bit):
//
//   - rr: k-ary randomized response (k-RR of Kairouz, Oh and Viswanath): keep the
//     label with probability e^ε/(e^ε+C−1), otherwise release one of the
//     C−1 other classes uniformly. P(z|y) = e^ε/(e^ε+C−1) if z = y,
//     1/(e^ε+C−1) otherwise; every likelihood ratio is 1 or e^{±ε}, so it is
//     ε-label-DP.
//   - rr_prior: RRWithPrior (Ghazi et al., "Deep Learning with Label
//     Differential Privacy", NeurIPS 2021), see PriorSet.
//   - llp, llp_lap, llp_geom: a bag of n labels releases the counts of
//     classes 1..C−1 (class 0's count, n − Σ, is implied since n is public),
//     as proportions α_c = count_c/n, exactly or with noise on each count;
//     see ReleaseBag and Sensitivity.

// MaxClasses is the largest number of classes a Multiclass accepts: a set
// of classes is one uint64 bit mask (PriorSet), labels are uint8.
const MaxClasses = 64

// Multiclass is a validated, immutable label PET on C classes; safe for
// concurrent use (the Rand passed to the release methods is not).
type Multiclass struct {
	m *Mechanism
	c int

	// rr, rr_prior: for a set of j = 1..C classes, keep[j] = e^ε/(e^ε+j−1)
	// and other[j] = 1/(e^ε+j−1) (P(z|y) for z = y and z ≠ y inside the
	// set), flip[j] = (j−1)/(e^ε+j−1) = 1 − keep[j] and flipWord[j] its
	// 2^64-scaled threshold (see flipWith); index 0 unused.
	keep, other, flip []float64
	flipWord          []uint64
	expEps            float64 // e^ε

	delta     int     // llp_lap, llp_geom: L1 sensitivity Δ of the released count vector
	lambda    float64 // llp_lap, llp_geom: per-count noise rate ε/Δ
	overshoot float64 // llp_geom: 1/(e^{ε/Δ}−1), E[overshoot past a clip] in count units
}

// NewMulticlass validates p (as New does) and classes ∈ [2, MaxClasses], and
// returns the mechanism on labels 0..classes−1: New(p) with p.Classes =
// classes, its Multiclass. With classes = 2 it is p's binary mechanism.
// Errors wrap ErrInvalidParam and name "classes" or p's bad field.
func NewMulticlass(p Params, classes int) (*Multiclass, error) {
	if classes < 2 || classes > MaxClasses {
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("must be in [2, %d], got %d", MaxClasses, classes)}
	}
	p.Classes = classes
	m, err := New(p)
	if err != nil {
		return nil, err
	}
	if m.mc == nil {
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("%s has no C-class law (a kind registered from outside)", p.Kind)}
	}
	return m.mc, nil
}

// newMulticlass builds the C-class law of m (a kind that takes classes),
// C = m.Classes().
func newMulticlass(m *Mechanism) (*Multiclass, error) {
	p, classes := m.p, m.Classes()
	mc := &Multiclass{m: m, c: classes}
	eps := p.Epsilon
	switch p.Kind {
	case RR, RRPrior:
		mc.expEps = math.Exp(eps)
		n := classes + 1
		mc.keep, mc.other, mc.flip, mc.flipWord = make([]float64, n), make([]float64, n), make([]float64, n), make([]uint64, n)
		for j := 1; j <= classes; j++ {
			d := mc.expEps + float64(j-1) // for j = 2: e^ε + 1, the bits of Mechanism's 1 + e^ε
			mc.keep[j] = mc.expEps / d
			mc.other[j] = 1 / d
			mc.flip[j] = float64(j-1) / d // j = 2: 1/(e^ε+1) = π bit for bit
			if t := mc.flip[j] * 0x1p64; t >= 0x1p53 {
				mc.flipWord[j] = uint64(t) // exact: an integer-valued float64 < 2^64
			}
		}
	case LLPLap, LLPGeom:
		mc.delta = mc.Sensitivity()
		mc.lambda = eps / float64(mc.delta) // Δ = 1: ε bit for bit
		if p.Kind == LLPGeom {
			mc.overshoot = 1 / math.Expm1(mc.lambda)
		}
		if g := LaplaceGranularity(float64(mc.delta) / eps); p.Kind == LLPLap && p.Secure && g > 1 {
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler at %d classes (spacing %v > 1)", eps, classes, g)}
		}
	}
	return mc, nil
}

// Classes returns C.
func (m *Multiclass) Classes() int { return m.c }

// Mechanism returns the mechanism this is the law of: its Kind, K,
// Epsilon and Params (Classes = C) are this one's; its binary laws
// (ExampleLaw, BagLaw) are those of the same parameters on 2 classes.
func (m *Multiclass) Mechanism() *Mechanism { return m.m }

// FlipProb returns the probability (C−1)/(e^ε+C−1) that k-ary RR over all C
// classes releases another class than the label (rr; rr_prior with a
// uniform prior), 1 − keep; at C = 2 the binary π = 1/(1+e^ε) bit for bit.
// 0 for kinds without randomized response.
func (m *Multiclass) FlipProb() float64 {
	if m.flip == nil {
		return 0
	}
	return m.flip[m.c]
}

// Kind returns the mechanism kind.
func (m *Multiclass) Kind() Kind { return m.m.p.Kind }

// Epsilon returns the label-DP ε of one release, as Mechanism.Epsilon: the
// guarantee holds for every C (see the proofs at each release method).
func (m *Multiclass) Epsilon() float64 { return m.m.Epsilon() }

// String formats the mechanism with its classes, e.g.
// "llp_geom(k=8, ε=2, C=10)".
func (m *Multiclass) String() string {
	if m.c >= 3 {
		return m.m.String()
	}
	s := m.m.String()
	if strings.HasSuffix(s, ")") {
		return fmt.Sprintf("%s, C=%d)", strings.TrimSuffix(s, ")"), m.c)
	}
	return fmt.Sprintf("%s(C=%d)", s, m.c)
}

// Sensitivity returns Δ, the L1 sensitivity of the released count vector
// (n_1, …, n_{C−1}) when one label of the bag changes, whatever the bag:
//
//	Δ = 1 for C = 2,  Δ = 2 for C ≥ 3.
//
// Proof. Changing one label a → b (a ≠ b) lowers n_a by 1 and raises n_b by
// 1 and leaves the other counts alone. Class 0's count is not released, so
// the released vector moves by 1 in each of the coordinates a and b that
// are not 0: two coordinates when a, b ≥ 1 (possible only for C ≥ 3), one
// when a or b is 0. The largest L1 change is therefore 2 for C ≥ 3 and 1
// for C = 2 (where the only change is 0 ↔ 1). ∎
func (m *Multiclass) Sensitivity() int {
	if m.c == 2 {
		return 1
	}
	return 2
}

// NoiseRate returns λ = ε/Δ, the rate of the noise on each released count of
// llp_lap (Laplace of scale 1/λ) and llp_geom (two-sided geometric with
// a = e^{−λ}), in units of counts; 0 for the other kinds.
func (m *Multiclass) NoiseRate() float64 { return m.lambda }

// checkLabel panics on a label outside 0..C−1.
func (m *Multiclass) checkLabel(y uint8, row int) {
	if int(y) >= m.c {
		panic(fmt.Sprintf("pets: label %d at row %d is not in 0..%d", y, row, m.c-1))
	}
}

// flipWith reports whether uniform(r) < p, with t = p·2^64 when that is ≥
// 2^53 (then the test is exactly "first word < t", see flipAll) and 0
// otherwise. It consumes one word, rarely more when t = 0.
func flipWith(r Rand, p float64, t uint64) bool {
	x := r.Uint64()
	if t != 0 {
		return x < t
	}
	return x < 1<<53 && uniformFrom(x, r) < p
}

// uniformIntn returns an exactly uniform integer in [0, n), n ≥ 1, by
// Lemire's multiply-and-reject method: one word, another with probability
// < n/2^64 each time. n = 1 consumes one word (callers skip it).
func uniformIntn(r Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// RRLikelihood returns rr's P(z | y) on C classes: e^ε/(e^ε+C−1) if z = y,
// 1/(e^ε+C−1) otherwise (for none: 1 or 0). Panics for other kinds.
func (m *Multiclass) RRLikelihood(z, y uint8) float64 {
	switch m.m.p.Kind {
	case None:
		if z == y {
			return 1
		}
		return 0
	case RR:
		if z == y {
			return m.keep[m.c]
		}
		return m.other[m.c]
	}
	panic("pets: RRLikelihood on " + m.m.p.Kind.String())
}

// Likelihood returns P(z | y) of a kind released per example: rr_prior's
// RRPriorLikelihood in the row's set s, RRLikelihood otherwise (s
// ignored). Panics for the LLP family.
func (m *Multiclass) Likelihood(s PriorSet, z, y uint8) float64 {
	if m.m.spec.Release.WithPrior() {
		return m.RRPriorLikelihood(s, z, y)
	}
	return m.RRLikelihood(z, y)
}

// ReleaseRR writes the released labels into dst: for rr, k-ary randomized
// response of each label (kept with probability e^ε/(e^ε+C−1), otherwise a
// uniformly drawn one of the C−1 other classes); for none a copy. Labels
// must be in 0..C−1; len(dst) == len(labels) (dst may alias labels).
//
// Each label consumes one word of r for the keep/flip decision, exactly as
// Mechanism.ReleaseRR (rarely more when the flip probability is below
// 2^-11), and, when it flips and C ≥ 3, the words of an exact uniform draw
// among C−1 classes. At C = 2 the release equals Mechanism.ReleaseRR's bit
// for bit given the same stream. Panics for other kinds.
//
// Privacy: P(z|y)/P(z|y') ∈ {1, e^{±ε}} for all z, y, y': ε-label-DP.
func (m *Multiclass) ReleaseRR(dst, labels []uint8, r Rand) {
	if len(dst) != len(labels) {
		panic(fmt.Sprintf("pets: ReleaseRR: len(dst)=%d != len(labels)=%d", len(dst), len(labels)))
	}
	switch m.m.p.Kind {
	case None:
		for i, y := range labels {
			m.checkLabel(y, i)
		}
		copy(dst, labels)
	case RR:
		c := m.c
		p, t := m.flip[c], m.flipWord[c]
		for i, y := range labels {
			m.checkLabel(y, i)
			if flipWith(r, p, t) {
				y = m.otherClass(y, r)
			}
			dst[i] = y
		}
	default:
		panic("pets: ReleaseRR on " + m.m.p.Kind.String())
	}
}

// otherClass returns a class drawn uniformly from the C−1 classes ≠ y (no
// randomness at C = 2).
func (m *Multiclass) otherClass(y uint8, r Rand) uint8 {
	if m.c == 2 {
		return y ^ 1
	}
	j := uint8(uniformIntn(r, uint64(m.c-1)))
	if j >= y {
		j++
	}
	return j
}

// PriorSet is RRWithPrior's choice for one row: the set Y_k of the prior's
// top-k classes, as a bit mask (bit c set: class c ∈ Y_k), and k = |Y_k|.
type PriorSet struct {
	Mask uint64
	K    int
}

// Contains reports whether class y is in the set.
func (s PriorSet) Contains(y uint8) bool { return y < 64 && s.Mask>>y&1 == 1 }

// Members returns the set's classes in increasing order.
func (s PriorSet) Members() []uint8 {
	out := make([]uint8, 0, s.K)
	for m := s.Mask; m != 0; m &= m - 1 {
		out = append(out, uint8(bits.TrailingZeros64(m)))
	}
	return out
}

// nth returns the set's j-th smallest class (0-based).
func (s PriorSet) nth(j int) uint8 {
	m := s.Mask
	for ; j > 0; j-- {
		m &= m - 1
	}
	return uint8(bits.TrailingZeros64(m))
}

// PriorTolerance is how far from 1 the sum of a prior vector given to
// PriorSet may be (float32 softmax outputs sum to 1 within ~1e-6).
const PriorTolerance = 1e-4

// CheckPrior returns an error (wrapping ErrInvalidParam, naming "prior") if
// prior is not a probability vector over the C classes: length C, every
// entry finite and ≥ 0, sum within PriorTolerance of 1.
func (m *Multiclass) CheckPrior(prior []float64) error {
	if len(prior) != m.c {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("has %d entries for %d classes", len(prior), m.c)}
	}
	s := 0.0
	for c, v := range prior {
		if !(v >= 0 && v <= 1) {
			return &ParamError{Param: "prior", Msg: fmt.Sprintf("class %d has probability %v", c, v)}
		}
		s += v
	}
	if math.Abs(s-1) > PriorTolerance {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("sums to %v, not 1", s)}
	}
	return nil
}

// PriorSet returns RRWithPrior's set for a row whose public prior over the
// C classes is prior (it must not depend on the row's own label):
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
// C = 2 with prior (1−p, p) the rule is exactly Mechanism.PriorBranch's:
// k* = 1 (the argmax branch) iff min(p, 1−p) ≤ π = 1/(1+e^ε), k* = 2 (RR)
// otherwise, and the top-1 class is 1 iff p > ½. Panics for kinds other
// than rr_prior or a prior rejected by CheckPrior.
func (m *Multiclass) PriorSet(prior []float64) PriorSet {
	if m.m.p.Kind != RRPrior {
		panic("pets: PriorSet on " + m.m.p.Kind.String())
	}
	if err := m.CheckPrior(prior); err != nil {
		panic(err.Error())
	}
	var order [MaxClasses]uint8
	c := m.c
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
	E := m.expEps
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
	return PriorSet{Mask: mask, K: best}
}

// RRPriorLikelihood returns rr_prior's P(z | y) for a row with set s
// (PriorSet), k = s.K:
//
//	y ∈ Y, z = y:      e^ε/(e^ε+k−1)
//	y ∈ Y, z ∈ Y∖{y}:  1/(e^ε+k−1)
//	y ∉ Y, z ∈ Y:      1/k
//	z ∉ Y:             0
//
// Panics for other kinds.
func (m *Multiclass) RRPriorLikelihood(s PriorSet, z, y uint8) float64 {
	if m.m.p.Kind != RRPrior {
		panic("pets: RRPriorLikelihood on " + m.m.p.Kind.String())
	}
	switch {
	case !s.Contains(z):
		return 0
	case !s.Contains(y):
		return 1 / float64(s.K)
	case z == y:
		return m.keep[s.K]
	}
	return m.other[s.K]
}

// ReleaseRRPrior writes rr_prior's released labels into dst and each row's
// set into sets: row i's public prior over the C classes is
// prior[i·C:(i+1)·C] (not depending on labels[i]); with Y, k from PriorSet,
// a label y ∈ Y is kept with probability e^ε/(e^ε+k−1), else replaced by a
// uniformly drawn other member of Y; a label y ∉ Y is replaced by a
// uniformly drawn member of Y. k = 1 (the argmax branch) consumes no
// randomness; otherwise y ∈ Y consumes one word for the keep decision (as
// ReleaseRR) plus, when it flips and k ≥ 3, an exact uniform draw among
// k−1; y ∉ Y consumes an exact uniform draw among k. At C = 2 with
// prior (1−p_i, p_i) this is Mechanism.ReleaseRRPrior bit for bit given
// the same stream (sets[i].K == 1 ⇔ argmax[i]). Panics for other kinds,
// bad labels or priors, or mismatched lengths.
//
// Privacy: Y depends on the prior only.
// For z ∉ Y every likelihood is 0; for z ∈ Y they take the values
// e^ε/(e^ε+k−1), 1/(e^ε+k−1) and 1/k, whose pairwise ratios are at most
// e^ε (k·e^ε ≥ e^ε+k−1 for k ≥ 1): ε-label-DP.
func (m *Multiclass) ReleaseRRPrior(dst, labels []uint8, prior []float64, sets []PriorSet, r Rand) {
	c := m.c
	if len(dst) != len(labels) || len(prior) != c*len(labels) || len(sets) != len(labels) {
		panic(fmt.Sprintf("pets: ReleaseRRPrior: lengths dst=%d labels=%d prior=%d (want %d·labels) sets=%d differ",
			len(dst), len(labels), len(prior), c, len(sets)))
	}
	for i, y := range labels {
		m.checkLabel(y, i)
		s := m.PriorSet(prior[i*c : (i+1)*c])
		sets[i] = s
		dst[i] = m.releaseInSet(s, y, r)
	}
}

// releaseInSet is RR_k over the set s for a label y (a uniform member of s
// when y ∉ s).
func (m *Multiclass) releaseInSet(s PriorSet, y uint8, r Rand) uint8 {
	k := s.K
	if k == 1 {
		return s.nth(0)
	}
	if !s.Contains(y) {
		return s.nth(int(uniformIntn(r, uint64(k))))
	}
	if !flipWith(r, m.flip[k], m.flipWord[k]) {
		return y
	}
	if k == 2 {
		return uint8(bits.TrailingZeros64(s.Mask &^ (1 << y)))
	}
	j := int(uniformIntn(r, uint64(k-1)))
	if z := s.nth(j); z < y {
		return z
	}
	return s.nth(j + 1) // skip y
}

// ReleaseBag releases one bag of n = Σ counts ≥ 1 labels whose class counts
// are counts (len C, entries ≥ 0), writing the released proportions of
// classes 1..C−1 into dst (len C−1; class 0's is 1 − Σ dst for llp, and
// implied by n for the noisy kinds). With λ = ε/Δ (NoiseRate), for each
// c = 1..C−1 in increasing order, exactly as Mechanism.ReleaseBag does for
// one sum:
//   - llp: counts[c]/n.
//   - llp_lap: counts[c]/n + Lap(1/(nλ)), unclipped (E = counts[c]/n); with
//     Secure, (counts[c] + SecureLaplace(1/λ))/n.
//   - llp_geom: clip(counts[c] + Z_c, 0, n)/n, Z_c two-sided geometric with
//     a = e^{−λ}, independent across c.
//
// At C = 2 (Δ = 1, λ = ε) this is Mechanism.ReleaseBag(counts[1], n, r) bit
// for bit given the same stream.
//
// Privacy. The noise density (or pmf) of the vector is Π_c f(x_c − n_c) with
// f ∝ e^{−λ|·|} (Laplace, or two-sided geometric on ℤ), so for neighbouring
// count vectors n, n' (one label changed) the ratio at any output x is
// Π_c e^{λ(|x_c−n'_c| − |x_c−n_c|)} ≤ e^{λ‖n−n'‖₁} ≤ e^{λΔ} = e^ε by the
// triangle inequality and Sensitivity; clipping and division by n are
// post-processing. Each bag is ε-label-DP; n may be smaller than k (a kept
// remainder bag) because the noise does not depend on n. Panics for kinds
// outside the LLP family or bad counts.
func (m *Multiclass) ReleaseBag(dst []float64, counts []int, r Rand) {
	if len(counts) != m.c || len(dst) != m.c-1 {
		panic(fmt.Sprintf("pets: ReleaseBag: %d counts and %d outputs for %d classes (want %d and %d)",
			len(counts), len(dst), m.c, m.c, m.c-1))
	}
	n := 0
	for c, v := range counts {
		if v < 0 {
			panic(fmt.Sprintf("pets: ReleaseBag: class %d has count %d", c, v))
		}
		n += v
	}
	if n < 1 {
		panic("pets: ReleaseBag: empty bag")
	}
	fn := float64(n)
	eps := m.m.p.Epsilon
	for c := 1; c < m.c; c++ {
		s := counts[c]
		var a float64
		switch m.m.p.Kind {
		case LLP:
			a = float64(s) / fn
		case LLPLap:
			if m.m.p.Secure {
				a = (float64(s) + SecureLaplace(r, float64(m.delta)/eps)) / fn
			} else {
				a = float64(s)/fn + Laplace(r, float64(m.delta)/(fn*eps))
			}
		case LLPGeom:
			z := TwoSidedGeometric(r, m.lambda)
			switch {
			case z >= int64(n-s):
				a = 1
			case z <= -int64(s):
				a = 0
			default:
				a = float64(s+int(z)) / fn
			}
		default:
			panic("pets: ReleaseBag on " + m.m.p.Kind.String())
		}
		dst[c-1] = a
	}
}

// Debias maps released proportions alpha (len C−1, classes 1..C−1) of a bag
// of n labels to their training targets in dst (len C−1; dst may alias
// alpha), coordinate by coordinate as Mechanism.Debias does for one sum:
// for llp_geom, with t = round(α_c·n) the clipped noisy count, λ = ε/Δ and
// memorylessness of each coordinate's independent geometric tails,
//
//	E[n_c + Z_c | t] = t                    for 0 < t < n,
//	E[n_c + Z_c | t] = −1/(e^λ − 1)         for t = 0,
//	E[n_c + Z_c | t] = n + 1/(e^λ − 1)      for t = n,
//
// divided by n: an unbiased estimate of n_c/n. The identity for the other
// kinds (llp: exact; llp_lap: already unbiased). At C = 2 it is
// Mechanism.Debias bit for bit.
func (m *Multiclass) Debias(dst, alpha []float64, n int) {
	if len(dst) != m.c-1 || len(alpha) != m.c-1 {
		panic(fmt.Sprintf("pets: Debias: %d outputs and %d proportions for %d classes (want %d)", len(dst), len(alpha), m.c, m.c-1))
	}
	if m.m.p.Kind != LLPGeom {
		copy(dst, alpha)
		return
	}
	fn := float64(n)
	for i, a := range alpha {
		c := math.Round(a * fn)
		switch {
		case c <= 0:
			a = -m.overshoot / fn
		case c >= fn:
			a = 1 + m.overshoot/fn
		}
		dst[i] = a
	}
}
