package pets

import (
	"errors"
	"math"
	"math/rand/v2"
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

func rrSteps(eps ...float64) []Step {
	s := make([]Step, len(eps))
	for i, e := range eps {
		s[i] = Step{Kind: RR, Epsilon: e}
	}
	return s
}

func repeat(s Step, n int) []Step { return slices.Repeat([]Step{s}, n) }

// TestComposeBounds checks the ε-only bounds against values computed
// independently (Python floats, exp(ε)−1 rather than expm1, other
// summation order): basic Σε, DRV √(2 ln(1/δ')Σε²) + Σε(e^ε−1), the
// quadratic-mean form Σ2ε² + √(2 ln(1/δ')Σε²); and, for one repeated ε,
// against the textbook forms ε√(2r ln(1/δ')) + rε(e^ε−1) and
// 2rε² + ε√(2r ln(1/δ')). Total is the smallest bound.
func TestComposeBounds(t *testing.T) {
	tests := []struct {
		name                string
		steps               []Step
		delta               float64
		basic, drv, drvQuad float64
	}{
		{"five releases", []Step{{RR, 1}, {LLPGeom, 1}, {LLPLap, 1}, {RR, 0.5}, {RR, 1}}, 1e-6,
			4.5, 18.034085189219496, 19.336597240033253},
		{"200 small releases", repeat(Step{RR, 0.01}, 200), 1e-6, 2, 0.7634847719383024, 0.7833844377699664},
		{"seed notes' example ε=0.1 k=10", repeat(Step{RR, 0.1}, 10), 1e-5, 1, 1.6225980474607944, 1.7174271293851469},
		{"mixed with bot", []Step{{RR, 0.25}, {Bot, 0}, {RR, 0.125}, {LLPGeom, 0.5}}, 1e-3,
			0.875, 2.541145206488519, 2.7853846603331665},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compose(tc.steps, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			if !closeTo(got.Basic, tc.basic) || !closeTo(got.DRV, tc.drv) || !closeTo(got.DRVQuad, tc.drvQuad) {
				t.Fatalf("Compose = %+v, want basic %v drv %v drv_quad %v", got, tc.basic, tc.drv, tc.drvQuad)
			}
			if got.Total != min(got.Basic, got.DRV, got.DRVQuad, got.PLD) {
				t.Fatalf("Total %v is not the smallest bound of %+v", got.Total, got)
			}
		})
	}
	for _, eps := range []float64{0.01, 0.3, 1, 4} {
		for _, r := range []int{1, 2, 17, 500} {
			got, err := Compose(repeat(Step{RR, eps}, r), 1e-7)
			if err != nil {
				t.Fatal(err)
			}
			fr, l := float64(r), math.Log(1e7)
			drv := eps*math.Sqrt(2*fr*l) + fr*eps*(math.Exp(eps)-1)
			quad := 2*fr*eps*eps + eps*math.Sqrt(2*fr*l)
			if !closeTo(got.DRV, drv) || !closeTo(got.DRVQuad, quad) || !closeTo(got.Basic, fr*eps) {
				t.Errorf("ε=%v r=%d: %+v, want drv %v drv_quad %v basic %v", eps, r, got, drv, quad, fr*eps)
			}
		}
	}
	for _, tc := range []struct {
		name  string
		steps []Step
	}{
		{"no release", nil}, {"only bot", []Step{{Bot, 0}, {Bot, 0}}},
	} {
		if got, err := Compose(tc.steps, 1e-6); err != nil || got != (Composition{}) {
			t.Errorf("%s: %+v (%v), want zeros", tc.name, got, err)
		}
	}
	got, _ := Compose([]Step{{RR, 0.5}, {LLP, math.Inf(1)}, {RR, 0.5}}, 1e-6)
	inf := math.Inf(1)
	if got != (Composition{Basic: inf, DRV: inf, DRVQuad: inf, PLD: inf, Total: inf}) {
		t.Errorf("llp in the history: %+v, want every total +Inf", got)
	}
}

