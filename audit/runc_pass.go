package audit

import (
	"math"
	"math/rand/v2"
	"slices"

	"labelprivacy/internal/mix"
	"labelprivacy/internal/par"
)

// chunkBagsC is the number of bags per chunk of RunC's exact pass.
const chunkBagsC = 64

// estBound accumulates the estimated members' side of the IEAdv ≤
// IEAdvBoundC check (checkEstimatedBound).
type estBound struct {
	excess  float64 // Σ (estimated IEAdv_i − IEAdvBoundC_i) over estimated members
	rangeSq float64 // Σ over estimated bags of n_u²/D (Hoeffding's Σ range²)
	members int
	first   int // smallest example index among them (−1: none)
}

// drawsFor is the number of releases drawn per bag: LabelDraws for an
// exact bag, at least BagDraws for an estimated one.
func (r *runnerC) drawsFor(exact bool) int {
	if exact {
		return r.opts.LabelDraws
	}
	return max(r.opts.LabelDraws, r.bagDraws)
}

// workerC holds one goroutine's state of RunC's exact pass.
type workerC struct {
	r     *runnerC
	src   rand.PCG
	rng   *rand.Rand
	hist  *maHist
	keep  sampleHeap
	viol  *DPViolation
	bviol *BoundViolation
	bsum  float64
	est   estBound
	nEst  int

	lik, post []float64 // C
	one, out  []uint8   // 1
	labels    []uint8   // LabelDraws (per example) or k (bags: the first draw's)
	zs        []uint8
	rel       []float64 // bags: 2·(C−1), the first draw's release and the current one

	auds   map[int]*BagAuditorC // by bag size
	bagEta []float64
	dst    []float64 // k·C likelihoods
	counts []int
	maxP   []float64 // per member: Σ over draws of max posterior
	ie     []float64 // per member: IEAdv
	first  []float64 // per member: the first draw's posterior of its label, and |MA|
	firstM []float64
}

func (r *runnerC) newWorker() *workerC {
	c := r.c
	w := &workerC{r: r, hist: newMAHist(), keep: sampleHeap{cap: r.opts.MaxSamples},
		lik: make([]float64, c), post: make([]float64, c), one: make([]uint8, 1), out: make([]uint8, 1),
		est: estBound{first: -1}}
	w.rng = rand.New(&w.src)
	if r.bag {
		w.auds = map[int]*BagAuditorC{}
		k := r.k
		w.bagEta, w.dst, w.counts = make([]float64, k*c), make([]float64, k*c), make([]int, c)
		w.maxP, w.first, w.firstM, w.ie = make([]float64, k), make([]float64, k), make([]float64, k), make([]float64, k)
		w.labels, w.rel = make([]uint8, k), make([]float64, 2*(c-1))
	} else {
		w.labels, w.zs = make([]uint8, r.opts.LabelDraws), make([]uint8, r.opts.LabelDraws)
	}
	return w
}

// auditor returns the worker's BagAuditorC for bags of n (validated sizes:
// newRunnerC checked the largest).
func (w *workerC) auditor(n int) *BagAuditorC {
	a := w.auds[n]
	if a == nil {
		var err error
		if a, err = NewBagAuditorC(w.r.m, n); err != nil {
			panic("audit: a bag size newRunnerC accepted: " + err.Error())
		}
		w.auds[n] = a
	}
	return a
}

// violation records |MA| = ma > ε + DPTolerance at example index.
func (w *workerC) violation(index int, ma float64) {
	v := w.viol
	switch {
	case v == nil || index < v.Index:
		w.viol = &DPViolation{Mechanism: w.r.m.String(), Epsilon: w.r.eps, MA: ma, Index: index}
	case index == v.Index:
		v.MA = max(v.MA, ma)
	}
}

// bound adds example index's IEAdvBoundC to the chunk sum and checks an
// exact IEAdv against it (ε-DP kinds).
func (w *workerC) bound(index int, e []float64, ie float64, exact bool) {
	r := w.r
	if !r.isDP {
		return
	}
	b := IEAdvBoundC(e, r.eps)
	w.bsum += b
	if !exact {
		w.est.excess += ie - b
		w.est.members++
		if w.est.first < 0 || index < w.est.first {
			w.est.first = index
		}
		return
	}
	if ie > b+BoundTolerance && (w.bviol == nil || index < w.bviol.Index) {
		_, m1 := argmax(e)
		w.bviol = &BoundViolation{Mechanism: r.m.String(), Epsilon: r.eps, Index: index, Eta: m1, EtaC: slices.Clone(e), IEAdv: ie, Bound: b}
	}
}

