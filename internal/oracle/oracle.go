// Package oracle holds the exact likelihoods P(release | true labels) of the
// label PETs of package pets, written from their definitions in "Auditing
// Privacy Mechanisms via Label Inference Attacks" (Section 2 for rr and llp;
// Appendix C, "Training with LLP+Lap" and "Training with LLP+Geom"). It is
// the reference that the tests of pets (sampler frequencies, debiasing) and
// audit (its O(k) likelihood recursions, the Monte Carlo attacker) check the
// production code against; only tests import it. Log forms avoid underflow:
// llp_geom with k = 512 and ε = 32 has probabilities down to e^{−16384}.
package oracle

import (
	"fmt"
	"math"
)

// RR returns P(released label = rel | true label = y) for randomized
// response with ε > 0: 1−π if rel = y, π otherwise, π = 1/(1+e^ε).
// ε = +Inf gives the none mechanism (1 or 0). Panics on labels outside
// {0, 1}.
func RR(eps float64, rel, y uint8) float64 {
	if rel > 1 || y > 1 {
		panic(fmt.Sprintf("oracle: RR: labels must be 0/1, got %d, %d", rel, y))
	}
	if rel == y {
		return 1 / (1 + math.Exp(-eps)) // 1 − π, stable for large ε
	}
	return 1 / (1 + math.Exp(eps))
}

// GeomLogPMF returns log P(released clipped sum = r | true sum = s) for
// llp_geom on a bag of n ≥ 1 rows (0 ≤ r, s ≤ n): the release is
// clip(s + Z, 0, n) with P(Z = z) = (1−a)/(1+a)·a^|z|, a = e^{−ε}, so
//
//	0 < r < n: (1−a)/(1+a)·a^|r−s|
//	r = 0:     P(Z ≤ −s) = a^s/(1+a)
//	r = n:     P(Z ≥ n−s) = a^(n−s)/(1+a)
//
// and with n = 1 it is RR(ε).
func GeomLogPMF(eps float64, n, s, r int) float64 {
	check("GeomLogPMF", n, s)
	if r < 0 || r > n {
		panic(fmt.Sprintf("oracle: GeomLogPMF: release %d outside [0, %d]", r, n))
	}
	switch r {
	case 0:
		return -eps*float64(s) - math.Log1p(math.Exp(-eps))
	case n:
		return -eps*float64(n-s) - math.Log1p(math.Exp(-eps))
	}
	d := r - s
	if d < 0 {
		d = -d
	}
	return math.Log(-math.Expm1(-eps)) - math.Log1p(math.Exp(-eps)) - eps*float64(d)
}

// GeomPMF returns P(released clipped sum = r | true sum = s) for r = 0..n
// (exp of GeomLogPMF; far cells may underflow to 0).
func GeomPMF(eps float64, n, s int) []float64 {
	p := make([]float64, n+1)
	for r := range p {
		p[r] = math.Exp(GeomLogPMF(eps, n, s, r))
	}
	return p
}

// LapLogDensity returns the log density (per unit of α) of the released
// proportion α of llp_lap on a bag of n ≥ 1 rows with true sum s:
// α ~ s/n + Lap(1/(nε)), density (nε/2)·e^{−ε|nα − s|}.
func LapLogDensity(eps float64, n, s int, alpha float64) float64 {
	check("LapLogDensity", n, s)
	fn := float64(n)
	return math.Log(fn*eps/2) - eps*math.Abs(fn*alpha-float64(s))
}

// LapDensity is exp of LapLogDensity.
func LapDensity(eps float64, n, s int, alpha float64) float64 {
	return math.Exp(LapLogDensity(eps, n, s, alpha))
}

func check(fn string, n, s int) {
	if n < 1 || s < 0 || s > n {
		panic(fmt.Sprintf("oracle: %s: need 0 ≤ s ≤ n, n ≥ 1; got s=%d n=%d", fn, s, n))
	}
}

// RRPrior returns P(released label = rel | true label = y) for rr_prior
// (RRWithPrior of Ghazi et al. 2021, two classes) on a row whose public
// prior is p = P(y = 1 | x): with q = e^ε/(1+e^ε), if max(p, 1−p) ≥ q the
// prior's argmax label (1 iff p > ½) is released whatever y is (1 for it,
// 0 for the other label); otherwise RR(ε). Panics on labels outside {0, 1}.
func RRPrior(eps, p float64, rel, y uint8) float64 {
	if rel > 1 || y > 1 {
		panic(fmt.Sprintf("oracle: RRPrior: labels must be 0/1, got %d, %d", rel, y))
	}
	q := 1 / (1 + math.Exp(-eps))
	if math.Max(p, 1-p) >= q {
		top := uint8(0)
		if p > 0.5 {
			top = 1
		}
		if rel == top {
			return 1
		}
		return 0
	}
	return RR(eps, rel, y)
}
