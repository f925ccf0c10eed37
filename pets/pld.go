package pets

import (
	"math"
	"math/cmplx"
	"slices"
)

// Privacy loss distributions (PLDs) on a grid, composed by convolution.
//
// For a pair of output distributions (P, Q) of a mechanism on two
// neighbouring inputs, the privacy loss of an output o is L(o) = ln P(o)/Q(o)
// and its distribution under P (the PLD) gives the tight (ε', δ)-curve
//
//	δ(ε') = E_P[(1 − e^{ε'−L})₊]  (+ P's mass where Q is 0).
//
// Composition of independent releases adds independent losses, so the
// composed PLD is the convolution of the PLDs. Every mechanism here has a
// symmetric dominating pair (the same PLD for P vs Q and Q vs P), which is
// what makes one PLD per mechanism enough for label changes in either
// direction; composing dominating pairs dominates the (adaptive)
// composition (Zhu, Dong & Wang, AISTATS 2022, Definition 7 and Theorem 10).
//
// Pessimistic discretisation (as google/differential-privacy's
// dp_accounting, "pessimistic_estimate"): every loss is rounded UP to the
// grid h·ℤ, which makes the discrete law stochastically larger; δ(ε') is
// non-decreasing in the loss, so the computed δ(ε') is an upper bound for
// every ε', and the computed ε(δ') ≥ the exact one. Each rounding moves a
// loss by less than h, so with `rounds` roundings the composed loss is
// overstated by less than rounds·h and ε(δ') exceeds the exact value by
// less than rounds·h. Tails are truncated pessimistically too: at most
// pldTail of mass per composition is moved from the top to +∞ (adding to
// δ) or from the bottom up to the lowest kept loss. Convolutions of long
// vectors use a float64 FFT, whose round-off is about 1e-15 absolute per
// probability; it is clamped at 0.

const (
	pldStep       = 1e-4    // preferred grid step h (loss units)
	pldTail       = 1e-15   // mass truncated per tail per operation
	pldMaxBuckets = 1 << 22 // a longer grid is made coarser
	directCost    = 3e7     // multiply-adds below which a convolution is direct
)

// pld is a discretised privacy loss distribution: mass p[i] at loss
// (lo+i)·h, plus mass inf at +∞.
type pld struct {
	h      float64
	lo     int
	p      []float64
	inf    float64
	rounds int // roundings up to the grid behind this distribution
}

// identityPLD is the PLD of releasing nothing (loss 0 with mass 1).
func identityPLD(h float64) *pld { return &pld{h: h, p: []float64{1}} }

// ceilGrid returns the grid index of loss x rounded up.
func ceilGrid(x, h float64) int { return int(math.Ceil(x / h)) }

// rrPLD returns the r-fold composition of randomized response with
// parameter ε, exactly (the binomial law of Kairouz, Oh & Viswanath 2015),
// rounded to the grid once. One RR release has loss +ε with probability
// p = e^ε/(1+e^ε) and −ε with probability 1−p; r releases have loss
// ε(r − 2l) with probability C(r,l) p^{r−l} (1−p)^l.
//
// It is also the PLD of the two-sided geometric mechanism at sensitivity 1
// (llp_geom's bag sum): with P(Z=z) ∝ a^{|z|}, a = e^{−ε}, outputs s+Z and
// s+1+Z have loss ε(|y−s−1| − |y−s|) = +ε for y ≤ s and −ε for y ≥ s+1,
// and P(Z ≤ 0) = 1/(1+a) = e^ε/(1+e^ε). So (P, Q) of RR(ε) is a dominating
// pair of the unclipped geometric release, and clipping to [0, k] and
// dividing by k are post-processing, which cannot increase any δ(ε')
// (data processing for the hockey-stick divergence).
func rrPLD(eps float64, r int, h float64) *pld {
	if r == 0 || eps == 0 {
		return identityPLD(h)
	}
	logP := -math.Log1p(math.Exp(-eps)) // ln p
	lr := lgammaInt(r)
	logw := make([]float64, r+1) // l = 0 (all +ε, highest loss) … r
	for l := range logw {
		logw[l] = lr - lgammaInt(l) - lgammaInt(r-l) + float64(r)*logP - float64(l)*eps
	}
	w := make([]float64, r+1)
	for l, x := range logw {
		w[l] = math.Exp(x)
	}
	// Truncate: top atoms (small l) holding ≤ pldTail go to +∞, bottom
	// atoms holding ≤ pldTail are moved up to the lowest kept atom.
	top, inf := 0, 0.0
	for top < r && inf+w[top] <= pldTail {
		inf += w[top]
		top++
	}
	bot, low := r, 0.0
	for bot > top && low+w[bot] <= pldTail {
		low += w[bot]
		bot--
	}
	w[bot] += low
	loss := func(l int) float64 { return eps * float64(r-2*l) }
	lo, hi := ceilGrid(loss(bot), h), ceilGrid(loss(top), h)
	d := &pld{h: h, lo: lo, p: make([]float64, hi-lo+1), inf: inf, rounds: 1}
	if len(d.p) > pldMaxBuckets {
		return nil
	}
	for l := top; l <= bot; l++ {
		d.p[ceilGrid(loss(l), h)-lo] += w[l]
	}
	return d
}

