package audit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/internal/english"
	"labelprivacy/internal/mix"
	"labelprivacy/internal/par"
	"labelprivacy/pets"
)

// The self-checks of Run with a Sampler. The exact figures of Run come from
// the mechanism's stated likelihood (its pets.Mechanism law, coded in
// bag.go); a sampler that released something else (a wrong ε, wrong bags,
// a bug in the release path) would leave them unchanged. So Run also draws
// releases through the production code and checks them three ways, each
// with a stated false-failure rate:
//
//  1. Likelihood (the guard with power). Given the labels it drew, the law
//     of each release unit (a bag's α, an rr label) is known exactly. A
//     release of likelihood 0 (an α·n that is not the bag's sum for llp,
//     off the grid for llp_geom, a label outside {0,1}) fails at once.
//     Otherwise each unit's randomized probability integral transform
//     v = F(z⁻) + V·P(z) (V uniform; F the stated CDF of the release given
//     the true sum or label) is exactly Uniform(0,1) and independent
//     across units, so the mean of v−½ (variance 1/12) and of
//     (v−½)² − 1/12 (variance 1/180) must stay within Bernstein's bound at
//     GuardAlpha each: a rigorous false-failure rate ≤ 2·GuardAlpha. A
//     sampler at 4ε concentrates v near ½ (llp_geom k=8 ε=1: E(v−½)² falls
//     from 0.083 to 0.018) or shifts it (rr), far beyond the bound.
//  2. Attack. The Bayes attacker (posterior > ½) and the prior-only
//     attacker (η > ½) guess every released example; per unit (an rr
//     example, an LLP bag) u = Σ(correct_bayes − correct_prior − IEAdv_i),
//     IEAdv_i computed exactly on the bag the release made, has mean 0
//     (Lemma A.1: E[correct_bayes − correct_prior] = IEAdv_i). RealizedZ =
//     Σu/√max(Σu², Σ IEAdv_i(1−IEAdv_i)) over all units of the M releases
//     (self-normalized, units independent given the partitions; the second
//     term floors the variance where the guess rarely changes);
//     |RealizedZ| > GuardZ fails the audit when there are at least
//     GuardMinUnits units (normal tail 1.1e-9).
//  3. ε (canary.go): the controlled canary game's lower bound on ε at
//     confidence 1 − GuardAlpha must not exceed the mechanism's ε.
//
// RealizedGain is the plain mean of the M per-release accuracy gains, the
// number to set beside EAdv: on the audit's own partition EAdv is one
// draw of the bag-level randomness that the realized releases average
// over, so the two agree within √(RealizedGainSE² + EAdvSE²).

// Sampler releases label vectors through the production release code (in
// the pipeline: release.Apply with simulation noise), so that Run audits
// what the deployed mechanism releases, not only what its likelihood says.
// It must be safe for concurrent use.
type Sampler interface {
	// Release releases labels (0/1, one per audit example, in audit order)
	// through m, its randomness (bags, noise) drawn from seed, and returns
	// what the release shows.
	Release(labels []uint8, m *pets.Mechanism, seed uint64) (*Released, error)
}

// Released is what a release shows, one entry per release row.
type Released struct {
	// Row is the audit example (index into the labels) of each row; an
	// example appears at most once (an LLP remainder may be left out).
	Row []int
	// Label is rr's released label per row (nil for other kinds).
	Label []uint8
	// Bag and Alpha, for the LLP family: each row's bag (the rows of one
	// bag consecutive) and its bag's released proportion α.
	Bag   []int64
	Alpha []float64
}

// ErrReleaseMismatch is wrapped by every *SamplerError.
var ErrReleaseMismatch = errors.New("audit: the mechanism's releases disagree with its stated likelihood")

// SamplerError reports a failed self-check of the releases made by
// Options.Sampler: Check is "release" (a malformed or impossible release),
// "likelihood" (the PIT test), "attack" (RealizedZ) or "epsilon" (the canary
// bound above ε; it also wraps ErrDPViolation).
type SamplerError struct {
	Mechanism string
	Check     string
	Msg       string
}

