package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// binomSum returns P(lo ≤ Bin(n, p) ≤ hi) by direct summation in log
// space.
func binomSum(lo, hi, n int, p float64) float64 {
	s := 0.0
	for k := lo; k <= hi; k++ {
		lc, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		s += math.Exp(lc - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return s
}

// TestClopperPearson: the bounds solve their defining binomial tail
// equations (checked by direct summation to 1e-9 relative, looser only as
// far as a float64 near 1 can hold 1 − p), match the
// closed forms at x = 0 and x = n, and are ordered lo < x/n < hi.
func TestClopperPearson(t *testing.T) {
	for _, n := range []int{1, 2, 7, 30, 200, 1000} {
		for _, alpha := range []float64{0.05, 1e-3, 1e-9} {
			for _, x := range []int{0, 1, n / 3, n / 2, n - 1, n} {
				if x < 0 || x > n {
					continue
				}
				lo, hi := cpLower(x, n, alpha), cpUpper(x, n, alpha)
				if x > 0 {
					if got := binomSum(x, n, n, lo); math.Abs(got-alpha) > 1e-9*alpha {
						t.Errorf("n=%d x=%d α=%g: P(X ≥ x | lo=%v) = %v", n, x, alpha, lo, got)
					}
				} else if lo != 0 {
					t.Errorf("n=%d x=0: lo %v", n, lo)
				}
				if x < n {
					// hi near 1 holds 1−hi to a relative 2^-53/(1−hi) only.
					rel := 1e-9 + float64(n-x)*0x1p-52/(1-hi)
					if got := binomSum(0, x, n, hi); math.Abs(got-alpha) > rel*alpha {
						t.Errorf("n=%d x=%d α=%g: P(X ≤ x | hi=%v) = %v", n, x, alpha, hi, got)
					}
				} else if hi != 1 {
					t.Errorf("n=%d x=n: hi %v", n, hi)
				}
				if p := float64(x) / float64(n); !(lo <= p && p <= hi) || (x > 0 && lo >= p) || (x < n && hi <= p) {
					t.Errorf("n=%d x=%d: %v ≤ %v ≤ %v violated", n, x, lo, p, hi)
				}
			}
			if got, want := cpUpper(0, n, alpha), 1-math.Pow(alpha, 1/float64(n)); math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d: upper(0) %v, want %v", n, got, want)
			}
			if got, want := cpLower(n, n, alpha), math.Pow(alpha, 1/float64(n)); math.Abs(got-want) > 1e-12 {
				t.Errorf("n=%d: upper(0) %v, want %v", n, got, want)
			}
		}
	}
}

// TestBernsteinHalfWidth: the half-width solves Bernstein's bound
// 2·exp(−n t²/(2σ² + 2bt/3)) = δ.
func TestBernsteinHalfWidth(t *testing.T) {
	for _, n := range []int{10, 1000, 1e6} {
		for _, c := range []struct{ s2, b float64 }{{1.0 / 12, 0.5}, {1.0 / 180, 1.0 / 6}} {
			h := bernsteinHalfWidth(n, c.s2, c.b, GuardAlpha)
			got := 2 * math.Exp(-float64(n)*h*h/(2*c.s2+2*c.b*h/3))
			if math.Abs(got-GuardAlpha) > 1e-6*GuardAlpha {
				t.Errorf("n=%d: bound at t=%v is %v", n, h, got)
			}
		}
	}
}

// rrCounts simulates the canary counts of rr(ε) with c trials: scores are
// ±ε, so "s > 0" is positive when the released label is 1, "s = +∞" never
// and "s > −∞" always (TestCanaryCounts checks this against
// countCanaries).
func rrCounts(r *rand.Rand, c int, eps float64) canaryCounts {
	pi := 1 / (1 + math.Exp(eps))
	var k canaryCounts
	for range c {
		y := r.Uint64()&1 == 1
		shown1 := y != (r.Float64() < pi)
		if y {
			k.n1++
			if shown1 {
				k.tp[0]++
			}
		} else {
			k.n0++
			if shown1 {
				k.fp[0]++
			}
		}
	}
	k.tp[2], k.fp[2] = k.n1, k.n0
	return k
}

// TestCanaryCounts: countCanaries sorts trials into the three tests.
func TestCanaryCounts(t *testing.T) {
	inf := math.Inf(1)
	c := countCanaries([]canaryTrial{{1, 0.5}, {1, inf}, {1, -inf}, {0, 0.5}, {0, -0.5}, {0, 0}, {1, -1}})
	want := canaryCounts{tp: [nTests]int{2, 1, 3}, fp: [nTests]int{1, 0, 3}, n1: 4, n0: 3}
	if c != want {
		t.Fatalf("counts %+v, want %+v", c, want)
	}
	if c.epsLower(0.05) < 0 {
		t.Fatal("negative bound")
	}
	if (canaryCounts{}).epsLower(0.05) != 0 {
		t.Fatal("no trials: want 0")
	}
}

// TestEpsLowerFalseFailures measures how often the canary bounds exceed
// a tight mechanism's ε: rr, whose tests have TPR/FPR = e^ε exactly, is
// the worst case (the LLP-family mechanisms are far from tight, see
// TestGuardNoFalseFailures and the quickstart). Over 1000 simulated audits
// of 10000 canaries per ε, the guard's bound (confidence 1 − GuardAlpha,
// the one that fails an audit) never exceeds ε, and the 95% bound does in
// at most 3% of them (the Clopper–Pearson guarantee is ≤ 5%; measured
// 0.05–1.3%: 0.2% at ε = 1, 1.2% at ε = 4). A 4ε sampler's counts exceed ε
// at the guard's confidence every time.
func TestEpsLowerFalseFailures(t *testing.T) {
	sims := 1000
	if testing.Short() {
		sims = 200
	}
	r := rand.New(rand.NewPCG(3, 4))
	for _, eps := range []float64{0.5, 1, 2, 4} {
		over95, overGuard, caught := 0, 0, 0
		for range sims {
			c := rrCounts(r, 10000, eps)
			if c.epsLower(0.05) > eps {
				over95++
			}
			if c.epsLower(GuardAlpha) > eps {
				overGuard++
			}
		}
		for range 20 {
			if rrCounts(r, 10000, 4*eps).epsLower(GuardAlpha) > eps {
				caught++
			}
		}
		t.Logf("ε=%v: 95%% bound above ε in %d of %d audits, guard bound in %d; 4ε caught %d/20", eps, over95, sims, overGuard, caught)
		if overGuard > 0 || float64(over95) > 0.03*float64(sims) || caught != 20 {
			t.Errorf("ε=%v: 95%% bound above ε %d/%d, guard %d, 4ε caught %d/20", eps, over95, sims, overGuard, caught)
		}
	}
}

// TestEpsLowerPower: with the default 10000 canaries, rr ε=1 through the
// production sampler gives eps_lower ≥ 0.5 on every seed tried (measured
// 0.90–0.95; the expected 95% bound is 0.93), llp_geom and llp_lap stay
// below their ε, and llp (no ε) shows ε ≥ 1, how far from private it is.
func TestEpsLowerPower(t *testing.T) {
	eta := uniformEta(10000, 21)
	for _, tc := range []struct {
		p      pets.Params
		lo, hi float64
	}{
		{pets.Params{Kind: pets.RR, Epsilon: 1}, 0.5, 1},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, 0, 1},
		{pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 1}, 0, 1},
		{pets.Params{Kind: pets.LLP, K: 8}, 1, math.Inf(1)},
	} {
		m := testutil.MustNew(tc.p)
		for seed := range uint64(4) {
			res, err := Run(eta, m, Options{Seed: seed, LabelDraws: 1, Sampler: releaseSampler{}, Draws: 1, Canaries: 10000})
			if err != nil {
				t.Fatal(err)
			}
			if res.Canaries != 10000 || !(res.EpsLower >= tc.lo && res.EpsLower <= tc.hi) {
				t.Errorf("%s seed %d: eps_lower %v from %d canaries, want in [%v, %v]", m, seed, res.EpsLower, res.Canaries, tc.lo, tc.hi)
			}
			t.Logf("%s seed %d: eps_lower %.3f", m, seed, res.EpsLower)
		}
	}
}