// TestComposeLooseTotal is the loose total of the finding: 2,000 releases
// at ε = 0.05 and one at ε = 3 were reported as 82.05 (min of basic and
// DRV) where the quadratic-mean form gives 47.67; the PLD is far below
// both, and the total is the smallest.
func TestComposeLooseTotal(t *testing.T) {
	got, err := Compose(append(repeat(Step{RR, 0.05}, 2000), Step{RR, 3}), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(got.DRVQuad-47.668) < 1e-3) || got.Total > got.DRVQuad || got.Total != got.PLD || got.PLD > 20 {
		t.Fatalf("%+v: want the total ≤ 47.67 (drv_quad), the PLD far smaller", got)
	}
}

// kovDelta is the exact optimal composition of k ε-DP mechanisms (Kairouz,
// Oh & Viswanath 2015, Theorem 3.3), attained by k-fold RR(ε):
// δ(ε') = (1+e^ε)^{−k} Σ_l C(k,l) max(0, e^{ε(k−l)} − e^{ε'+εl}).
func kovDelta(eps float64, k int, epsp float64) float64 {
	s := 0.0
	lk := float64(k) * math.Log1p(math.Exp(eps))
	for l := 0; l <= k; l++ {
		c := lgammaInt(k) - lgammaInt(l) - lgammaInt(k-l)
		a, b := eps*float64(k-l), epsp+eps*float64(l)
		if a > b {
			s += math.Exp(c+a-lk) * -math.Expm1(b-a)
		}
	}
	return s
}

// bisect returns the smallest x in [lo, hi] with f(x) ≤ target (f
// non-increasing), to 1e-12.
func bisect(f func(float64) float64, target, lo, hi float64) float64 {
	for hi-lo > 1e-12 {
		m := (lo + hi) / 2
		if f(m) > target {
			lo = m
		} else {
			hi = m
		}
	}
	return hi
}

