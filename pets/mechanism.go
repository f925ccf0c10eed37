package pets

import (
	"fmt"
	"math"
	"strings"
)

// Mechanism is a validated, immutable PET: its parameters and the law its
// kind's Scheme made of them on its classes. Safe for concurrent use (the
// Rand passed to the release methods is not).
type Mechanism struct {
	p    Params
	spec Spec
	ex   ExampleLaw // kinds released one label per example
	bag  BagLaw     // kinds released as proportions
	vl   ValueLaw   // kinds on conversion values (Params.Values set)
}

// MaxEpsilon is the largest ε a mechanism accepts: up to about 709 the
// flip probability 1/(1+e^ε), e^{−ε} and the audit's likelihood ratios are
// representable, and beyond it they underflow, so that a correct mechanism
// would be reported as violating its ε. 100 leaves a wide margin (e^{−100}
// ≈ 3.7e-44) and is far past any privacy: RR(100) flips one label in 10^43.
const MaxEpsilon = 100

// New validates p and returns the mechanism. Errors wrap ErrInvalidParam
// (as *ParamError) and name the parameter: "kind", "k", "epsilon",
// "secure", "classes" (outside 2..MaxClasses, or C ≥ 3 for a kind that
// takes binary labels only), "trigger_data", "windows", "reports" or
// "budget_share" (given to a kind that does not take them; the kind's law
// checks their values).
func New(p Params) (*Mechanism, error) {
	k := p.Kind
	if !k.Valid() {
		return nil, &ParamError{Param: "kind", Msg: fmt.Sprintf("invalid kind %d", uint8(k))}
	}
	sp := k.SpecOn(p.Values)
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
	switch {
	case !p.Values.IsZero() && !sp.Takes.Values:
		return nil, &ParamError{Param: "values", Msg: fmt.Sprintf("%s releases classes; the labels are conversion values", k)}
	case p.Values.IsZero() && sp.Takes.Values && !sp.Takes.Classes:
		return nil, &ParamError{Param: "values", Msg: fmt.Sprintf("%s releases conversion values; the labels are classes", k)}
	case !p.Values.IsZero() && p.Classes != 0:
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("conversion values are not classes, got %d classes", p.Classes)}
	case p.PriorEpsilon != 0 && !sp.Takes.ValuePrior:
		return nil, &ParamError{Param: "prior_epsilon", Msg: fmt.Sprintf("%s takes no private prior (only a kind with a prior over values does: rr_bins)", k)}
	}
	if !p.Values.IsZero() {
		if err := p.Values.Check(); err != nil {
			return nil, err
		}
	}
	if sp.Takes.OptionalEpsilon && p.Epsilon == 0 {
		// exact: not DP
	} else if sp.Takes.Epsilon {
		if !(p.Epsilon > 0 && p.Epsilon <= MaxEpsilon) { // also NaN
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("must be in (0, %d] for %s, got %v", MaxEpsilon, k, p.Epsilon)}
		}
	} else if p.Epsilon != 0 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%s takes no epsilon (its ε is fixed), got %v", k, p.Epsilon)}
	}
	if !sp.Takes.Source {
		for _, f := range []struct {
			name string
			v    int
		}{{"trigger_data", p.TriggerData}, {"windows", p.Windows}, {"reports", p.Reports}} {
			if f.v != 0 {
				return nil, &ParamError{Param: f.name, Msg: fmt.Sprintf("%s takes no attribution source (only ara_event does), got %d", k, f.v)}
			}
		}
	}
	if !sp.Takes.Shares && (p.CountShare != 0 || p.ValueShare != 0) {
		return nil, &ParamError{Param: "budget_share", Msg: fmt.Sprintf("%s takes no contribution budget (only ara_summary does)", k)}
	}
	if p.Secure && (!sp.Takes.Epsilon || p.Epsilon == 0) {
		return nil, &ParamError{Param: "secure", Msg: fmt.Sprintf("%s adds no noise", k)}
	}
	law, err := k.Scheme().Law(p)
	if err != nil {
		return nil, err
	}
	m := &Mechanism{p: p, spec: sp}
	var ok bool
	if !p.Values.IsZero() {
		m.vl, ok = law.(ValueLaw)
		if !ok || m.vl.Grid() != p.Values {
			panic(fmt.Sprintf("pets: %s's Scheme.Law returned %T, not a ValueLaw on %s", k, law, p.Values))
		}
		return m, nil
	}
	if sp.Release.Proportions() {
		m.bag, ok = law.(BagLaw)
	} else {
		m.ex, ok = law.(ExampleLaw)
	}
	if !ok || law.Classes() != m.Classes() {
		// A programmer bug of the kind's file; the registry test catches it.
		panic(fmt.Sprintf("pets: %s's Scheme.Law returned %T, not the law of %d classes its release needs", k, law, m.Classes()))
	}
	return m, nil
}

