package audit

import "math"

// Confidence bounds used by the self-checks of Run (realized.go, canary.go).

// betaInc returns the regularized incomplete beta function I_x(a, b) for
// a, b > 0 and x ∈ [0, 1]: the continued fraction of Numerical Recipes
// (§6.4, modified Lentz), on the side where it converges fast. Relative
// accuracy ~1e-14 for the a, b ≤ 1e7 of binomial counts.
func betaInc(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(x, a, b) / a
	}
	return 1 - front*betaCF(1-x, b, a)/b
}

// betaCF evaluates the continued fraction of betaInc.
func betaCF(x, a, b float64) float64 {
	const tiny = 1e-300
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 100000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h
}

// betaQuantile returns the x with I_x(a, b) = p: Newton's method on
// I_x − p with the Beta(a, b) density as derivative, safeguarded by a
// bisection bracket (I is increasing in x), to a relative precision of
// 1e-13 (typically 5–10 steps).
func betaQuantile(p, a, b float64) float64 {
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	lo, hi := 0.0, 1.0
	x := a / (a + b)
	for range 2000 {
		f := betaInc(x, a, b) - p
		if f < 0 {
			lo = x
		} else {
			hi = x
		}
		dens := math.Exp(lgab - lga - lgb + (a-1)*math.Log(x) + (b-1)*math.Log1p(-x))
		next := x - f/dens
		if !(next > lo && next < hi) || dens == 0 {
			next = (lo + hi) / 2
		}
		if math.Abs(next-x) < 1e-13*x || next == lo || next == hi {
			return next
		}
		x = next
	}
	return x
}

// cpLower is the one-sided Clopper–Pearson lower confidence bound, at
// level 1−alpha, on a binomial proportion with x successes in n trials:
// the p with P(Bin(n, p) ≥ x) = alpha (0 when x = 0).
func cpLower(x, n int, alpha float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= n {
		return math.Exp(math.Log(alpha) / float64(n))
	}
	return betaQuantile(alpha, float64(x), float64(n-x+1))
}

// cpUpper is the one-sided Clopper–Pearson upper bound: the p with
// P(Bin(n, p) ≤ x) = alpha (1 when x = n), computed as 1 − the lower bound
// on the failure rate (I_p(x+1, n−x) = 1−α ⟺ I_{1−p}(n−x, x+1) = α, which
// keeps a tiny alpha accurate).
func cpUpper(x, n int, alpha float64) float64 {
	if x >= n {
		return 1
	}
	if x <= 0 {
		return -math.Expm1(math.Log(alpha) / float64(n))
	}
	return 1 - betaQuantile(alpha, float64(n-x), float64(x+1))
}

// bernsteinHalfWidth returns the t for which Bernstein's inequality gives
// P(|mean − μ| ≥ t) ≤ delta for the mean of n independent variables with
// variance sigma2 and |X − μ| ≤ b: the root of
// 2·exp(−n t² / (2σ² + 2bt/3)) = delta.
func bernsteinHalfWidth(n int, sigma2, b, delta float64) float64 {
	l := math.Log(2 / delta)
	fn := float64(n)
	c := 2 * b / 3 * l
	return (c + math.Sqrt(c*c+8*fn*sigma2*l)) / (2 * fn)
}