// TestPLDKairouzOhViswanath: k-fold rr(ε) composes to exactly the optimal
// composition; the pessimistic PLD lies in [exact, exact + PLDError] and
// the values at δ' = 1e-6 come out (40 × 0.1 → 2.7754,
// 100 × 0.1 → 4.7746, 20 × 0.5 → 9.9868), with llp_geom identical to rr.
func TestPLDKairouzOhViswanath(t *testing.T) {
	for _, tc := range []struct {
		eps   float64
		k     int
		value float64 // to 4 decimals
	}{{0.1, 40, 2.7754}, {0.1, 100, 4.7746}, {0.5, 20, 9.9868}, {1, 3, 3.0000}, {0.01, 1000, 0.0}} {
		exact := bisect(func(x float64) float64 { return kovDelta(tc.eps, tc.k, x) }, 1e-6, 0, tc.eps*float64(tc.k))
		for _, kind := range []Kind{RR, LLPGeom} {
			got, err := Compose(repeat(Step{kind, tc.eps}, tc.k), 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			if !(got.PLD >= exact-1e-9 && got.PLD <= exact+got.PLDError) || got.PLDError > 1e-4 {
				t.Errorf("%d × %s(%v): PLD %.7f ± %g, exact %.7f", tc.k, kind, tc.eps, got.PLD, got.PLDError, exact)
			}
			if tc.value > 0 && math.Abs(exact-tc.value) > 5e-5 {
				t.Errorf("%d × %v: exact %.6f, the issue says %.4f", tc.k, tc.eps, exact, tc.value)
			}
			if got.Total != got.PLD || got.PLD > got.DRV || got.PLD > got.Basic {
				t.Errorf("%d × %v: %+v; the PLD should be the smallest", tc.k, tc.eps, got)
			}
		}
	}
}

// hockey returns H_{e^ε'}(P‖Q) = Σ max(0, P(o) − e^{ε'} Q(o)).
func hockey(p, q []float64, epsp float64) float64 {
	s := 0.0
	for i := range p {
		s += math.Max(0, p[i]-math.Exp(epsp)*q[i])
	}
	return s
}

// geomOutputs is the law of clip(s + Z, 0, n) for the two-sided geometric Z
// with a = e^{−ε} (P(Z=z) = (1−a)/(1+a)·a^{|z|}); n < 0 means unclipped,
// on [s−w, s+w] with the tails beyond put at the ends (each side's mass
// beyond w is below 1e-30).
func geomOutputs(eps float64, s, n, w int) []float64 {
	a := math.Exp(-eps)
	pz := func(z int) float64 { return (1 - a) / (1 + a) * math.Pow(a, math.Abs(float64(z))) }
	tailLE := func(z int) float64 { // P(Z ≤ z) for z ≤ 0
		return math.Pow(a, float64(-z)) / (1 + a)
	}
	lo, hi := 0, n
	if n < 0 {
		lo, hi = -w, 2*w+2
	}
	out := make([]float64, hi-lo+1)
	for o := lo; o <= hi; o++ {
		switch z := o - s; {
		case o == lo:
			out[o-lo] = tailLE(z)
		case o == hi:
			out[o-lo] = tailLE(-z) // P(Z ≥ z) = P(Z ≤ −z)
		default:
			out[o-lo] = pz(z)
		}
	}
	return out
}

// TestGeometricHasRRPLD checks the claim behind composing llp_geom as rr:
// for the unclipped two-sided geometric on a bag sum, (s+Z, s+1+Z) has
// exactly RR(ε)'s hockey-stick curve δ(ε') = max(0, p − e^{ε'}q) +
// max(0, q − e^{ε'}p), p = e^ε/(1+e^ε), q = 1 − p, in both directions;
// clipped to [0, n] (every bag size and sum) it is never above it.
func TestGeometricHasRRPLD(t *testing.T) {
	for _, eps := range []float64{0.1, 0.5, 1, 3} {
		p := 1 / (1 + math.Exp(-eps))
		rr := func(x float64) float64 { return math.Max(0, p-math.Exp(x)*(1-p)) + math.Max(0, 1-p-math.Exp(x)*p) }
		for _, x := range []float64{0, eps / 4, eps / 2, 0.9 * eps} {
			w := int(80/eps) + 5
			u0, u1 := geomOutputs(eps, 0, -1, w), geomOutputs(eps, 1, -1, w)
			for dir, pair := range [][2][]float64{{u0, u1}, {u1, u0}} {
				if got := hockey(pair[0], pair[1], x); math.Abs(got-rr(x)) > 1e-12 {
					t.Errorf("ε=%v ε'=%v dir %d: unclipped δ %.15f, RR %.15f", eps, x, dir, got, rr(x))
				}
			}
			for _, n := range []int{1, 2, 5, 16} {
				for s := 0; s < n; s++ {
					c0, c1 := geomOutputs(eps, s, n, 0), geomOutputs(eps, s+1, n, 0)
					for _, pair := range [][2][]float64{{c0, c1}, {c1, c0}} {
						if got := hockey(pair[0], pair[1], x); got > rr(x)+1e-12 {
							t.Errorf("ε=%v n=%d s=%d ε'=%v: clipped δ %v above RR's %v", eps, n, s, x, got, rr(x))
						}
					}
				}
			}
		}
	}
}

// TestLaplacePLD: one Laplace release has δ(ε') = 1 − e^{(ε'−ε)/2} on
// [0, ε]; the discretised PLD is above it and within a grid step's slope
// (δ changes by at most h/2 per h of ε'), and above the grid sampler's
// exact curve too; ε(δ') of one release is 2 ln(1/(1−δ')) below ε.
func TestLaplacePLD(t *testing.T) {
	for _, eps := range []float64{0.1, 1, 4} {
		d := laplacePLD(eps, pldStep)
		for _, x := range []float64{0, eps / 3, eps / 2, 0.99 * eps} {
			exact := -math.Expm1((x - eps) / 2)
			got := d.delta(x)
			if !(got >= exact && got <= exact+pldStep) {
				t.Errorf("ε=%v: δ(%v) = %.10f, exact %.10f", eps, x, got, exact)
			}
			if disc := discreteLaplaceDelta(eps, x); got < disc {
				t.Errorf("ε=%v: δ(%v) = %.12f below the grid sampler's %.12f", eps, x, got, disc)
			}
		}
		c, err := Compose([]Step{{LLPLap, eps}}, 1e-6)
		if err != nil {
			t.Fatal(err)
		}
		want := eps + 2*math.Log1p(-1e-6)
		if !(c.PLD >= want-1e-9 && c.PLD <= want+c.PLDError) {
			t.Errorf("one llp_lap(%v): PLD %v, want %v", eps, c.PLD, want)
		}
	}
}

// discreteLaplaceDelta is δ(ε') of the grid sampler (g·Z, a = e^{−gε},
// M = 1/g steps between neighbouring sums) in closed form: outputs m ≤ 0
// have ratio e^ε, 0 < m < M ratio e^{ε(1−2m/M)}, m ≥ M ratio e^{−ε}.
func discreteLaplaceDelta(eps, x float64) float64 {
	g := math.Min(LaplaceGranularity(1/eps), 1)
	m := 1 / g
	a := math.Exp(-g * eps)
	ex := math.Exp(x - eps) // e^{x} a^M
	// c/(1−a) = 1/(1+a), with c = (1−a)/(1+a) the pmf at 0.
	// m ≤ 0 (ratio e^ε > e^x): Σ c (a^{−m} − e^x a^{M−m}) = (1 − e^x a^M)/(1+a).
	s := (1 - ex) / (1 + a)
	// 1 ≤ m ≤ m* (ratio e^{ε(1−2m/M)} > e^x): Σ c (a^m − e^x a^{M−m})
	// = (a(1 − a^{m*}) − e^x a^M (a^{−m*} − 1))/(1+a).
	if mstar := math.Ceil(m*(1-x/eps)/2) - 1; mstar >= 1 {
		s += (a*-math.Expm1(-g*eps*mstar) - ex*math.Expm1(g*eps*mstar)) / (1 + a)
	}
	return s
}

// TestPLDMixed: for mixed rr/llp_geom histories (exact value by
// enumerating all 2^k sign patterns of the losses), exact ≤ PLD ≤ exact +
// PLDError; for histories with llp_lap the PLD is at most every other
// bound (within PLDError).
func TestPLDMixed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 25 {
		k := 1 + r.IntN(12)
		steps := make([]Step, k)
		eps := make([]float64, k)
		for i := range steps {
			eps[i] = []float64{0.05, 0.1, 0.3, 0.7, 1.5}[r.IntN(5)]
			steps[i] = Step{[]Kind{RR, LLPGeom}[r.IntN(2)], eps[i]}
		}
		delta := []float64{1e-6, 1e-3, 0.05}[r.IntN(3)]
		exactDelta := func(x float64) float64 {
			s := 0.0
			for mask := range 1 << k {
				loss, logp := 0.0, 0.0
				for i, e := range eps {
					lp := -math.Log1p(math.Exp(-e))
					if mask>>i&1 == 1 {
						loss, logp = loss-e, logp+lp-e
					} else {
						loss, logp = loss+e, logp+lp
					}
				}
				if loss > x {
					s += math.Exp(logp) * -math.Expm1(x-loss)
				}
			}
			return s
		}
		exact := bisect(exactDelta, delta, 0, 30)
		got, err := Compose(steps, delta)
		if err != nil {
			t.Fatal(err)
		}
		if !(got.PLD >= exact-1e-9 && got.PLD <= exact+got.PLDError+1e-9) {
			t.Errorf("trial %d %v at δ'=%v: PLD %.7f ± %g, exact %.7f", trial, steps, delta, got.PLD, got.PLDError, exact)
		}
		withLap := append(slices.Clone(steps), Step{LLPLap, eps[0]}, Step{LLPLap, 0.2})
		c, err := Compose(withLap, delta)
		if err != nil {
			t.Fatal(err)
		}
		if c.PLD > min(c.Basic, c.DRV, c.DRVQuad)+c.PLDError {
			t.Errorf("trial %d %v: PLD %v above another bound: %+v", trial, withLap, c.PLD, c)
		}
	}
}

