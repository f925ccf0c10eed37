package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"labelprivacy/internal/par"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// ValueOptions configures RunValues.
type ValueOptions struct {
	// Seed drives every random choice (bags, samples, label draws).
	Seed uint64
	// Tau is τ ≥ 0, in value units, of the τ-advantage.
	Tau float64
	// Bins are the bins of an rr_bins release (required for rr_bins, nil
	// otherwise): the audit is of the channel the release used.
	Bins *pets.Bins
	// Bags, for value_bags, are the bags of the audit examples (Bags.N
	// = the examples; sizes up to k); nil: a random partition into bags of
	// k from Seed, the remainder dropped. For ara_summary (key groups)
	// they are the audit examples' key groups, of any size, and required.
	Bags *llp.Bags
	// MaxSamples ≥ 0 caps Samples (a uniformly random subset).
	MaxSamples int
	// Workers is the number of goroutines (≤ 0: GOMAXPROCS).
	Workers int
	// Sampler, when set, is the production release code: RunValues then
	// attacks Draws releases of drawn audit values made by it and plays
	// Canaries canaries (values_realized.go). Nil: those figures are NaN.
	Sampler  ValueSampler
	Draws    int
	Canaries int
	// Progress hears how far the audit has got (nil: nothing).
	Progress Progress
}

// ValueSample is one audited example kept for plots: a drawn value, the
// release of it (one draw) and the attacker's prior and posterior mean
// and spread, with the example's exact advantages.
type ValueSample struct {
	Index              int // position in the audit set
	Bag                int // its bag (value_bags), −1 otherwise
	Value              float64
	Release            float64 // the released value (value_rr), the bag's mean, 0 for bot
	PriorMean, PriorSD float64
	PostMean, PostSD   float64
	R2Adv, TauAdv      float64
}

// ValueResult is the output of RunValues.
type ValueResult struct {
	Summary
	Samples []ValueSample // sorted by Index; at most MaxSamples
}

// EtaTolerance is how far from 1 a row of η may sum (float32 softmax
// outputs, a clean model's bins spread over the grid): rows are divided by
// their sums.
const valueEtaTolerance = 1e-4

// RunValues audits the mechanism m on conversion values (m.OnValues())
// for the audit examples whose priors over m's grid are eta (n rows of
// G = m.Grid().Points() values, row-major, each a law: ≥ 0, summing to 1
// within 1e-4, divided by its sum): per example the exact posterior
// variance and τ-success of the Bayes attacker who knows its prior and the
// mechanism (values_exact.go), averaged into the R²- and τ-advantages, the
// latter checked against its ε-DP worst case (a *ValueBoundViolation
// beyond it by more than BoundTolerance); with a Sampler, the realized
// attack and the canaries (values_realized.go). Errors wrap
// ErrInvalidInput (as *ParamError naming the option) for bad input.
func RunValues(eta []float64, m *pets.Mechanism, o ValueOptions) (*ValueResult, error) {
	r, err := newValueRunner(eta, m, o)
	if err != nil {
		return nil, err
	}
	r.exact()
	if err := r.summarize(); err != nil {
		return nil, err
	}
	r.sample()
	r.sum.RealizedGain, r.sum.RealizedGainSE, r.sum.RealizedZ = math.NaN(), math.NaN(), math.NaN()
	r.sum.RealizedR2, r.sum.RealizedR2SE, r.sum.EpsLower = math.NaN(), math.NaN(), math.NaN()
	if o.Sampler != nil && r.law.Form() != pets.ValueIdentity {
		if err := r.realize(); err != nil {
			return nil, err
		}
	}
	r.sum.noClasses()
	return &ValueResult{Summary: r.sum, Samples: r.samples}, nil
}

// valueRunner is one RunValues call.
type valueRunner struct {
	m     *pets.Mechanism
	law   pets.ValueLaw
	o     ValueOptions
	g     pets.Grid
	v     []float64 // grid values
	n, gp int       // examples, grid points
	l     int       // τ-window length
	eta   []float64 // rows, normalized
	eps   float64   // the channel's ε (the bins' for rr_bins), for the bound
	// lambda is the Laplace rate 1/b (laplace, noisy bags), 0 otherwise.
	lambda float64
	bags   *llp.Bags   // value_bags: the bags
	q      [][]float64 // value_bags: each example's bag-mates' total law (nil: not in a bag)
	pri    []valuePrior
	stat   []valueStat
	ir2    []float64 // each example's R²-advantage
	itau   []float64 // and τ-advantage
	sum    Summary
	prog   Progress

	samples []ValueSample
}

