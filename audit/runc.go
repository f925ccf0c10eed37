package audit

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"

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
	// Prior, for a kind released with a prior only (rr_prior; required),
	// is each audit example's public prior over the C classes as the
	// mechanism sees it, n×C row-major (Prior[i·C+y]); each row must pass
	// pets.CheckPrior. It chooses the row's channel (ExampleLaw.ChannelOf:
	// rr_prior's RR within the prior's set).
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
	// Progress is Options.Progress.
	Progress Progress
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
// η_iy = P(y_i = y | x_i)), each row within EtaTolerance of summing to 1
// (for C ≥ 3 every figure is that of the row divided by its sum,
// normalizeEtaC; eta itself is not modified).
// It returns Run's Result with Summary.Classes = C; every Summary field
// means what it means for Run, read for C classes as follows (multiclass.go
// has the formulas and the proofs):
//
//   - IEAdv_i = E_z[max_y P(y_i = y | z)] − max_y η_iy, exact, from the
//     example's channel: rr (and none: 1 − max_y η_iy, |MA| = ∞) by
//     IEAdvRRC, the others (rr_prior on the example's set from
//     OptionsC.Prior, bot 0) by IEAdvChannelC; the
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
func RunC(eta []float64, m *pets.Mechanism, opts OptionsC) (*Result, error) {
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
	r.sum.noValues()
	return &Result{Summary: r.sum, Samples: r.samples}, nil
}

