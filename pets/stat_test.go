package pets

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Statistical tests are seeded (deterministic), but their tolerances are
// chosen as if the seed were random: every check is a two-sided z-bound at
// zBound = 6 standard errors (normal approximation; P(|Z| > 6) ≈ 2.0e-9),
// or, for cells with fewer than 50 expected counts, a Poisson upper bound
// μ + 6√μ + 12 (tail < 1e-9 for μ ≤ 50). No test makes more than 400 such
// checks, so each test's false-failure rate is ≤ 400·2e-9 < 1e-6.
const zBound = 6.0

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// checkMean asserts |mean − want| ≤ zBound·se.
func checkMean(t *testing.T, what string, mean, want, se float64) {
	t.Helper()
	if d := math.Abs(mean - want); d > zBound*se {
		t.Errorf("%s: got %.6g, want %.6g (|diff| %.3g > %g·SE %.3g)", what, mean, want, d, zBound, se)
	}
}

// checkCounts compares observed counts of n draws with probabilities p
// cell by cell: cells with n·p ≥ 50 by a binomial z-bound, the others
// pooled into one cell (z-bound if its expectation is ≥ 50, else the
// Poisson upper bound).
func checkCounts(t *testing.T, what string, counts []int, p []float64, n int) {
	t.Helper()
	fn := float64(n)
	poolP, poolC := 0.0, 0
	for i, pi := range p {
		if fn*pi < 50 {
			poolP += pi
			poolC += counts[i]
			continue
		}
		checkCell(t, what, i, counts[i], pi, fn)
	}
	if fn*poolP >= 50 {
		checkCell(t, what, -1, poolC, poolP, fn)
	} else if mu := fn * poolP; float64(poolC) > mu+zBound*math.Sqrt(mu)+12 {
		t.Errorf("%s: pooled rare cells: %d counts, expected %.3g", what, poolC, mu)
	}
}

func checkCell(t *testing.T, what string, cell, count int, p, n float64) {
	t.Helper()
	mu, sd := n*p, math.Sqrt(n*p*(1-p))
	if d := math.Abs(float64(count) - mu); d > zBound*sd+1 {
		t.Errorf("%s: cell %d: %d counts, expected %.1f (|diff| %.1f > %g·SD %.1f)", what, cell, count, mu, d, zBound, sd)
	}
}
