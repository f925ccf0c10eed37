package audit

// Poisson-binomial distributions of bag sums, computed exactly and stably.

// pbPMF writes into p (len(eta)+1) the distribution of S = Σ y_j with
// independent y_j ~ Bernoulli(eta[j]): p[s] = P(S = s). It is the product
// Π_j (1−η_j + η_j z) expanded by the usual O(k²) recursion; every step adds
// non-negative products, so each entry carries a relative error ≤ ~2k·2^-53
// (down to the underflow threshold), tails included.
func pbPMF(p, eta []float64) {
	p = p[:len(eta)+1]
	p[0] = 1
	for j, e := range eta {
		if e == 0 { // a known 0 (the controlled canary game): p is unchanged
			p[j+1] = 0
			continue
		}
		f := 1 - e
		p[j+1] = p[j] * e
		for s := j; s >= 1; s-- {
			p[s] = p[s]*f + p[s-1]*e
		}
		p[0] *= f
	}
}

// leaveOneOut writes into q (len k) the distribution of the sum of the
// other k−1 members, q[j] = P(S₋ᵢ = j), given p = P(S = ·) (len k+1) of the
// whole bag and e = η_i. It inverts p = q * (1−e, e) in O(k):
//
//	forward:  q[s]   = (p[s] − e·q[s−1]) / (1−e)
//	backward: q[s−1] = (p[s] − (1−e)·q[s]) / e
//
// The forward step is used while e·q[s−1] ≤ p[s]/2, i.e. while the posterior
// P(y_i = 1 | S = s) ≤ ½, and the backward step for the remaining (larger)
// s, where that posterior is ≥ ½ (it is non-decreasing in s because the
// Poisson-binomial law of S₋ᵢ is log-concave). Each subtraction therefore
// removes at most half of p[s], so it never cancels: the relative error of
// q[j] grows at most linearly in j (the previous entry's error is
// multiplied by a factor ≤ 1 per step), in the far tails too, and no result
// can come out negative. (Relative precision is lost only below ~1e-200,
// where pbPMF's partial sums can pass through the subnormal range.) Dividing by a small e or 1−e is harmless
// because the numerator is then itself accurate to that relative precision.
// e = 0 and e = 1 are shifts, handled exactly.
func leaveOneOut(q, p []float64, e float64) {
	k := len(p) - 1
	q = q[:k]
	switch e {
	case 0:
		copy(q, p[:k])
		return
	case 1:
		copy(q, p[1:])
		return
	}
	f := 1 - e
	if e < 0x1p-900 || f < 0x1p-900 {
		leaveOneOutDiv(q, p, e, f)
		return
	}
	// The loop-carried chain is one multiply and one subtract: the
	// divisions are replaced by multiplications with 1/f, e/f (forward) and
	// 1/e, f/e (backward), which adds a relative rounding of ~2^-53 per step
	// and keeps every subtraction benign.
	rf, c := 1/f, e/f
	m := 0
	prev := 0.0
	for ; m < k; m++ {
		if e*prev > 0.5*p[m] {
			break
		}
		prev = p[m]*rf - c*prev
		q[m] = prev
	}
	re, d := 1/e, f/e
	next := 0.0 // q[k] = 0
	for s := k; s > m; s-- {
		next = max(0, p[s]*re-d*next) // max: rounding only
		q[s-1] = next
	}
}

// leaveOneOutDiv is leaveOneOut with true divisions, for e or 1−e below
// 2^-900 where the reciprocals could overflow.
func leaveOneOutDiv(q, p []float64, e, f float64) {
	k := len(p) - 1
	m := 0
	prev := 0.0
	for ; m < k; m++ {
		t := e * prev
		if t > 0.5*p[m] {
			break
		}
		prev = (p[m] - t) / f
		q[m] = prev
	}
	next := 0.0
	for s := k; s > m; s-- {
		next = max(0, (p[s]-f*next)/e)
		q[s-1] = next
	}
}
