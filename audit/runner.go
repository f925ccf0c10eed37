package audit

// The runner: validation of Run's arguments, the workers that audit bags
// and blocks of examples in parallel, and the deterministic reduction.

import (
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/internal/mix"
	"labelprivacy/internal/par"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// newRunner validates Run's arguments and prepares the audit.
func newRunner(eta []float64, m *pets.Mechanism, opts Options) (*runner, error) {
	if m == nil {
		return nil, paramErr("mechanism", "nil")
	}
	if opts.LabelDraws < 1 {
		return nil, paramErr("label_draws", fmt.Sprintf("must be ≥ 1, got %d", opts.LabelDraws))
	}
	if opts.MaxSamples < 0 {
		return nil, paramErr("max_samples", fmt.Sprintf("must be ≥ 0, got %d", opts.MaxSamples))
	}
	for i, v := range eta {
		if !(v >= 0 && v <= 1) { // also NaN
			return nil, &EtaError{Index: i, Value: v}
		}
	}
	n := len(eta)
	sp := m.Spec()
	if opts.Sampler != nil && sp.Release != pets.ReleaseRaw {
		if opts.Draws < 1 {
			return nil, paramErr("draws", fmt.Sprintf("must be ≥ 1 with a sampler, got %d", opts.Draws))
		}
		if opts.Canaries < 0 {
			return nil, paramErr("canaries", fmt.Sprintf("must be ≥ 0, got %d", opts.Canaries))
		}
	}
	r := &runner{eta: eta, m: m, ex: m.ExampleLaw(), bag: m.BagLaw(), opts: opts, maxMA: m.Epsilon() + DPTolerance}
	if sp.Privacy.DP() {
		r.isDP = true
		r.piDP = flipProb(m.Epsilon())
	}
	s := &r.sum
	s.Mechanism, s.Kind, s.K, s.Epsilon, s.LabelDraws, s.Classes = m.String(), m.Kind(), m.K(), m.Epsilon(), opts.LabelDraws, 2
	if opts.Bags != nil && r.bag == nil {
		return nil, paramErr("bags", "only the LLP family audits bags, not "+m.Kind().String())
	}
	if (opts.Prior != nil) != sp.Release.WithPrior() {
		return nil, paramErr("prior", fmt.Sprintf("%s: only a mechanism whose release depends on a public prior (rr_prior) takes one prior per example, and it needs them", m.Kind()))
	}
	if opts.Prior != nil {
		if len(opts.Prior) != n {
			return nil, paramErr("prior", fmt.Sprintf("%d priors for %d examples", len(opts.Prior), n))
		}
		for i, p := range opts.Prior {
			if !(p >= 0 && p <= 1) {
				return nil, paramErr("prior", fmt.Sprintf("prior[%d] = %v is not in [0, 1]", i, p))
			}
		}
	}
	switch {
	case r.bag != nil && !sp.Release.PerBag():
		// A release of counts: every example is a bag of one through the
		// bag law, and the unit of the SE is the example.
		r.noise, r.k, r.single = r.bag.SumNoise(), 1, true
		if n == 0 {
			return nil, paramErr("eta", "empty audit set")
		}
		r.units, r.bags = n, llp.Singletons(n)
		s.NExamples, s.SEUnit = n, "example"
	case r.bag != nil && opts.Bags != nil:
		r.noise = r.bag.SumNoise()
		if err := r.givenBags(opts.Bags, n); err != nil {
			return nil, err
		}
	case r.bag != nil && sp.Takes.KeyGroups:
		return nil, paramErr("bags", fmt.Sprintf("%s releases one value per key group: its audit takes the groups of the audit examples (Options.Bags)", m))
	case r.bag != nil:
		r.noise = r.bag.SumNoise()
		k := m.K()
		r.k = k
		r.units = n / k
		if r.units == 0 {
			return nil, paramErr("eta", fmt.Sprintf("%d examples do not fill one bag of k = %d", n, k))
		}
		bags, err := llp.Partition(n, k, rand.NewPCG(opts.Seed, streamPartition), false)
		if err != nil {
			return nil, paramErr("eta", err.Error())
		}
		r.bags = bags
		s.NBags, s.NExamples, s.NDropped, s.SEUnit = r.units, r.units*k, n-r.units*k, "bag"
	default:
		if n == 0 {
			return nil, paramErr("eta", "empty audit set")
		}
		r.units = (n + blockSize - 1) / blockSize
		s.NExamples, s.SEUnit = n, "example"
		r.setChannels(n)
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
	eta []float64
	m   *pets.Mechanism
	// The mechanism's law: ex for the kinds released per example, with the
	// distinct channels its examples go through (chans; chanAt[i] is
	// example i's, nil when all go through chans[0]) and, for a kind with a
	// prior, each example's prior as the law takes it (priors, (1 − p, p)
	// a row); bag and its sum noise for the LLP family.
	ex     pets.ExampleLaw
	chans  []chanAudit
	chanAt []int32
	priors []float64
	bag    pets.BagLaw
	noise  pets.SumNoise
	// single: a release of counts (pets.ReleaseCounts), each example a bag
	// of one of bag's law, not bags of k.
	single bool
	opts   Options
	k      int
	bags   *llp.Bags // LLP family: the audit's partition into bags of k
	units  int
	maxMA  float64 // ε + DPTolerance: the largest |MA| an ε-DP kind may realize (+Inf for llp)
	piDP   float64 // π = 1/(1+e^ε) of the label-DP ε, for IEAdvBound (ε-DP kinds and bot)
	isDP   bool    // rr, rr_prior, llp_geom, llp_lap, bot: IEAdv_i is checked against IEAdvBound
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
	// for the LLP family; zs, the released values of the per-example kinds)
	// per draw.
	labels []uint8
	zs     []uint8
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
	// Units (bags, or blocks of examples) are grouped into fixed chunks of
	// ~64k examples. Each chunk's statistics are accumulated in unit order
	// and the chunks are merged in chunk order, so the result does not
	// depend on which worker ran which chunk.
	unitLen := blockSize
	if r.bag != nil {
		unitLen = r.k
	}
	chunk := max(1, 65536/unitLen)
	nChunks := (r.units + chunk - 1) / chunk
	r.stats = make([]unitStat, nChunks)
	r.bsums = make([]float64, nChunks)
	ws := make([]*worker, par.Workers(r.opts.Workers, nChunks))
	for wi := range ws {
		ws[wi] = r.newWorker()
	}
	prog := progressOf(r.opts.Progress)
	if r.bag != nil {
		prog.Pass("bags", r.units)
	} else {
		prog.Pass("examples", len(r.eta))
	}
	par.Each(nChunks, len(ws), func(wi, c int) {
		w, st := ws[wi], &r.stats[c]
		w.bsum = 0
		for u := c * chunk; u < min((c+1)*chunk, r.units); u++ {
			w.seedUnit(u)
			if r.bag != nil {
				st.add(w.doBag(u))
				prog.Done(1)
			} else {
				w.doBlock(u, st)
				prog.Done(min(blockSize, len(r.eta)-u*blockSize))
			}
		}
		r.bsums[c] = w.bsum
	})
	viols, bviols := make([]*DPViolation, len(ws)), make([]*BoundViolation, len(ws))
	for i, w := range ws {
		viols[i], bviols[i] = w.viol, w.bviol
	}
	if err := firstViolation(viols, bviols); err != nil {
		return err
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
	if r.bag != nil {
		w.bag = newBagWork(r.k, r.bag.NoiseRate())
		w.labels = make([]uint8, R*r.k)
	} else {
		w.labels = make([]uint8, R)
		w.zs = make([]uint8, R)
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
	hists, keeps := make([]*maHist, len(ws)), make([]*sampleHeap, len(ws))
	for i, w := range ws {
		hists[i], keeps[i] = w.hist, &w.keep
	}
	r.samples = reduceWorkers(s, hists, keeps, r.opts.MaxSamples)
}
