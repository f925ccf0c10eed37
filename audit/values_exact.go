package audit

import (
	"math"
	"slices"

	"labelprivacy/pets"
)

// The exact audit of conversion values: per example, the Bayes attacker
// who knows the example's prior p over the grid (η: p(y | x)) and the
// mechanism sees the release z and computes the posterior p(y | z). Two
// figures of that posterior, each against the prior-only attacker:
//
//   - its variance: post = E_z[Var(y | z)] beside the prior's Var(y); the
//     R²-advantage is 1 − post/Var(y), the share of the prior variance the
//     release removes (the squared error of the best guess E[y | z]);
//   - its τ-success: succ = E_z[max_g P(|y − g| ≤ τ | z)] beside the blind
//     κ = max_g P(|y − g| ≤ τ); the τ-advantage is succ − κ. On the grid
//     the set {y : |y − g| ≤ τ} is a run of at most L = ⌊2τ/s⌋ + 1
//     consecutive points, and every run of L points is one (g at its
//     middle), so the max over g is the max over the windows of L
//     consecutive points (windowLen; L ≥ G: every point, success 1).
//
// Every release shape has its exact engine (no sampling):
//
//   - finite releases (rr_bins, none, bot, exact bags) are sums over the
//     releases;
//   - Laplace releases (laplace, noisy value_bags) in closed form: between
//     two consecutive atoms of the release's mean (grid points for an
//     example, bag totals for a bag member) every likelihood is
//     A·e^{−λδ} + C·e^{−λ(s−δ)}, δ the offset into the interval, so the
//     posterior is a mixture of a left and a right law that do not depend
//     on δ, with weights w(δ) and 1 − w(δ). Its variance is
//     w·σ_l² + (1−w)·σ_r² + w(1−w)(m_l − m_r)², and the integrals of the
//     three terms against the release density a + c are
//     σ_l²·A(1 − e^{−λs})/λ, σ_r²·C(1 − e^{−λs})/λ and
//     (m_l − m_r)²·(√(A·C')/λ)·(arctan(e^{λs}x) − arctan x), C' =
//     C·e^{−λs}, x = √(C'/A) (∫ac/(a+c) with ac = AC' constant), every term
//     ≥ 0: no cancellation. For the τ-success each window's numerator is
//     e^{−λδ}(α + β'u) with u = e^{2λδ}: the max over windows is the upper
//     envelope of lines in u, integrated exactly piece by piece (when one
//     window is the max at both ends of an interval it is the max on the
//     whole of it: lines cannot cross twice). Outside the atoms the
//     posterior is constant. The result is exact up to rounding (relative
//     ~1e-13; TestValueEnginesBruteForce checks it against quadrature of
//     the posterior enumerated from the labels).
//   - bags: member i's release depends on its value and on the total of
//     its bag-mates, whose law Q_i is the convolution of their laws
//     (bagLaws); an example is a bag of one (Q = δ_0). The totals are
//     truncated where the whole bag's law has less than bagTailMass above
//     them: a stated bound, each figure moves by at most bagTailMass
//     (success) or bagTailMass·B²/4 (variance).

// bagTailMass is the law of a bag's total dropped above its truncation.
const bagTailMass = 1e-10

// valueStat is one example's exact figures: post = E_z[Var(y | z)] and
// succ = E_z[max window posterior mass].
type valueStat struct{ post, succ float64 }

// windowLen is L, the points of a τ-window on the grid: ⌊2τ/s⌋ + 1, at
// most G (a window never exceeds the grid).
func windowLen(g pets.Grid, tau float64) int {
	l := int(math.Floor(2*tau/g.Step*(1+1e-12)+1e-9)) + 1
	return min(l, g.Points())
}

// priorStats returns the prior's mean, variance (centered: Σ p(y − μ)²)
// and blind τ-success κ.
func priorStats(p, v []float64, l int) (mean, variance, kappa float64) {
	var mass float64
	for i, w := range p {
		mass += w
		mean += w * v[i]
	}
	mean /= mass
	for i, w := range p {
		d := v[i] - mean
		variance += w * d * d
	}
	return mean, variance / mass, maxWindow(p, l) / mass
}

