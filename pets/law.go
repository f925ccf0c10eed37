package pets

import (
	"fmt"
	"math"
	"math/bits"
)

// Law is a validated mechanism's law on C classes: an ExampleLaw or a
// BagLaw.
type Law interface {
	// Classes is the number of label classes C it takes (labels 0..C−1);
	// 2 for binary labels.
	Classes() int
}

// ExampleLaw is the law of a mechanism that releases one label per example
// (none, bot, rr, rr_prior): each example goes through one channel
// P(z | y), chosen by its public prior when the kind takes one
// (Release.WithPrior). Everything a caller computes of an example — its
// audit, its release's training target, what the release shows — follows
// from its channel.
type ExampleLaw interface {
	Law
	// ChannelOf returns the key of the channel an example goes through.
	// prior is the example's public prior over the C classes (C values
	// passing CheckPrior; at C = 2, (1 − p, p)) for a kind whose release
	// depends on one, nil otherwise (the key is then always the same).
	// Keys are the law's own: equal keys, equal channels.
	ChannelOf(prior []float64) uint64
	// Channel returns the channel of a key ChannelOf returned.
	Channel(key uint64) Channel
	// Release writes the release of each labels[i] into dst[i] (dst may
	// alias labels) through its channel, drawing from r. Labels must be in
	// 0..C−1; prior is nil, or the rows' priors, C values a row
	// (row-major), for a kind released with a prior.
	Release(dst, labels []uint8, prior []float64, r Rand)
}

// Channel is a per-example release law: P(z | y) for labels y ∈ [0, C) and
// released values z ∈ [0, Z). Z = 1 is a release that shows nothing.
type Channel struct {
	C, Z int
	P    []float64 // P[z·C + y] = P(z | y); Σ_z P(z | y) = 1
	// Flip is the probability π that randomized response over every class
	// of the channel's support releases another class than a label in it:
	// rr's 1/(1+e^ε) on two classes and (C−1)/(e^ε+C−1) on C, rr_prior's
	// over its set; what the debiased losses (debiased_bce, forward_ce,
	// backward_ce) correct for. 0 when the channel is not such randomized
	// response. On two classes Flip > 0 also gives the audit Theorem 3.5's
	// closed form.
	Flip float64
	// Form says which closed forms the channel offers the audit and the
	// trainer (FormTable: none; they compute from P).
	Form Form
}

// Form is the structure a channel declares beyond its table P: a closed
// form its servers use (the audit's IEAdv, the trainer's unbiased target).
// A kind may always declare FormTable; the others promise structure.
type Form uint8

const (
	// FormTable: only P.
	FormTable Form = iota
	// FormRR: randomized response over every class, P(z | y) = P(0 | 0)
	// for z = y and P(1 | 0) for every z ≠ y (rr; none, whose off-diagonal
	// is 0): the audit's closed form IEAdvRRC on C ≥ 3 classes.
	FormRR
	// FormSetRR: randomized response within the support S (the classes it
	// releases): P(z | y) = P(y | y) for z = y ∈ S, one value q' for
	// z ≠ y both in S, 1/|S| for y ∉ S and z ∈ S, 0 for z ∉ S (rr_prior's
	// RRWithPrior over the prior's top k): the trainer's closed-form
	// unbiased target (1{z = c} − q')/(P(y|y) − q') for c ∈ S.
	FormSetRR
	// FormRRErased: randomized response over every class, erased with a
	// probability q that does not depend on the label: Z = C + 1 releases,
	// P(z | y) = (1−q)·RR(z | y) for z < C — one value for z = y, one for
	// z ≠ y — and P(C | y) = q, the release C showing no class. Flip is
	// the randomized response's, (C−1)·P(z | y)/(1 − q) for z ≠ y: given a
	// release other than C the channel is FormRR with that flip, and C
	// says nothing of the label (its posterior is the prior), so a
	// trainer may drop the rows released C — a choice that depends on no
	// label — and correct the others as rr's (ara_event: k-ary randomized
	// response over an attribution source's k output states, the k − C
	// states that stand for no class merged into the one release C).
	FormRRErased
)

// Erased returns the release that shows no class of a FormRRErased
// channel (C), and whether c has one.
func (c *Channel) Erased() (uint8, bool) {
	if c.Form != FormRRErased {
		return 0, false
	}
	return uint8(c.C), true
}

// Prob returns P(z | y).
func (c *Channel) Prob(z, y uint8) float64 { return c.P[int(z)*c.C+int(y)] }

