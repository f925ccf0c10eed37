package audit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"labelprivacy/internal/mix"
	"labelprivacy/internal/par"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// OptionsC configures RunC: Options' fields, with the public priors and the
// sampler of C classes, and the draws of a bag whose IEAdv is estimated.
type OptionsC struct {
	// Seed, LabelDraws, MaxSamples, Workers, Draws, Canaries and Bags mean
	// what they mean in Options. LabelDraws draws labels y_i ~ η_i (one
	// class of C) per example (per bag for the LLP family), each released
	// once, for the multiplicative advantage.
	Seed       uint64
	LabelDraws int
	MaxSamples int
	Workers    int
	// Sampler, when set, is the production release code on C classes
	// (realizedc.go); nil: the realized and canary figures are NaN.
	Sampler  SamplerC
	Draws    int
	Canaries int
	Bags     *llp.Bags
	// Prior, for rr_prior only (required), is each audit example's public
	// prior over the C classes as the mechanism sees it, n×C row-major
	// (Prior[i·C+y]); each row must pass pets.Multiclass.CheckPrior. The
	// row's set (pets.Multiclass.PriorSet) decides its release.
	Prior []float64
	// BagDraws ≥ 2 (0: DefaultBagDraws) is the number of releases drawn
	// per bag of the LLP family whose IEAdv cannot be computed exactly at
	// reasonable cost (llp_geom past ExactWork, llp_lap): each member's
	// IEAdv is then the mean of max_y P(y | release) over those draws minus
	// max_y η_y, an unbiased estimate. Ignored at C = 2 and for exact bags.
	BagDraws int
	// ExactWork is BagOptionsC.ExactWork: the largest enumeration of
	// llp_geom's release space done per bag (0: DefaultExactWork; < 0:
	// always estimate).
	ExactWork float64
}

// DefaultBagDraws is OptionsC.BagDraws' default. EAdvSE is an SE over bags,
// so it already includes this sampling error. Measured at C = 10, k = 8,
// llp_geom and llp_lap ε = 2 on Dirichlet η (500 fixed bags, 6 seeds at
// D = 4 and 16 draws): a bag mean's variance is about 1.3e-4 between bags
// plus 1.5e-3/D from sampling, so at D = 32 EAdvSE is ~1.16× an exact
// audit's, and the draws cost ~0.37 ms each (16 CPU-s per 10,000
// examples, BenchmarkRunC).
const DefaultBagDraws = 32

// RunC audits the label PET m on C = m.Classes() classes, on the audit set
// eta: n examples' class probabilities, n×C row-major (eta[i·C+y] =
// η_iy = P(y_i = y | x_i)), each row within EtaTolerance of summing to 1.
// It returns Run's Result with Summary.Classes = C; every Summary field
// means what it means for Run, read for C classes as follows (multiclass.go
// has the formulas and the proofs):
//
//   - IEAdv_i = E_z[max_y P(y_i = y | z)] − max_y η_iy, exact: rr (and
//     none: 1 − max_y η_iy, |MA| = ∞) by IEAdvRRC, rr_prior by
//     IEAdvRRPriorC on the example's set from OptionsC.Prior, bot 0; the
//     LLP family per bag by BagAuditorC (the
//     exact dynamic program over the count vectors of the other members,
//     exact enumeration of the release space for llp and small llp_geom),
//     on the same seeded random bags of k as Run (or OptionsC.Bags). Where
//     the exact enumeration would cost more than ExactWork per bag
//     (llp_geom at C = 10, k = 8: 9^9 releases) and for llp_lap (a
//     continuous release in C−1 dimensions), each member's IEAdv is an
//     unbiased estimate from BagDraws releases drawn from the bag's exact
//     law: Summary.EAdvEstimated is then true, Summary.BagDraws says how
//     many, and EAdvSE (over bags) includes the sampling error, since the
//     bags' estimates are independent and unbiased.
//   - |MA| per realized draw is MultAdvC's likelihood-ratio form,
//     max_{a,b} log P(z | y_i=a)/P(z | y_i=b): the largest change of the
//     log posterior odds between two classes (Definition 3.6; Run's |I| at
//     C = 2). An ε-DP kind whose draw exceeds ε + DPTolerance fails with a
//     *DPViolation.
//   - EAdvBound is the mean of IEAdvBoundC(η_i, ε); every exact IEAdv_i
//     above its bound + BoundTolerance fails with a *BoundViolation, and
//     the estimated ones are checked together (a one-sided Hoeffding test
//     at false-failure rate GuardAlpha, see checkEstimatedBound).
//   - With a Sampler: the realized attack, the likelihood checks and the
//     canaries of realizedc.go (EpsLowerRealBags is NaN for C ≥ 3).
//   - Samples: Prior and Posterior are the probabilities the attacker gives
//     the drawn label y_i before and after the release, η_{i,y_i} and
//     P(y_i | z) (see Sample).
//
// At C = 2 RunC is Run on η_i1 (and priors p_i = Prior[2i+1], the sampler
// adapted): the same Result bit for bit, Classes = 2.
func RunC(eta []float64, m *pets.Multiclass, opts OptionsC) (*Result, error) {
	if m == nil {
		return nil, paramErr("mechanism", "nil")
	}
	if m.Classes() == 2 {
		return runBinary(eta, m, opts)
	}
	r, err := newRunnerC(eta, m, opts)
	if err != nil {
		return nil, err
	}
	if err := r.run(); err != nil {
		return nil, err
	}
	s := &r.sum
	s.RealizedGain, s.RealizedGainSE, s.RealizedZ = math.NaN(), math.NaN(), math.NaN()
	s.EpsLower, s.EpsLowerRealBags = math.NaN(), math.NaN()
	if opts.Sampler != nil && r.sp.Release != pets.ReleaseRaw {
		if err := r.realize(); err != nil {
			return nil, err
		}
	}
	return &Result{Summary: r.sum, Samples: r.samples}, nil
}

