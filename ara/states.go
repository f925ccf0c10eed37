package ara

import "math/big"

// States returns k, the number of output states of c: the ways the
// browser can send at most c.MaxReports reports, each a (trigger-data
// value, reporting window) pair, at most spec.Reports of them for any one
// value of a spec — reports of the same pair are indistinguishable, so a
// state is the number of reports of each pair. This is the count of
// flexible_event_privacy.py's num_flexible_states. c must be valid
// (Validate); Evaluate checks it.
//
// For one group whose cap binds nothing (Uniform) it is stars and bars,
// C(T·W + R, R) (StarsAndBars); otherwise each value's ways to hold j
// reports in w windows, C(j + w − 1, w − 1) for j ≤ its cap, are the
// coefficients of a polynomial, and k is the sum of the coefficients of
// x^0 … x^R of their product over all values.
func (c Config) States() *big.Int {
	if c.uniform() {
		s := c.Specs[0]
		return StarsAndBars(int64(s.TriggerData)*int64(s.Windows), c.MaxReports)
	}
	return c.statesProduct()
}

// StarsAndBars returns C(n + r, r): the ways to place at most r
// indistinguishable reports in n cells (r ≥ 0, n ≥ 0), Σ_{j ≤ r} C(j+n−1, j).
func StarsAndBars(n int64, r int) *big.Int {
	return binomial(n+int64(r), int64(r))
}

// binomial is C(n, k) for 0 ≤ k ≤ n, exactly: the product
// Π_{i=1..k} (n−k+i)/i, every partial product an integer.
func binomial(n, k int64) *big.Int {
	out := big.NewInt(1)
	var t big.Int
	for i := int64(1); i <= k; i++ {
		out.Mul(out, t.SetInt64(n-k+i))
		out.Quo(out, t.SetInt64(i))
	}
	return out
}

// statesProduct is States by the generating function: the product over
// every trigger-data value of its polynomial, truncated at degree R, then
// the sum of its coefficients. Values alike in windows and effective cap
// (at most R) share one power, so the work is bounded by the number of
// distinct (windows, cap) pairs — at most MaxWindows × (MaxReports + 1) —
// whatever the number of specs.
func (c Config) statesProduct() *big.Int {
	r := c.MaxReports
	type shape struct{ windows, cap int }
	values := map[shape]int{}
	var order []shape
	for _, s := range c.Specs {
		k := shape{s.Windows, min(s.Reports, r)}
		if _, ok := values[k]; !ok {
			order = append(order, k)
		}
		values[k] += s.TriggerData
	}
	prod := poly{big.NewInt(1)}
	for _, k := range order {
		f := make(poly, k.cap+1)
		for j := range f {
			f[j] = binomial(int64(j+k.windows-1), int64(j))
		}
		prod = prod.mul(f.pow(values[k], r), r)
	}
	k := new(big.Int)
	for _, a := range prod {
		k.Add(k, a)
	}
	return k
}

// poly is a polynomial's coefficients, from x^0 up.
type poly []*big.Int

// mul returns p·q truncated at degree r.
func (p poly) mul(q poly, r int) poly {
	out := make(poly, min(len(p)+len(q)-1, r+1))
	for i := range out {
		out[i] = new(big.Int)
	}
	var t big.Int
	for i, a := range p {
		for j, b := range q {
			if i+j > r {
				break
			}
			out[i+j].Add(out[i+j], t.Mul(a, b))
		}
	}
	return out
}

// pow returns p^e truncated at degree r (e ≥ 0), by squaring.
func (p poly) pow(e, r int) poly {
	out := poly{big.NewInt(1)}
	for ; e > 0; e >>= 1 {
		if e&1 == 1 {
			out = out.mul(p, r)
		}
		if e > 1 {
			p = p.mul(p, r)
		}
	}
	return out
}
