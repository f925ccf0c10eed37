package pets

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// closeTo reports |got − want| ≤ 1e-12·max(1, |want|), or both +Inf.
func closeTo(got, want float64) bool {
	if math.IsInf(want, 1) {
		return math.IsInf(got, 1)
	}
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// TestCompose checks the totals against values computed independently
// (Python floats, exp(ε)−1 rather than expm1, other summation order):
// basic Σε, advanced √(2 ln(1/δ')Σε²) + Σε(e^ε−1), total = the smaller,
// seed 004's Σ2ε² + √(2 ln(1/δ')Σε²); and, for one repeated ε, against the
// textbook forms ε√(2r ln(1/δ')) + rε(e^ε−1) and 2rε² + ε√(2r ln(1/δ')).
func TestCompose(t *testing.T) {
	tests := []struct {
		name  string
		eps   []float64
		delta float64
		want  Composition
	}{
		{"issue 9's five releases", []float64{1, 1, 1, 0.5, 1}, 1e-6,
			Composition{4.5, 18.034085189219496, 4.5, 19.336597240033253}},
		{"200 small releases: advanced wins", slices.Repeat([]float64{0.01}, 200), 1e-6,
			Composition{2, 0.7634847719383024, 0.7634847719383024, 0.7833844377699664}},
		{"seed notes' example ε=0.1 k=10", slices.Repeat([]float64{0.1}, 10), 1e-5,
			Composition{1, 1.6225980474607944, 1, 1.7174271293851469}},
		{"mixed with bot", []float64{0.25, 0, 0.125, 0.5}, 1e-3,
			Composition{0.875, 2.541145206488519, 0.875, 2.7853846603331665}},
		{"no release", nil, 1e-6, Composition{}},
		{"only bot", []float64{0, 0}, 1e-6, Composition{}},
		{"llp makes everything infinite", []float64{0.5, math.Inf(1), 0.5}, 1e-6,
			Composition{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compose(tc.eps, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got.Basic, tc.want.Basic) || !closeTo(got.Advanced, tc.want.Advanced) ||
				!closeTo(got.Total, tc.want.Total) || !closeTo(got.Seed004, tc.want.Seed004) {
				t.Fatalf("Compose = %+v, want %+v", got, tc.want)
			}
		})
	}
	for _, eps := range []float64{0.01, 0.3, 1, 4} {
		for _, r := range []int{1, 2, 17, 500} {
			got, err := Compose(slices.Repeat([]float64{eps}, r), 1e-7)
			if err != nil {
				t.Fatal(err)
			}
			fr, l := float64(r), math.Log(1e7)
			drv := eps*math.Sqrt(2*fr*l) + fr*eps*(math.Exp(eps)-1)
			s004 := 2*fr*eps*eps + eps*math.Sqrt(2*fr*l)
			if !closeTo(got.Advanced, drv) || !closeTo(got.Seed004, s004) || !closeTo(got.Basic, fr*eps) ||
				got.Total != math.Min(got.Basic, got.Advanced) {
				t.Errorf("ε=%v r=%d: %+v, want advanced %v seed004 %v basic %v", eps, r, got, drv, s004, fr*eps)
			}
		}
	}
}

func TestComposeErrors(t *testing.T) {
	tests := []struct {
		name  string
		eps   []float64
		delta float64
		param string
	}{
		{"delta 0", []float64{1}, 0, "delta_prime"},
		{"delta 1", []float64{1}, 1, "delta_prime"},
		{"delta NaN", []float64{1}, math.NaN(), "delta_prime"},
		{"negative eps", []float64{1, -1}, 1e-6, "epsilon"},
		{"NaN eps", []float64{math.NaN()}, 1e-6, "epsilon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compose(tc.eps, tc.delta)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("error %v, want one naming %q", err, tc.param)
			}
		})
	}
}
