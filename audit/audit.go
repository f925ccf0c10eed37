package audit

import (
	"errors"
	"fmt"
	"math"

	"labelprivacy/llp"
	"labelprivacy/pets"
)

// Options configures Run.
type Options struct {
	// Seed drives every random choice (bag partition, label draws, noise
	// of the releases, which samples are kept): the same seed gives the
	// same Result, whatever Workers.
	Seed uint64
	// LabelDraws R ≥ 1: label vectors y ~ Bernoulli(η) drawn per bag (per
	// example for rr, none, bot), each released once through the mechanism,
	// for the multiplicative advantage. IEAdv/EAdv are exact and do not
	// depend on R.
	LabelDraws int
	// MaxSamples ≥ 0 caps Result.Samples (0: keep none). The kept examples
	// are a uniformly random subset (bottom-MaxSamples of seeded random
	// keys), all of them if MaxSamples ≥ NExamples.
	MaxSamples int
	// Workers is the number of goroutines (≤ 0: GOMAXPROCS).
	Workers int

	// Sampler, when set, is the production release code: Run then also
	// attacks Draws fresh releases of the audit labels made by it (the
	// realized advantage and the likelihood checks of realized.go) and
	// Canaries canary trials (the empirical ε lower bound of canary.go).
	// Nil: those figures are NaN. Never used for none, whose raw labels
	// are never released.
	Sampler Sampler
	// Draws M ≥ 1: releases attacked for the realized advantage (with a
	// Sampler).
	Draws int
	// Canaries ≥ 0: canaries of each canary game, for EpsLower and
	// EpsLowerRealBags (with a Sampler; 0: none).
	Canaries int
	// Bags, for the LLP family, are the bags of the audit examples that the
	// release's own bag rule forms on them (curated bags: llp.Sorted,
	// llp.Keyed); Bags.N must be len(eta). Bags may differ in size (a kept
	// remainder): each is audited exactly at its size, EAdv is the mean
	// over the examples in bags and EAdvSE the ratio estimator's standard
	// error over bags. Nil: the audit draws a random partition into bags
	// of k from Seed, dropping the remainder (the paper's random bags).
	Bags *llp.Bags
	// Prior, for a kind released with a prior only (rr_prior; required,
	// len(eta)), is each audit example's public prior p_i = P(y_i = 1 | x_i)
	// as the mechanism sees it (the stage-1 model's prediction; ½ for an
	// example in stage 1, where rr_prior is RR). It chooses the example's
	// channel (pets.ExampleLaw.ChannelOf of (1 − p_i, p_i)): rr_prior's
	// argmax branch, which shows nothing, or RR.
	Prior []float64
	// Progress, when set, hears how far the audit has got (nil: nothing).
	Progress Progress
}

// Progress hears how far Run or RunC has got: each pass of the audit (the
// exact pass over "bags" or "examples", then with a sampler the
// "releases" of the realized attack and the rounds of "canary releases")
// starts with Pass and its count of units, and Done counts the units
// finished, from the workers' goroutines (at most a chunk's or a unit's
// worth at a time). It never changes a result.
type Progress interface {
	Pass(of string, units int)
	Done(n int)
}

// noProgress is the Progress of an audit without one.
type noProgress struct{}

func (noProgress) Pass(string, int) {}
func (noProgress) Done(int)         {}

// progressOf is p, or one that hears nothing.
func progressOf(p Progress) Progress {
	if p == nil {
		return noProgress{}
	}
	return p
}

