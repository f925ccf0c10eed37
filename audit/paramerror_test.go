package audit

import (
	"errors"
	"strings"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// The audit's parameter errors are pets.ParamError (one type for both
// packages), naming the parameter, said by the audit and wrapping the
// audit's sentinel, not pets'.
func TestParamErrorIsOneType(t *testing.T) {
	_, err := Run([]float64{0.5}, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1}), Options{LabelDraws: 0})
	var pe *pets.ParamError
	if !errors.As(err, &pe) || pe.Param != "label_draws" {
		t.Fatalf("error %v is not a *pets.ParamError naming label_draws", err)
	}
	if !errors.Is(err, ErrInvalidInput) || errors.Is(err, pets.ErrInvalidParam) || !strings.HasPrefix(err.Error(), "audit: invalid label_draws: ") {
		t.Fatalf("error %q: wraps ErrInvalidInput %v, pets.ErrInvalidParam %v", err, errors.Is(err, ErrInvalidInput), errors.Is(err, pets.ErrInvalidParam))
	}
	_, err = pets.New(pets.Params{Kind: pets.RR})
	if !errors.As(err, &pe) || !errors.Is(err, pets.ErrInvalidParam) || !strings.HasPrefix(err.Error(), "pets: invalid epsilon: ") {
		t.Fatalf("pets' own error: %v", err)
	}
}
