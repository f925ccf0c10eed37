package config

import (
	"fmt"

	"labelprivacy/pets"
)

// maxEpsilon is the largest ε accepted anywhere (config grids and `train
// privatize` alike): pets.MaxEpsilon, the bound of the mechanisms
// themselves, well inside the range where e^ε, e^{−ε} and RR's flip
// probability 1/(1+e^ε) are normal float64 numbers (e^709.8 overflows), so
// no computation of the mechanisms, the audit or the ledger loses the value.
// Label-DP at such ε protects nothing anyway.
const maxEpsilon = pets.MaxEpsilon

// CheckEpsilon accepts ε in [MinEpsilon, pets.MaxEpsilon], the one range
// the config and `train privatize` share. The error is a *pets.ParamError
// naming "epsilon".
func CheckEpsilon(eps float64) error {
	if !(eps >= MinEpsilon && eps <= maxEpsilon) { // also NaN
		return &pets.ParamError{Param: "epsilon", Msg: epsilonRange(eps)}
	}
	return nil
}

// epsilonRange says why eps is refused.
func epsilonRange(eps float64) string {
	return fmt.Sprintf("must be in [%g, %d], got %v", float64(MinEpsilon), maxEpsilon, eps)
}
