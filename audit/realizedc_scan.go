package audit

import (
	"fmt"
	"math"

	"labelprivacy/pets"
)

// shows reports whether a release shows a class per row: a per-example
// kind with a channel of more than one release.
func (r *runnerC) shows() bool {
	if r.bag {
		return false
	}
	for _, ch := range r.chans {
		if ch.ch.Z > 1 {
			return true
		}
	}
	return false
}

// addPIT adds a randomized PIT value v = lo + V·(hi − lo).
func (w *rworkerC) addPIT(out *releaseStats, lo, hi float64) {
	v := lo + w.rng.Float64()*(hi-lo)
	d := v - 0.5
	out.pitSum += d
	out.pitSq += d*d - 1.0/12
	out.pitN++
}

// pitOfClass returns the PIT interval of released class z under the law
// col[z'] = P(z' | y): the classes ordered by decreasing probability, ties
// by class; the last class of positive probability ends at 1 (rounding).
// Empty (hi ≤ lo) when col[z] = 0.
func pitOfClass(col []float64, z uint8) (lo, hi float64) {
	pz := col[z]
	if pz == 0 {
		return 0, 0
	}
	last := true
	for x, p := range col {
		before := p > pz || (p == pz && x < int(z))
		if before {
			lo += p
		} else if x != int(z) && p > 0 {
			last = false
		}
	}
	if last {
		return lo, 1
	}
	return lo, lo + pz
}

// scanRows scans a release of a per-example kind: one unit per row.
func (w *rworkerC) scanRows(rel *ReleasedC, canary bool, out *releaseStats) {
	r := w.r
	c := r.c
	shows := r.shows()
	for j, i := range rel.Row {
		y := w.labels[i]
		var z uint8
		if shows {
			z = rel.Label[j]
			ch, _ := r.chanOf(i)
			nz := ch.ch.Z // C, or C + 1 with the release that shows no class (pets.FormRRErased)
			if int(z) >= nz {
				out.bad = r.mismatch("release", fmt.Sprintf("example %d: released label %d is not in 0..%d", i, z, nz-1))
				return
			}
			col := w.col[:nz]
			for x := range nz {
				col[x] = ch.ch.Prob(uint8(x), y)
			}
			lo, hi := pitOfClass(col, z)
			if hi <= lo {
				out.bad = r.mismatch("release", fmt.Sprintf("example %d (label %d) released %d, which its law never releases for that label", i, y, z))
				return
			}
			w.addPIT(out, lo, hi)
		}
		r.likelihoods(w.lik, i, z)
		if canary {
			if w.canary[i] && len(out.trials) < out.limit {
				a, b := r.canaryPair(i)
				t := canaryTrial{s: logLR(w.lik[b], w.lik[a])}
				if y == b {
					t.y = 1
				}
				out.trials = append(out.trials, t)
			}
			continue
		}
		e := r.eta[i*c : (i+1)*c]
		ie := r.ieadv(i, e)
		u := attackC(out, e, w.lik, y, ie)
		out.uSum += u
		out.uSq += u * u
		out.units++
	}
}

// attackC adds one attacked example of class probabilities e, label y and
// likelihoods lik of what the release shows, with prediction p (its IEAdv
// or an unbiased estimate), and returns correct_bayes − correct_prior − p.
func attackC(out *releaseStats, e, lik []float64, y uint8, p float64) float64 {
	g, gv := 0, -1.0
	for x, v := range e {
		if j := v * lik[x]; j > gv {
			g, gv = x, j
		}
	}
	pr, _ := argmax(e)
	d := 0
	if g == int(y) {
		d++
	}
	if pr == int(y) {
		d--
	}
	out.gain += d
	out.n++
	q := min(1, max(0, p))
	out.ieVar += q * (1 - q)
	return float64(d) - p
}

