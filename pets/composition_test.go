package pets

import (
	"errors"
	"math"
	"testing"
)

func TestBasicComposition(t *testing.T) {
	tests := []struct {
		name     string
		eps      float64
		releases int
		want     float64
	}{
		{"one release", 0.5, 1, 0.5},
		{"ten releases", 0.25, 10, 2.5},
		{"no release", 3, 0, 0},
		{"bot", 0, 7, 0},
		{"not DP", math.Inf(1), 2, math.Inf(1)},
		{"not DP, no release", math.Inf(1), 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BasicComposition(tc.eps, tc.releases); got != tc.want {
				t.Fatalf("BasicComposition(%v, %d) = %v, want %v", tc.eps, tc.releases, got, tc.want)
			}
		})
	}
}

// TestAdvancedComposition checks ε' = 2kε² + ε√(2k ln(1/δ')) (seed notes,
// משפט 2) on hand-computed cases, e.g. ε = 0.1, k = 10, δ' = 1e-5:
// 2·10·0.01 + 0.1·√(20·ln 1e5) = 0.2 + 0.1·√230.2585093 = 1.7174271293851464.
func TestAdvancedComposition(t *testing.T) {
	tests := []struct {
		name      string
		eps       float64
		releases  int
		delta     float64
		want      float64
		wantParam string
	}{
		{"eps 0.1 k 10 delta 1e-5", 0.1, 10, 1e-5, 1.7174271293851464, ""},
		{"eps 0.5 k 3 delta 1e-6", 0.5, 3, 1e-6, 6.052281388155439, ""}, // 1.5 + 0.5·√(6·ln 1e6)
		{"eps 1 k 1 delta 1/e", 1, 1, 1 / math.E, 2 + math.Sqrt2, ""},   // 2 + √(2·1)
		{"bot", 0, 5, 1e-6, 0, ""},
		{"not DP", math.Inf(1), 5, 1e-6, math.Inf(1), ""},
		{"zero releases", 1, 0, 1e-6, 0, "releases"},
		{"delta 0", 1, 2, 0, 0, "delta_prime"},
		{"delta 1", 1, 2, 1, 0, "delta_prime"},
		{"negative eps", -1, 2, 1e-6, 0, "epsilon"},
		{"NaN eps", math.NaN(), 2, 1e-6, 0, "epsilon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AdvancedComposition(tc.eps, tc.releases, tc.delta)
			if tc.wantParam != "" {
				var pe *ParamError
				if !errors.As(err, &pe) || pe.Param != tc.wantParam || !errors.Is(err, ErrInvalidParam) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantParam)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want && math.Abs(got-tc.want) > 1e-12*tc.want {
				t.Fatalf("AdvancedComposition = %.17g, want %.17g", got, tc.want)
			}
		})
	}
}