// PrivacyParams returns parameters of a mechanism of kind k with bag size
// K and ε that New accepts (on binary labels) and whose privacy — Privacy
// and Epsilon, all that composes — is that of every mechanism of k with
// that K and ε: for a kind that takes more (ara_event's source, one
// trigger-data value in one window with one report; ara_summary's budget
// split, all of it to the count) a fixed choice of them, which changes
// neither. A ledger, which records kind, k and ε, rebuilds its rows'
// mechanisms from them.
func PrivacyParams(k Kind, K int, eps float64) Params {
	p := Params{Kind: k, K: K}
	t := k.Spec().Takes
	if t.Epsilon && !(t.OptionalEpsilon && math.IsInf(eps, 1)) { // value_bags without ε: exact
		p.Epsilon = eps
	}
	if k.OfValues() {
		p.Values = UnitGrid // a kind of values on any grid: its ε does not depend on the grid
	}
	if t.Source {
		p.TriggerData, p.Windows, p.Reports = 1, 1, 1
	}
	if t.Shares {
		p.CountShare = 1
	}
	return p
}

// Classes returns the number of label classes C the mechanism releases:
// Params.Classes, or 2 when it is 0.
func (m *Mechanism) Classes() int { return max(m.p.Classes, 2) }

// Params returns the parameters the mechanism was built from.
func (m *Mechanism) Params() Params { return m.p }

// Kind returns the mechanism kind.
func (m *Mechanism) Kind() Kind { return m.p.Kind }

// Spec returns what the mechanism's kind is on its labels (Kind.SpecOn
// its grid: ara_summary releases value bags on values).
func (m *Mechanism) Spec() Spec { return m.spec }

// ValueEpsilon is the label-DP ε of the value a mechanism on conversion
// values releases: Epsilon, or for a kind that splits a contribution
// budget (ara_summary) the value's share of it, ValueShare·ε (its
// Laplace scale is B/(ValueShare·ε)). The audit's worst case and
// canaries measure it; the ledger charges Epsilon.
func (m *Mechanism) ValueEpsilon() float64 {
	if m.spec.Takes.Shares {
		return m.p.ValueShare * m.p.Epsilon
	}
	return m.Epsilon()
}

// ExampleLaw returns the law of a kind released one label per example, on
// its classes (nil for the kinds released as proportions).
func (m *Mechanism) ExampleLaw() ExampleLaw { return m.ex }

// BagLaw returns the law of a kind released as proportions (the LLP
// family, ReleaseCounts), on its classes (nil for the others).
func (m *Mechanism) BagLaw() BagLaw { return m.bag }

// ValueLaw returns the law of a mechanism on conversion values
// (Params.Values set), nil on classes.
func (m *Mechanism) ValueLaw() ValueLaw { return m.vl }

// OnValues reports whether the mechanism releases conversion values.
func (m *Mechanism) OnValues() bool { return m.vl != nil }

