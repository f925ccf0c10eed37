package audit

import (
	"fmt"
	"math"

	"labelprivacy/pets"
)

// The audit of the mechanisms released one value per example (none, bot,
// rr, rr_prior): each example goes through one of its law's channels
// (pets.ExampleLaw; rr_prior's chosen by the example's public prior), and
// every figure of an example follows from its channel's P(z | y).

// chanAudit is what the audit precomputes of one channel.
type chanAudit struct {
	z      int
	l1, l0 []float64 // P(z | y=1), P(z | y=0)
	ma     []float64 // |MA| of release z: |log P(z|1)/P(z|0)| (Definition 3.6)
	flip   float64   // π of a randomized-response channel (Theorem 3.5), else 0
	kept   float64   // the probability that a release is not erased (pets.FormRRErased; 1 for the others)
	// informative: some release has P(z|1) ≠ P(z|0).
	informative bool
	// pitLo, pitHi[z·2+y] are the interval of the randomized probability
	// integral transform of release z given label y: the releases ordered
	// by decreasing P(· | y) (ties: by z), pitLo the mass before z.
	pitLo, pitHi []float64
}

// setChannels finds the channel of each of the n examples (the same for
// all without a prior; by its prior (1 − p, p) with one) and precomputes
// each distinct channel once, in order of first use.
func (r *runner) setChannels(n int) {
	if r.opts.Prior == nil {
		r.chans = []chanAudit{newChanAudit(r.ex.Channel(r.ex.ChannelOf(nil)))}
		return
	}
	r.priors, r.chanAt = make([]float64, 2*n), make([]int32, n)
	at := map[uint64]int32{}
	for i, p := range r.opts.Prior {
		v := r.priors[2*i : 2*i+2]
		v[0], v[1] = 1-p, p
		key := r.ex.ChannelOf(v)
		j, ok := at[key]
		if !ok {
			j = int32(len(r.chans))
			at[key] = j
			r.chans = append(r.chans, newChanAudit(r.ex.Channel(key)))
		}
		r.chanAt[i] = j
	}
}

// newChanAudit precomputes what the audit needs of a binary channel.
func newChanAudit(c pets.Channel) chanAudit {
	var a chanAudit
	a.z, a.flip, a.kept = c.Z, c.Flip, 1
	if c.Form == pets.FormRRErased {
		a.kept = 1 - c.P[c.C*c.C] // P(erased | y), the same for every y
	}
	a.l1, a.l0, a.ma = make([]float64, c.Z), make([]float64, c.Z), make([]float64, c.Z)
	for z := range c.Z {
		a.l1[z], a.l0[z] = c.Prob(uint8(z), 1), c.Prob(uint8(z), 0)
		a.ma[z] = math.Abs(logLR(a.l1[z], a.l0[z]))
		a.informative = a.informative || a.l1[z] != a.l0[z]
	}
	a.pitLo, a.pitHi = make([]float64, 2*c.Z), make([]float64, 2*c.Z)
	for y, l := range [2][]float64{a.l0, a.l1} {
		order := make([]int, c.Z)
		for z := range order {
			order[z] = z
		}
		// Insertion sort: Z is tiny.
		for j := 1; j < len(order); j++ {
			for k := j; k > 0 && l[order[k]] > l[order[k-1]]; k-- {
				order[k], order[k-1] = order[k-1], order[k]
			}
		}
		last := 0 // the last release of positive probability: its interval ends at 1, whatever the rounding
		for j, z := range order {
			if l[z] > 0 {
				last = j
			}
		}
		lo := 0.0
		for j, z := range order {
			hi := lo + l[z]
			switch {
			case l[z] == 0:
				hi = lo // never released given y: an empty interval
			case j == last:
				hi = 1
			}
			a.pitLo[z*2+y], a.pitHi[z*2+y] = lo, hi
			lo = hi
		}
	}
	return a
}

