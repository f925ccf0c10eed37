package audit

// The runner: validation of Run's arguments, the workers that audit bags
// and blocks of examples in parallel, and the deterministic reduction.

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"labelprivacy/internal/mix"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// newRunner validates Run's arguments and prepares the audit.
func newRunner(eta []float64, m *pets.Mechanism, opts Options) (*runner, error) {
	if m == nil {
		return nil, &ParamError{Param: "mechanism", Msg: "nil"}
	}
	if opts.LabelDraws < 1 {
		return nil, &ParamError{Param: "label_draws", Msg: fmt.Sprintf("must be ≥ 1, got %d", opts.LabelDraws)}
	}
	if opts.MaxSamples < 0 {
		return nil, &ParamError{Param: "max_samples", Msg: fmt.Sprintf("must be ≥ 0, got %d", opts.MaxSamples)}
	}
	for i, v := range eta {
		if !(v >= 0 && v <= 1) { // also NaN
			return nil, &EtaError{Index: i, Value: v}
		}
	}
	var kind kindCode
	switch m.Kind() {
	case pets.None:
		kind = kNone
	case pets.Bot:
		kind = kBot
	case pets.RR:
		kind = kRR
	case pets.LLP:
		kind = kLLP
	case pets.LLPGeom:
		kind = kGeom
	case pets.LLPLap:
		kind = kLap
	case pets.RRPrior:
		kind = kRRPrior
	default:
		return nil, &ParamError{Param: "mechanism", Msg: "unsupported kind " + m.Kind().String()}
	}
	n := len(eta)
	if opts.Sampler != nil && kind != kNone {
		if opts.Draws < 1 {
			return nil, &ParamError{Param: "draws", Msg: fmt.Sprintf("must be ≥ 1 with a sampler, got %d", opts.Draws)}
		}
		if opts.Canaries < 0 {
			return nil, &ParamError{Param: "canaries", Msg: fmt.Sprintf("must be ≥ 0, got %d", opts.Canaries)}
		}
	}
	r := &runner{eta: eta, m: m, kind: kind, opts: opts, maxMA: m.Epsilon() + DPTolerance}
	if kind != kNone && kind != kLLP {
		r.isDP = true
		r.piDP = flipProb(m.Epsilon())
	}
	s := &r.sum
	s.Mechanism, s.Kind, s.K, s.Epsilon, s.LabelDraws = m.String(), m.Kind(), m.K(), m.Epsilon(), opts.LabelDraws
	if opts.Bags != nil && kind < kLLP {
		return nil, &ParamError{Param: "bags", Msg: "only the LLP family audits bags, not " + m.Kind().String()}
	}
	if (opts.Prior != nil) != (kind == kRRPrior) {
		return nil, &ParamError{Param: "prior", Msg: "rr_prior needs one prior per example, and only rr_prior takes them"}
	}
	if kind == kRRPrior {
		if len(opts.Prior) != n {
			return nil, &ParamError{Param: "prior", Msg: fmt.Sprintf("%d priors for %d examples", len(opts.Prior), n)}
		}
		for i, p := range opts.Prior {
			if !(p >= 0 && p <= 1) {
				return nil, &ParamError{Param: "prior", Msg: fmt.Sprintf("prior[%d] = %v is not in [0, 1]", i, p)}
			}
		}
	}
	if kind >= kLLP && opts.Bags != nil {
		if err := r.givenBags(opts.Bags, n); err != nil {
			return nil, err
		}
	} else if kind >= kLLP {
		k := m.K()
		r.k = k
		r.units = n / k
		if r.units == 0 {
			return nil, &ParamError{Param: "eta", Msg: fmt.Sprintf("%d examples do not fill one bag of k = %d", n, k)}
		}
		bags, err := llp.Partition(n, k, rand.NewPCG(opts.Seed, streamPartition), false)
		if err != nil {
			return nil, &ParamError{Param: "eta", Msg: err.Error()}
		}
		r.bags = bags
		s.NBags, s.NExamples, s.NDropped, s.SEUnit = r.units, r.units*k, n-r.units*k, "bag"
	} else {
		if n == 0 {
			return nil, &ParamError{Param: "eta", Msg: "empty audit set"}
		}
		r.units = (n + blockSize - 1) / blockSize
		s.NExamples, s.SEUnit = n, "example"
		if kind == kRR || kind == kRRPrior {
			// |I| is the same for every example and release (RR branch).
			pi := m.FlipProb()
			r.maRR = math.Abs(logLR(1-pi, pi))
		}
	}
	return r, nil
}