// Grid returns the grid of conversion values (the zero Grid on classes).
func (m *Mechanism) Grid() Grid { return m.p.Values }

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
	if t.Epsilon && m.p.Epsilon > 0 {
		args = append(args, fmt.Sprintf("ε=%g", m.p.Epsilon))
	}
	if m.p.PriorEpsilon > 0 {
		args = append(args, fmt.Sprintf("ε₁=%g", m.p.PriorEpsilon))
	}
	if g := m.p.Values; !g.IsZero() {
		args = append(args, fmt.Sprintf("B=%g", g.Max))
		if g.Step != DefaultValueStep {
			args = append(args, fmt.Sprintf("step=%g", g.Step))
		}
	}
	if t.Source {
		args = append(args, fmt.Sprintf("T=%d, W=%d, R=%d", m.p.TriggerData, m.p.Windows, m.p.Reports))
	}
	if t.Shares {
		args = append(args, fmt.Sprintf("count share %g", m.p.CountShare))
		if m.p.ValueShare > 0 {
			args = append(args, fmt.Sprintf("value share %g", m.p.ValueShare))
		}
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
// Privacy): math.Inf(1) for none and llp (not DP) and value_bags without
// ε (exact bags), 0 for bot, Params.Epsilon otherwise (rr_bins with a
// private prior: both stages, ε₁ + (ε − ε₁)).
func (m *Mechanism) Epsilon() float64 {
	switch m.spec.Privacy {
	case NotDP:
		return math.Inf(1)
	case Silent:
		return 0
	}
	if m.p.Epsilon == 0 && m.spec.Takes.OptionalEpsilon {
		return math.Inf(1)
	}
	return m.p.Epsilon
}

// FlipProb returns the flip probability of the channel an example without
// information goes through (the prior-free channel, or the uniform prior's
// for a kind released with a prior: its first stage) when that channel is
// randomized response over every class: its Channel.Flip, the probability
// that it releases another class than the label — π = 1/(1+e^ε) on two
// classes, (C−1)/(e^ε+C−1) on C (rr; rr_prior's first stage; Section 2),
// what the debiased losses correct for; for a channel that erases some
// releases (FormRRErased: ara_event) the flip of the releases it does not
// erase, the rows released erased being dropped. 0 for a kind without such a
// channel (no per-label flipping: none, bot, the LLP family, a channel of
// no RR form or one that releases only some classes).
func (m *Mechanism) FlipProb() float64 {
	if m.ex == nil {
		return 0
	}
	ch := m.FirstChannel()
	if ch.Form != FormRRErased && ch.Support() != allClasses(m.Classes()) {
		return 0
	}
	return ch.Flip
}

// allClasses is the bit mask of classes 0..c−1.
func allClasses(c int) uint64 { return ^uint64(0) >> (64 - c) }

// FirstChannel returns the channel of an example without information: the
// prior-free channel, or, for a kind released with a prior, the uniform
// prior's (UniformPrior), through which its first stage is released.
// Panics for a kind released as proportions.
func (m *Mechanism) FirstChannel() Channel {
	var prior []float64
	if m.spec.Release.WithPrior() {
		prior = UniformPrior(m.Classes())
	}
	return m.ex.Channel(m.ex.ChannelOf(prior))
}

// ReleaseBag releases one bag of n ≥ 1 binary labels whose sum is sum
// (0 ≤ sum ≤ n) through the kind's BagLaw and returns the released
// proportion α (its ReleaseBag on the counts (n − sum, sum)):
//   - llp: the exact mean sum/n.
//   - llp_lap: sum/n + Lap(1/(nε)), unclipped (so E[α] = sum/n). With
//     Secure, (sum + g·Z)/n where g·Z = SecureLaplace noise of scale 1/ε in
//     units of the sum (same law up to the 2^-40 grid).
//   - llp_geom: clip(sum + Z, 0, n)/n, Z two-sided geometric with
//     a = e^{−ε} (integer, in units of the sum); α ∈ {0, 1/n, …, 1}.
//
// n is the bag's actual size (a kept remainder bag may be smaller than k);
// the noise is calibrated to n, so each bag is ε-label-DP. Panics for
// kinds not released as proportions, on C ≥ 3 classes (BagLaw().ReleaseBag
// takes the class counts), or for an invalid sum, n.
func (m *Mechanism) ReleaseBag(sum, n int, r Rand) float64 {
	if n < 1 || sum < 0 || sum > n {
		panic(fmt.Sprintf("pets: ReleaseBag: need 0 ≤ sum ≤ n, n ≥ 1; got sum=%d n=%d", sum, n))
	}
	if m.bag == nil || m.Classes() != 2 {
		panic("pets: ReleaseBag on " + m.String() + " (C ≥ 3 classes: BagLaw().ReleaseBag)")
	}
	counts := [2]int{n - sum, sum}
	var alpha [1]float64
	m.bag.ReleaseBag(alpha[:], counts[:], r)
	return alpha[0]
}
