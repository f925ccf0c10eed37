package pets

import (
	"fmt"
	"math"
)

// Composition is the label-DP cost of a sequence of releases of the same
// labels, each ε_i-label-DP (ε_i = Mechanism.Epsilon(): 0 for bot, +Inf for
// none and llp). Every field is +Inf as soon as one ε_i is +Inf: a release
// that is not DP (llp reveals homogeneous bags exactly, none reveals every
// label) has no finite bound, and neither does anything composed with it.
type Composition struct {
	// Basic is Σ ε_i: (Σ ε_i, 0)-DP by basic composition, valid even when
	// each ε_i is chosen after seeing the earlier releases.
	Basic float64
	// Advanced is the Dwork–Rothblum–Vadhan advanced composition bound
	// √(2 ln(1/δ')·Σ ε_i²) + Σ ε_i(e^{ε_i} − 1), an (ε, δ')-DP guarantee.
	// For r releases at one ε it is ε√(2r ln(1/δ')) + rε(e^ε − 1) (Dwork &
	// Roth, Theorem 3.20); for mixed ε it is the same martingale argument
	// with step i bounded by ε_i (Azuma) and its mean loss by
	// ε_i(e^{ε_i} − 1). The mixed form assumes the ε_i were fixed in advance,
	// not chosen from earlier outputs (that needs a privacy filter; Basic
	// stays valid).
	Advanced float64
	// Total is min(Basic, Advanced), an (ε, δ')-DP guarantee (Basic is
	// (ε, 0) ⊂ (ε, δ')).
	Total float64
	// Seed004 is the form of the advanced composition theorem in the
	// course notes on adaptive data analysis (seed 004, "משפט 2"):
	// 2rε² + ε√(2r ln(1/δ')) for r releases at ε, generalised the same way
	// to Σ 2ε_i² + √(2 ln(1/δ')·Σ ε_i²) (its mean-loss bound 2ε² holds for
	// every ε ≥ 0: for ε ≥ ½ the loss never exceeds ε ≤ 2ε²). Also an
	// (ε, δ')-DP guarantee; at one ε it beats Advanced only above ε ≈ 1.26,
	// where both exceed Basic. Reported for comparison with the notes, not
	// used in Total.
	Seed004 float64
}

// Compose returns the composition of releases with label-DP parameters eps
// (each ≥ 0 or +Inf) at δ' ∈ (0, 1). No release composes to zeros. Errors
// wrap ErrInvalidParam and name "epsilon" or "delta_prime".
func Compose(eps []float64, deltaPrime float64) (Composition, error) {
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return Composition{}, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	var sum, sumSq, drift, drift004 float64
	for i, e := range eps {
		if !(e >= 0) { // also NaN
			return Composition{}, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("release %d: must be ≥ 0, got %v", i, e)}
		}
		if math.IsInf(e, 1) {
			inf := math.Inf(1)
			return Composition{Basic: inf, Advanced: inf, Total: inf, Seed004: inf}, nil
		}
		sum += e
		sumSq += e * e
		drift += e * math.Expm1(e)
		drift004 += 2 * e * e
	}
	dev := math.Sqrt(2 * math.Log(1/deltaPrime) * sumSq)
	c := Composition{Basic: sum, Advanced: dev + drift, Seed004: dev + drift004}
	c.Total = math.Min(c.Basic, c.Advanced)
	return c, nil
}