// runBinary is RunC at C = 2: Run on class 1's probabilities.
func runBinary(eta []float64, m *pets.Mechanism, opts OptionsC) (*Result, error) {
	if err := CheckEtaC(eta, 2); err != nil {
		return nil, err
	}
	e1 := make([]float64, len(eta)/2)
	for i := range e1 {
		e1[i] = eta[2*i+1]
	}
	o := Options{Seed: opts.Seed, LabelDraws: opts.LabelDraws, MaxSamples: opts.MaxSamples, Workers: opts.Workers,
		Draws: opts.Draws, Canaries: opts.Canaries, Bags: opts.Bags, Progress: opts.Progress}
	if opts.Sampler != nil {
		o.Sampler = binarySampler{s: opts.Sampler, m: m}
	}
	if opts.Prior != nil {
		if len(opts.Prior) != len(eta) {
			return nil, paramErr("prior", fmt.Sprintf("%d prior values for %d examples of 2 classes", len(opts.Prior), len(e1)))
		}
		o.Prior = make([]float64, len(e1))
		for i := range o.Prior {
			if err := pets.CheckPrior(opts.Prior[2*i:2*i+2], 2); err != nil {
				return nil, paramErr("prior", fmt.Sprintf("example %d: %v", i, err))
			}
			o.Prior[i] = opts.Prior[2*i+1]
		}
	}
	res, err := Run(e1, m, o)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// binarySampler is a SamplerC seen as Run's Sampler at C = 2 (the same
// rows, labels, bags and proportions: C − 1 = 1 proportion per row).
type binarySampler struct {
	s SamplerC
	m *pets.Mechanism
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
	m    *pets.Mechanism
	sp   pets.Spec
	opts OptionsC

	// The kinds released per example: their law, the distinct channels
	// the examples go through (chanAt[i] is example i's; nil: every one
	// goes through chans[0]).
	ex     pets.ExampleLaw
	chans  []chanC
	chanAt []int32

	maxMA float64 // ε + DPTolerance
	isDP  bool
	eps   float64

	// The LLP family: the bags (random or given), the noise of the counts;
	// single: a release of counts (pets.ReleaseCounts), each example a bag
	// of one.
	bag       bool
	single    bool
	law       pets.BagLaw
	noise     pets.SumNoise
	k         int
	bags      *llp.Bags
	given     bool
	bagTot    []float64 // given bags: each bag's IEAdv sum
	bagDraws  int
	exactWork float64

	units   int
	stats   []unitStat
	bsums   []float64  // per chunk: Σ IEAdvBoundC
	ests    []estBound // per chunk: the estimated members' bound check
	nEst    []int      // per chunk: bags estimated
	sum     Summary
	samples []Sample
}

func newRunnerC(eta []float64, m *pets.Mechanism, opts OptionsC) (*runnerC, error) {
	c := m.Classes()
	if err := checkOptionsC(c, opts); err != nil {
		return nil, err
	}
	if err := CheckEtaC(eta, c); err != nil {
		return nil, err
	}
	eta = normalizeEtaC(eta, c)
	n := len(eta) / c
	sp := m.Spec()
	if opts.Sampler != nil && sp.Release != pets.ReleaseRaw {
		if opts.Draws < 1 {
			return nil, paramErr("draws", fmt.Sprintf("must be ≥ 1 with a sampler, got %d", opts.Draws))
		}
		if opts.Canaries < 0 {
			return nil, paramErr("canaries", fmt.Sprintf("must be ≥ 0, got %d", opts.Canaries))
		}
	}
	r := &runnerC{eta: eta, c: c, n: n, m: m, sp: sp, opts: opts, eps: m.Epsilon(), maxMA: m.Epsilon() + DPTolerance,
		isDP: sp.Privacy.DP(), bag: sp.Release.Proportions(), single: sp.Release == pets.ReleaseCounts, exactWork: opts.ExactWork,
		ex: m.ExampleLaw(), law: m.BagLaw()}
	if r.bag {
		r.noise = r.law.SumNoise()
	}
	r.bagDraws = cmp.Or(opts.BagDraws, DefaultBagDraws)
	s := &r.sum
	s.Mechanism, s.Kind, s.K, s.Epsilon, s.LabelDraws, s.Classes = m.String(), m.Kind(), m.K(), r.eps, opts.LabelDraws, c
	if opts.Bags != nil && (!r.bag || r.single) {
		return nil, paramErr("bags", "only the LLP family audits bags, not "+m.Kind().String())
	}
	if (opts.Prior != nil) != sp.Release.WithPrior() {
		return nil, paramErr("prior", fmt.Sprintf("%s: only a mechanism whose release depends on a public prior (rr_prior) takes one prior per example, and it needs them", m.Kind()))
	}
	if opts.Prior != nil && len(opts.Prior) != n*c {
		return nil, paramErr("prior", fmt.Sprintf("%d prior values for %d examples of %d classes (want %d)", len(opts.Prior), n, c, n*c))
	}
	if r.ex != nil {
		if err := r.setChannels(); err != nil {
			return nil, err
		}
	}
	if err := r.setUnits(); err != nil {
		return nil, err
	}
	return r, nil
}

// checkOptionsC refuses a class count outside [3, MaxClasses] and
// LabelDraws, MaxSamples or BagDraws out of range.
func checkOptionsC(c int, opts OptionsC) error {
	if c < 3 || c > pets.MaxClasses {
		return paramErr("classes", fmt.Sprintf("must be in [3, %d] here, got %d", pets.MaxClasses, c))
	}
	if opts.LabelDraws < 1 {
		return paramErr("label_draws", fmt.Sprintf("must be ≥ 1, got %d", opts.LabelDraws))
	}
	if opts.MaxSamples < 0 {
		return paramErr("max_samples", fmt.Sprintf("must be ≥ 0, got %d", opts.MaxSamples))
	}
	if opts.BagDraws < 0 || opts.BagDraws == 1 {
		return paramErr("bag_draws", fmt.Sprintf("must be 0 (default %d) or ≥ 2, got %d", DefaultBagDraws, opts.BagDraws))
	}
	return nil
}

// setUnits sets the units of the SE and the summary's counts: for a
// release of counts every example a bag of one, for the LLP family the
// bags (setBags), else blocks of blockSize examples; it refuses an empty
// audit set.
func (r *runnerC) setUnits() error {
	s, n := &r.sum, r.n
	switch {
	case r.single:
		// A release of counts: every example a bag of one through the bag
		// law; the unit of the SE is the example.
		if n == 0 {
			return paramErr("eta", "empty audit set")
		}
		r.k, r.units, r.bags = 1, n, llp.Singletons(n)
		s.NExamples, s.SEUnit = n, "example"
		if _, err := NewBagAuditorC(r.m, 1); err != nil {
			return err
		}
	case r.bag:
		return r.setBags()
	default:
		if n == 0 {
			return paramErr("eta", "empty audit set")
		}
		r.units = (n + blockSize - 1) / blockSize
		s.NExamples, s.SEUnit = n, "example"
	}
	return nil
}

// setBags sets the LLP family's bags of k: OptionsC.Bags (each of at most
// k rows) or a seeded random partition (the remainder dropped), and
// refuses a k past the exact count-vector audit's limit.
func (r *runnerC) setBags() error {
	s, n, k := &r.sum, r.n, r.m.K()
	r.k = k
	if b := r.opts.Bags; b != nil {
		if b.N != n {
			return paramErr("bags", fmt.Sprintf("bags of %d rows for %d examples", b.N, n))
		}
		if b.NumBags == 0 {
			return paramErr("bags", "no bag")
		}
		for u := range b.NumBags {
			if sz := b.Size(u); sz > k {
				return paramErr("bags", fmt.Sprintf("bag %d has %d rows, more than k = %d", u, sz, k))
			}
		}
		r.bags, r.given, r.units = b, true, b.NumBags
		r.bagTot = make([]float64, b.NumBags)
		s.NBags, s.NExamples, s.NDropped = b.NumBags, b.Kept(), n-b.Kept()
	} else {
		r.units = n / k
		if r.units == 0 {
			return paramErr("eta", fmt.Sprintf("%d examples do not fill one bag of k = %d", n, k))
		}
		bags, err := llp.Partition(n, k, rand.NewPCG(r.opts.Seed, streamPartition), false)
		if err != nil {
			return paramErr("eta", err.Error())
		}
		r.bags = bags
		s.NBags, s.NExamples, s.NDropped = r.units, r.units*k, n-r.units*k
	}
	s.SEUnit = "bag"
	// The exact count-vector audit's limit (a *ParamError naming "k"),
	// before any work: bags of k (given bags are no larger, and a
	// sampler's releases may hold bags of k whatever the audit's).
	if _, err := NewBagAuditorC(r.m, k); err != nil {
		return err
	}
	return nil
}