func lgammaInt(n int) float64 {
	v, _ := math.Lgamma(float64(n) + 1)
	return v
}

// laplacePLD returns one llp_lap release, the bag sum plus noise of scale
// 1/ε at sensitivity 1. For the continuous Laplace (the textbook sampler)
// the loss is +ε for outputs at or below the true sum, −ε at or above the
// neighbour's, ε(1 − 2x) in between, and its CDF under P is
//
//	F_c(t) = ½ e^{−(ε−t)/2} for −ε ≤ t < ε (mass ½ at +ε, ½e^{−ε} at −ε),
//
// which gives δ(ε') = 1 − e^{(ε'−ε)/2} for 0 ≤ ε' ≤ ε. The grid sampler
// (Params.Secure: g·Z, Z two-sided geometric with a = e^{−gε}, g = 1/M the
// grid of LaplaceGranularity(1/ε)) has loss ε(1 − 2m/M) at Z = m clipped to
// [0, M], and CDF F_d(t) = a^{m_t}/(1+a), m_t = ⌈M(1 − t/ε)/2⌉. The ledger
// does not record which sampler ran, so the PLD used has the CDF
// min(F_c, F_d): stochastically at least as large as both, hence an upper
// bound on either's δ(ε') (they differ by a relative 2^-40).
func laplacePLD(eps, h float64) *pld {
	g := math.Min(LaplaceGranularity(1/eps), 1)
	m := 1 / g
	onePlusA := 2 + math.Expm1(-g*eps)
	cdf := func(t float64) float64 {
		switch {
		case t >= eps:
			return 1
		case t < -eps:
			return 0
		}
		fc := 0.5 * math.Exp(-(eps-t)/2)
		mt := math.Ceil(m * (1 - t/eps) / 2)
		fd := math.Exp(-g*eps*mt) / onePlusA
		return math.Min(fc, fd)
	}
	lo, hi := ceilGrid(-eps, h), ceilGrid(eps, h)
	if hi-lo+1 > pldMaxBuckets {
		return nil
	}
	d := &pld{h: h, lo: lo, p: make([]float64, hi-lo+1), rounds: 1}
	prev := 0.0
	for j := lo; j <= hi; j++ {
		c := cdf(float64(j) * h)
		if j == hi {
			c = 1
		}
		d.p[j-lo] = math.Max(c-prev, 0)
		prev = math.Max(prev, c)
	}
	d.truncate()
	return d
}

// truncate moves at most pldTail of mass from each tail (top to +∞, bottom
// up to the lowest kept loss) and trims zero ends.
func (d *pld) truncate() {
	p := d.p
	hi, s := len(p)-1, 0.0
	for hi > 0 && s+p[hi] <= pldTail {
		s += p[hi]
		hi--
	}
	d.inf += s
	lo, s := 0, 0.0
	for lo < hi && s+p[lo] <= pldTail {
		s += p[lo]
		lo++
	}
	p[lo] += s
	d.p = p[lo : hi+1]
	d.lo += lo
}

