package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/pets"
)

// bruteWindow is max_g P(|y − g| ≤ τ) over real g for weights w on the
// grid values v, by trying every g at a point ± τ (an optimal window can
// be slid until a point sits on its edge): the definition, not windowLen.
func bruteWindow(w, v []float64, tau float64) float64 {
	best := 0.0
	for _, c := range v {
		for _, g := range []float64{c - tau, c + tau, c} {
			var s float64
			for i, x := range w {
				if math.Abs(v[i]-g) <= tau*(1+1e-12)+1e-12 {
					s += x
				}
			}
			best = max(best, s)
		}
	}
	return best
}

// bruteSteps is the brute-force quadrature nodes per grid step.
var bruteSteps = 400.0

// bruteVar is Σ w (v − m)², m the weighted mean.
func bruteVar(w, v []float64) float64 {
	var mass, mean float64
	for i, x := range w {
		mass += x
		mean += x * v[i]
	}
	if mass == 0 {
		return 0
	}
	mean /= mass
	var s float64
	for i, x := range w {
		s += x * (v[i] - mean) * (v[i] - mean)
	}
	return s
}

// bruteValueBag enumerates every vector of the members' grid points with its
// prior weight, and returns each member's figures: for an exact bag
// (lambda 0) summed over the totals, for a noisy one integrated over the
// release T by Simpson's rule on nodes s/(2·200) apart over
// [−40b, sJ + 40b] (the atoms on nodes; tails beyond hold e^{−40}).
func bruteValueBag(ps [][]float64, g pets.Grid, tau, lambda float64) []valueStat {
	v := g.Values()
	n, k := len(v), len(ps)
	type vec struct {
		y []int
		w float64
		t int
	}
	var vecs []vec
	y := make([]int, k)
	var rec func(j int, w float64, t int)
	rec = func(j int, w float64, t int) {
		if j == k {
			vecs = append(vecs, vec{append([]int(nil), y...), w, t})
			return
		}
		for i := range n {
			y[j] = i
			rec(j+1, w*ps[j][i], t+i)
		}
	}
	rec(0, 1, 0)
	jMax := k * (n - 1)
	out := make([]valueStat, k)
	post := func(weight func(vec) float64) [][]float64 {
		w := make([][]float64, k)
		for m := range w {
			w[m] = make([]float64, n)
		}
		for _, x := range vecs {
			if c := weight(x); c > 0 {
				for m := range k {
					w[m][x.y[m]] += c
				}
			}
		}
		return w
	}
	if lambda == 0 {
		for t := 0; t <= jMax; t++ {
			w := post(func(x vec) float64 {
				if x.t == t {
					return x.w
				}
				return 0
			})
			for m := range k {
				out[m].post += bruteVar(w[m], v)
				out[m].succ += bruteWindow(w[m], v, tau)
			}
		}
		return out
	}
	s := g.Step
	b := 1 / lambda
	h := s / bruteSteps
	lo, hi := -40*b, s*float64(jMax)+40*b
	steps := int(math.Ceil((hi-lo)/h/2)) * 2
	h = (hi - lo) / float64(steps)
	for i := 0; i <= steps; i++ {
		T := lo + float64(i)*h
		c := 2.0
		switch {
		case i == 0 || i == steps:
			c = 1
		case i%2 == 1:
			c = 4
		}
		w := post(func(x vec) float64 { return x.w * lambda / 2 * math.Exp(-lambda*math.Abs(T-s*float64(x.t))) })
		for m := range k {
			out[m].post += c * h / 3 * bruteVar(w[m], v)
			out[m].succ += c * h / 3 * bruteWindow(w[m], v, tau)
		}
	}
	return out
}

// randomLaw is a random law over n points (some points empty).
func randomLaw(n int, r *rand.Rand) []float64 {
	p := make([]float64, n)
	var s float64
	for i := range p {
		if r.Float64() < 0.2 {
			continue
		}
		p[i] = r.ExpFloat64()
		s += p[i]
	}
	if s == 0 {
		p[0], s = 1, 1
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// The exact engines equal the brute-force enumeration of the labels: an
// example through Laplace noise and RR on bins, bags of three through
// their exact total and through Laplace noise on it, on small grids at
// several ε and τ (windows of one point to the whole grid). Exact sums
// agree within 1e-12; the integrals within 1e-6 of the figure (Simpson's
// rule on the brute side: its error at the kinks of the max over windows
// is ~1e-7 at these steps).
func TestValueEnginesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	g := pets.Grid{Max: 4, Step: 0.5}
	v := g.Values()
	for trial := range 3 {
		p := randomLaw(g.Points(), r)
		if trial == 0 {
			p = pets.ZeroInflatedLogNormal(g, 0.6, 0.2, 0.8)
		}
		for _, tau := range []float64{0, 0.5, 1.2, 5} {
			l := windowLen(g, tau)
			for _, eps := range []float64{0.5, 2, 8} {
				lambda := eps / g.Max
				got := noisyMemberStat(p, []float64{1}, v, lambda, g.Step, l)
				want := bruteValueBag([][]float64{p}, g, tau, lambda)[0]
				closeTo(t, "laplace post", got.post, want.post, 1e-6)
				closeTo(t, "laplace succ", got.succ, want.succ, 1e-6)
				b := pets.OptimalBins(p, g, eps)
				gb := binsStat(p, v, b, l)
				var wb valueStat
				for j := range b.Len() {
					w := make([]float64, len(p))
					for i := range p {
						w[i] = p[i] * b.Prob(j, i)
					}
					wb.post += bruteVar(w, v)
					wb.succ += bruteWindow(w, v, tau)
				}
				closeTo(t, "bins post", gb.post, wb.post, 1e-12)
				closeTo(t, "bins succ", gb.succ, wb.succ, 1e-12)
			}
		}
	}
	g = pets.Grid{Max: 2, Step: 0.5}
	v = g.Values()
	for trial := range 2 {
		ps := [][]float64{randomLaw(g.Points(), r), randomLaw(g.Points(), r), pets.ZeroInflatedLogNormal(g, 0.8, 0, 1)}
		qs := bagLaws(ps)
		for _, tau := range []float64{0, 0.5, 1} {
			l := windowLen(g, tau)
			want := bruteValueBag(ps, g, tau, 0)
			for m := range ps {
				got := exactMemberStat(ps[m], qs[m], v, l)
				closeTo(t, "exact bag post", got.post, want[m].post, 1e-12)
				closeTo(t, "exact bag succ", got.succ, want[m].succ, 1e-12)
			}
			for _, eps := range []float64{1, 4} {
				lambda := eps / g.Max
				want := bruteValueBag(ps, g, tau, lambda)
				for m := range ps {
					got := noisyMemberStat(ps[m], qs[m], v, lambda, g.Step, l)
					closeTo(t, "noisy bag post", got.post, want[m].post, 1e-6)
					closeTo(t, "noisy bag succ", got.succ, want[m].succ, 1e-6)
				}
			}
		}
		_ = trial
	}
}

func closeTo(t *testing.T, what string, got, want, rel float64) {
	t.Helper()
	if math.Abs(got-want) > rel*math.Max(math.Abs(want), 1e-3) {
		t.Errorf("%s: %v, brute force %v (Δ %v)", what, got, want, got-want)
	}
}