// maxWindow is the largest sum of l consecutive entries of w (w ≥ 0).
func maxWindow(w []float64, l int) float64 {
	var s float64
	for _, x := range w[:l] {
		s += x
	}
	best := s
	for a := 1; a+l <= len(w); a++ {
		s += w[a+l-1] - w[a-1]
		best = max(best, s)
	}
	return best
}

// maxWindowPrefix is maxWindow from prefix sums c (c[0] = 0, c[i+1] =
// c[i] + w[i]): exact sums without the sliding subtraction's drift.
func maxWindowPrefix(c []float64, l int) (best float64, at int) {
	best = math.Inf(-1)
	for a := 0; a+l < len(c); a++ {
		if s := c[a+l] - c[a]; s > best {
			best, at = s, a
		}
	}
	return best, at
}

// valueMoments accumulates a weighted law of values: mass, mean and centered
// second moment (Welford's update, no cancellation).
type valueMoments struct{ mass, mean, m2 float64 }

func (m *valueMoments) add(w, v float64) {
	if w <= 0 {
		return
	}
	m.mass += w
	d := v - m.mean
	m.mean += d * w / m.mass
	m.m2 += w * d * (v - m.mean)
}

// weighted returns the law of weights w over the values v: its mass,
// mean and centered second moment Σ w(v − mean)², in two passes (no
// division per value, no cancellation).
func weighted(w, v []float64) valueMoments {
	var m valueMoments
	var s1 float64
	for i, x := range w {
		m.mass += x
		s1 += x * v[i]
	}
	if m.mass <= 0 {
		return valueMoments{}
	}
	m.mean = s1 / m.mass
	for i, x := range w {
		d := v[i] - m.mean
		m.m2 += x * d * d
	}
	return m
}

// variance is the law's variance (0 for no mass).
func (m valueMoments) variance() float64 {
	if m.mass <= 0 {
		return 0
	}
	return max(m.m2/m.mass, 0)
}

// binsStat is the exact figures of an example of prior p through RR on
// the bins b (Keep for the own bin's value, Other each other's): for bin
// j the posterior weights are q_j = Other·p + (Keep − Other)·p|_j, a
// mixture of the prior (mass 1, mean μ, variance V) and of its part in
// bin j (mass P_j, mean b_j, variance U_j), so Σ_y q_j (y − m_j)² =
// Other·(V + (μ − m_j)²) + (Keep − Other)·P_j·(U_j + (b_j − m_j)²); the
// success sums over the bins the max over windows of Other·W_a + (Keep −
// Other)·W_a∩j.
func binsStat(p, v []float64, b *pets.Bins, l int) valueStat {
	mean, variance, _ := priorStats(p, v, l)
	k, o := b.Keep, b.Other
	c := prefix(p)
	var st valueStat
	for j := range b.Len() {
		lo, hi := b.Edges[j], b.Edges[j+1]
		var bin valueMoments
		for i := lo; i < hi; i++ {
			bin.add(p[i], v[i])
		}
		mass := o + (k-o)*bin.mass
		m := (o*mean + (k-o)*bin.mass*bin.mean) / mass
		st.post += o*(variance+(mean-m)*(mean-m)) + (k-o)*bin.mass*(bin.variance()+(bin.mean-m)*(bin.mean-m))
		best := math.Inf(-1)
		for a := 0; a+l <= len(p); a++ {
			in := c[min(a+l, hi)] - c[max(a, lo)]
			if a+l <= lo || a >= hi {
				in = 0
			}
			best = max(best, o*(c[a+l]-c[a])+(k-o)*in)
		}
		st.succ += best
	}
	return st
}

// prefix returns the prefix sums of w (len(w)+1 entries).
func prefix(w []float64) []float64 {
	c := make([]float64, len(w)+1)
	for i, x := range w {
		c[i+1] = c[i] + x
	}
	return c
}

