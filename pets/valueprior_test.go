package pets

import (
	"math"
	"testing"
)

// value_prior is ε₁-label-DP with the noise it draws: each count gets
// two-sided geometric noise whose frequencies at 0, ±1, ±2 are those of
// rate ε₁/2 within 6 binomial SE (false failure < 2e-9 each), and at that
// rate the worst log-likelihood ratio of the count vector between two
// datasets that differ in one label (two counts move by one:
// HistogramSensitivity) is 2·(ε₁/2) = ε₁, computed from the law.
func TestValuePriorNoise(t *testing.T) {
	const e1, draws = 0.8, 200_000
	m, err := New(Params{Kind: ValuePrior, Epsilon: e1, Values: Grid{Max: 4, Step: 1}})
	if err != nil {
		t.Fatal(err)
	}
	l := m.ValueLaw().(*histogramValues)
	a := math.Exp(-e1 / HistogramSensitivity)
	pmf := func(z float64) float64 { return (1 - a) / (1 + a) * math.Pow(a, math.Abs(z)) }
	counts := make([]float64, draws)
	l.noisy(counts, newRand(11))
	freq := map[float64]int{}
	for _, z := range counts {
		freq[z]++
	}
	for _, z := range []float64{-2, -1, 0, 1, 2} {
		got, want := float64(freq[z])/draws, pmf(z)
		if se := math.Sqrt(want * (1 - want) / draws); math.Abs(got-want) > 6*se {
			t.Errorf("noise %v at frequency %v, want %v (SE %v)", z, got, want, se)
		}
	}
	// Neighbours: counts (c_a, c_b) and (c_a − 1, c_b + 1); the ratio of
	// the noisy vector's pmf at any output is at most e^{rate·2}.
	worst := 0.0
	for xa := -5.0; xa <= 5; xa++ {
		for xb := -5.0; xb <= 5; xb++ {
			r := math.Log(pmf(xa-2)*pmf(xb-3)) - math.Log(pmf(xa-1)*pmf(xb-4))
			worst = math.Max(worst, math.Abs(r))
		}
	}
	if math.Abs(worst-e1) > 1e-12 {
		t.Errorf("worst log-likelihood ratio %v, want ε₁ = %v", worst, e1)
	}
	// Histogram: normalized, on the grid, uniform when everything clips.
	h := m.Histogram([]float64{0, 0, 0, 4, 1}, newRand(2))
	s := 0.0
	for _, v := range h {
		if v < 0 {
			t.Fatalf("histogram %v", h)
		}
		s += v
	}
	if len(h) != 5 || math.Abs(s-1) > 1e-12 {
		t.Fatalf("histogram %v", h)
	}
}