// run audits every unit (blocks of examples, or bags) in parallel and
// reduces deterministically, as runner.run.
func (r *runnerC) run() error {
	// Chunks of 16 blocks of examples (65,536) or of chunkBagsC bags: a
	// bag of C classes costs 10³–10⁷ operations, so the binary audit's
	// 65,536 examples per chunk would leave one worker busy. The chunks
	// depend on the audit alone, not on the workers.
	chunk := 65536 / blockSize
	if r.bag {
		chunk = chunkBagsC
	}
	nChunks := (r.units + chunk - 1) / chunk
	r.stats, r.bsums, r.ests, r.nEst = make([]unitStat, nChunks), make([]float64, nChunks), make([]estBound, nChunks), make([]int, nChunks)
	ws := make([]*workerC, par.Workers(r.opts.Workers, nChunks))
	for i := range ws {
		ws[i] = r.newWorker()
	}
	prog := progressOf(r.opts.Progress)
	if r.bag {
		prog.Pass("bags", r.units)
	} else {
		prog.Pass("examples", r.n)
	}
	par.Each(nChunks, len(ws), func(wi, ch int) {
		w, st := ws[wi], &r.stats[ch]
		w.bsum, w.est, w.nEst = 0, estBound{first: -1}, 0
		for u := ch * chunk; u < min((ch+1)*chunk, r.units); u++ {
			w.src.Seed(r.opts.Seed^streamUnits, mix.SplitMix64(uint64(u)))
			if r.bag {
				st.add(w.doBag(u))
				prog.Done(1)
			} else {
				w.doBlock(u, st)
				prog.Done(min(blockSize, r.n-u*blockSize))
			}
		}
		r.bsums[ch], r.ests[ch], r.nEst[ch] = w.bsum, w.est, w.nEst
	})
	viols, bviols := make([]*DPViolation, len(ws)), make([]*BoundViolation, len(ws))
	for i, w := range ws {
		viols[i], bviols[i] = w.viol, w.bviol
	}
	if err := firstViolation(viols, bviols); err != nil {
		return err
	}
	if err := r.checkEstimatedBound(); err != nil {
		return err
	}
	r.reduce(ws)
	return nil
}

// checkEstimatedBound checks the estimated members' IEAdv against
// IEAdvBoundC together. Each estimated member's IEAdv is
// (1/D)·Σ_d X_{i,d} − max_y η_iy with X_{i,d} = max_y P(y_i = y | z_d) ∈
// [0, 1] on release z_d of its bag; the members of one bag share a draw,
// so group them: Y_{u,d} = (1/D)·Σ_{i∈u} X_{i,d} ∈ [0, n_u/D], independent
// across (bag, draw) pairs. If every true IEAdv_i ≤ b_i (the mechanism is
// ε-DP), the excess T = Σ_i (ÎEAdv_i − b_i) ≤ Σ_{u,d} (Y_{u,d} − E Y_{u,d}),
// and Hoeffding's inequality gives P(T ≥ t) ≤ exp(−2t²/Σ_{u,d} (n_u/D)²)
// = exp(−2t²/Σ_u n_u²/D). So T > t = √(ln(1/GuardAlpha)·Σ_u n_u²/D / 2)
// fails the audit with a *BoundViolation at false-failure rate
// ≤ GuardAlpha.
func (r *runnerC) checkEstimatedBound() error {
	var e estBound
	e.first = -1
	for _, x := range r.ests {
		e.excess += x.excess
		e.rangeSq += x.rangeSq
		e.members += x.members
		if x.first >= 0 && (e.first < 0 || x.first < e.first) {
			e.first = x.first
		}
	}
	if e.members == 0 {
		return nil
	}
	t := math.Sqrt(math.Log(1/GuardAlpha) * e.rangeSq / 2)
	if e.excess > t {
		return &BoundViolation{Mechanism: r.m.String(), Epsilon: r.eps, Index: e.first, Estimated: e.members,
			IEAdv: e.excess / float64(e.members), Bound: t / float64(e.members)}
	}
	return nil
}

// reduce combines the chunks' statistics in chunk order and merges the
// workers' histograms and samples, as runner.reduce.
func (r *runnerC) reduce(ws []*workerC) {
	s := &r.sum
	var acc unitStat
	nEst := 0
	for ch, st := range r.stats {
		acc.merge(st)
		nEst += r.nEst[ch]
	}
	s.EAdv = acc.mean
	s.EAdvSE = math.NaN()
	if acc.n > 1 {
		s.EAdvSE = math.Sqrt(acc.m2 / float64(acc.n-1) / float64(acc.n))
	}
	if r.given {
		s.EAdv, s.EAdvSE = givenBagsEAdvOf(r.bagTot, r.bags)
	}
	if nEst > 0 {
		s.EAdvEstimated, s.BagDraws = true, r.drawsFor(false)
	}
	s.EAdvBound = math.NaN()
	if r.isDP {
		bs := 0.0
		for _, b := range r.bsums {
			bs += b
		}
		s.EAdvBound = bs / float64(s.NExamples)
	}
	hists, keeps := make([]*maHist, len(ws)), make([]*sampleHeap, len(ws))
	for i, w := range ws {
		hists[i], keeps[i] = w.hist, &w.keep
	}
	r.samples = reduceWorkers(s, hists, keeps, r.opts.MaxSamples)
}
