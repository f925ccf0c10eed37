package audit

import (
	"math"

	"labelprivacy/pets"
)

// canaryPair returns the two classes of a canary coin at position i:
// (1, 2), or for a kind with a prior the two smallest classes its channel
// releases (rr_prior's set's).
func (r *runnerC) canaryPair(i int) (a, b uint8) {
	if r.chanAt == nil {
		return 1, 2
	}
	ch, _ := r.chanOf(i)
	return ch.pair[0], ch.pair[1]
}

// canaryOK reports whether position i may hold a canary: not for a kind
// with a prior where the channel shows nothing (rr_prior's set of one
// class).
func (r *runnerC) canaryOK(i int) bool {
	if r.chanAt == nil {
		return true
	}
	ch, _ := r.chanOf(i)
	return ch.informative
}

// canaryRate is canary.go's rate for the LLP family, 1 otherwise.
func (r *runnerC) canaryRate() float64 {
	if r.bag && !r.single {
		return canaryRate(r.k, r.n, r.opts.Canaries)
	}
	return 1
}

func (r *runnerC) canaryPositions() int {
	c := 0
	for i := range r.n {
		if r.canaryOK(i) {
			c++
		}
	}
	return c
}

// scoreCanaries scores the canaries of one bag of the controlled game (its
// other labels 0, known; each canary a coin between classes 1 and 2): with
// j canaries, the release's law given canary i's coin s mixes over the
// number m ~ Bin(j−1, ½) of the other canaries in class 1, and only
// coordinates 1 and 2 depend on the coins:
//
//	P(t | S_i = s) ∝ Σ_m C(j−1, m)·f(t_1 | m + 1{s=1})·f(t_2 | j−1−m + 1{s=2}),
//
// f the law of one coordinate given its count (bagLogF). Every canary of
// the bag has the same score log P(t | S = 2)/P(t | S = 1), computed in
// log space.
func (w *rworkerC) scoreCanaries(out *releaseStats, members []int, alpha []float64) {
	j := 0
	for _, i := range members {
		if w.canary[i] {
			j++
		}
	}
	if j == 0 || len(out.trials) >= out.limit {
		return
	}
	n := len(members)
	fn := float64(n)
	t1, t2 := alpha[0]*fn, alpha[1]*fn
	w.logs = w.logs[:0]
	var l1, l2 float64 // log P(t | S = 1), log P(t | S = 2)
	for pass, s := range [2]int{1, 2} {
		w.logs = w.logs[:0]
		for m := 0; m < j; m++ {
			lb := lchoose(j-1, m)
			a1, a2 := m, j-1-m
			if s == 1 {
				a1++
			} else {
				a2++
			}
			w.logs = append(w.logs, lb+w.bagLogF(t1, a1, n)+w.bagLogF(t2, a2, n))
		}
		v := logSumExp(w.logs)
		if pass == 0 {
			l1 = v
		} else {
			l2 = v
		}
	}
	var sc float64
	switch {
	case math.IsInf(l1, -1) && math.IsInf(l2, -1):
		sc = 0
	default:
		sc = l2 - l1
	}
	for _, i := range members {
		if !w.canary[i] || len(out.trials) >= out.limit {
			continue
		}
		t := canaryTrial{s: sc}
		if w.labels[i] == 2 {
			t.y = 1
		}
		out.trials = append(out.trials, t)
	}
}

// bagLogF is log f(t | v): the log law of one released coordinate t (in
// count units) of a bag of n given its count v: llp 0 or −Inf (t = v);
// llp_geom the clipped two-sided geometric pmf; llp_lap the Laplace
// density (λ/2)·e^{−λ|t−v|}.
func (w *rworkerC) bagLogF(t float64, v, n int) float64 {
	r := w.r
	lam := r.law.NoiseRate()
	switch r.noise {
	case pets.SumExact:
		if math.Round(t) == float64(v) {
			return 0
		}
		return math.Inf(-1)
	case pets.SumGeometric:
		ti := int(math.Round(t))
		la := -lam // log a
		switch ti {
		case 0:
			return la*float64(v) - math.Log1p(math.Exp(la))
		case n:
			return la*float64(n-v) - math.Log1p(math.Exp(la))
		}
		return math.Log(-math.Expm1(la)) - math.Log1p(math.Exp(la)) + la*math.Abs(float64(ti-v))
	}
	return math.Log(lam/2) - lam*math.Abs(t-float64(v))
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// logSumExp is log Σ e^{x_i} (−Inf for an empty or all −Inf list).
func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