// Informative reports whether the release says anything about the label:
// some release z has P(z | y) ≠ P(z | y') for two labels. A channel that
// is not (bot's; rr_prior's argmax branch, which releases the prior's
// argmax whatever the label) "shows nothing".
func (c *Channel) Informative() bool {
	for z := range c.Z {
		row := c.P[z*c.C : (z+1)*c.C]
		for _, p := range row[1:] {
			if p != row[0] {
				return true
			}
		}
	}
	return false
}

// Support returns the set of releases z < 64 that some label releases with
// positive probability, as a bit mask (bit z set).
func (c *Channel) Support() uint64 {
	var s uint64
	for z := range min(c.Z, 64) {
		for _, p := range c.P[z*c.C : (z+1)*c.C] {
			if p > 0 {
				s |= 1 << z
				break
			}
		}
	}
	return s
}

// Check returns an error if c is not a probability law of C ≥ 2 labels
// over Z ≥ 1 releases (every column summing to 1 within 1e-9), or its
// declared Form or Flip does not hold of P.
func (c *Channel) Check() error {
	if c.C < 2 || c.C > MaxClasses || c.Z < 1 || len(c.P) != c.Z*c.C {
		return fmt.Errorf("C = %d, Z = %d and %d probabilities", c.C, c.Z, len(c.P))
	}
	for y := range c.C {
		s := 0.0
		for z := range c.Z {
			p := c.P[z*c.C+y]
			if !(p >= 0 && p <= 1) {
				return fmt.Errorf("P(%d | %d) = %v", z, y, p)
			}
			s += p
		}
		if math.Abs(s-1) > 1e-9 {
			return fmt.Errorf("P(· | %d) sums to %v", y, s)
		}
	}
	switch c.Form {
	case FormTable:
	case FormRR:
		if c.Z != c.C {
			return fmt.Errorf("FormRR with %d releases of %d classes", c.Z, c.C)
		}
		keep, other := c.P[0], c.P[c.C]
		for z := range c.Z {
			for y := range c.C {
				want := other
				if z == y {
					want = keep
				}
				if c.P[z*c.C+y] != want {
					return fmt.Errorf("FormRR but P(%d | %d) = %v, not %v", z, y, c.P[z*c.C+y], want)
				}
			}
		}
	case FormSetRR:
		if c.Z != c.C {
			return fmt.Errorf("FormSetRR with %d releases of %d classes", c.Z, c.C)
		}
		s := c.Support()
		k := bits.OnesCount64(s)
		members := setMembers(s)
		keep, other := c.P[int(members[0])*c.C+int(members[0])], 0.0
		if k > 1 {
			other = c.P[int(members[1])*c.C+int(members[0])]
		}
		for z := range c.Z {
			for y := range c.C {
				zin, yin := s>>z&1 == 1, s>>y&1 == 1
				var want float64
				switch {
				case !zin:
				case !yin:
					want = 1 / float64(k)
				case z == y:
					want = keep
				default:
					want = other
				}
				if c.P[z*c.C+y] != want {
					return fmt.Errorf("FormSetRR but P(%d | %d) = %v, not %v", z, y, c.P[z*c.C+y], want)
				}
			}
		}
	case FormRRErased:
		if c.Z != c.C+1 {
			return fmt.Errorf("FormRRErased with %d releases of %d classes", c.Z, c.C)
		}
		keep, other, q := c.P[0], c.P[c.C], c.P[c.C*c.C]
		for z := range c.Z {
			for y := range c.C {
				want := other
				switch {
				case z == c.C:
					want = q
				case z == y:
					want = keep
				}
				if c.P[z*c.C+y] != want {
					return fmt.Errorf("FormRRErased but P(%d | %d) = %v, not %v", z, y, c.P[z*c.C+y], want)
				}
			}
		}
		if want := float64(c.C-1) * other / (1 - q); !(q < 1) || math.Abs(c.Flip-want) > 1e-12*want {
			return fmt.Errorf("FormRRErased with erasure %v and flip %v, not %v", q, c.Flip, want)
		}
	default:
		return fmt.Errorf("form %d unknown", c.Form)
	}
	if c.Flip != 0 && c.Form == FormTable {
		return fmt.Errorf("a flip probability %v on a channel of no RR form", c.Flip)
	}
	return nil
}

