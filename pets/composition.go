package pets

import (
	"fmt"
	"math"
)

// BasicComposition returns the label-DP ε of releases ≥ 0 releases of the
// same labels by an ε-DP mechanism: releases·ε (0 for no release, +Inf if
// ε is +Inf and releases ≥ 1). Panics for releases < 0 or ε < 0 / NaN.
func BasicComposition(eps float64, releases int) float64 {
	if releases < 0 || !(eps >= 0) {
		panic(fmt.Sprintf("pets: BasicComposition(%v, %d)", eps, releases))
	}
	if releases == 0 {
		return 0
	}
	return float64(releases) * eps
}

// AdvancedComposition returns ε' such that releases = k ≥ 1 adaptive
// releases of the same labels by an (ε, 0)-DP mechanism are
// (ε', δ')-DP:
//
//	ε' = 2kε² + ε·√(2k·ln(1/δ')),
//
// the advanced composition theorem as stated in the seed lecture notes
// (/work/shared/seeds/004_1c10c6fb21ec275c.txt, "משפט 2", the pure-ε case of
// its "משפט 1", which reads 2kε² + √(2k·ln(1/(kδ)))·ε with δ-term 2kδ for
// (ε, δ)-DP mechanisms). The notes assume 0 < ε ≤ 1; for ε ≥ 1/2 the
// formula exceeds the basic bound kε, so it stays a valid (if useless)
// bound for every ε ≥ 0. Callers wanting the tightest pure bound should take
// min(BasicComposition, AdvancedComposition); this function returns the
// formula as is. ε = +Inf gives +Inf, ε = 0 gives 0. δ' must be in (0, 1).
func AdvancedComposition(eps float64, releases int, deltaPrime float64) (float64, error) {
	if math.IsNaN(eps) || eps < 0 {
		return 0, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("must be ≥ 0, got %v", eps)}
	}
	if releases < 1 {
		return 0, &ParamError{Param: "releases", Msg: fmt.Sprintf("must be ≥ 1, got %d", releases)}
	}
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return 0, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	if math.IsInf(eps, 1) {
		return eps, nil
	}
	k := float64(releases)
	return 2*k*eps*eps + eps*math.Sqrt(2*k*math.Log(1/deltaPrime)), nil
}