func (e *SamplerError) Error() string {
	return "audit: " + e.Mechanism + ": the mechanism's releases disagree with its stated likelihood: " + e.Msg
}

// Unwrap makes errors.Is(err, ErrReleaseMismatch) true, and
// errors.Is(err, ErrDPViolation) for Check "epsilon".
func (e *SamplerError) Unwrap() []error {
	if e.Check == "epsilon" {
		return []error{ErrReleaseMismatch, ErrDPViolation}
	}
	return []error{ErrReleaseMismatch}
}

// Thresholds of the self-checks.
const (
	// GuardAlpha is the false-failure rate of each rigorous check: each
	// PIT statistic (Bernstein) and the canary ε bound (Clopper–Pearson).
	GuardAlpha = 1e-9
	// GuardZ is the |RealizedZ| above which the attack check fails:
	// P(|N(0,1)| > 6.1) = 1.06e-9.
	GuardZ = 6.1
	// GuardMinUnits is the fewest units (rr examples, LLP bags, over all
	// draws) for which the attack check applies (the normal approximation
	// of a self-normalized sum of bounded terms).
	GuardMinUnits = 1000
	// EpsConfidence is the confidence of the reported EpsLower.
	EpsConfidence = 0.95
	// MaxAttackedPerRelease caps the examples whose posteriors are computed
	// per release of the LLP family (O(k) each): with more released rows,
	// each bag is attacked with probability MaxAttackedPerRelease/rows, a
	// choice independent of the labels, so the gain stays unbiased; the
	// likelihood check still covers every bag. (1M examples at k = 512
	// would otherwise cost ~2 s per release.)
	MaxAttackedPerRelease = 1 << 17
)

// maxAttacked is MaxAttackedPerRelease (tests lower it).
var maxAttacked = MaxAttackedPerRelease

// Stream constants of the realized releases.
const (
	streamRealized = 0x452821e638d01377
	streamCanary   = 0xbe5466cf34e90c6c // canary positions, coins and release seeds (both games)
	streamMates    = 0xc0ac29b7c97c50dd // the real-bags game: the other labels, drawn from η
)

// game is what a release of realize plays.
type game uint8

const (
	gameRealized   game = iota // the realized attack: every label drawn from η
	gameControlled             // canaries; every other label 0, known (canary.go)
	gameRealBags               // LLP family: the same canaries among labels drawn from η
)

// releaseStats is what one release adds to the checks.
type releaseStats struct {
	gain      int     // Σ(correct_bayes − correct_prior) over the attacked examples
	n         int     // attacked examples
	uSum, uSq float64 // attack-check units
	units     int
	// ieVar is Σ IEAdv_i(1 − IEAdv_i) over the attacked examples: a floor
	// of the variance of Σu (see realize).
	ieVar  float64
	pitSum float64 // Σ(v − ½)
	pitSq  float64 // Σ((v − ½)² − 1/12)
	pitN   int
	trials []canaryTrial // canary games: in release order, at most limit
	limit  int
	bad    *SamplerError
	err    error
}

// rworker holds one goroutine's state for the realized releases.
type rworker struct {
	r        *runner
	src      rand.PCG
	rng      *rand.Rand
	mateSrc  rand.PCG
	mates    *rand.Rand
	works    map[int]*bagWork // by bag size
	labels   []uint8
	eta      []float64 // canary games: the attacker's η (canaries ½, the others 0 or η)
	canary   []bool
	seen     []bool
	canaryAt []int // scanBags: the canaries of the current bag (bag positions)
}

func (r *runner) newRWorker() *rworker {
	n := len(r.eta)
	w := &rworker{r: r, works: map[int]*bagWork{}, labels: make([]uint8, n), seen: make([]bool, n)}
	w.rng = rand.New(&w.src)
	w.mates = rand.New(&w.mateSrc)
	if r.opts.Canaries > 0 {
		w.eta, w.canary = make([]float64, n), make([]bool, n)
	}
	return w
}

