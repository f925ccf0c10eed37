package audit

import (
	"fmt"
	"math"
)

// IEAdvBound returns the largest individual expected advantage (Definition
// 3.1) that any ε-label-DP mechanism can give the Bayes attacker on an
// example with prior η = P(y = 1 | x) and binary labels:
//
//	IEAdvBound(η, ε) = (min(η, 1−η) − π)·1{η ∈ [π, 1−π]},  π = 1/(1+e^ε),
//
// which is RR(ε)'s IEAdv (Theorem 3.5 / A.17), so the bound is attained.
// ε = +Inf gives min(η, 1−η) (the label revealed), ε = 0 gives 0.
//
// Proof. Fix the example and everything the mechanism sees besides its
// label y (the other labels, the bag partition: independent of y). For
// ε-label-DP, every release event Z satisfies P(Z | y=1) ≤ e^ε·P(Z | y=0)
// and P(Z | y=0) ≤ e^ε·P(Z | y=1); mixing over the other labels keeps both
// inequalities, so they hold for the attacker's view too. Any attacker,
// randomized or not, is a test with α₀ = P(guess 1 | y=0) and
// α₁ = P(guess 0 | y=1); applying the inequalities to the event "guess 1"
// and to "guess 0" gives α₀ + e^ε·α₁ ≥ 1 and e^ε·α₀ + α₁ ≥ 1. Its error
// η·α₁ + (1−η)·α₀ is linear, so its minimum over that polygon (within
// [0,1]²) lies at a vertex: (α₀, α₁) = (0, 1) (error η), (1, 0) (error
// 1−η) or α₀ = α₁ = π (error π). Hence the Bayes error is at least
// min(η, 1−η, π), and IEAdv = min(η, 1−η) − Bayes error ≤
// max(0, min(η, 1−η) − π), the formula above. ∎
//
// The same argument bounds the posterior: its odds are the prior odds times
// a likelihood ratio in [e^{−ε}, e^ε] (the multiplicative advantage of
// Definition 3.6, |I| ≤ ε).
func IEAdvBound(eta, eps float64) float64 {
	return thm35(eta, flipProb(eps))
}

// flipProb is π = 1/(1+e^ε) (0 for ε = +Inf, ½ for ε = 0).
func flipProb(eps float64) float64 { return 1 / (1 + math.Exp(eps)) }

// thm35 is Theorem 3.5: (min(η,1−η) − π)·1{η ∈ [π, 1−π]}.
func thm35(e, pi float64) float64 {
	if e >= pi && e <= 1-pi {
		return math.Min(e, 1-e) - pi
	}
	return 0
}

// BoundTolerance is the rounding slack of the IEAdv ≤ IEAdvBound check
// (IEAdv is a sum of O(k) rounded terms of size ≤ 1).
const BoundTolerance = 1e-12

// BoundViolation reports an example whose exact IEAdv under an ε-DP
// mechanism exceeds IEAdvBound(η, ε) + BoundTolerance: the audit's
// likelihood for the mechanism cannot be ε-label-DP. It wraps
// ErrDPViolation.
//
// With C ≥ 3 classes (RunC) Eta is max_y η_iy and EtaC the example's class
// probabilities. When Estimated > 0 the violation is that of the estimated
// members together (RunC's checkEstimatedBound): Index is the smallest of
// them, IEAdv their mean estimated IEAdv minus their mean bound and Bound
// the largest mean excess that sampling error explains at false-failure
// rate GuardAlpha.
type BoundViolation struct {
	Mechanism string
	Epsilon   float64
	Index     int // the example (position in eta) of smallest index
	Eta       float64
	EtaC      []float64
	IEAdv     float64
	Bound     float64
	Estimated int
}

func (e *BoundViolation) Error() string {
	if e.Estimated > 0 {
		return fmt.Sprintf("audit: %s is not %v-label-DP: the estimated IEAdv of %d examples exceeds their ε-DP worst case by %.6g on average, "+
			"more than sampling explains (%.6g at false-failure rate %g)", e.Mechanism, e.Epsilon, e.Estimated, e.IEAdv, e.Bound, GuardAlpha)
	}
	if e.EtaC != nil {
		return fmt.Sprintf("audit: %s is not %v-label-DP: example %d (η = %.6g) has IEAdv = %.17g above the ε-DP worst case %.17g",
			e.Mechanism, e.Epsilon, e.Index, e.EtaC, e.IEAdv, e.Bound)
	}
	return fmt.Sprintf("audit: %s is not %v-label-DP: example %d (η = %.6g) has IEAdv = %.17g above the ε-DP worst case %.17g",
		e.Mechanism, e.Epsilon, e.Index, e.Eta, e.IEAdv, e.Bound)
}

// Unwrap makes errors.Is(err, ErrDPViolation) true.
func (e *BoundViolation) Unwrap() error { return ErrDPViolation }

// firstViolation is the violation a pass reports, whatever the split of
// its examples over workers: the ε-DP one of the lowest example index
// found by any worker, else the bound one of the lowest index, else nil.
func firstViolation(viols []*DPViolation, bviols []*BoundViolation) error {
	var viol *DPViolation
	var bviol *BoundViolation
	for _, v := range viols {
		if v != nil && (viol == nil || v.Index < viol.Index) {
			viol = v
		}
	}
	for _, v := range bviols {
		if v != nil && (bviol == nil || v.Index < bviol.Index) {
			bviol = v
		}
	}
	if viol != nil {
		return viol
	}
	if bviol != nil {
		return bviol
	}
	return nil
}