// TestPLDSolver: epsilon inverts delta on the grid (δ(ε(δ')) = δ' where
// the curve crosses inside the support), and is monotone in δ'.
func TestPLDSolver(t *testing.T) {
	d := rrPLD(0.3, 25, pldStep).compose(laplacePLD(0.5, pldStep))
	prev := math.Inf(1)
	for _, delta := range []float64{1e-9, 1e-6, 1e-3, 0.1, 0.3} {
		e := d.epsilon(delta)
		if e > prev || e < 0 {
			t.Fatalf("ε(%v) = %v not decreasing (previous %v)", delta, e, prev)
		}
		if e > 0 && math.Abs(d.delta(e)-delta) > 1e-12*math.Max(1, delta) {
			t.Errorf("δ(ε(%v)) = %v", delta, d.delta(e))
		}
		prev = e
	}
	if e := identityPLD(pldStep).epsilon(1e-6); e != 0 {
		t.Errorf("nothing released: ε = %v", e)
	}
}

func TestComposeErrors(t *testing.T) {
	tests := []struct {
		name  string
		steps []Step
		delta float64
		param string
	}{
		{"delta 0", rrSteps(1), 0, "delta_prime"},
		{"delta 1", rrSteps(1), 1, "delta_prime"},
		{"delta NaN", rrSteps(1), math.NaN(), "delta_prime"},
		{"negative eps", rrSteps(1, -1), 1e-6, "epsilon"},
		{"NaN eps", rrSteps(math.NaN()), 1e-6, "epsilon"},
		{"bad kind", []Step{{Kind(200), 1}}, 1e-6, "kind"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compose(tc.steps, tc.delta)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("error %v, want one naming %q", err, tc.param)
			}
		})
	}
}