// Summary holds the audit figures of one PET setting on one audit set.
// Quantiles and fractions are over all NExamples·LabelDraws realized |MA|
// values. RunC fills the same fields for labels with C ≥ 3 classes, each
// with the meaning stated here read for a vector η_i: IEAdv_i is
// E[max_y P(y | release)] − max_y η_iy, |MA| is MultAdvC (the largest
// change of log posterior odds between two classes), EAdvBound averages
// IEAdvBoundC, the realized gain is the argmax attacker's (RunC's doc).
type Summary struct {
	Mechanism  string    // pets.Mechanism.String(), e.g. "llp_geom(k=8, ε=1)"
	Kind       pets.Kind // mechanism kind
	K          int       // bag size (0 outside the LLP family)
	Epsilon    float64   // label-DP ε of one release (+Inf for none and llp, 0 for bot)
	NExamples  int       // examples audited (in complete bags for the LLP family)
	NDropped   int       // examples left out: len(eta) mod k for the LLP family, else 0
	NBags      int       // complete bags audited (0 outside the LLP family)
	LabelDraws int       // R
	// Classes is C, the number of label classes (2 for Run; RunC's
	// mechanism's). A Summary read back from a file of an earlier format
	// may hold 0: read it as 2.
	Classes int

	// EAdv is the mean of IEAdv_i over the audited examples: the exact
	// additive expected attack advantage of the Bayes attacker (Definition
	// 3.1, Lemma A.1) on this audit set and bag partition.
	EAdv float64
	// EAdvSE is the standard error of EAdv. Outside the LLP family the
	// examples are independent units and it is sd(IEAdv_i)/√n. In the LLP
	// family the IEAdv values of one bag are dependent (they share the bag's
	// sum), while bags are independent random groups, so it is
	// sd(bag mean IEAdv)/√NBags. NaN with fewer than 2 units.
	EAdvSE float64
	// SEUnit is "example" or "bag": the unit EAdvSE is computed over.
	SEUnit string
	// EAdvEstimated is true when some bag's IEAdv values are unbiased
	// estimates rather than exact (RunC, C ≥ 3: llp_geom bags whose release
	// space is too large to enumerate, llp_lap bags), each member's from
	// BagDraws releases drawn from the bag's exact law. EAdv is then an
	// unbiased estimate of the exact value and EAdvSE includes the sampling
	// error: each bag's estimated mean is its exact mean plus independent
	// zero-mean noise, so the SE over bags covers both. False for Run, whose
	// figures are always exact.
	EAdvEstimated bool
	// BagDraws is the number of releases drawn per estimated bag (0 when
	// EAdvEstimated is false).
	BagDraws int

	// EAdvBound is the ε-label-DP worst case: the mean over the audited
	// examples of IEAdvBound(η_i, ε), the largest IEAdv_i any ε-label-DP
	// mechanism can give at that prior (RR(ε) attains it). Every IEAdv_i
	// of an ε-DP kind is checked against it (a *BoundViolation otherwise).
	// NaN for none and llp (no ε), 0 for bot.
	EAdvBound float64

	// The realized attack through Options.Sampler (NaN without one, and for
	// none). RealizedDraws is M; RealizedGain the mean over the M releases
	// of the Bayes attacker's accuracy minus the prior-only attacker's on
	// the released examples; RealizedGainSE the sd of the M per-release
	// gains over √M (NaN for M < 2); RealizedZ the standardized difference
	// between the realized gains and the exact prediction on the bags each
	// release made (the guard's statistic, see realized.go).
	RealizedDraws  int
	RealizedGain   float64
	RealizedGainSE float64
	RealizedZ      float64

	// Canaries is the number of canaries played in each canary game
	// (canary.go). EpsLower is the empirical lower bound on ε at 95%
	// confidence from the controlled game (every label but the canaries'
	// fixed and known; the one-run bound of Steinke, Nasr and Jagielski):
	// what the releases certify about the mechanism's ε. EpsLowerRealBags,
	// for the LLP family, is the same canaries' bound when their bag-mates
	// are audit examples with labels drawn from η (the paper's setting: the
	// attacker does not know them); NaN for the other kinds. Both are
	// finite and ≥ 0 (0: the attack shows nothing); NaN without a Sampler
	// and for none.
	Canaries         int
	EpsLower         float64
	EpsLowerRealBags float64

	// |MA| quantiles (nearest rank: the value of rank ⌈q·N⌉ among the N
	// realized |MA| values, +Inf ranking highest, so a quantile may be +Inf),
	// reported to a relative precision of 2^-12 (see maHist); MAMax is exact.
	MAP50, MAP90, MAP98, MAP99, MAMax float64
	// MAInfFrac is the fraction of realized |MA| values that are +Inf
	// (posterior 0 or 1 from a non-degenerate prior: e.g. an llp bag whose
	// labels are all equal, or any none release).
	MAInfFrac float64
	// MACount is N = NExamples·LabelDraws.
	MACount int64
	// MAMean is the mean realized |MA| (maHist.mean: exact when the values
	// are few and distinct, within a relative 2^-12 otherwise; +Inf if any
	// is +Inf). It separates rr_prior (|MA| 0 on its argmax branch, ε on
	// its RR branch) from rr (ε everywhere) where quantiles may not.
	MAMean float64

	// Conversion values (RunValues, values.go): NaN (0 for the grid) in an
	// audit of classes, whose figures above are NaN in one of values
	// (EAdv … MAMean), except the realized attack's and the canaries'.
	// ValueMax and ValueStep are the grid's B and step; Tau is τ.
	ValueMax, ValueStep, Tau float64
	// R2Adv ± R2AdvSE is the mean over the audited examples of the
	// R²-advantage 1 − E_z[Var(y | z)]/Var(y) (0 for a prior of no
	// variance); R2AdvRatio the dataset-level ratio 1 − Σ E_z[Var(y | z)] /
	// Σ Var(y).
	R2Adv, R2AdvSE, R2AdvRatio float64
	// TauAdv ± TauAdvSE is the mean τ-advantage E_z[max_g P(|y − g| ≤ τ |
	// z)] − κ, κ = max_g P(|y − g| ≤ τ) the blind success (mean TauBlind);
	// TauAdvBound the mean over the examples of its ε-DP worst case
	// e^ε·κ/(e^ε·κ + 1 − κ) − κ (NaN when not DP, 0 for bot).
	TauAdv, TauAdvSE, TauAdvBound, TauBlind float64
	// RealizedR2 ± RealizedR2SE is the realized R²-advantage over the
	// Draws releases (1 − Σ(y − E[y | z])²/Σ Var(y) per release, the mean
	// over releases); RealizedGain is then the realized τ-advantage.
	RealizedR2, RealizedR2SE float64
}