func (w *rworker) work(size int) *bagWork {
	b := w.works[size]
	if b == nil {
		b = newBagWork(size, w.r.bag.NoiseRate())
		w.works[size] = b
	}
	return b
}

// parallel runs fn(worker, i) for i in [0, n) on the workers.
func (r *runner) parallel(ws []*rworker, n int, fn func(w *rworker, i int)) {
	par.Each(n, len(ws), func(w, i int) { fn(ws[w], i) })
}

// realize runs the realized attack, the canary attack and the checks, and
// fills the Summary's realized fields.
func (r *runner) realize() error {
	ws := make([]*rworker, par.Workers(r.opts.Workers, math.MaxInt)) // the canary rounds may release more than Draws
	for i := range ws {
		ws[i] = r.newRWorker()
	}
	M := r.opts.Draws
	draws := make([]releaseStats, M)
	prog := progressOf(r.opts.Progress)
	prog.Pass("releases", M)
	r.parallel(ws, M, func(w *rworker, d int) { w.release(d, gameRealized, &draws[d]); prog.Done(1) })

	s := &r.sum
	pitSum, pitSq, pitN, units, err := foldRealized(r.m, s, draws)
	if err != nil {
		return err
	}

	var controlled []canaryTrial
	if r.opts.Canaries > 0 && r.canaryPositions() == 0 {
		s.Canaries, s.EpsLower = 0, 0 // rr_prior with every audit example on the argmax branch
	}
	if C := r.opts.Canaries; C > 0 && r.canaryPositions() > 0 {
		games := []game{gameControlled}
		if r.bag != nil && !r.single { // bags of one have no bag-mates
			games = append(games, gameRealBags)
		}
		trials := make([][]canaryTrial, len(games))
		// Each round plays as many releases as should complete the
		// canaries (at 90% of the expected count per release), whatever
		// the workers, and each release keeps at most the canaries still
		// wanted: the canaries played depend on the seed alone.
		per := 0.9 * float64(r.canaryPositions()) * r.canaryRate()
		for next := 0; len(trials[0]) < C && next < MaxCanaryReleases; {
			need := C - len(trials[0])
			batch := min(MaxCanaryReleases-next, max(1, int(math.Ceil(float64(need)/per))))
			for g, gm := range games {
				outs := make([]releaseStats, batch)
				for i := range outs {
					outs[i].limit = need
				}
				prog.Pass("canary releases", batch)
				r.parallel(ws, batch, func(w *rworker, i int) { w.release(next+i, gm, &outs[i]); prog.Done(1) })
				for i := range outs {
					o := &outs[i]
					if err := r.releaseErr(o, next+i, "canary release"); err != nil {
						return err
					}
					// The real-bags releases share their seeds with the
					// controlled ones (the same bags, the same noise): their
					// PIT values are not independent of those, so only the
					// controlled game's enter the likelihood check.
					if gm == gameControlled {
						pitSum, pitSq, pitN = pitSum+o.pitSum, pitSq+o.pitSq, pitN+o.pitN
					}
					trials[g] = append(trials[g], o.trials...)
				}
			}
			next += batch
		}
		// Both games play the same canaries (the production partition
		// depends on the seed alone); count them alike in any case.
		c := C
		for _, t := range trials {
			c = min(c, len(t))
		}
		controlled = trials[0][:c]
		s.Canaries = c
		s.EpsLower = oneRunBound(controlled, 1-EpsConfidence).eps
		if len(trials) > 1 {
			s.EpsLowerRealBags = oneRunBound(trials[1][:c], 1-EpsConfidence).eps
		}
	}

	g := guardStats{mech: r.m.String(), eps: r.m.Epsilon(), pitAlpha: GuardAlpha, pitSum: pitSum, pitSq: pitSq, pitN: pitN,
		canaries: s.Canaries, controlled: controlled, epsLower: s.EpsLower,
		units: units, draws: M, z: s.RealizedZ, gain: s.RealizedGain, gainSE: s.RealizedGainSE}
	if err := g.check(); err != nil {
		return err
	}
	return nil
}

