package audit

import (
	"fmt"
	"math"

	"labelprivacy/pets"
)

// The audit of the LLP family: a bag's release is its label sum plus noise
// of the law its pets.BagLaw declares (exact, clipped two-sided geometric,
// Laplace), and every figure of its members follows from the exact law of
// the sum (bag.go).

// doBag audits bag u and returns the mean IEAdv of its members.
func (w *worker) doBag(u int) float64 {
	r := w.r
	R := r.opts.LabelDraws
	idx := r.bags.Members(u)
	k, b := len(idx), w.bag
	if k != r.k {
		b = w.sized(k)
	}
	for i, j := range idx {
		b.eta[i] = r.eta[j]
	}
	pbPMF(b.p, b.eta)
	// Label draws and releases, in a fixed order on the unit's stream.
	for d := range R {
		lab := w.labels[d*k : (d+1)*k]
		sum := 0
		for i, e := range b.eta {
			y := uint8(0)
			if w.rng.Float64() < e {
				y = 1
			}
			lab[i] = y
			sum += int(y)
		}
		alpha := r.m.ReleaseBag(sum, k, w.rng)
		w.relOut[d] = alpha
		t := alpha * float64(k)
		if r.noise.Discrete() {
			t = math.Round(t)
		}
		w.rel[d] = t
	}
	sum := 0.0
	for i, e := range b.eta {
		key := w.rng.Uint64()
		ie := b.member(r.noise, e)
		sum += ie
		w.bound(int(idx[i]), e, ie)
		var first, post float64
		for dd := range R {
			l1, l0 := b.likelihoods(r.noise, w.rel[dd])
			ma := math.Abs(logLR(l1, l0))
			if ma > r.maxMA {
				w.violation(int(idx[i]), ma)
			}
			w.hist.add(ma)
			if dd == 0 {
				first, post = ma, posterior(e, l1, l0)
			}
		}
		if w.keep.wants(key, int(idx[i])) {
			w.keep.push(key, Sample{Index: int(idx[i]), Bag: r.sampleBag(u), Prior: e, Label: w.labels[i], Release: w.relOut[0],
				Posterior: post, IEAdv: ie, AbsMA: first})
		}
	}
	if r.bagTot != nil {
		r.bagTot[u] = sum
	}
	return sum / float64(k)
}

// sampleBag is the Sample.Bag of bag u: −1 for a release of counts, whose
// bags of one are no bags.
func (r *runner) sampleBag(u int) int {
	if r.single {
		return -1
	}
	return u
}

// bagAt returns the id of the bag whose rows start at row start of a
// release, and where its rows end: the run of equal ids in bag, or the row
// alone when bag is nil (a release of counts: every row a bag of one).
func bagAt(bag []int64, start int) (id int64, end int) {
	if bag == nil {
		return int64(start), start + 1
	}
	id, end = bag[start], start+1
	for end < len(bag) && bag[end] == id {
		end++
	}
	return id, end
}