// Sample is one audited example kept for plots: the (prior, posterior)
// scatter of Figure 1 and the per-example IEAdv and |MA| CDFs of Figure 2.
// The label, release, posterior and |MA| come from its first label draw.
//
// With C ≥ 3 classes (RunC), Prior and Posterior are the probabilities the
// attacker gives the drawn label y_i, η_{i,y_i} and P(y_i | release): the
// point lies above the diagonal when the release moved the attacker towards
// the true label. The scatter keeps Figure 1's reading: the log odds of any
// one class against the rest move by at most |MA| (the posterior odds are
// the prior odds times η-weighted likelihood ratios, each within
// e^{±|MA|}), so a spindle is again a level of |MA|, and a posterior of 1
// (the label revealed) lies on the square's edge; the posterior of the
// true label is never 0 (the release has positive likelihood under it).
// At C = 2 they are P(y_i = 1), the paper's axes.
type Sample struct {
	Index int // position in the audit set (eta's example) given to Run or RunC
	Bag   int // its bag in the audit's partition (LLP family), −1 for the other kinds
	// Prior is η_i (C ≥ 3: η_{i,y_i}, the drawn label's prior).
	Prior float64
	Label uint8 // drawn y_i (a class 0..C−1)
	// Release is the released value: the label (rr, rr_prior, none), the
	// proportion α (LLP family; C ≥ 3: the released proportion of class
	// y_i, or for class 0, whose count is implied, 1 − Σ_c α_c: under
	// llp_geom's and llp_lap's noise that may leave [0, 1]), 0 (bot).
	Release float64
	// Posterior is the Bayes attacker's P(y_i = 1 | release) (C ≥ 3:
	// P(y_i = drawn label | release)).
	Posterior float64
	IEAdv     float64 // exact (or, for an estimated bag, estimated) individual expected attack advantage
	AbsMA     float64 // |log-odds change| of this draw (may be +Inf); C ≥ 3: MultAdvC
}

// Result is the output of Run.
type Result struct {
	Summary
	Samples []Sample // sorted by Index; at most Options.MaxSamples
}

// ErrInvalidInput is wrapped by every validation error of Run.
var ErrInvalidInput = errors.New("audit: invalid input")

// EtaError reports an η value that is not a finite number in [0, 1].
type EtaError struct {
	Index int
	Value float64
}

func (e *EtaError) Error() string {
	return fmt.Sprintf("audit: eta[%d] = %v: must be finite and in [0, 1]", e.Index, e.Value)
}

// Unwrap makes errors.Is(err, ErrInvalidInput) true.
func (e *EtaError) Unwrap() error { return ErrInvalidInput }

// ParamError reports an invalid argument or option by name ("mechanism",
// "eta", "label_draws", "max_samples"): pets.ParamError with Pkg "audit",
// wrapping ErrInvalidInput (paramErr).
type ParamError = pets.ParamError

// paramErr is the audit's *ParamError: errors.Is(err, ErrInvalidInput).
func paramErr(param, msg string) *ParamError {
	return &ParamError{Param: param, Msg: msg, Pkg: "audit", Err: ErrInvalidInput}
}

// DPTolerance is the rounding slack of the ε-DP check: a realized |MA| of an
// ε-DP mechanism may exceed ε by at most this much (measured excess: a few
// ulps of ε).
const DPTolerance = 1e-9

// ErrDPViolation is wrapped by every *DPViolation.
var ErrDPViolation = errors.New("audit: ε-label-DP violated")

// DPViolation reports a realized multiplicative advantage |MA| above
// ε + DPTolerance for a mechanism that claims ε-label-DP (rr, llp_lap,
// llp_geom): for ε-DP, |MA| = |log P(z | y_i=1)/P(z | y_i=0)| ≤ ε for every
// release z (Definition 3.6), so the mechanism's law or its implementation
// is wrong. Index is the audited example (position in eta) of the
// violation with the smallest index; MA is its largest |MA| over the label
// draws.
type DPViolation struct {
	Mechanism string  // pets.Mechanism.String()
	Epsilon   float64 // the claimed ε
	MA        float64 // the realized |MA| (may be +Inf)
	Index     int
}