// compose returns the PLD of releasing both a and b (independent losses
// add): their convolution, truncated; nil if the grid would exceed
// pldMaxBuckets.
func (a *pld) compose(b *pld) *pld {
	n, m := len(a.p), len(b.p)
	if n+m-1 > pldMaxBuckets {
		return nil
	}
	out := &pld{h: a.h, lo: a.lo + b.lo, rounds: a.rounds + b.rounds,
		inf: a.inf + b.inf - a.inf*b.inf} // +∞ if either is
	na, nb := nonzero(a.p), nonzero(b.p)
	if float64(min(na*m, nb*n)) <= directCost {
		out.p = convolveDirect(a.p, b.p, na*m <= nb*n)
	} else {
		out.p = convolveFFT(a.p, b.p)
	}
	out.truncate()
	return out
}

// power returns the r-fold composition of a (r ≥ 0) by repeated squaring.
func (a *pld) power(r int) *pld {
	res := identityPLD(a.h)
	sq := a
	for r > 0 {
		if r&1 == 1 {
			if res = res.compose(sq); res == nil {
				return nil
			}
		}
		if r >>= 1; r > 0 {
			if sq = sq.compose(sq); sq == nil {
				return nil
			}
		}
	}
	return res
}

func nonzero(p []float64) int {
	n := 0
	for _, v := range p {
		if v != 0 {
			n++
		}
	}
	return n
}

// convolveDirect returns a*b, looping over the non-zero entries of a (or
// of b when !outerA).
func convolveDirect(a, b []float64, outerA bool) []float64 {
	if !outerA {
		a, b = b, a
	}
	out := make([]float64, len(a)+len(b)-1)
	for i, x := range a {
		if x == 0 {
			continue
		}
		o := out[i : i+len(b)]
		for j, y := range b {
			o[j] += x * y
		}
	}
	return out
}

// convolveFFT returns a*b by a complex FFT of the next power of two,
// clamping round-off below 0.
func convolveFFT(a, b []float64) []float64 {
	n := len(a) + len(b) - 1
	size := 1
	for size < n {
		size <<= 1
	}
	x := make([]complex128, size)
	for i, v := range a {
		x[i] = complex(v, 0)
	}
	for i, v := range b { // pack b as the imaginary part: one transform for both
		x[i] += complex(0, v)
	}
	fft(x, false)
	// A = (X[k] + conj X[−k])/2, B = (X[k] − conj X[−k])/(2i); product A·B.
	y := make([]complex128, size)
	for k := range size {
		xk, xm := x[k], cmplx.Conj(x[(size-k)&(size-1)])
		y[k] = (xk + xm) * (xk - xm) / complex(0, 4)
	}
	fft(y, true)
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Max(real(y[i])/float64(size), 0)
	}
	return out
}

// fft transforms x in place (length a power of two); inverse without the
// 1/n factor.
func fft(x []complex128, inverse bool) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ { // bit reversal
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j ^= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for length := 2; length <= n; length <<= 1 {
		ang := sign * 2 * math.Pi / float64(length)
		half := length / 2
		// Twiddles computed directly (not by repeated multiplication) for
		// accuracy.
		tw := make([]complex128, half)
		for k := range tw {
			s, c := math.Sincos(ang * float64(k))
			tw[k] = complex(c, s)
		}
		for i := 0; i < n; i += length {
			for k := range half {
				u, v := x[i+k], x[i+k+half]*tw[k]
				x[i+k], x[i+k+half] = u+v, u-v
			}
		}
	}
}

// delta returns δ(ε') = inf + Σ p_i (1 − e^{ε'−ℓ_i})₊ (for tests and
// reports).
func (d *pld) delta(eps float64) float64 {
	s := d.inf
	for i, v := range d.p {
		if l := float64(d.lo+i) * d.h; l > eps {
			s += v * -math.Expm1(eps-l)
		}
	}
	return s
}