// ieadv is the exact IEAdv of an example of prior e through the channel
// (Lemma A.1 with the Bayes attacker): Theorem 3.5's closed form
// (min(η,1−η) − π)·1{η ∈ [π, 1−π]} for randomized response, times the
// probability of a release that is not erased for RR erased with a
// probability independent of the label (an erased release leaves the
// attacker at the prior: advantage 0), otherwise
// min(η,1−η) − Σ_z min(η·P(z|1), (1−η)·P(z|0)).
func (a *chanAudit) ieadv(e float64) float64 {
	if a.flip > 0 {
		return a.kept * thm35(e, a.flip)
	}
	f := 1 - e
	lost := 0.0
	for z := range a.z {
		lost += min(e*a.l1[z], f*a.l0[z])
	}
	return max(0, min(e, f)-lost)
}

// posterior is P(y = 1 | z) of an example of prior e: the prior itself
// when the release says nothing (P(z|1) = P(z|0)).
func (a *chanAudit) posterior(e float64, z uint8) float64 {
	if a.l1[z] == a.l0[z] {
		return e
	}
	return posterior(e, a.l1[z], a.l0[z])
}

// pit returns the interval [lo, hi) of the randomized probability integral
// transform of release z given label y (empty when P(z | y) = 0).
func (a *chanAudit) pit(z, y uint8) (lo, hi float64) {
	i := int(z)*2 + int(y)
	return a.pitLo[i], a.pitHi[i]
}

// chanOf returns example i's channel and, for a kind with a prior, its
// prior (1 − p, p) (the argument Release takes; nil otherwise).
func (r *runner) chanOf(i int) (*chanAudit, []float64) {
	if r.chanAt == nil {
		return &r.chans[0], nil
	}
	return &r.chans[r.chanAt[i]], r.priors[2*i : 2*i+2]
}

// doBlock audits examples [u·blockSize, (u+1)·blockSize) of a per-example
// kind, adding their IEAdv values to st.
func (w *worker) doBlock(u int, st *unitStat) {
	r := w.r
	R := r.opts.LabelDraws
	lo, hi := u*blockSize, min((u+1)*blockSize, len(r.eta))
	var one [1]uint8
	for i := lo; i < hi; i++ {
		e := r.eta[i]
		c, prior := r.chanOf(i)
		for d := range R {
			y := uint8(0)
			if w.rng.Float64() < e {
				y = 1
			}
			w.labels[d] = y
			one[0] = y
			r.ex.Release(one[:], one[:], prior, w.rng)
			w.zs[d] = one[0]
		}
		key := w.rng.Uint64()
		ie := c.ieadv(e)
		for _, z := range w.zs {
			ma := c.ma[z]
			if ma > r.maxMA {
				w.violation(i, ma)
			}
			w.hist.add(ma)
		}
		st.add(ie)
		w.bound(i, e, ie)
		if w.keep.wants(key, i) {
			z := w.zs[0]
			w.keep.push(key, Sample{Index: i, Bag: -1, Prior: e, Label: w.labels[0], Release: float64(z),
				Posterior: c.posterior(e, z), IEAdv: ie, AbsMA: c.ma[z]})
		}
	}
}

// scanRows scans a release of a per-example kind: one unit per row.
func (w *rworker) scanRows(rel *Released, eta []float64, canary bool, out *releaseStats) {
	r := w.r
	for j, i := range rel.Row {
		y := w.labels[i]
		c, _ := r.chanOf(i)
		var z uint8 // a release of one value (bot) shows nothing: z = 0
		if c.z > 1 {
			z = rel.Label[j]
			if int(z) >= c.z {
				values := fmt.Sprintf("in 0..%d", c.z-1)
				if c.z == 2 {
					values = "0/1"
				}
				out.bad = r.mismatch("release", fmt.Sprintf("example %d: released label %d is not %s", i, z, values))
				return
			}
			lo, hi := c.pit(z, y)
			if hi <= lo {
				out.bad = r.mismatch("release", fmt.Sprintf("example %d (label %d) released %d, which its channel never releases for that label", i, y, z))
				return
			}
			w.addPIT(out, lo, hi)
		}
		l1, l0 := c.l1[z], c.l0[z]
		if canary {
			if w.canary[i] && len(out.trials) < out.limit {
				out.trials = append(out.trials, canaryTrial{y: y, s: logLR(l1, l0)})
			}
			continue
		}
		e := eta[i]
		u := attack(out, e, y, l1, l0, c.ieadv(e))
		out.uSum += u
		out.uSq += u * u
		out.units++
	}
}