func (e *DPViolation) Error() string {
	return fmt.Sprintf("audit: %s is not %v-label-DP: example %d has |MA| = %.17g > ε + %g",
		e.Mechanism, e.Epsilon, e.Index, e.MA, DPTolerance)
}

// Unwrap makes errors.Is(err, ErrDPViolation) true.
func (e *DPViolation) Unwrap() error { return ErrDPViolation }

// Stream constants separating the random streams derived from the seed.
const (
	streamPartition = 0x243f6a8885a308d3
	streamUnits     = 0x13198a2e03707344
)

// blockSize is the unit of work (and of the deterministic reduction) for
// the per-example kinds.
const blockSize = 4096

// Run audits the PET m on the audit set eta (η_i = P(y_i = 1 | x_i)).
//
//   - rr: IEAdv_i in closed form (Theorem 3.5 / A.17); |MA| = ε.
//   - llp, llp_geom, llp_lap: the examples are shuffled (seeded) into
//     ⌊n/k⌋ bags of k, the remainder dropped (Summary.NDropped); per bag the
//     exact Poisson-binomial law of the sum and each member's leave-one-out
//     law give the Bayes posterior and IEAdv_i exactly (O(k) per member).
//   - none: the label is revealed: IEAdv_i = min(η_i, 1−η_i), |MA| = +Inf.
//   - bot: nothing is revealed: IEAdv_i = 0, |MA| = 0, posterior = prior.
//   - rr_prior: with Options.Prior, an example on the argmax branch reveals
//     nothing about its label (IEAdv_i = 0, |MA| = 0, posterior = η_i); one
//     on the RR branch is audited as rr (Theorem 3.5, |MA| = ε).
//   - With Options.Bags, the LLP family is audited within those bags.
//
// The multiplicative advantage (Definition 3.6) of each example is realized
// LabelDraws times: labels y ~ Bernoulli(η) and the release are drawn with
// the mechanism's own release functions, and
// I = log P(release | y_i=1) − log P(release | y_i=0), which equals
// logit(posterior) − logit(η_i) for 0 < η_i < 1 and is its continuous
// extension (I does not depend on η_i) at η_i ∈ {0, 1}. It is ±Inf exactly
// when one of the two likelihoods is 0 (posterior 0 or 1: an llp bag whose
// labels are all equal, any none release). For rr, |I| = log((1−π)/π) (= ε)
// for every example and release. For the ε-DP kinds (rr, llp_lap, llp_geom)
// every realized |I| is checked against ε, uncapped: one above
// ε + DPTolerance fails the audit with a *DPViolation (and no Result), and
// every IEAdv_i above IEAdvBound(η_i, ε) with a *BoundViolation. Labels are
// drawn as 1{U < η_i} with a 53-bit uniform U.
//
// With Options.Sampler (all kinds but none) Run also attacks Options.Draws
// releases made by the sampler and plays Options.Canaries canary trials
// (realized.go, canary.go); releases that disagree with the mechanism's
// stated likelihood fail it with a *SamplerError (ErrReleaseMismatch).
func Run(eta []float64, m *pets.Mechanism, opts Options) (*Result, error) {
	r, err := newRunner(eta, m, opts)
	if err != nil {
		return nil, err
	}
	if err := r.run(); err != nil {
		return nil, err
	}
	r.sum.RealizedGain, r.sum.RealizedGainSE, r.sum.RealizedZ = math.NaN(), math.NaN(), math.NaN()
	r.sum.EpsLower, r.sum.EpsLowerRealBags = math.NaN(), math.NaN()
	if opts.Sampler != nil && m.Spec().Release != pets.ReleaseRaw {
		if err := r.realize(); err != nil {
			return nil, err
		}
	}
	r.sum.noValues()
	return &Result{Summary: r.sum, Samples: r.samples}, nil
}

// noValues sets the figures of conversion values NaN (an audit of classes).
func (s *Summary) noValues() {
	nan := math.NaN()
	s.Tau, s.R2Adv, s.R2AdvSE, s.R2AdvRatio, s.TauAdv, s.TauAdvSE, s.TauAdvBound, s.TauBlind = nan, nan, nan, nan, nan, nan, nan, nan
	s.RealizedR2, s.RealizedR2SE = nan, nan
}

// noClasses sets the figures of classes NaN (an audit of values).
func (s *Summary) noClasses() {
	nan := math.NaN()
	s.EAdv, s.EAdvSE, s.EAdvBound = nan, nan, nan
	s.MAP50, s.MAP90, s.MAP98, s.MAP99, s.MAMax, s.MAInfFrac, s.MAMean = nan, nan, nan, nan, nan, nan, nan
	s.EpsLowerRealBags = nan
}