// exactMemberStat is the exact figures of a bag member of prior p whose
// bag-mates total t with probability q[t] (grid steps; an example alone:
// q = [1]) when the bag's exact total is released: at each total j the
// joint weight of y = point i is p[i]·q[j − i].
func exactMemberStat(p, q, v []float64, l int) valueStat {
	n := len(p)
	w, c := make([]float64, n), make([]float64, n+1)
	var st valueStat
	for j := range n + len(q) - 1 {
		for i := range n {
			w[i] = 0
			if t := j - i; t >= 0 && t < len(q) {
				w[i] = p[i] * q[t]
			}
			c[i+1] = c[i] + w[i]
		}
		m := weighted(w, v)
		if m.mass == 0 {
			continue
		}
		st.post += m.m2
		best, _ := maxWindowPrefix(c, l)
		st.succ += best
	}
	return st
}

// noisyMemberStat is the exact figures of a bag member of prior p whose
// bag-mates total t (grid steps) with probability q[t] when the bag's
// total plus Laplace noise of rate lambda (1/b, per value unit) is
// released, on a grid of step s (an example alone: q = [1], laplace).
// The release's atoms (the member's value plus its bag-mates' total) lie
// on the steps 0..J, J = len(p) − 1 + len(q) − 1; on the interval
// [s·j, s·(j+1)] the likelihood of point i is (λ/2)(LQ(j − i)·e^{−λδ} +
// RQ(j + 1 − i)·e^{−λ(s−δ)}), with LQ(u) = Σ_{t ≤ u} q[t]e^{−λs(u−t)} and
// RQ(u) = Σ_{t ≥ u} q[t]e^{−λs(t−u)}; below the atoms it is
// (λ/2)e^{λT}·e^{−λs·i}·RQ(0) and above them (λ/2)e^{−λ(T−sJ)}·LQ(J − i):
// constant posteriors, each of release mass ½ of its weights. See the
// file's comment for the closed forms.
func noisyMemberStat(p, q, v []float64, lambda, s float64, l int) valueStat {
	n := len(p)
	jMax := n - 1 + len(q) - 1
	decay := math.Exp(-lambda * s)
	lq, rq := make([]float64, len(q)), make([]float64, len(q))
	for t := range q {
		lq[t] = q[t]
		if t > 0 {
			lq[t] += lq[t-1] * decay
		}
	}
	for t := len(q) - 1; t >= 0; t-- {
		rq[t] = q[t]
		if t+1 < len(q) {
			rq[t] += rq[t+1] * decay
		}
	}
	// LQ(u) for u = 0..jMax (past the last total it only decays) and RQ(u)
	// for u = −(n−1)..jMax at rqx[u+n−1] (below 0 it only decays, past the
	// last total it is 0).
	last := len(q) - 1
	lqx := make([]float64, jMax+1)
	for u := range lqx {
		if u <= last {
			lqx[u] = lq[u]
		} else {
			lqx[u] = lqx[u-1] * decay
		}
	}
	rqx := make([]float64, jMax+n)
	for u := -(n - 1); u <= jMax; u++ {
		switch {
		case u > last:
		case u >= 0:
			rqx[u+n-1] = rq[u]
		}
	}
	for u := -1; u >= -(n - 1); u-- {
		rqx[u+n-1] = rqx[u+n] * decay
	}
	left := func(u int) float64 { // LQ(u)
		if u < 0 {
			return 0
		}
		return lqx[u]
	}
	right := func(u int) float64 { return rqx[u+n-1] } // RQ(u)
	wl, wr := make([]float64, n), make([]float64, n)
	cl, cr := make([]float64, n+1), make([]float64, n+1)
	var st valueStat
	// Tails: the constant posteriors below and above the atoms.
	for _, below := range []bool{true, false} {
		for i := range n {
			if below {
				wl[i] = p[i] * right(-i)
			} else {
				wl[i] = p[i] * left(jMax-i)
			}
			cl[i+1] = cl[i] + wl[i]
		}
		m := weighted(wl, v)
		best, _ := maxWindowPrefix(cl, l)
		st.post += 0.5 * m.m2
		st.succ += 0.5 * best
	}
	e := -math.Expm1(-lambda * s) // 1 − e^{−λs}
	var env envelope
	for j := range jMax {
		for i := range n {
			wl[i], wr[i] = p[i]*left(j-i), p[i]*right(j+1-i)
			cl[i+1], cr[i+1] = cl[i]+wl[i], cr[i]+wr[i]
		}
		ml, mr := weighted(wl, v), weighted(wr, v)
		a, c := lambda/2*ml.mass, lambda/2*mr.mass // the interval's A and C
		st.post += (ml.variance()*a + mr.variance()*c) * e / lambda
		if a > 0 && c > 0 {
			cp := c * decay
			x1 := math.Sqrt(cp / a)
			x2 := x1 / decay // e^{λs}·x1
			d := ml.mean - mr.mean
			st.post += d * d * math.Sqrt(a*cp) / lambda * math.Atan((x2-x1)/(1+x1*x2))
		}
		st.succ += lambda / 2 * env.integral(cl, cr, l, lambda, s)
	}
	return st
}

