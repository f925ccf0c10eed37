package audit

import (
	"fmt"
	"math/bits"

	"labelprivacy/pets"
)

// likelihoods writes P(z | y_i = y) for y = 0..C−1 into dst for a per-example
// kind's release z of example i, from its channel (bot's release shows
// nothing: every likelihood 1).
func (r *runnerC) likelihoods(dst []float64, i int, z uint8) {
	ch, _ := r.chanOf(i)
	ExampleLikelihoodsC(dst, &ch.ch, z)
}

// ieadv is the exact IEAdv of example i of a per-example kind: IEAdvRRC's
// closed form for randomized response over every class, IEAdvChannelC
// from the channel otherwise.
func (r *runnerC) ieadv(i int, e []float64) float64 {
	ch, _ := r.chanOf(i)
	if ch.ch.Form == pets.FormRR {
		return IEAdvRRC(e, &ch.ch)
	}
	return IEAdvChannelC(e, &ch.ch)
}

// release draws example i's release of label y through the law (bot's
// shows 0 and draws nothing).
func (w *workerC) release(i int, y uint8) uint8 {
	r := w.r
	w.one[0] = y
	_, prior := r.chanOf(i)
	r.ex.Release(w.out, w.one, prior, w.rng)
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
		r.law.ReleaseBag(rel, w.counts, w.rng)
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
			bag := u
			if r.single {
				bag = -1 // bags of one are no bags
			}
			w.keep.push(key, Sample{Index: int(i), Bag: bag, Prior: e[y], Label: y, Release: classProportion(rel0, y),
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

// chanC is what RunC precomputes of one channel of a per-example kind.
type chanC struct {
	ch          pets.Channel
	informative bool
	pair        [2]uint8 // the two smallest classes of its support (a kind with a prior: its canary coin)
}

// setChannels finds the channel of each example (the prior-free one, or
// the one its prior chooses) and precomputes each distinct channel once,
// in order of first use.
func (r *runnerC) setChannels() error {
	c := r.c
	add := func(key uint64) chanC {
		x := chanC{ch: r.ex.Channel(key)}
		x.informative = x.ch.Informative()
		s := x.ch.Support()
		x.pair[0] = uint8(bits.TrailingZeros64(s))
		x.pair[1] = uint8(bits.TrailingZeros64(s &^ (1 << x.pair[0])))
		return x
	}
	if r.opts.Prior == nil {
		r.chans = []chanC{add(r.ex.ChannelOf(nil))}
		return nil
	}
	r.chanAt = make([]int32, r.n)
	at := map[uint64]int32{}
	for i := range r.n {
		p := r.opts.Prior[i*c : (i+1)*c]
		if err := pets.CheckPrior(p, c); err != nil {
			return paramErr("prior", fmt.Sprintf("example %d: %v", i, err))
		}
		key := r.ex.ChannelOf(p)
		j, ok := at[key]
		if !ok {
			j = int32(len(r.chans))
			at[key] = j
			r.chans = append(r.chans, add(key))
		}
		r.chanAt[i] = j
	}
	return nil
}

// chanOf returns example i's channel and its prior (nil for a kind without
// one), as the law takes it.
func (r *runnerC) chanOf(i int) (*chanC, []float64) {
	if r.chanAt == nil {
		return &r.chans[0], nil
	}
	c := r.c
	return &r.chans[r.chanAt[i]], r.opts.Prior[i*c : (i+1)*c]
}
