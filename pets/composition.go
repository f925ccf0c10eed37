package pets

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Step is one release in a person's history: the mechanism kind and its
// label-DP ε (Mechanism.Epsilon: 0 for bot, +Inf for none and llp). The
// bag size does not matter: each person is in one bag of a release.
type Step struct {
	Kind    Kind
	Epsilon float64
}

// StepOf returns the step of a release through m.
func StepOf(m *Mechanism) Step { return Step{Kind: m.Kind(), Epsilon: m.Epsilon()} }

// CompareSteps orders steps the same way in every process, whatever order
// kinds were registered in: by kind (the built-in kinds by their fixed
// values, then the others by name), then by ε. Histories sorted by it
// compose the same everywhere (Compose sums in their order).
func CompareSteps(a, b Step) int {
	if a.Kind != b.Kind {
		ab, bb := builtinKind(a.Kind), builtinKind(b.Kind)
		switch {
		case ab && bb:
			return cmp.Compare(a.Kind, b.Kind)
		case ab != bb:
			if ab {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(a.Kind.String(), b.Kind.String()); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.Epsilon, b.Epsilon)
}

// Group returns the step that charges rows ≥ 1 labels of one person
// released through a single draw of s's mechanism (rows of one person in
// one bag of an LLP release): Step{s.Kind, rows·ε}. It is an upper bound
// for every kind. By group privacy the draw is (rows·ε)-DP in that
// person's labels. For llp_lap it is exact: the bag's proportion moves by
// at most rows/k, and the Laplace PLD at rows·ε is that of sensitivity
// rows. For rr, llp_geom and rr_prior, the PLD of a step is RR's at its ε,
// and RR(rows·ε) dominates every pure (rows·ε)-DP pair (Kairouz, Oh &
// Viswanath 2015, Theorem 2.1), so composing it stays an upper bound.
// Note that rows independent draws (rows of one person in different bags,
// or rr rows) are rows steps of s, not one Group step: their composition is
// tighter. Composing rows steps of s for one draw would under-count (the
// two-sided geometric at sensitivity 2 has δ(0) = 1−e^{−ε}, two RR(ε) draws
// (1−e^{−ε})/(1+e^{−ε}); tested).
func (s Step) Group(rows int) Step {
	if rows == 1 || s.Epsilon == 0 {
		return s
	}
	return Step{Kind: s.Kind, Epsilon: float64(rows) * s.Epsilon}
}

// Composition is the label-DP cost of a history of releases covering one
// person, each ε_i-label-DP. Every bound is an (ε, δ')-DP guarantee (Basic
// even (ε, 0)); Total is the smallest. Every field is +Inf as soon as one
// release is not DP (llp reveals homogeneous bags exactly, none reveals
// every label): nothing composed with it is bounded.
type Composition struct {
	// Basic is Σ ε_i: (Σ ε_i, 0)-DP by basic composition, valid even when
	// each ε_i is chosen after seeing the earlier releases.
	Basic float64
	// DRV is the Dwork–Rothblum–Vadhan advanced composition bound
	// √(2 ln(1/δ')·Σ ε_i²) + Σ ε_i(e^{ε_i} − 1): for r releases at one ε,
	// ε√(2r ln(1/δ')) + rε(e^ε − 1) (Dwork & Roth, Theorem 3.20). The
	// privacy loss is a sum of steps in [−ε_i, ε_i] whose conditional means
	// are at most ε_i(e^{ε_i} − 1); Azuma's inequality bounds its excess.
	// For mixed ε the form assumes the ε_i were fixed in advance.
	DRV float64
	// DRVQuad is the same theorem with the mean of step i bounded by
	// 2ε_i² (the form of Roth and Smith's lecture notes on adaptive data
	// analysis, Theorem 2: 2rε² + ε√(2r ln(1/δ')) at one ε), generalised to
	// Σ 2ε_i² + √(2 ln(1/δ')·Σ ε_i²). Valid for every ε ≥ 0: 2ε² ≥
	// ε(e^ε − 1) up to ε ≈ 1.256, and above ½ it exceeds ε, the largest a
	// mean loss can be. It beats DRV when a history mixes small and large ε
	// (2,000 × 0.05 plus one 3: 47.67 against 82.05).
	DRVQuad float64
	// PLD is the composition of the mechanisms' privacy loss distributions
	// at δ' (rr and llp_geom by the exact binomial law of Kairouz, Oh &
	// Viswanath; llp_lap by its Laplace PLD; see pld.go), discretised
	// pessimistically: it is never below the exact optimal ε of these
	// mechanisms at δ', and exceeds it by less than PLDError.
	PLD float64
	// PLDError bounds PLD's overstatement: the number of roundings of a
	// loss up to the grid (one per distinct rr/llp_geom ε, one per llp_lap
	// release) times the grid step (≤ 1e-4).
	PLDError float64
	// Total is min(Basic, DRV, DRVQuad, PLD): the history is
	// (Total, δ')-label-DP.
	Total float64
}

// Compose returns the composition of a history of releases at δ' ∈ (0, 1).
// The result depends only on the multiset of steps; it is cached. Errors
// wrap ErrInvalidParam and name "epsilon", "kind" or "delta_prime".
func Compose(steps []Step, deltaPrime float64) (Composition, error) {
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return Composition{}, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	for i, s := range steps {
		if !s.Kind.Valid() {
			return Composition{}, &ParamError{Param: "kind", Msg: fmt.Sprintf("release %d: invalid kind %d", i, uint8(s.Kind))}
		}
		if !(s.Epsilon >= 0) { // also NaN
			return Composition{}, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("release %d: must be ≥ 0, got %v", i, s.Epsilon)}
		}
	}
	key := historyKey(steps, deltaPrime)
	if c, ok := compCache.get(key); ok {
		return c, nil
	}
	c := compose(steps, deltaPrime)
	compCache.put(key, c)
	return c, nil
}

func compose(steps []Step, deltaPrime float64) Composition {
	groups, ok := groupSteps(steps)
	if !ok {
		inf := math.Inf(1)
		return Composition{Basic: inf, DRV: inf, DRVQuad: inf, PLD: inf, Total: inf}
	}
	var sum, sumSq, drift, driftQuad float64
	for _, s := range steps {
		e := s.Epsilon
		sum += e
		sumSq += e * e
		drift += e * math.Expm1(e)
		driftQuad += 2 * e * e
	}
	dev := math.Sqrt(2 * math.Log(1/deltaPrime) * sumSq)
	c := Composition{Basic: sum, DRV: dev + drift, DRVQuad: dev + driftQuad}
	c.PLD, c.PLDError = composePLD(groups, deltaPrime)
	c.Total = min(c.Basic, c.DRV, c.DRVQuad, c.PLD)
	return c
}

// historyKey is a canonical name of a multiset of steps at δ'.
func historyKey(steps []Step, deltaPrime float64) string {
	parts := make([]string, len(steps))
	for i, s := range steps {
		parts[i] = strconv.Itoa(int(s.Kind)) + ":" + strconv.FormatFloat(s.Epsilon, 'g', -1, 64)
	}
	slices.Sort(parts)
	return strconv.FormatFloat(deltaPrime, 'g', -1, 64) + "|" + strings.Join(parts, ",")
}

// compCache remembers compositions by history (a ledger has few distinct
// histories, and the PLD of a long one takes milliseconds).
var compCache = &lru{max: 4096, m: map[string]Composition{}}

type lru struct {
	mu  sync.Mutex
	max int
	m   map[string]Composition
}

func (c *lru) get(k string) (Composition, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *lru) put(k string, v Composition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		clear(c.m) // crude but bounded
	}
	c.m[k] = v
}
