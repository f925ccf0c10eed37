package pets

import (
	"fmt"
	"math"
	"strings"
)

// Mechanism is a validated, immutable PET: its parameters and the law its
// kind's Scheme made of them. Safe for concurrent use (the Rand passed to
// the release methods is not).
type Mechanism struct {
	p    Params
	spec Spec
	ex   ExampleLaw  // per-example kinds: the binary law
	bag  BagLaw      // per-bag kinds: the binary law
	mc   *Multiclass // kinds that take classes: the law on Classes() classes
}

// MaxEpsilon is the largest ε a mechanism accepts: up to about 709 the
// flip probability 1/(1+e^ε), e^{−ε} and the audit's likelihood ratios are
// representable, and beyond it they underflow, so that a correct mechanism
// would be reported as violating its ε. 100 leaves a wide margin (e^{−100}
// ≈ 3.7e-44) and is far past any privacy: RR(100) flips one label in 10^43.
const MaxEpsilon = 100

// New validates p and returns the mechanism. Errors wrap ErrInvalidParam
// (as *ParamError) and name the parameter: "kind", "k", "epsilon",
// "secure" or "classes" (outside 2..MaxClasses, or C ≥ 3 for a kind that
// takes binary labels only).
func New(p Params) (*Mechanism, error) {
	k := p.Kind
	if !k.Valid() {
		return nil, &ParamError{Param: "kind", Msg: fmt.Sprintf("invalid kind %d", uint8(k))}
	}
	sp := k.Spec()
	switch c := p.Classes; {
	case c < 0 || c == 1 || c > MaxClasses:
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("must be in [2, %d] (0: 2), got %d", MaxClasses, c)}
	case c >= 3 && !sp.Takes.Classes:
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("%s releases binary labels only; the labels have %d classes", k, c)}
	}
	if sp.Takes.K {
		if p.K < 1 {
			return nil, &ParamError{Param: "k", Msg: fmt.Sprintf("bag size must be ≥ 1 for %s, got %d", k, p.K)}
		}
	} else if p.K != 0 {
		return nil, &ParamError{Param: "k", Msg: fmt.Sprintf("%s takes no bag size, got %d", k, p.K)}
	}
	if sp.Takes.Epsilon {
		if !(p.Epsilon > 0 && p.Epsilon <= MaxEpsilon) { // also NaN
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("must be in (0, %d] for %s, got %v", MaxEpsilon, k, p.Epsilon)}
		}
	} else if p.Epsilon != 0 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%s takes no epsilon (its ε is fixed), got %v", k, p.Epsilon)}
	}
	if p.Secure && !sp.Takes.Epsilon {
		return nil, &ParamError{Param: "secure", Msg: fmt.Sprintf("%s adds no noise", k)}
	}
	law, err := k.Scheme().Law(p)
	if err != nil {
		return nil, err
	}
	m := &Mechanism{p: p, spec: sp}
	var ok bool
	if sp.Release.PerBag() {
		m.bag, ok = law.(BagLaw)
	} else {
		m.ex, ok = law.(ExampleLaw)
	}
	if !ok || law.Classes() != 2 {
		panic(fmt.Sprintf("pets: %s's Scheme.Law returned %T, not the binary law its release needs", k, law)) // the registry test catches it
	}
	if sp.Takes.Classes {
		if m.mc, err = newMulticlass(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Classes returns the number of label classes C the mechanism releases:
// Params.Classes, or 2 when it is 0.
func (m *Mechanism) Classes() int { return max(m.p.Classes, 2) }

// Multiclass returns the mechanism's law on Classes() classes (at C = 2 the
// binary law's releases bit for bit); nil for a kind that does not take
// classes (Takes.Classes: a kind registered from outside).
func (m *Mechanism) Multiclass() *Multiclass { return m.mc }

// Params returns the parameters the mechanism was built from.
func (m *Mechanism) Params() Params { return m.p }

// Kind returns the mechanism kind.
func (m *Mechanism) Kind() Kind { return m.p.Kind }

// Spec returns what the mechanism's kind is (Kind.Spec).
func (m *Mechanism) Spec() Spec { return m.spec }

// ExampleLaw returns the law of a kind released per example (nil for the
// LLP family).
func (m *Mechanism) ExampleLaw() ExampleLaw { return m.ex }

// BagLaw returns the law of a kind released per bag (nil for the others).
func (m *Mechanism) BagLaw() BagLaw { return m.bag }

// K returns the bag size (0 outside the LLP family).
func (m *Mechanism) K() int { return m.p.K }

// String formats the mechanism, e.g. "llp_geom(k=64, ε=1)", with its
// classes when there are more than two: "rr(ε=1, C=10)", "bot(C=3)".
func (m *Mechanism) String() string {
	t := m.spec.Takes
	var args []string
	if t.K {
		args = append(args, fmt.Sprintf("k=%d", m.p.K))
	}
	if t.Epsilon {
		args = append(args, fmt.Sprintf("ε=%g", m.p.Epsilon))
	}
	if m.p.Classes >= 3 {
		args = append(args, fmt.Sprintf("C=%d", m.p.Classes))
	}
	if len(args) == 0 {
		return m.p.Kind.String()
	}
	return m.p.Kind.String() + "(" + strings.Join(args, ", ") + ")"
}

// Epsilon returns the label-DP ε of one release (Definition 2.1, Spec's
// Privacy): math.Inf(1) for none and llp (not DP), 0 for bot,
// Params.Epsilon otherwise.
func (m *Mechanism) Epsilon() float64 {
	switch m.spec.Privacy {
	case NotDP:
		return math.Inf(1)
	case Silent:
		return 0
	}
	return m.p.Epsilon
}

// FlipProb returns the flip probability π = 1/(1+e^ε) ∈ (0, 1/2) of the
// randomized-response channel of a per-example kind (rr; rr_prior's RR
// branch; Section 2); 0 for a kind without one (no per-label flipping).
// On C ≥ 3 classes it is k-ary RR's (C−1)/(e^ε+C−1), the probability of
// releasing another class than the label (rr; rr_prior's RR over all C
// classes, its first stage): Multiclass.FlipProb.
func (m *Mechanism) FlipProb() float64 {
	if m.p.Classes >= 3 {
		return m.mc.FlipProb()
	}
	if m.ex != nil {
		for _, c := range m.ex.Channels() {
			if c.Flip > 0 {
				return c.Flip
			}
		}
	}
	return 0
}

// ReleaseRR writes the released per-example labels into dst through the
// kind's law: for rr each label flipped independently with probability π,
// for none a copy. Labels must be 0 or 1 and len(dst) == len(labels); dst
// may alias labels. rr consumes one word of r per label (rarely more when
// π < 2^-11, i.e. ε > 7.62). On C ≥ 3 classes it is Multiclass.ReleaseRR
// (k-ary RR; labels 0..C−1). Panics for kinds not released one label per
// row without a prior.
func (m *Mechanism) ReleaseRR(dst, labels []uint8, r Rand) {
	if len(dst) != len(labels) {
		panic(fmt.Sprintf("pets: ReleaseRR: len(dst)=%d != len(labels)=%d", len(dst), len(labels)))
	}
	if rel := m.spec.Release; rel != ReleaseRaw && rel != ReleaseLabels {
		panic("pets: ReleaseRR on " + m.p.Kind.String())
	}
	if m.p.Classes >= 3 {
		m.mc.ReleaseRR(dst, labels, r)
		return
	}
	m.ex.Release(dst, labels, nil, r)
}

// checkBinary panics on a label that is not 0 or 1.
func checkBinary(labels []uint8) {
	for i, y := range labels {
		if y > 1 {
			panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
		}
	}
}

// ReleaseBag releases one bag of n ≥ 1 rows whose labels sum to sum
// (0 ≤ sum ≤ n) through the kind's BagLaw and returns the released
// proportion α:
//   - llp: the exact mean sum/n.
//   - llp_lap: sum/n + Lap(1/(nε)), unclipped (so E[α] = sum/n). With
//     Secure, (sum + g·Z)/n where g·Z = SecureLaplace noise of scale 1/ε in
//     units of the sum (same law up to the 2^-40 grid).
//   - llp_geom: clip(sum + Z, 0, n)/n, Z two-sided geometric with
//     a = e^{−ε} (integer, in units of the sum); α ∈ {0, 1/n, …, 1}.
//
// n is the bag's actual size (a kept remainder bag may be smaller than k);
// the noise is calibrated to n, so each bag is ε-label-DP. Panics for
// kinds outside the LLP family or invalid sum, n.
func (m *Mechanism) ReleaseBag(sum, n int, r Rand) float64 {
	if n < 1 || sum < 0 || sum > n {
		panic(fmt.Sprintf("pets: ReleaseBag: need 0 ≤ sum ≤ n, n ≥ 1; got sum=%d n=%d", sum, n))
	}
	if m.bag == nil || m.p.Classes >= 3 {
		panic("pets: ReleaseBag on " + m.String() + " (C ≥ 3 classes: Multiclass().ReleaseBag)")
	}
	return m.bag.ReleaseBag(sum, n, r)
}

// Debias maps a released proportion of a bag of size n to the training
// target of Appendix C (BagLaw.Debias; see llp_geom's in llpgeom.go). For
// every kind with an unbiased release (llp: exact; llp_lap; none, rr) it is
// the identity.
func (m *Mechanism) Debias(alpha float64, n int) float64 {
	if m.bag == nil {
		return alpha
	}
	return m.bag.Debias(alpha, n)
}