// guardStats is what the self-checks read of the releases of Run or RunC.
type guardStats struct {
	mech string
	eps  float64
	// pitAlpha is the level of each of the two PIT tests (Run: GuardAlpha
	// each, ≤ 2·GuardAlpha together; RunC: GuardAlpha/2 each).
	pitAlpha      float64
	pitSum, pitSq float64 // Σ(v − ½), Σ((v − ½)² − 1/12) over the PIT values
	pitN          int
	canaries      int
	controlled    []canaryTrial
	epsLower      float64
	units         int
	draws         int
	z, gain       float64
	gainSE        float64
}

// check runs the checks of the file comment, most specific first, and
// returns the first that fails.
func (g *guardStats) check() *SamplerError {
	bad := func(check, msg string) *SamplerError { return &SamplerError{Mechanism: g.mech, Check: check, Msg: msg} }
	if pitN := g.pitN; pitN > 0 {
		mean := g.pitSum / float64(pitN)
		if h := bernsteinHalfWidth(pitN, 1.0/12, 0.5, g.pitAlpha); math.Abs(mean) > h {
			return bad("likelihood", fmt.Sprintf(
				"the probability integral transform of %d release units given their drawn labels has mean %.4f; "+
					"the stated law gives 0.5 ± %.4f (Bernstein, false-failure rate %g)", pitN, 0.5+mean, h, g.pitAlpha))
		}
		spread := g.pitSq / float64(pitN)
		if h := bernsteinHalfWidth(pitN, 1.0/180, 1.0/6, g.pitAlpha); math.Abs(spread) > h {
			return bad("likelihood", fmt.Sprintf(
				"the probability integral transform of %d release units given their drawn labels has E[(v−½)²] = %.4f; "+
					"the stated law gives 1/12 = %.4f ± %.4f (Bernstein, false-failure rate %g): the releases are %s noisy than stated",
				pitN, 1.0/12+spread, 1.0/12, h, g.pitAlpha, map[bool]string{true: "less", false: "more"}[spread < 0]))
		}
	}
	if g.canaries > 0 {
		if o := oneRunBound(g.controlled, GuardAlpha); o.eps > g.eps {
			return bad("epsilon", fmt.Sprintf(
				"%d canaries show ε ≥ %.3f at confidence 1 − %g (%d of %d guesses right; stated ε = %g; the 95%% bound is %.3f)",
				g.canaries, o.eps, GuardAlpha, o.right, o.guesses, g.eps, g.epsLower))
		}
	}
	if g.units >= GuardMinUnits && math.Abs(g.z) > GuardZ {
		return bad("attack", fmt.Sprintf(
			"over %s the Bayes attacker's accuracy gain is %.5f ± %.5f where the exact prediction on the "+
				"releases' own bags gives a difference of z = %.1f (|z| > %g: nominal false-failure rate 1.1e-9)",
			english.Count(g.draws, "release"), g.gain, g.gainSE, g.z, GuardZ))
	}
	return nil
}

func (r *runner) mismatch(check, msg string) *SamplerError { return mismatch(r.m, check, msg) }

func (r *runner) releaseErr(o *releaseStats, i int, what string) error {
	return releaseErr(r.m, o, i, what)
}

// mismatch is a SamplerError of mechanism m: what its sampler released
// does not match its law (check names the test).
func mismatch(m fmt.Stringer, check, msg string) *SamplerError {
	return &SamplerError{Mechanism: m.String(), Check: check, Msg: msg}
}