// setMembers returns the classes of a bit mask in increasing order.
func setMembers(mask uint64) []uint8 {
	out := make([]uint8, 0, bits.OnesCount64(mask))
	for m := mask; m != 0; m &= m - 1 {
		out = append(out, uint8(bits.TrailingZeros64(m)))
	}
	return out
}

// BagLaw is the law of a mechanism that releases proportions (the LLP
// family per bag of k, ReleaseCounts per example as a bag of one): a bag
// of n rows with class counts n_0..n_{C−1} releases α_c = t_c/n for the
// classes c = 1..C−1 (class 0's count is implied: n is public), t_c =
// n_c + noise of the law SumNoise at rate NoiseRate in units of counts,
// independent across c.
type BagLaw interface {
	Law
	// SumNoise is the law of the noise on each released count, NoiseRate
	// its rate λ (0 for SumExact), calibrated to Sensitivity.
	SumNoise() SumNoise
	NoiseRate() float64
	// Sensitivity is Δ, the L1 change of the released count vector
	// (n_1, …, n_{C−1}) when one label of the bag changes: 1 on two
	// classes, 2 on more (countSensitivity).
	Sensitivity() int
	// ReleaseBag releases a bag whose class counts are counts (len C,
	// entries ≥ 0, n = Σ counts ≥ 1), writing α_1..α_{C−1} into dst
	// (len C−1), drawing from r.
	ReleaseBag(dst []float64, counts []int, r Rand)
	// Target maps a bag's released proportions alpha (len C−1) to its
	// training target in dst (len C−1; dst may alias alpha) for a bag of n
	// rows (TargetAlphaDebiased; the soft target of ReleaseCounts): llp_geom's
	// E[noisy count | clipped], the identity for an unbiased release.
	Target(dst, alpha []float64, n int)
}

// SumNoise is the law of the noise a per-bag mechanism adds to each of a
// bag's released counts s of n rows, in units of counts, at rate λ.
type SumNoise uint8

const (
	// SumExact: t = s.
	SumExact SumNoise = iota
	// SumGeometric: t = clip(s + Z, 0, n), Z two-sided geometric with
	// P(Z = z) ∝ e^{−λ|z|}: P(t | s) = (1−a)/(1+a)·a^|t−s| for 0 < t < n,
	// a^s/(1+a) at t = 0 and a^(n−s)/(1+a) at t = n, a = e^{−λ}.
	SumGeometric
	// SumLaplace: t = s + Lap(1/λ), unclipped (density (λ/2)e^{−λ|t−s|}).
	SumLaplace
)

// Discrete reports whether t is an integer (a point mass per value).
func (s SumNoise) Discrete() bool { return s != SumLaplace }

// MaxClasses is the largest number of classes a mechanism takes: a set of
// classes is one uint64 bit mask (a channel's Support), labels are uint8.
const MaxClasses = 64

// PriorTolerance is how far from 1 the sum of a prior vector given to
// CheckPrior may be (float32 softmax outputs sum to 1 within ~1e-6).
const PriorTolerance = 1e-4

// CheckPrior returns an error (wrapping ErrInvalidParam, naming "prior") if
// prior is not a probability vector over c classes: length c, every entry
// in [0, 1], sum within PriorTolerance of 1.
func CheckPrior(prior []float64, c int) error {
	if len(prior) != c {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("has %d entries for %d classes", len(prior), c)}
	}
	s := 0.0
	for y, v := range prior {
		if !(v >= 0 && v <= 1) {
			return &ParamError{Param: "prior", Msg: fmt.Sprintf("class %d has probability %v", y, v)}
		}
		s += v
	}
	if math.Abs(s-1) > PriorTolerance {
		return &ParamError{Param: "prior", Msg: fmt.Sprintf("sums to %v, not 1", s)}
	}
	return nil
}

// UniformPrior returns the uninformative prior over c classes (1/c each;
// ½ and ½ on two): what the first stage of a release with a prior goes
// through.
func UniformPrior(c int) []float64 {
	p := make([]float64, c)
	for i := range p {
		p[i] = 1 / float64(c)
	}
	return p
}

// checkLabels panics on a label that is not a class below c (a programmer
// bug: the packages above check labels against the mechanism first).
func checkLabels(labels []uint8, c int) {
	for i, y := range labels {
		if int(y) >= c {
			if c == 2 {
				panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
			}
			panic(fmt.Sprintf("pets: label %d at row %d is not in 0..%d", y, i, c-1))
		}
	}
}