// epsilon returns the smallest ε' ≥ 0 with δ(ε') ≤ delta (+Inf when the
// mass at +∞ alone exceeds delta). It scans the grid from the top with
// S_j = Σ_{i>j} p_i (1 − e^{−(i−j)h}) = δ(ℓ_j) − inf, computed by the
// recurrence S_j = (1 − e^{−h})·A_j + e^{−h}·S_{j+1} (A_j the mass above
// ℓ_j: all terms ≥ 0, no cancellation), and solves exactly inside the
// segment where δ crosses delta: δ(ℓ_{j+1} − x) = inf + A_j − e^{−x}W with
// W = A_j − S_{j+1}.
func (d *pld) epsilon(delta float64) float64 {
	if d.inf > delta {
		return math.Inf(1)
	}
	target := delta - d.inf
	h := d.h
	c, e := -math.Expm1(-h), math.Exp(-h)
	n := len(d.p)
	aj, sNext := 0.0, 0.0 // A_j and S_{j+1}, starting at j = n−1 (A = 0, S_n = 0)
	for j := n - 2; ; j-- {
		aj += d.p[j+1]
		sj := c*aj + e*sNext
		// The crossing lies in (ℓ_j, ℓ_{j+1}]; below ℓ_0 (j = −1) there is
		// no mass, so the same formula holds on (−∞, ℓ_0].
		if sj > target || j == -1 {
			w := aj - sNext
			if w <= 0 || sNext-target <= -w {
				return 0 // δ' is at least all the finite mass: any ε' will do
			}
			x := -math.Log1p((sNext - target) / w)
			return math.Max(float64(d.lo+j+1)*h-x, 0)
		}
		sNext = sj
	}
}

// pldGroup is a run of identical releases in a history.
type pldGroup struct {
	laplace bool // Privacy DPLaplace (llp_lap); else DPRR (rr, rr_prior, llp_geom)
	eps     float64
	count   int
}

// composePLD returns ε(δ') of the composition of groups and the bound on
// its overstatement (rounds·h). The grid step is pldStep, made finer for
// small ε (at most ε_min/64) and coarser when the composed support would
// exceed pldMaxBuckets.
func composePLD(groups []pldGroup, deltaPrime float64) (eps, errBound float64) {
	if len(groups) == 0 {
		return 0, 0
	}
	minEps, width := math.Inf(1), 0.0
	for _, g := range groups {
		minEps = math.Min(minEps, g.eps)
		if g.laplace {
			width += 2 * g.eps * float64(g.count)
		} else {
			width += 2 * g.eps * math.Min(float64(g.count), 16*math.Sqrt(float64(g.count))+2)
		}
	}
	h := math.Min(pldStep, minEps/64)
	h = math.Max(h, 4*width/pldMaxBuckets)
	for {
		if d := composeOn(groups, h); d != nil {
			return d.epsilon(deltaPrime), float64(d.rounds) * h
		}
		h *= 2
	}
}

func composeOn(groups []pldGroup, h float64) *pld {
	acc := identityPLD(h)
	for _, g := range groups {
		var d *pld
		if g.laplace {
			if one := laplacePLD(g.eps, h); one != nil {
				d = one.power(g.count)
			}
		} else {
			d = rrPLD(g.eps, g.count, h)
		}
		if d == nil {
			return nil
		}
		if acc = acc.compose(d); acc == nil {
			return nil
		}
	}
	return acc
}

// groupSteps sorts a history into PLD groups (deterministic order); bot
// adds nothing. ok is false when a release is not DP (none, llp, or an
// infinite ε).
func groupSteps(steps []Step) (groups []pldGroup, ok bool) {
	type key struct {
		laplace bool
		eps     float64
	}
	counts := map[key]int{}
	for _, s := range steps {
		pr := s.Kind.Spec().Privacy
		switch {
		case math.IsInf(s.Epsilon, 1) || !pr.DP():
			return nil, false
		case pr == Silent || s.Epsilon == 0:
			continue
		}
		counts[key{pr == DPLaplace, s.Epsilon}]++
	}
	for k, c := range counts {
		groups = append(groups, pldGroup{laplace: k.laplace, eps: k.eps, count: c})
	}
	slices.SortFunc(groups, func(a, b pldGroup) int {
		switch {
		case a.laplace != b.laplace:
			if a.laplace {
				return 1
			}
			return -1
		case a.eps < b.eps:
			return -1
		case a.eps > b.eps:
			return 1
		}
		return 0
	})
	return groups, true
}