// unitStat accumulates count, mean and sum of squared deviations of the
// values of a chunk of units: bag-mean IEAdv values (LLP family) or
// per-example IEAdv values (other kinds).
type unitStat struct {
	n    int
	mean float64
	m2   float64
}

type runner struct {
	eta   []float64
	m     *pets.Mechanism
	kind  kindCode
	opts  Options
	k     int
	bags  *llp.Bags // LLP family: the audit's partition into bags of k
	units int
	maxMA float64 // ε + DPTolerance: the largest |MA| an ε-DP kind may realize (+Inf for llp)
	maRR  float64 // rr: |MA| = log((1−π)/π) of every example (rr_prior: of its RR branch)
	piDP  float64 // π = 1/(1+e^ε) of the label-DP ε, for IEAdvBound (ε-DP kinds and bot)
	isDP  bool    // rr, rr_prior, llp_geom, llp_lap, bot: IEAdv_i is checked against IEAdvBound
	// bagTot[u] is bag u's IEAdv sum when the bags were given (sizes may
	// differ): the example-weighted EAdv and its SE come from it.
	bagTot []float64

	stats   []unitStat
	bsums   []float64 // per chunk: Σ IEAdvBound over its examples
	sum     Summary
	samples []Sample
}

// worker holds the per-goroutine state: O(k·R) workspace, an |MA|
// histogram and the sample candidates.
type worker struct {
	r    *runner
	src  rand.PCG
	rng  *rand.Rand
	hist *maHist
	keep sampleHeap
	bag  *bagWork
	// sizes holds the workspace of each bag size other than k (given bags).
	sizes map[int]*bagWork
	// per-unit label draws: labels[d*k+i], release (in units of the sum
	// for the LLP family) per draw.
	labels []uint8
	rel    []float64
	relOut []float64
	viol   *DPViolation    // the violation of smallest index seen by this worker
	bviol  *BoundViolation // the IEAdv above IEAdvBound of smallest index seen
	bsum   float64         // Σ IEAdvBound over the current chunk
}

// bound adds example index's IEAdvBound to the chunk sum and checks its
// IEAdv against it (ε-DP kinds).
func (w *worker) bound(index int, e, ie float64) {
	r := w.r
	if !r.isDP {
		return
	}
	b := thm35(e, r.piDP)
	w.bsum += b
	if ie > b+BoundTolerance && (w.bviol == nil || index < w.bviol.Index) {
		w.bviol = &BoundViolation{Mechanism: r.m.String(), Epsilon: r.m.Epsilon(), Index: index, Eta: e, IEAdv: ie, Bound: b}
	}
}

// run audits every unit and returns the DP violation (|MA| above ε, else
// IEAdv above IEAdvBound) of smallest index, if any.
func (r *runner) run() error {
	if (r.kind == kRR || r.kind == kRRPrior) && r.maRR > r.maxMA {
		return &DPViolation{Mechanism: r.m.String(), Epsilon: r.m.Epsilon(), MA: r.maRR, Index: 0}
	}
	workers := r.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Units (bags, or blocks of examples) are grouped into fixed chunks of
	// ~64k examples. Each chunk's statistics are accumulated in unit order
	// and the chunks are merged in chunk order, so the result does not
	// depend on which worker ran which chunk.
	unitLen := blockSize
	if r.kind >= kLLP {
		unitLen = r.k
	}
	chunk := max(1, 65536/unitLen)
	nChunks := (r.units + chunk - 1) / chunk
	workers = max(1, min(workers, nChunks))
	r.stats = make([]unitStat, nChunks)
	r.bsums = make([]float64, nChunks)
	var next atomic.Int64
	ws := make([]*worker, workers)
	var wg sync.WaitGroup
	for wi := range ws {
		w := r.newWorker()
		ws[wi] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c := int(next.Add(1)) - 1
				if c >= nChunks {
					return
				}
				st := &r.stats[c]
				w.bsum = 0
				for u := c * chunk; u < min((c+1)*chunk, r.units); u++ {
					w.seedUnit(u)
					if r.kind >= kLLP {
						st.add(w.doBag(u))
					} else {
						w.doBlock(u, st)
					}
				}
				r.bsums[c] = w.bsum
			}
		}()
	}
	wg.Wait()
	var viol *DPViolation
	var bviol *BoundViolation
	for _, w := range ws {
		if v := w.viol; v != nil && (viol == nil || v.Index < viol.Index) {
			viol = v
		}
		if v := w.bviol; v != nil && (bviol == nil || v.Index < bviol.Index) {
			bviol = v
		}
	}
	if viol != nil {
		return viol
	}
	if bviol != nil {
		return bviol
	}
	r.reduce(ws)
	return nil
}

