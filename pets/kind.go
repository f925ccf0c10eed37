package pets

import (
	"errors"
	"fmt"
	"strings"
)

// Kind identifies a label privacy mechanism.
type Kind uint8

// The mechanisms of Section 2 and Section 4 "Mechanisms".
const (
	None    Kind = iota // clean labels
	Bot                 // ⊥: nothing released
	RR                  // randomized response
	LLP                 // label proportions of random bags of k
	LLPLap              // LLP + Laplace noise on the proportion
	LLPGeom             // LLP + clipped two-sided geometric noise on the sum
	// RRPrior is randomized response with a prior (Ghazi et al., NeurIPS
	// 2021, RRWithPrior for two classes): release the prior's argmax label
	// where the prior is confident enough, RR(ε) elsewhere.
	RRPrior
	numKinds
)

var kindNames = [numKinds]string{"none", "bot", "rr", "llp", "llp_lap", "llp_geom", "rr_prior"}

// Kinds lists every valid Kind, in declaration order.
func Kinds() []Kind { return []Kind{None, Bot, RR, LLP, LLPLap, LLPGeom, RRPrior} }

// String returns the canonical name: "none", "bot", "rr", "llp", "llp_lap",
// "llp_geom" or "rr_prior" ("Kind(N)" for an invalid value).
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is one of the declared kinds.
func (k Kind) Valid() bool { return k < numKinds }

// IsLLP reports whether k releases one proportion per bag (llp, llp_lap,
// llp_geom).
func (k Kind) IsLLP() bool { return k == LLP || k == LLPLap || k == LLPGeom }

// NeedsEpsilon reports whether k takes a privacy parameter ε (rr, llp_lap,
// llp_geom, rr_prior).
func (k Kind) NeedsEpsilon() bool { return k == RR || k == LLPLap || k == LLPGeom || k == RRPrior }

// NeedsK reports whether k takes a bag size (the LLP family).
func (k Kind) NeedsK() bool { return k.IsLLP() }

// ParseKind parses a canonical mechanism name (case-insensitive, surrounding
// space ignored). The error wraps ErrInvalidParam, names the bad value and
// lists the valid names.
func ParseKind(s string) (Kind, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for k, name := range kindNames {
		if t == name {
			return Kind(k), nil
		}
	}
	return 0, &ParamError{Param: "mechanism",
		Msg: fmt.Sprintf("unknown mechanism %q (valid: %s)", s, strings.Join(kindNames[:], ", "))}
}

// MarshalText implements encoding.TextMarshaler (for configs and JSON).
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, &ParamError{Param: "mechanism", Msg: fmt.Sprintf("invalid kind %d", uint8(k))}
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler via ParseKind.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ErrInvalidParam is wrapped by every parameter-validation error of this
// package; use errors.Is(err, ErrInvalidParam).
var ErrInvalidParam = errors.New("pets: invalid parameter")

// ParamError is a validation error that names the offending parameter
// ("mechanism", "kind", "k", "epsilon", "secure", "delta_prime", ...).
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return "pets: invalid " + e.Param + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalidParam) true.
func (e *ParamError) Unwrap() error { return ErrInvalidParam }
