package pipeline

import (
	"fmt"
	"math"

	"labelprivacy/pets"
)

// MaxEpsilon is the largest ε accepted anywhere (config grids and `train
// privatize` alike): below it e^ε, e^{−ε} and RR's flip probability
// 1/(1+e^ε) are normal float64 numbers (e^709.8 overflows, e^{−745}
// underflows to 0), so no computation of the mechanisms, the audit or the
// ledger loses the value. Label-DP at such ε protects nothing anyway.
const MaxEpsilon = 700

// CheckEpsilon reports whether ε is in [MinEpsilon, MaxEpsilon], the one
// range the config and `train privatize` share. The error is a
// *pets.ParamError naming "epsilon".
func CheckEpsilon(eps float64) error {
	if !(eps >= MinEpsilon && eps <= MaxEpsilon) || math.IsNaN(eps) {
		return &pets.ParamError{Param: "epsilon", Msg: epsilonRange(eps)}
	}
	return nil
}

// epsilonRange says why eps is refused.
func epsilonRange(eps float64) string {
	return fmt.Sprintf("must be finite, ≥ %g and ≤ %g, got %v", float64(MinEpsilon), float64(MaxEpsilon), eps)
}