// add is Welford's update with one value.
func (st *unitStat) add(x float64) {
	st.n++
	d := x - st.mean
	st.mean += d / float64(st.n)
	st.m2 += d * (x - st.mean)
}

// merge is Chan et al.'s pairwise update.
func (st *unitStat) merge(o unitStat) {
	if o.n == 0 {
		return
	}
	n := st.n + o.n
	d := o.mean - st.mean
	st.mean += d * float64(o.n) / float64(n)
	st.m2 += o.m2 + d*d*float64(st.n)*float64(o.n)/float64(n)
	st.n = n
}

func (r *runner) newWorker() *worker {
	w := &worker{r: r, hist: newMAHist(), keep: sampleHeap{cap: r.opts.MaxSamples}}
	w.rng = rand.New(&w.src)
	R := r.opts.LabelDraws
	if r.kind >= kLLP {
		eps := 0.0
		if r.kind != kLLP {
			eps = r.m.Params().Epsilon
		}
		w.bag = newBagWork(r.k, eps)
		w.labels = make([]uint8, R*r.k)
	} else {
		w.labels = make([]uint8, R)
	}
	w.rel = make([]float64, R)
	w.relOut = make([]float64, R)
	return w
}

// seedUnit resets the worker's generator to the stream of unit u.
func (w *worker) seedUnit(u int) {
	w.src.Seed(w.r.opts.Seed^streamUnits, mix.SplitMix64(uint64(u)))
}

// violation records |MA| = ma > ε + DPTolerance at example index.
func (w *worker) violation(index int, ma float64) {
	v := w.viol
	switch {
	case v == nil || index < v.Index:
		w.viol = &DPViolation{Mechanism: w.r.m.String(), Epsilon: w.r.m.Epsilon(), MA: ma, Index: index}
	case index == v.Index:
		v.MA = max(v.MA, ma)
	}
}

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
		if r.kind != kLap {
			t = math.Round(t)
		}
		w.rel[d] = t
	}
	sum := 0.0
	for i, e := range b.eta {
		key := w.rng.Uint64()
		ie := b.member(r.kind, e)
		sum += ie
		w.bound(int(idx[i]), e, ie)
		var first, post float64
		for dd := range R {
			l1, l0 := b.likelihoods(r.kind, w.rel[dd])
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
			w.keep.push(key, Sample{Index: int(idx[i]), Bag: u, Prior: e, Label: w.labels[i], Release: w.relOut[0],
				Posterior: post, IEAdv: ie, AbsMA: first})
		}
	}
	if r.bagTot != nil {
		r.bagTot[u] = sum
	}
	return sum / float64(k)
}