// scanBags scans an LLP-family release: one unit per bag, the Bayes
// posterior of each member computed on the bag the release made.
func (w *rworker) scanBags(rel *Released, eta []float64, canary bool, out *releaseStats) {
	r := w.r
	done := map[int64]bool{}
	attackP := min(1, float64(maxAttacked)/float64(max(1, len(rel.Row))))
	for start := 0; start < len(rel.Row); {
		id, end := bagAt(rel.Bag, start)
		if done[id] {
			out.bad = r.mismatch("release", fmt.Sprintf("the rows of bag %d are not consecutive", id))
			return
		}
		done[id] = true
		alpha := rel.Alpha[start]
		for j := start; j < end; j++ {
			if rel.Alpha[j] != alpha && !(math.IsNaN(alpha) && math.IsNaN(rel.Alpha[j])) {
				out.bad = r.mismatch("release", fmt.Sprintf("bag %d shows two proportions, %v and %v", id, alpha, rel.Alpha[j]))
				return
			}
		}
		members := rel.Row[start:end]
		start = end
		n := len(members)
		b := w.work(n)
		sum := 0
		for j, i := range members {
			b.eta[j] = eta[i]
			sum += int(w.labels[i])
		}
		t, ok := w.bagPIT(out, alpha, sum, n)
		if !ok {
			out.bad = r.mismatch("release", fmt.Sprintf("bag %d of %d rows whose labels sum to %d released α = %v, "+
				"impossible under the stated law", id, n, sum, alpha))
			return
		}
		if canary {
			// Every canary of the bag, scored against the others as
			// coins and the rest at their η (0 in the controlled game).
			w.canaryAt = w.canaryAt[:0]
			for j, i := range members {
				if w.canary[i] {
					w.canaryAt = append(w.canaryAt, j)
				}
			}
			if len(w.canaryAt) == 0 || len(out.trials) >= out.limit {
				continue
			}
			pbPMF(b.p, b.eta)
			for _, j := range w.canaryAt {
				b.leaveOut(r.noise, b.eta[j])
				l1, l0 := b.likelihoods(r.noise, t)
				out.trials = append(out.trials, canaryTrial{y: w.labels[members[j]], s: logLR(l1, l0)})
			}
			continue
		}
		if attackP < 1 && w.rng.Float64() >= attackP {
			continue
		}
		pbPMF(b.p, b.eta)
		u := 0.0
		for j, i := range members {
			e := b.eta[j]
			ie := b.member(r.noise, e)
			l1, l0 := b.likelihoods(r.noise, t)
			u += attack(out, e, w.labels[i], l1, l0, ie)
		}
		out.uSum += u
		out.uSq += u * u
		out.units++
	}
}

// bagPIT checks a bag's release α against its true sum under the stated
// law, adds its PIT value, and returns the release in units of the sum as
// likelihoods wants it (false: likelihood 0).
func (w *rworker) bagPIT(out *releaseStats, alpha float64, sum, n int) (float64, bool) {
	fn := float64(n)
	t := alpha * fn
	if math.IsNaN(t) || math.IsInf(t, 0) {
		return 0, false
	}
	switch w.r.noise {
	case pets.SumExact:
		ts := math.Round(t)
		if math.Abs(t-ts) > 1e-9*fn || int(ts) != sum {
			return 0, false
		}
		w.addPIT(out, 0, 1) // a point mass: v uniform
		return ts, true
	case pets.SumGeometric:
		ts := math.Round(t)
		if math.Abs(t-ts) > 1e-9*fn || ts < 0 || ts > fn {
			return 0, false
		}
		eps := w.r.bag.NoiseRate()
		// F(x) = P(sum + Z ≤ x) for the two-sided geometric Z with
		// a = e^{−ε}: a^{−z}/(1+a) for z = x − sum < 0, 1 − a^{z+1}/(1+a)
		// otherwise; clipping merges the tails into 0 and n.
		cdf := func(x int) float64 {
			z := x - sum
			if z < 0 {
				return math.Exp(eps*float64(z)) / (1 + math.Exp(-eps))
			}
			return 1 - math.Exp(-eps*float64(z+1))/(1+math.Exp(-eps))
		}
		rr := int(ts)
		lo, hi := 0.0, 1.0
		if rr > 0 {
			lo = cdf(rr - 1)
		}
		if rr < n {
			hi = cdf(rr)
		}
		w.addPIT(out, lo, hi)
		return ts, true
	default: // pets.SumLaplace: t = sum + Laplace(1/ε) in units of the sum
		eps := w.r.bag.NoiseRate()
		d := t - float64(sum)
		v := 0.5 * math.Exp(eps*d)
		if d >= 0 {
			v = 1 - 0.5*math.Exp(-eps*d)
		}
		w.addPIT(out, v, v)
		return t, true
	}
}