// valuePrior is an example's prior summary.
type valuePrior struct{ mean, vari, kappa float64 }

func newValueRunner(eta []float64, m *pets.Mechanism, o ValueOptions) (*valueRunner, error) {
	if m == nil || !m.OnValues() {
		return nil, paramErr("mechanism", "RunValues audits a mechanism on conversion values")
	}
	law := m.ValueLaw()
	g := law.Grid()
	gp := g.Points()
	switch {
	case len(eta) == 0 || len(eta)%gp != 0:
		return nil, paramErr("eta", fmt.Sprintf("%d values are not whole rows of the grid's %d points", len(eta), gp))
	case !(o.Tau >= 0) || math.IsInf(o.Tau, 0):
		return nil, paramErr("tau", fmt.Sprintf("τ must be finite and ≥ 0, got %v", o.Tau))
	case o.MaxSamples < 0:
		return nil, paramErr("max_samples", fmt.Sprintf("must be ≥ 0, got %d", o.MaxSamples))
	case o.Sampler != nil && o.Draws < 1:
		return nil, paramErr("draws", fmt.Sprintf("must be ≥ 1 with a sampler, got %d", o.Draws))
	case o.Canaries < 0:
		return nil, paramErr("canaries", fmt.Sprintf("must be ≥ 0, got %d", o.Canaries))
	case (law.Form() == pets.ValueBins) != (o.Bins != nil):
		return nil, paramErr("bins", "rr_bins is audited with the bins of its release, and only it")
	case o.Bins != nil && o.Bins.Grid != g:
		return nil, paramErr("bins", fmt.Sprintf("bins of the grid %s for a mechanism on %s", o.Bins.Grid, g))
	case o.Bags != nil && law.Form() != pets.ValueBagMean:
		return nil, paramErr("bags", fmt.Sprintf("%s releases no bags", m))
	}
	n := len(eta) / gp
	r := &valueRunner{m: m, law: law, o: o, g: g, v: g.Values(), n: n, gp: gp, l: windowLen(g, o.Tau), prog: progressOf(o.Progress)}
	r.eta = make([]float64, len(eta))
	for i := range n {
		row := eta[i*gp : (i+1)*gp]
		var s float64
		for j, x := range row {
			if !(x >= 0 && x <= 1+valueEtaTolerance) {
				return nil, paramErr("eta", fmt.Sprintf("example %d gives the value %v probability %v", i, g.Value(j), x))
			}
			s += x
		}
		if math.Abs(s-1) > valueEtaTolerance {
			return nil, paramErr("eta", fmt.Sprintf("example %d's law over the grid sums to %v, not 1", i, s))
		}
		for j, x := range row {
			r.eta[i*gp+j] = x / s
		}
	}
	r.eps = m.ValueEpsilon() // the value's own ε (ara_summary: its budget share of ε)
	if o.Bins != nil {
		r.eps = o.Bins.Epsilon
	}
	if b := law.Scale(); b > 0 {
		r.lambda = 1 / b
	}
	s := &r.sum
	*s = Summary{Mechanism: m.String(), Kind: m.Kind(), K: m.K(), Epsilon: m.Epsilon(), NExamples: n, LabelDraws: 1,
		ValueMax: g.Max, ValueStep: g.Step, Tau: o.Tau, SEUnit: "example"}
	if law.Form() == pets.ValueBagMean {
		if err := r.setBags(); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// setBags takes the given bags or draws a random partition.
func (r *valueRunner) setBags() error {
	b := r.o.Bags
	k := r.m.K()
	if b == nil && r.m.Spec().Takes.KeyGroups {
		return paramErr("bags", fmt.Sprintf("%s is audited on the key groups of its audit examples (ValueOptions.Bags)", r.m))
	}
	if b == nil {
		var err error
		b, err = llp.Partition(r.n, k, rand.NewPCG(r.o.Seed, streamValueBags), false)
		if err != nil {
			return paramErr("k", fmt.Sprintf("%d audit examples do not fill a bag of k = %d", r.n, k))
		}
	}
	if b.N != r.n || b.NumBags == 0 {
		return paramErr("bags", fmt.Sprintf("bags of %d rows for %d examples", b.N, r.n))
	}
	if r.m.Spec().Takes.KeyGroups { // ara_summary: whole key groups, whatever their size
		k = r.n
	}
	for u := range b.NumBags {
		if sz := b.Size(u); sz > k {
			return paramErr("bags", fmt.Sprintf("bag %d has %d rows, more than k = %d", u, sz, k))
		}
	}
	r.bags = b
	s := &r.sum
	s.NBags, s.NExamples, s.NDropped, s.SEUnit = b.NumBags, b.Kept(), r.n-b.Kept(), "bag"
	return nil
}

// Streams of RunValues's draws.
const (
	streamValueBags    = 0x76616c7565_01
	streamValueSamples = 0x76616c7565_02
	streamValueDraws   = 0x76616c7565_03
	streamValueCanary  = 0x76616c7565_04
)

// row is example i's prior.
func (r *valueRunner) row(i int) []float64 { return r.eta[i*r.gp : (i+1)*r.gp] }

// exact computes every example's prior summary and exact figures.
func (r *valueRunner) exact() {
	r.pri, r.stat = make([]valuePrior, r.n), make([]valueStat, r.n)
	for i := range r.n {
		p := &r.pri[i]
		p.mean, p.vari, p.kappa = priorStats(r.row(i), r.v, r.l)
	}
	if r.bags != nil {
		r.q = make([][]float64, r.n)
		r.prog.Pass("bags", r.bags.NumBags)
		par.Each(r.bags.NumBags, r.o.Workers, func(_, u int) {
			mem := r.bags.Members(u)
			ps := make([][]float64, len(mem))
			for j, i := range mem {
				ps[j] = r.row(int(i))
			}
			qs := bagLaws(ps)
			for j, i := range mem {
				r.q[i] = qs[j]
				if r.lambda > 0 {
					r.stat[i] = noisyMemberStat(ps[j], qs[j], r.v, r.lambda, r.g.Step, r.l)
				} else {
					r.stat[i] = exactMemberStat(ps[j], qs[j], r.v, r.l)
				}
			}
			r.prog.Done(1)
		})
		return
	}
	r.prog.Pass("examples", r.n)
	const chunk = 64
	par.Each((r.n+chunk-1)/chunk, r.o.Workers, func(_, c int) {
		lo, hi := c*chunk, min((c+1)*chunk, r.n)
		for i := lo; i < hi; i++ {
			p := r.row(i)
			switch r.law.Form() {
			case pets.ValueIdentity:
				r.stat[i] = valueStat{0, 1}
			case pets.ValueNothing:
				r.stat[i] = valueStat{r.pri[i].vari, r.pri[i].kappa}
			case pets.ValueLaplace:
				r.stat[i] = noisyMemberStat(p, []float64{1}, r.v, r.lambda, r.g.Step, r.l)
			case pets.ValueBins:
				r.stat[i] = binsStat(p, r.v, r.o.Bins, r.l)
			}
		}
		r.prog.Done(hi - lo)
	})
}

// ValueBoundViolation reports an example whose exact τ-advantage under an
// ε-DP mechanism exceeds its ε-DP worst case.
type ValueBoundViolation struct {
	Mechanism string
	Index     int
	Kappa     float64 // the blind τ-success
	TauAdv    float64
	Bound     float64
	Epsilon   float64
}

func (e *ValueBoundViolation) Error() string {
	return fmt.Sprintf("audit: %s: example %d has τ-advantage %v, above the ε-DP worst case %v at ε = %g (blind success %v)",
		e.Mechanism, e.Index, e.TauAdv, e.Bound, e.Epsilon, e.Kappa)
}

// Unwrap makes errors.Is(err, ErrDPViolation) true.
func (e *ValueBoundViolation) Unwrap() error { return ErrDPViolation }

// TauBound is the ε-DP worst case of the τ-advantage at blind success κ:
// e^ε·κ/(e^ε·κ + 1 − κ) − κ. Every release z of an ε-DP mechanism keeps
// the posterior odds of any event within e^{±ε} of its prior odds, so
// P(|y − g| ≤ τ | z) ≤ f(P(|y − g| ≤ τ)) ≤ f(κ) for every g, f(x) =
// e^ε x/(e^ε x + 1 − x) increasing; RR on the event attains it.
func TauBound(kappa, eps float64) float64 {
	if math.IsInf(eps, 1) {
		return 1 - kappa
	}
	e := math.Exp(eps)
	return e*kappa/(e*kappa+1-kappa) - kappa
}

// summarize averages the examples' figures and checks the bound.
func (r *valueRunner) summarize() error {
	s := &r.sum
	dp := r.m.Spec().Privacy.DP() && !math.IsInf(r.m.Epsilon(), 1)
	ir2, itau, bound := make([]float64, r.n), make([]float64, r.n), make([]float64, r.n)
	var postSum, varSum, kappaSum float64
	for i := range r.n {
		if r.bags != nil && r.bags.BagOf[i] < 0 {
			continue
		}
		p, st := r.pri[i], r.stat[i]
		if p.vari > 0 {
			ir2[i] = max(0, 1-st.post/p.vari)
		}
		itau[i] = st.succ - p.kappa
		bound[i] = math.NaN()
		if dp {
			bound[i] = TauBound(p.kappa, r.eps)
			if itau[i] > bound[i]+BoundTolerance {
				return &ValueBoundViolation{Mechanism: r.m.String(), Index: i, Kappa: p.kappa, TauAdv: itau[i], Bound: bound[i], Epsilon: r.eps}
			}
		}
		postSum += st.post
		varSum += p.vari
		kappaSum += p.kappa
	}
	s.R2AdvRatio = math.NaN()
	if varSum > 0 {
		s.R2AdvRatio = 1 - postSum/varSum
	}
	s.R2Adv, s.R2AdvSE = r.mean(ir2)
	s.TauAdv, s.TauAdvSE = r.mean(itau)
	s.TauAdvBound, _ = r.mean(bound)
	s.TauBlind = kappaSum / float64(s.NExamples)
	r.ir2, r.itau = ir2, itau
	return nil
}

// mean is the mean of x over the audited examples and its standard error:
// over examples, or over bags as a ratio estimator (givenBagsEAdvOf).
func (r *valueRunner) mean(x []float64) (mean, se float64) {
	if r.bags == nil {
		return meanSE(x)
	}
	tot := make([]float64, r.bags.NumBags)
	for u := range tot {
		for _, i := range r.bags.Members(u) {
			tot[u] += x[i]
		}
	}
	return givenBagsEAdvOf(tot, r.bags)
}

// valuePost is an example's posterior given a release: its weights over
// the grid (not normalized), summarized.
type valuePost struct {
	mean, sd float64
	win      int // start of the window of largest posterior mass
}

// summarizePosterior summarizes weights w over the grid.
func (r *valueRunner) summarizePosterior(w, c []float64) valuePost {
	var m valueMoments
	c[0] = 0
	for i, x := range w {
		m.add(x, r.v[i])
		c[i+1] = c[i] + x
	}
	_, at := maxWindowPrefix(c, r.l)
	return valuePost{mean: m.mean, sd: math.Sqrt(m.variance()), win: at}
}

// weights writes into w the posterior weights of example i given its
// release z (a value, or its bag's mean) and, for a bag, the size of its
// bag.
func (r *valueRunner) weights(i int, z float64, bagN int, w []float64) {
	p := r.row(i)
	switch r.law.Form() {
	case pets.ValueNothing:
		copy(w, p)
	case pets.ValueLaplace:
		memberLikelihood(w, []float64{1}, r.lambda, r.g.Step, z)
		for j := range w {
			w[j] *= p[j]
		}
	case pets.ValueBins:
		j := r.o.Bins.ValueIndex(z)
		for y := range w {
			w[y] = p[y] * r.o.Bins.Prob(j, y)
		}
	case pets.ValueBagMean:
		total := z * float64(bagN)
		q := r.q[i]
		if r.lambda > 0 {
			memberLikelihood(w, q, r.lambda, r.g.Step, total)
			for j := range w {
				w[j] *= p[j]
			}
			return
		}
		t := int(math.Round(total / r.g.Step))
		for y := range w {
			w[y] = 0
			if u := t - y; u >= 0 && u < len(q) {
				w[y] = p[y] * q[u]
			}
		}
	}
}

// memberLikelihood writes into dst, for every grid point i, the density of
// a Laplace release T of a total (rate lambda, grid step s) given the
// member's value at point i and its bag-mates' law q, up to a common
// factor: Σ_t q[t]·e^{−λ|T − s(i + t)|} = e^{−λδ}·LQ(j − i) +
// e^{−λ(s−δ)}·RQ(j + 1 − i), j = ⌊T/s⌋, δ = T − s·j (noisyMemberStat's LQ
// and RQ), computed in logs and scaled by the largest, so that releases
// far out in the tails neither underflow nor overflow.
func memberLikelihood(dst, q []float64, lambda, s, T float64) {
	last := len(q) - 1
	lq, rq := make([]float64, len(q)), make([]float64, len(q))
	decay := math.Exp(-lambda * s)
	for t := range q {
		lq[t] = q[t]
		if t > 0 {
			lq[t] += lq[t-1] * decay
		}
	}
	for t := last; t >= 0; t-- {
		rq[t] = q[t]
		if t < last {
			rq[t] += rq[t+1] * decay
		}
	}
	j := math.Floor(T / s)
	delta := T - s*j
	top := math.Inf(-1)
	for i := range dst {
		u := j - float64(i)
		lt, rt := math.Inf(-1), math.Inf(-1)
		switch {
		case u < 0:
		case u <= float64(last):
			lt = math.Log(lq[int(u)]) - lambda*delta
		default:
			lt = math.Log(lq[last]) - lambda*s*(u-float64(last)) - lambda*delta
		}
		switch u1 := u + 1; {
		case u1 > float64(last):
		case u1 >= 0:
			rt = math.Log(rq[int(u1)]) - lambda*(s-delta)
		default:
			rt = math.Log(rq[0]) - lambda*s*(-u1) - lambda*(s-delta)
		}
		hi := max(lt, rt)
		if math.IsInf(hi, -1) {
			dst[i] = math.Inf(-1)
			continue
		}
		dst[i] = hi + math.Log1p(math.Exp(min(lt, rt)-hi))
		top = max(top, dst[i])
	}
	for i, x := range dst {
		dst[i] = math.Exp(x - top)
	}
}

// drawValue draws a grid value from example i's prior with a uniform u.
func (r *valueRunner) drawValue(i int, u float64) float64 {
	p := r.row(i)
	var c float64
	for j, x := range p {
		if c += x; u < c {
			return r.v[j]
		}
	}
	return r.v[len(p)-1]
}

// sample keeps up to MaxSamples examples (a seeded uniform subset, in
// index order), each with a drawn value, a release of it through the
// mechanism's law (its bag drawn whole), and the posterior given it.
func (r *valueRunner) sample() {
	k := min(r.o.MaxSamples, r.sum.NExamples)
	if k == 0 {
		return
	}
	rng := rand.New(rand.NewPCG(r.o.Seed, streamValueSamples))
	var pick []int
	for i := range r.n {
		if r.bags == nil || r.bags.BagOf[i] >= 0 {
			pick = append(pick, i)
		}
	}
	rng.Shuffle(len(pick), func(a, b int) { pick[a], pick[b] = pick[b], pick[a] })
	pick = pick[:k]
	slices.Sort(pick)
	values := make([]float64, r.n)
	for i := range values {
		values[i] = r.drawValue(i, rng.Float64())
	}
	rel, bagN := r.drawRelease(values, rng)
	w, c := make([]float64, r.gp), make([]float64, r.gp+1)
	for _, i := range pick {
		r.weights(i, rel[i], bagN[i], w)
		post := r.summarizePosterior(w, c)
		if r.law.Form() == pets.ValueIdentity {
			post = valuePost{mean: values[i]}
		}
		bag := -1
		if r.bags != nil {
			bag = int(r.bags.BagOf[i])
		}
		p := r.pri[i]
		r.samples = append(r.samples, ValueSample{Index: i, Bag: bag, Value: values[i], Release: rel[i], PriorMean: p.mean,
			PriorSD: math.Sqrt(p.vari), PostMean: post.mean, PostSD: post.sd, R2Adv: r.ir2[i], TauAdv: r.itau[i]})
	}
}

// drawRelease releases values through the mechanism's own law (the
// samples' release; the realized attack uses the Sampler): per example,
// or each bag's mean to its members, with each example's bag size.
func (r *valueRunner) drawRelease(values []float64, rng *rand.Rand) (rel []float64, bagN []int) {
	rel, bagN = make([]float64, r.n), make([]int, r.n)
	switch r.law.Form() {
	case pets.ValueBagMean:
		for u := range r.bags.NumBags {
			mem := r.bags.Members(u)
			var sum float64
			for _, i := range mem {
				sum += values[i]
			}
			z := r.law.ReleaseBag(sum, len(mem), rng)
			for _, i := range mem {
				rel[i], bagN[i] = z, len(mem)
			}
		}
	case pets.ValueNothing:
	default:
		r.law.Release(rel, values, r.o.Bins, rng)
	}
	return rel, bagN
}
