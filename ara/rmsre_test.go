package ara

import (
	"math"
	"testing"
)

// RMSRE_t divides each key's error by its true value or t, the larger
// (Noise Lab's rmsre_t); its expectation under Laplace noise of scale b is
// 2b² over the same denominators, averaged.
func TestRMSRE(t *testing.T) {
	cases := []struct {
		name         string
		noisy, truth []float64
		want         float64
	}{
		{"above and below the threshold", []float64{12, 3, 0}, []float64{10, 2, 0}, math.Sqrt((0.04 + 0.04 + 0) / 3)},
		{"exact", []float64{7, 1}, []float64{7, 1}, 0},
		{"no key", nil, nil, math.NaN()},
	}
	for _, tc := range cases {
		got := RMSRE(tc.noisy, tc.truth, RMSREThreshold)
		if !(math.Abs(got-tc.want) < 1e-15 || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("%s: RMSRE %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := ExpectedRMSRESquared([]float64{10, 2}, 1, RMSREThreshold); math.Abs(got-(2.0/100+2.0/25)/2) > 1e-16 {
		t.Errorf("E[RMSRE²] = %v", got)
	}
}