// scanBags scans a release of the LLP family: one unit per bag.
func (w *rworkerC) scanBags(rel *ReleasedC, canary bool, out *releaseStats) {
	r := w.r
	c := r.c
	c1 := c - 1
	done := map[int64]bool{}
	nb := max(1, float64(len(rel.Row))/float64(r.k))
	attackP := min(1, maxAttackWork/(nb*2*BagWorkC(c, r.k)))
	for start := 0; start < len(rel.Row); {
		id, end := bagAt(rel.Bag, start)
		if done[id] {
			out.bad = r.mismatch("release", fmt.Sprintf("the rows of bag %d are not consecutive", id))
			return
		}
		done[id] = true
		alpha := rel.Alpha[start*c1 : (start+1)*c1]
		for j := start + 1; j < end; j++ {
			for x, a := range rel.Alpha[j*c1 : (j+1)*c1] {
				if a != alpha[x] && !(math.IsNaN(a) && math.IsNaN(alpha[x])) {
					out.bad = r.mismatch("release", fmt.Sprintf("bag %d shows two proportions of class %d, %v and %v", id, x+1, alpha[x], a))
					return
				}
			}
		}
		members := rel.Row[start:end]
		start = end
		n := len(members)
		if n > r.k {
			out.bad = r.mismatch("release", fmt.Sprintf("bag %d has %d rows, more than k = %d", id, n, r.k))
			return
		}
		clear(w.counts)
		for _, i := range members {
			w.counts[w.labels[i]]++
		}
		if !w.bagPIT(out, alpha, n) {
			out.bad = r.mismatch("release", fmt.Sprintf("bag %d of %d rows with class counts %v released proportions %v, "+
				"impossible under the stated law", id, n, w.counts, alpha))
			return
		}
		if canary {
			w.scoreCanaries(out, members, alpha)
			continue
		}
		if attackP < 1 && w.rng.Float64() >= attackP {
			continue
		}
		a := w.auditor(n)
		eta := w.bagEta[:n*c]
		for j, i := range members {
			copy(eta[j*c:(j+1)*c], r.eta[i*c:(i+1)*c])
		}
		if err := a.Likelihoods(w.dst[:n*c], eta, alpha); err != nil {
			out.bad = r.mismatch("release", fmt.Sprintf("bag %d: %v", id, err))
			return
		}
		pred := w.predict(a, eta, n)
		u := 0.0
		for j, i := range members {
			u += attackC(out, eta[j*c:(j+1)*c], w.dst[j*c:(j+1)*c], w.labels[i], pred[j])
		}
		out.uSum += u
		out.uSq += u * u
		out.units++
	}
}

// predict returns each member's IEAdv on the bag (a prepared for eta):
// exact where that costs no more than the bag's posteriors (BagWorkC),
// else the one-draw unbiased estimate max_y P(y_i = y | z') − max_y η_iy on
// a release z' drawn from the bag's law with the worker's stream.
func (w *rworkerC) predict(a *BagAuditorC, eta []float64, n int) []float64 {
	r := w.r
	c := r.c
	ew := r.exactWork
	if ew == 0 {
		ew = DefaultExactWork
	}
	if ew > 0 {
		ew = min(ew, BagWorkC(c, n))
	}
	if a.exactFor(ew) {
		res, err := a.Audit(eta, BagOptionsC{ExactWork: ew}, nil)
		if err != nil {
			panic("audit: exact bag audit: " + err.Error())
		}
		return res.IEAdv
	}
	clear(w.counts)
	for j := range n {
		w.counts[drawClass(eta[j*c:(j+1)*c], w.rng)]++
	}
	r.law.ReleaseBag(w.rel2, w.counts, w.rng)
	dst := w.dst2[:n*c]
	if err := a.Likelihoods(dst, eta, w.rel2); err != nil {
		panic("audit: pets' own bag release refused: " + err.Error())
	}
	p := make([]float64, n)
	for j := range n {
		e := eta[j*c : (j+1)*c]
		_, m1 := argmax(e)
		p[j] = maxPosterior(e, dst[j*c:(j+1)*c]) - m1
	}
	return p
}

// bagPIT checks each released coordinate of a bag of n rows with class
// counts w.counts against its stated law and adds its PIT value (false: a
// release of likelihood 0).
func (w *rworkerC) bagPIT(out *releaseStats, alpha []float64, n int) bool {
	r := w.r
	fn := float64(n)
	lam := r.law.NoiseRate()
	for x, al := range alpha {
		cnt := w.counts[x+1]
		t := al * fn
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return false
		}
		switch r.noise {
		case pets.SumExact:
			ts := math.Round(t)
			if math.Abs(t-ts) > 1e-9*fn || int(ts) != cnt {
				return false
			}
			w.addPIT(out, 0, 1)
		case pets.SumGeometric:
			ts := math.Round(t)
			if math.Abs(t-ts) > 1e-9*fn || ts < 0 || ts > fn {
				return false
			}
			lo, hi := geomPIT(int(ts), cnt, n, lam)
			w.addPIT(out, lo, hi)
		default: // pets.SumLaplace: t = count + Laplace(1/λ)
			d := t - float64(cnt)
			v := 0.5 * math.Exp(lam*d)
			if d >= 0 {
				v = 1 - 0.5*math.Exp(-lam*d)
			}
			w.addPIT(out, v, v)
		}
	}
	return true
}

// geomPIT is the PIT interval of a clipped two-sided geometric release t ∈
// {0..n} around count v at rate λ: F(x) = P(v + Z ≤ x) is a^{−z}/(1+a) for
// z = x − v < 0 and 1 − a^{z+1}/(1+a) otherwise (a = e^{−λ}); clipping merges
// the tails into 0 and n.
func geomPIT(t, v, n int, lam float64) (lo, hi float64) {
	cdf := func(x int) float64 {
		z := x - v
		if z < 0 {
			return math.Exp(lam*float64(z)) / (1 + math.Exp(-lam))
		}
		return 1 - math.Exp(-lam*float64(z+1))/(1+math.Exp(-lam))
	}
	lo, hi = 0, 1
	if t > 0 {
		lo = cdf(t - 1)
	}
	if t < n {
		hi = cdf(t)
	}
	return lo, hi
}