// runBinary is RunC at C = 2: Run on class 1's probabilities.
func runBinary(eta []float64, m *pets.Multiclass, opts OptionsC) (*Result, error) {
	if err := CheckEtaC(eta, 2); err != nil {
		return nil, err
	}
	e1 := make([]float64, len(eta)/2)
	for i := range e1 {
		e1[i] = eta[2*i+1]
	}
	o := Options{Seed: opts.Seed, LabelDraws: opts.LabelDraws, MaxSamples: opts.MaxSamples, Workers: opts.Workers,
		Draws: opts.Draws, Canaries: opts.Canaries, Bags: opts.Bags}
	if opts.Sampler != nil {
		o.Sampler = binarySampler{s: opts.Sampler, m: m}
	}
	if opts.Prior != nil {
		if len(opts.Prior) != len(eta) {
			return nil, paramErr("prior", fmt.Sprintf("%d prior values for %d examples of 2 classes", len(opts.Prior), len(e1)))
		}
		o.Prior = make([]float64, len(e1))
		for i := range o.Prior {
			if err := m.CheckPrior(opts.Prior[2*i : 2*i+2]); err != nil {
				return nil, paramErr("prior", fmt.Sprintf("example %d: %v", i, err))
			}
			o.Prior[i] = opts.Prior[2*i+1]
		}
	}
	res, err := Run(e1, m.Mechanism(), o)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// binarySampler is a SamplerC seen as Run's Sampler at C = 2 (the same
// rows, labels, bags and proportions: C − 1 = 1 proportion per row).
type binarySampler struct {
	s SamplerC
	m *pets.Multiclass
}

func (b binarySampler) Release(labels []uint8, _ *pets.Mechanism, seed uint64) (*Released, error) {
	rel, err := b.s.ReleaseC(labels, b.m, seed)
	if err != nil || rel == nil {
		return nil, err
	}
	return &Released{Row: rel.Row, Label: rel.Label, Bag: rel.Bag, Alpha: rel.Alpha}, nil
}

// runnerC is RunC's state for C ≥ 3.
type runnerC struct {
	eta  []float64 // n×C
	c, n int
	m    *pets.Multiclass
	sp   pets.Spec
	opts OptionsC

	maxMA float64 // ε + DPTolerance
	isDP  bool
	eps   float64

	// The LLP family: the bags (random or given), the noise of the counts.
	bag       bool
	noise     pets.SumNoise
	k         int
	bags      *llp.Bags
	given     bool
	bagTot    []float64 // given bags: each bag's IEAdv sum
	bagDraws  int
	exactWork float64

	sets []pets.PriorSet // rr_prior: each example's set

	units   int
	stats   []unitStat
	bsums   []float64  // per chunk: Σ IEAdvBoundC
	ests    []estBound // per chunk: the estimated members' bound check
	nEst    []int      // per chunk: bags estimated
	sum     Summary
	samples []Sample
}

func newRunnerC(eta []float64, m *pets.Multiclass, opts OptionsC) (*runnerC, error) {
	c := m.Classes()
	if c < 3 || c > pets.MaxClasses {
		return nil, paramErr("classes", fmt.Sprintf("must be in [3, %d] here, got %d", pets.MaxClasses, c))
	}
	if opts.LabelDraws < 1 {
		return nil, paramErr("label_draws", fmt.Sprintf("must be ≥ 1, got %d", opts.LabelDraws))
	}
	if opts.MaxSamples < 0 {
		return nil, paramErr("max_samples", fmt.Sprintf("must be ≥ 0, got %d", opts.MaxSamples))
	}
	if opts.BagDraws < 0 || opts.BagDraws == 1 {
		return nil, paramErr("bag_draws", fmt.Sprintf("must be 0 (default %d) or ≥ 2, got %d", DefaultBagDraws, opts.BagDraws))
	}
	if err := CheckEtaC(eta, c); err != nil {
		return nil, err
	}
	n := len(eta) / c
	sp := m.Mechanism().Spec()
	if opts.Sampler != nil && sp.Release != pets.ReleaseRaw {
		if opts.Draws < 1 {
			return nil, paramErr("draws", fmt.Sprintf("must be ≥ 1 with a sampler, got %d", opts.Draws))
		}
		if opts.Canaries < 0 {
			return nil, paramErr("canaries", fmt.Sprintf("must be ≥ 0, got %d", opts.Canaries))
		}
	}
	r := &runnerC{eta: eta, c: c, n: n, m: m, sp: sp, opts: opts, eps: m.Epsilon(), maxMA: m.Epsilon() + DPTolerance,
		isDP: sp.Privacy.DP(), bag: sp.Release.PerBag(), exactWork: opts.ExactWork}
	if r.bag {
		r.noise = m.Mechanism().BagLaw().SumNoise()
	}
	r.bagDraws = cmp.Or(opts.BagDraws, DefaultBagDraws)
	s := &r.sum
	s.Mechanism, s.Kind, s.K, s.Epsilon, s.LabelDraws, s.Classes = m.String(), m.Kind(), m.Mechanism().K(), r.eps, opts.LabelDraws, c
	if opts.Bags != nil && !r.bag {
		return nil, paramErr("bags", "only the LLP family audits bags, not "+m.Kind().String())
	}
	if (opts.Prior != nil) != sp.Release.WithPrior() {
		return nil, paramErr("prior", fmt.Sprintf("%s: only a mechanism whose release depends on a public prior (rr_prior) takes one prior per example, and it needs them", m.Kind()))
	}
	if opts.Prior != nil {
		if len(opts.Prior) != n*c {
			return nil, paramErr("prior", fmt.Sprintf("%d prior values for %d examples of %d classes (want %d)", len(opts.Prior), n, c, n*c))
		}
		r.sets = make([]pets.PriorSet, n)
		for i := range n {
			p := opts.Prior[i*c : (i+1)*c]
			if err := m.CheckPrior(p); err != nil {
				return nil, paramErr("prior", fmt.Sprintf("example %d: %v", i, err))
			}
			r.sets[i] = m.PriorSet(p)
		}
	}
	switch {
	case r.bag:
		k := m.Mechanism().K()
		r.k = k
		if opts.Bags != nil {
			b := opts.Bags
			if b.N != n {
				return nil, paramErr("bags", fmt.Sprintf("bags of %d rows for %d examples", b.N, n))
			}
			if b.NumBags == 0 {
				return nil, paramErr("bags", "no bag")
			}
			for u := range b.NumBags {
				if sz := b.Size(u); sz > k {
					return nil, paramErr("bags", fmt.Sprintf("bag %d has %d rows, more than k = %d", u, sz, k))
				}
			}
			r.bags, r.given, r.units = b, true, b.NumBags
			r.bagTot = make([]float64, b.NumBags)
			s.NBags, s.NExamples, s.NDropped = b.NumBags, b.Kept(), n-b.Kept()
		} else {
			r.units = n / k
			if r.units == 0 {
				return nil, paramErr("eta", fmt.Sprintf("%d examples do not fill one bag of k = %d", n, k))
			}
			bags, err := llp.Partition(n, k, rand.NewPCG(opts.Seed, streamPartition), false)
			if err != nil {
				return nil, paramErr("eta", err.Error())
			}
			r.bags = bags
			s.NBags, s.NExamples, s.NDropped = r.units, r.units*k, n-r.units*k
		}
		s.SEUnit = "bag"
		// The exact count-vector audit's limit (a *ParamError naming "k"),
		// before any work: bags of k (given bags are no larger, and a
		// sampler's releases may hold bags of k whatever the audit's).
		if _, err := NewBagAuditorC(m, k); err != nil {
			return nil, err
		}
	default:
		if n == 0 {
			return nil, paramErr("eta", "empty audit set")
		}
		r.units = (n + blockSize - 1) / blockSize
		s.NExamples, s.SEUnit = n, "example"
	}
	return r, nil
}

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
	set       [1]pets.PriorSet
	labels    []uint8 // LabelDraws (per example) or k (bags: the first draw's)
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
	par.Each(nChunks, len(ws), func(wi, ch int) {
		w, st := ws[wi], &r.stats[ch]
		w.bsum, w.est, w.nEst = 0, estBound{first: -1}, 0
		for u := ch * chunk; u < min((ch+1)*chunk, r.units); u++ {
			w.src.Seed(r.opts.Seed^streamUnits, mix.SplitMix64(uint64(u)))
			if r.bag {
				st.add(w.doBag(u))
			} else {
				w.doBlock(u, st)
			}
		}
		r.bsums[ch], r.ests[ch], r.nEst[ch] = w.bsum, w.est, w.nEst
	})
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