// envelope integrates the max over windows of the numerators
// α_a·e^{−λδ} + β_a·e^{−λ(s−δ)} over an interval δ ∈ [0, s], from the
// prefix sums cl, cr of the left and right weights (α_a, β_a are the
// windows' sums of them); it keeps its workspace.
type envelope struct {
	lines []line
	hull  []line
}

type line struct{ a, b float64 } // α + β'·u, β' = β·e^{−λs}, u = e^{2λδ} ∈ [1, e^{2λs}]

func (e *envelope) integral(cl, cr []float64, l int, lambda, s float64) float64 {
	decay := math.Exp(-lambda * s)
	nw := len(cl) - l // windows
	win := func(c []float64, a int) float64 { return c[a+l] - c[a] }
	// The max at δ = 0 (u = 1) and at δ = s (u = e^{2λs}).
	best0, best1, a0, a1 := math.Inf(-1), math.Inf(-1), 0, 0
	for a := range nw {
		al, be := win(cl, a), win(cr, a)
		if v := al + be*decay; v > best0 {
			best0, a0 = v, a
		}
		if v := al*decay + be; v > best1 {
			best1, a1 = v, a
		}
	}
	if a0 == a1 {
		return lineIntegral(line{win(cl, a0), win(cr, a0) * decay}, 0, s, lambda)
	}
	e.lines = e.lines[:0]
	for a := range nw {
		e.lines = append(e.lines, line{win(cl, a), win(cr, a) * decay})
	}
	slices.SortFunc(e.lines, func(x, y line) int {
		switch {
		case x.b != y.b:
			if x.b < y.b {
				return -1
			}
			return 1
		case x.a > y.a:
			return -1
		case x.a < y.a:
			return 1
		}
		return 0
	})
	// Upper envelope (max) of lines sorted by slope: drop a line of an
	// equal slope, and the middle of three whose outer two cross above it.
	h := e.hull[:0]
	for i, ln := range e.lines {
		if i > 0 && ln.b == e.lines[i-1].b {
			continue
		}
		for len(h) >= 2 && crossU(h[len(h)-2], ln) <= crossU(h[len(h)-2], h[len(h)-1]) {
			h = h[:len(h)-1]
		}
		h = append(h, ln)
	}
	e.hull = h
	uMax := 1 / (decay * decay)
	var sum float64
	lo := 1.0
	for i, ln := range h {
		hi := uMax
		if i+1 < len(h) {
			hi = crossU(ln, h[i+1])
		}
		if hi <= lo {
			continue
		}
		hi = min(hi, uMax)
		sum += lineIntegral(ln, math.Log(lo)/(2*lambda), math.Log(hi)/(2*lambda), lambda)
		lo = hi
		if lo >= uMax {
			break
		}
	}
	return sum
}

// crossU is where line x (smaller slope) meets line y: u with
// x.a + x.b·u = y.a + y.b·u.
func crossU(x, y line) float64 { return (x.a - y.a) / (y.b - x.b) }

// lineIntegral is ∫_{d1}^{d2} e^{−λδ}(α + β'·e^{2λδ}) dδ
// = (α/λ)(e^{−λd1} − e^{−λd2}) + (β'/λ)(e^{λd2} − e^{λd1}).
func lineIntegral(ln line, d1, d2, lambda float64) float64 {
	w := d2 - d1
	if w <= 0 {
		return 0
	}
	return ln.a/lambda*math.Exp(-lambda*d1)*-math.Expm1(-lambda*w) + ln.b/lambda*math.Exp(lambda*d1)*math.Expm1(lambda*w)
}