// TestStepGroup pins the charge of several rows of one person in one
// draw: for the two-sided geometric on a bag sum (llp_geom), m of the
// person's rows in one bag shift the sum by up to m; the pair (s+Z, s+m+Z)
// is dominated by RR(m·ε) — the PLD of Step.Group(m) — at every ε' (both
// directions, unclipped and clipped), while m independent RR(ε) draws,
// which is what charging m separate steps would compose, lie below it
// (they would under-count: with a = e^{−ε} and m = 2, the geometric has
// δ(0) = 1 − a, two RR(ε) draws (1 − a)/(1 + a)).
func TestStepGroup(t *testing.T) {
	const h = 1e-4
	for _, eps := range []float64{0.25, 1, 2} {
		for _, m := range []int{2, 3} {
			g := Step{Kind: LLPGeom, Epsilon: eps}.Group(m)
			if g.Epsilon != float64(m)*eps || g.Kind != LLPGeom {
				t.Fatalf("Group(%d) of ε=%v: %+v", m, eps, g)
			}
			group := rrPLD(g.Epsilon, 1, h)
			indep := rrPLD(eps, m, h)
			w := int(80/eps) + 5
			u0, um := geomOutputs(eps, 0, -1, w), geomOutputs(eps, m, -1, w)
			for _, x := range []float64{0, eps / 2, eps, 1.5 * eps} {
				for dir, pair := range [][2][]float64{{u0, um}, {um, u0}} {
					exact := hockey(pair[0], pair[1], x)
					if got := group.delta(x); got < exact-1e-12 {
						t.Errorf("ε=%v m=%d ε'=%v dir %d: RR(mε) δ %v below the geometric's %v", eps, m, x, dir, got, exact)
					}
					for s := 0; s+m <= 8; s++ { // clipped to [0, 8]: post-processing
						c0, c1 := geomOutputs(eps, s, 8, 0), geomOutputs(eps, s+m, 8, 0)
						if got := hockey(c0, c1, x); got > group.delta(x)+1e-12 {
							t.Errorf("ε=%v m=%d s=%d ε'=%v: clipped δ %v above RR(mε)'s %v", eps, m, s, x, got, group.delta(x))
						}
					}
				}
			}
			if exact := hockey(u0, um, 0); !(indep.delta(0) < exact-1e-3) {
				t.Errorf("ε=%v m=%d: %d independent RR(ε) have δ(0) %v, not below the geometric's %v: the test lost its point",
					eps, m, m, indep.delta(0), exact)
			}
		}
	}
	if s := (Step{Kind: RR, Epsilon: 1}).Group(1); s != (Step{Kind: RR, Epsilon: 1}) {
		t.Fatalf("Group(1) = %+v", s)
	}
	if s := (Step{Kind: Bot}).Group(5); s.Epsilon != 0 {
		t.Fatalf("bot group %+v", s)
	}
}