// doBlock audits examples [u·blockSize, (u+1)·blockSize) for rr, none,
// bot, adding their IEAdv values to st.
func (w *worker) doBlock(u int, st *unitStat) {
	r := w.r
	R := r.opts.LabelDraws
	lo, hi := u*blockSize, min((u+1)*blockSize, len(r.eta))
	var pi float64
	if r.kind == kRR || r.kind == kRRPrior {
		pi = r.m.FlipProb()
	}
	var one [1]uint8
	var onePrior [1]float64
	var oneArgmax [1]bool
	for i := lo; i < hi; i++ {
		e := r.eta[i]
		f := 1 - e
		for d := range R {
			y := uint8(0)
			if w.rng.Float64() < e {
				y = 1
			}
			w.labels[d] = y
			switch r.kind {
			case kRR, kNone:
				one[0] = y
				r.m.ReleaseRR(one[:], one[:], w.rng)
				w.rel[d] = float64(one[0])
			case kRRPrior:
				one[0], onePrior[0] = y, r.opts.Prior[i]
				r.m.ReleaseRRPrior(one[:], one[:], onePrior[:], oneArgmax[:], w.rng)
				w.rel[d] = float64(one[0])
			default:
				w.rel[d] = 0
			}
		}
		key := w.rng.Uint64()
		var ie, ma, post float64
		switch r.kind {
		case kRR:
			// Theorem 3.5: (min(η,1−η) − π)·1{η ∈ [π, 1−π]}.
			if e >= pi && e <= 1-pi {
				ie = math.Min(e, f) - pi
			}
			// |I| = |log P(ỹ|y=1)/P(ỹ|y=0)| = log((1−π)/π) for either ỹ.
			ma = r.maRR
			w.hist.addN(ma, uint64(R))
			l1, l0 := 1-pi, pi // ỹ = 1
			if w.rel[0] == 0 {
				l1, l0 = pi, 1-pi
			}
			post = posterior(e, l1, l0)
		case kRRPrior:
			if _, argmax := r.m.PriorBranch(r.opts.Prior[i]); argmax {
				// The release ignores y_i: nothing is learnt.
				w.hist.addN(0, uint64(R))
				post = e
				break
			}
			if e >= pi && e <= 1-pi { // Theorem 3.5
				ie = math.Min(e, f) - pi
			}
			ma = r.maRR
			w.hist.addN(ma, uint64(R))
			l1, l0 := 1-pi, pi
			if w.rel[0] == 0 {
				l1, l0 = pi, 1-pi
			}
			post = posterior(e, l1, l0)
		case kNone:
			ie = math.Min(e, f)
			ma = math.Inf(1)
			w.hist.addN(ma, uint64(R))
			post = w.rel[0]
		case kBot:
			w.hist.addN(0, uint64(R))
			post = e
		}
		st.add(ie)
		w.bound(i, e, ie)
		if w.keep.wants(key, i) {
			w.keep.push(key, Sample{Index: i, Bag: -1, Prior: e, Label: w.labels[0], Release: w.rel[0],
				Posterior: post, IEAdv: ie, AbsMA: ma})
		}
	}
}

// reduce combines the per-unit statistics in unit order and merges the
// workers' histograms and samples (order-independent operations).
func (r *runner) reduce(ws []*worker) {
	s := &r.sum
	// The units of the SE: bag means (LLP family; all bags have k members,
	// so EAdv is also the mean of the bag means) or examples.
	var acc unitStat
	for _, st := range r.stats {
		acc.merge(st)
	}
	s.EAdv = acc.mean
	s.EAdvBound = math.NaN()
	if r.isDP {
		bs := 0.0
		for _, b := range r.bsums {
			bs += b
		}
		s.EAdvBound = bs / float64(s.NExamples)
	}
	s.EAdvSE = math.NaN()
	if acc.n > 1 {
		s.EAdvSE = math.Sqrt(acc.m2 / float64(acc.n-1) / float64(acc.n))
	}
	if r.bagTot != nil {
		s.EAdv, s.EAdvSE = r.givenBagsEAdv()
	}
	h := ws[0].hist
	for _, w := range ws[1:] {
		h.merge(w.hist)
	}
	s.MACount = int64(h.total)
	s.MAP50, s.MAP90, s.MAP98, s.MAP99 = h.quantile(0.50), h.quantile(0.90), h.quantile(0.98), h.quantile(0.99)
	s.MAMax = h.maxValue
	s.MAInfFrac = float64(h.infN) / float64(h.total)
	s.MAMean = h.mean()

	var cands []sampleCand
	for _, w := range ws {
		cands = append(cands, w.keep.items...)
	}
	slices.SortFunc(cands, func(a, b sampleCand) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.s.Index, b.s.Index)
	})
	if len(cands) > r.opts.MaxSamples {
		cands = cands[:r.opts.MaxSamples]
	}
	r.samples = make([]Sample, len(cands))
	for i, c := range cands {
		r.samples[i] = c.s
	}
	slices.SortFunc(r.samples, func(a, b Sample) int { return cmp.Compare(a.Index, b.Index) })
}
