package audit

import (
	"fmt"

	"labelprivacy/pets"
)

// likelihoods writes P(z | y_i = y) for y = 0..C−1 into dst for a per-example
// kind's release z of example i: bot's release shows nothing (every
// likelihood 1).
func (r *runnerC) likelihoods(dst []float64, i int, z uint8) {
	if r.sp.Release == pets.ReleaseNothing {
		for y := range dst {
			dst[y] = 1
		}
		return
	}
	var s pets.PriorSet
	if r.sets != nil {
		s = r.sets[i]
	}
	ExampleLikelihoodsC(dst, r.m, s, z)
}

// ieadv is the exact IEAdv of example i of a per-example kind.
func (r *runnerC) ieadv(i int, e []float64) float64 {
	switch {
	case r.sp.Release == pets.ReleaseNothing:
		return 0
	case r.sets != nil:
		return IEAdvRRPriorC(e, r.m, r.sets[i])
	}
	return IEAdvRRC(e, r.m)
}

// release draws example i's release of label y (bot: 0, nothing).
func (w *workerC) release(i int, y uint8) uint8 {
	r := w.r
	w.one[0] = y
	switch {
	case r.sp.Release == pets.ReleaseNothing:
		return 0
	case r.sets != nil:
		c := r.c
		r.m.ReleaseRRPrior(w.out, w.one, r.opts.Prior[i*c:(i+1)*c], w.set[:], w.rng)
	default:
		r.m.ReleaseRR(w.out, w.one, w.rng)
	}
	return w.out[0]
}

// doBlock audits examples [u·blockSize, (u+1)·blockSize) of a per-example
// kind (rr, rr_prior, none, bot).
func (w *workerC) doBlock(u int, st *unitStat) {
	r := w.r
	c := r.c
	lo, hi := u*blockSize, min((u+1)*blockSize, r.n)
	for i := lo; i < hi; i++ {
		e := r.eta[i*c : (i+1)*c]
		for d := range w.labels {
			y := uint8(drawClass(e, w.rng))
			w.labels[d] = y
			w.zs[d] = w.release(i, y)
		}
		key := w.rng.Uint64()
		ie := r.ieadv(i, e)
		var firstMA float64
		for d, z := range w.zs {
			r.likelihoods(w.lik, i, z)
			ma := MultAdvC(nil, w.lik)
			if ma > r.maxMA {
				w.violation(i, ma)
			}
			w.hist.add(ma)
			if d == 0 {
				firstMA = ma
				PosteriorC(w.post, e, w.lik)
			}
		}
		st.add(ie)
		w.bound(i, e, ie, true)
		if w.keep.wants(key, i) {
			y, z := w.labels[0], w.zs[0]
			w.keep.push(key, Sample{Index: i, Bag: -1, Prior: e[y], Label: y, Release: float64(z),
				Posterior: w.post[y], IEAdv: ie, AbsMA: firstMA})
		}
	}
}

// doBag audits bag u of the LLP family and returns its members' mean IEAdv
// (exact, or estimated from the draws).
func (w *workerC) doBag(u int) float64 {
	r := w.r
	c := r.c
	idx := r.bags.Members(u)
	n := len(idx)
	a := w.auditor(n)
	eta := w.bagEta[:n*c]
	for j, i := range idx {
		copy(eta[j*c:(j+1)*c], r.eta[int(i)*c:(int(i)+1)*c])
	}
	if err := a.Prepare(eta); err != nil {
		panic("audit: a checked η refused: " + err.Error())
	}
	exact := a.exactFor(r.exactWork)
	D := r.drawsFor(exact)
	R := r.opts.LabelDraws
	dst, maxP := w.dst[:n*c], w.maxP[:n]
	clear(maxP)
	labels := w.labels[:n]                      // the first draw's labels (samples)
	rel0, relD := w.rel[:c-1], w.rel[c-1:2*c-2] // the first draw's release (samples), the others'
	for d := range D {
		// Labels, release and every member's likelihoods, in a fixed order
		// on the unit's stream.
		clear(w.counts)
		for j := range n {
			y := drawClass(eta[j*c:(j+1)*c], w.rng)
			w.counts[y]++
			if d == 0 {
				labels[j] = uint8(y)
			}
		}
		rel := relD
		if d == 0 {
			rel = rel0
		}
		r.m.ReleaseBag(rel, w.counts, w.rng)
		if err := a.Likelihoods(dst, eta, rel); err != nil {
			panic("audit: pets' own bag release refused: " + err.Error())
		}
		for j := range n {
			lik := dst[j*c : (j+1)*c]
			if d < R {
				ma := MultAdvC(nil, lik)
				if ma > r.maxMA {
					w.violation(int(idx[j]), ma)
				}
				w.hist.add(ma)
				if d == 0 {
					w.firstM[j] = ma
					PosteriorC(w.post, eta[j*c:(j+1)*c], lik)
					w.first[j] = w.post[labels[j]]
				}
			}
			if !exact {
				maxP[j] += maxPosterior(eta[j*c:(j+1)*c], lik)
			}
		}
	}
	ie := w.ie[:n]
	if exact {
		res, err := a.Audit(eta, BagOptionsC{ExactWork: r.exactWork}, nil)
		if err != nil || !res.Exact {
			panic(fmt.Sprintf("audit: exact bag audit: %v", err))
		}
		copy(ie, res.IEAdv)
	} else {
		w.nEst++
		w.est.rangeSq += float64(n*n) / float64(D)
		for j := range n {
			_, m1 := argmax(eta[j*c : (j+1)*c])
			ie[j] = maxP[j]/float64(D) - m1
		}
	}
	sum := 0.0
	for j, i := range idx {
		key := w.rng.Uint64()
		e := eta[j*c : (j+1)*c]
		sum += ie[j]
		w.bound(int(i), e, ie[j], exact)
		if w.keep.wants(key, int(i)) {
			y := labels[j]
			w.keep.push(key, Sample{Index: int(i), Bag: u, Prior: e[y], Label: y, Release: classProportion(rel0, y),
				Posterior: w.first[j], IEAdv: ie[j], AbsMA: w.firstM[j]})
		}
	}
	if r.given {
		r.bagTot[u] = sum
	}
	return sum / float64(n)
}

// maxPosterior returns max_y P(y | z) from the class probabilities and the
// likelihoods of z (max_y η_y when every η_y·lik_y is 0).
func maxPosterior(eta, lik []float64) float64 {
	s, best := 0.0, 0.0
	for y, e := range eta {
		v := e * lik[y]
		s += v
		best = max(best, v)
	}
	if s == 0 {
		_, m1 := argmax(eta)
		return m1
	}
	return best / s
}

// classProportion is the released proportion of class y: alpha[y−1] for
// y ≥ 1, 1 − Σ alpha for class 0 (whose count is implied).
func classProportion(alpha []float64, y uint8) float64 {
	if y > 0 {
		return alpha[y-1]
	}
	s := 1.0
	for _, a := range alpha {
		s -= a
	}
	return s
}