// releaseErr is what went wrong with release i (what: "release",
// "canary release") of mechanism m's sampler, or nil: the sampler's own
// error, wrapped, or the mismatch it was found to make, numbered.
func releaseErr(m fmt.Stringer, o *releaseStats, i int, what string) error {
	if o.err != nil {
		return fmt.Errorf("audit: %s: sampler, %s %d: %w", m, what, i, o.err)
	}
	if o.bad != nil {
		o.bad.Msg = fmt.Sprintf("%s %d: %s", what, i, o.bad.Msg)
		return o.bad
	}
	return nil
}

// meanSE returns the mean and sd/√n (NaN for n < 2).
func meanSE(v []float64) (mean, se float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

// canaryOK reports whether audit position i may hold a canary: every
// position but those of a kind with a public prior whose channel there
// releases nothing of the label (rr_prior's argmax branch, which releases
// the prior's argmax whatever the label).
func (r *runner) canaryOK(i int) bool {
	if r.chanAt == nil {
		return true
	}
	return r.chans[r.chanAt[i]].informative
}

// canaryRate is the probability that a position that may hold a canary
// does in a canary release: 1 for rr, rr_prior and bot, canaryRate for the
// LLP family.
func (r *runner) canaryRate() float64 {
	if r.bag != nil && !r.single {
		return canaryRate(r.k, len(r.eta), r.opts.Canaries)
	}
	return 1
}

// canaryPositions counts the positions that may hold a canary.
func (r *runner) canaryPositions() int {
	c := 0
	for i := range r.eta {
		if r.canaryOK(i) {
			c++
		}
	}
	return c
}

// release draws the labels of release number idx of game g, has the
// sampler release them and scans what it shows. The canary games draw the
// canary positions, their coins and the sampler's seed from the same
// stream, so both play the same canaries in the same bags; the real-bags
// game draws the other labels from η on a stream of its own.
func (w *rworker) release(idx int, g game, out *releaseStats) {
	r := w.r
	eta := r.eta
	var seed uint64
	if g == gameRealized {
		w.src.Seed(r.opts.Seed^streamRealized, mix.SplitMix64(uint64(idx)))
		for i, e := range eta {
			w.labels[i] = 0
			if w.rng.Float64() < e {
				w.labels[i] = 1
			}
		}
		seed = w.rng.Uint64()
	} else {
		p := r.canaryRate()
		w.src.Seed(r.opts.Seed^streamCanary, mix.SplitMix64(uint64(idx)))
		w.mateSrc.Seed(r.opts.Seed^streamMates, mix.SplitMix64(uint64(idx)))
		for i := range eta {
			c := r.canaryOK(i) && (p == 1 || w.rng.Float64() < p)
			w.canary[i] = c
			y, e := uint8(0), 0.0 // controlled: the other labels are 0
			switch {
			case c:
				e = 0.5
				if w.rng.Float64() < 0.5 {
					y = 1
				}
			case g == gameRealBags:
				e = eta[i]
				if w.mates.Float64() < e {
					y = 1
				}
			}
			w.labels[i], w.eta[i] = y, e
		}
		seed = w.rng.Uint64()
		eta = w.eta
	}
	rel, err := r.opts.Sampler.Release(w.labels, r.m, seed)
	if err != nil {
		out.err = err
		return
	}
	if msg := w.checkShape(rel); msg != "" {
		out.bad = r.mismatch("release", msg)
		return
	}
	if r.bag != nil {
		w.scanBags(rel, eta, g != gameRealized, out)
	} else {
		w.scanRows(rel, eta, g != gameRealized, out)
	}
}

// shows reports whether a per-example kind's release shows a value per
// row (a label column): a channel with more than one release.
func (r *runner) shows() bool {
	for _, c := range r.chans {
		if c.z > 1 {
			return true
		}
	}
	return false
}

// checkShape validates a release's columns and rows ("" if fine).
func (w *rworker) checkShape(rel *Released) string {
	if rel == nil {
		return "the sampler returned no release"
	}
	n := len(rel.Row)
	switch {
	case w.r.ex != nil && w.r.shows() && len(rel.Label) != n:
		return fmt.Sprintf("%d released labels for %d rows", len(rel.Label), n)
	case w.r.bag != nil && (len(rel.Bag) != n && !(w.r.single && rel.Bag == nil) || len(rel.Alpha) != n):
		return fmt.Sprintf("%d bag ids and %d proportions for %d rows", len(rel.Bag), len(rel.Alpha), n)
	}
	clear(w.seen)
	for j, i := range rel.Row {
		if i < 0 || i >= len(w.seen) {
			return fmt.Sprintf("row %d names example %d of %d", j, i, len(w.seen))
		}
		if w.seen[i] {
			return fmt.Sprintf("example %d released twice", i)
		}
		w.seen[i] = true
	}
	return ""
}

// addPIT adds a unit's randomized PIT value v = lo + V·(hi − lo).
func (w *rworker) addPIT(out *releaseStats, lo, hi float64) {
	v := lo + w.rng.Float64()*(hi-lo)
	d := v - 0.5
	out.pitSum += d
	out.pitSq += d*d - 1.0/12
	out.pitN++
}

// attack adds one attacked example: its prior e, label y, the likelihoods
// of what the release shows, and its exact IEAdv; it returns the unit term
// correct_bayes − correct_prior − IEAdv.
func attack(out *releaseStats, e float64, y uint8, l1, l0, ie float64) float64 {
	post := posterior(e, l1, l0)
	c, p := 0, 0
	if (post > 0.5) == (y == 1) {
		c = 1
	}
	if (e > 0.5) == (y == 1) {
		p = 1
	}
	out.gain += c - p
	out.n++
	out.ieVar += ie * (1 - ie)
	return float64(c-p) - ie
}

// foldRealized folds mechanism m's realized-attack releases into s
// (RealizedDraws, RealizedGain ± SE, RealizedZ), binary and C-class alike,
// after vetting each one (releaseErr; a release showing no audit example is
// a mismatch), and returns the sums of their PIT values and their units
// for the guard.
func foldRealized(m fmt.Stringer, s *Summary, draws []releaseStats) (pitSum, pitSq float64, pitN, units int, err error) {
	gains := make([]float64, len(draws))
	var uSum, uSq, ieVar float64
	for d := range draws {
		o := &draws[d]
		if err := releaseErr(m, o, d, "release"); err != nil {
			return 0, 0, 0, 0, err
		}
		if o.n == 0 {
			return 0, 0, 0, 0, mismatch(m, "release", fmt.Sprintf("release %d shows no audit example", d))
		}
		gains[d] = float64(o.gain) / float64(o.n)
		uSum, uSq, units, ieVar = uSum+o.uSum, uSq+o.uSq, units+o.units, ieVar+o.ieVar
		pitSum, pitSq, pitN = pitSum+o.pitSum, pitSq+o.pitSq, pitN+o.pitN
	}
	s.RealizedDraws = len(draws)
	s.RealizedGain, s.RealizedGainSE = meanSE(gains)
	// The self-normalizer Σu² estimates Var(Σu); where the attacker's
	// guess rarely changes (a skewed prior: Beta(2,30)'s η ≈ 0.06) a sample
	// may hold no change at all, and Σu² ≈ ΣIEAdv² would turn the tiny
	// expected gain into an enormous z. Each d_i = correct_bayes −
	// correct_prior ∈ {−1, 0, 1} has E d_i = IEAdv_i ≤ P(d_i ≠ 0) = E d_i²,
	// so Var d_i ≥ IEAdv_i(1 − IEAdv_i): that sum floors the estimate.
	s.RealizedZ = 0
	if v := math.Max(uSq, ieVar); v > 0 {
		s.RealizedZ = uSum / math.Sqrt(v)
	}
	return pitSum, pitSq, pitN, units, nil
}
