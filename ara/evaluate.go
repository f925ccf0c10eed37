package ara

import (
	"fmt"
	"math"
	"math/big"
)

// Result is what a source's configuration gives away at ε.
type Result struct {
	Source  Source
	Epsilon float64
	States  *big.Int // k, exact
	// FlipProbability is p = k/(k + e^ε − 1) (FlipProbability).
	FlipProbability float64
	// InformationGainBits is the k-ary symmetric channel's capacity
	// (InformationGain), bits.
	InformationGainBits float64
}

// Evaluate returns k, p and the information gain of c for a source of type
// s at ε. It refuses (a *ParamError) an invalid c (Validate), an unknown
// s, and an ε that is not finite and > 0; it does not check Chromium's
// limits (Limits.Exceeded).
func Evaluate(c Config, s Source, epsilon float64) (*Result, error) {
	if s != Navigation && s != Event {
		return nil, &ParamError{Param: "source", Msg: fmt.Sprintf("%v is not navigation or event", s)}
	}
	if !(epsilon > 0) || math.IsInf(epsilon, 1) {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("must be finite and > 0, got %v", epsilon)}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k := c.States()
	return &Result{Source: s, Epsilon: epsilon, States: k,
		FlipProbability: FlipProbability(k, epsilon), InformationGainBits: InformationGain(k, epsilon)}, nil
}
