package audit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/internal/mix"
	"labelprivacy/internal/par"
	"labelprivacy/pets"
)

// The self-checks of RunC with a SamplerC: realized.go's three checks on C
// classes, each with the same false-failure rate.
//
//  1. Likelihood. Given the labels it drew, the audit knows the law of each
//     release unit exactly, and a release of likelihood 0 fails at once: a
//     label outside 0..C−1 or outside rr_prior's set, an llp proportion
//     that is not the bag's count, an llp_geom count off the grid
//     {0..n}. Otherwise each unit gives randomized PIT values
//     v = F(z⁻) + V·P(z), V uniform, each exactly Uniform(0, 1):
//     - rr, rr_prior, none: one per row, F the CDF of the released class
//     given the label y, the classes ordered by decreasing P(· | y) (ties
//     by class): the kept label first.
//     - the LLP family: one per released coordinate c = 1..C−1 of each bag,
//     F the law of that coordinate given the bag's true count n_c (llp:
//     the point n_c; llp_geom: clip(n_c + Z_c, 0, n), Z_c two-sided
//     geometric of rate λ = ε/Δ; llp_lap: n_c + Laplace(1/λ)).
//     Claim: for an honest sampler the check fails with probability
//     ≤ GuardAlpha. Proof. Given the labels (and the bags, which a random
//     or curated partition draws without looking at the labels), the rows'
//     releases are independent (per-example kinds), and so are a bag's
//     coordinates (pets draws each coordinate's noise independently) and
//     the bags, and the releases of different draws; V is drawn by the
//     audit independently of everything. For a discrete release z of law
//     p, F(z⁻) + V·p(z) is Uniform(0, 1) (it is uniform on [F(z⁻), F(z))
//     given z, an interval of length p(z), and these intervals tile
//     [0, 1)); for llp_lap's continuous law F(z) is. So the N PIT values
//     are i.i.d. Uniform(0, 1): X = v − ½ has mean 0, variance 1/12 and
//     |X| ≤ ½; Y = (v − ½)² − 1/12 has mean 0, variance 1/180 and
//     |Y| ≤ 1/6. Bernstein's inequality bounds P(|mean X| ≥ h) ≤
//     2·exp(−N h²/(2σ² + 2bh/3)) with (σ², b) = (1/12, ½), and likewise Y
//     with (1/180, 1/6); each half-width h is set so that bound is
//     GuardAlpha/2 (bernsteinHalfWidth), so either failing has probability
//     ≤ GuardAlpha (a union bound). ∎ A sampler at 4ε keeps the label more
//     often than stated (rr: v piles up at 0) or puts less noise on each
//     count (llp_geom: v piles up inside the interval of the true count,
//     and at 0 for the many classes of count 0), far beyond the bound.
//  2. Attack. The Bayes attacker guesses argmax_y η_iy·P(z | y_i = y) and
//     the prior-only attacker argmax_y η_iy (ties: the smaller class); with
//     labels drawn from η, E[correct_bayes − correct_prior] = IEAdv_i
//     (Lemma A.1: the Bayes guess is right with probability
//     E_z max_y P(y | z)), so per unit u = Σ(correct_bayes − correct_prior −
//     p_i) has mean 0 when p_i is IEAdv_i or an unbiased estimate of it
//     independent of the release. rr and rr_prior use the exact IEAdv_i;
//     a bag of the LLP family uses the exact IEAdv on the bag the release
//     made where that costs no more than the posteriors (llp; llp_geom
//     with a small release space), else the unbiased one-draw estimate
//     max_y P(y_i = y | z') − max_y η_iy on a fresh release z' of the same
//     bag drawn from its law. RealizedZ = Σu/√max(Σu², Σ p_i(1 − p_i))
//     (p clamped to [0, 1]) over all units, failing past GuardZ with at
//     least GuardMinUnits units, as in realized.go. The posteriors of a
//     bag cost O(n·C·S(n−1)) (multibag.go), so each release attacks a
//     random, label-independent subset of bags whose total cost stays
//     within maxAttackWork (the likelihood check still sees every bag).
//  3. ε. The controlled canary game generalized (canary.go's proof holds
//     as written: each canary coin is a fair choice between two classes
//     a_i, b_i fixed in advance by the auditor, and the release is ε-label-
//     DP in it): rr and bot: every position, classes (1, 2); rr_prior:
//     every position whose set holds two classes or more, the set's two
//     smallest classes (other positions release the set's one class
//     whatever the label); the LLP family: each position with probability
//     canaryRate(k), classes (1, 2), every other label 0, known. Coins
//     between 1 and 2 move two released counts of a bag at once (Δ = 2),
//     so a lone canary in a bag of llp_geom shows its coin with the full
//     likelihood ratio e^{±ε} when one coordinate is clipped at 0; a coin
//     involving class 0, whose count is not released, would show at most
//     e^{ε/2}. The score is the exact log likelihood ratio
//     log P(view | S_i = b)/P(view | S_i = a): for rr and rr_prior
//     P(z | b)/P(z | a) (0 when z ∉ {a, b}: the release says nothing), for
//     a bag with j canaries Σ_m Bin(m; j−1, ½)·f_1(t_1 | ·)·f_2(t_2 | ·) over
//     the other canaries' count m of class 1 (f_c the law of coordinate c
//     given its count; the coordinates c ≥ 3 hold count 0 whatever the
//     coins, a common factor). EpsLower is the 95% one-run bound, and the
//     guard fails the audit if the bound at 1 − GuardAlpha exceeds ε.
//     The real-bags game of Run is not played for C ≥ 3
//     (EpsLowerRealBags is NaN): scoring a canary among unknown bag-mates
//     costs the full count-vector program per bag.

// SamplerC releases label vectors of C classes through the production
// release code (the pipeline: release.Apply with simulation noise), so that
// RunC audits what the deployed mechanism releases. It must be safe for
// concurrent use.
type SamplerC interface {
	// ReleaseC releases labels (classes 0..C−1, one per audit example, in
	// audit order) under m with the randomness of seed (bags, noise) and
	// returns what the release shows. rr_prior's sampler holds the audit
	// examples' public priors (OptionsC.Prior).
	ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*ReleasedC, error)
}

// ReleasedC is what a release of C classes shows, one entry per release
// row.
type ReleasedC struct {
	// Row is the audit example (index into the labels) of each row; an
	// example appears at most once (an LLP remainder may be left out).
	Row []int
	// Label is the released class per row of a per-example kind (rr,
	// rr_prior within the row's set, none); nil for the other kinds.
	Label []uint8
	// Bag and Alpha, for the LLP family: each row's bag (the rows of one
	// bag consecutive) and its bag's released proportions of classes
	// 1..C−1, C−1 per row: Alpha[j·(C−1) + c−1] for row j and class c
	// (pets.BagLaw.ReleaseBag's output, not its target).
	Bag   []int64
	Alpha []float64
}

// MaxAttackWork bounds the count-vector work (BagWorkC units, about a
// nanosecond each) spent attacking one release of the LLP family in
// RunC: each bag is attacked with probability min(1, MaxAttackWork /
// (bags·2·BagWorkC(C, k))), independently of the labels. At C = 10, k = 8
// that is about 170 of 1,250 bags, ~0.25 s per release on one core.
const MaxAttackWork = 1 << 29

// maxAttackWork is MaxAttackWork (tests change it).
var maxAttackWork float64 = MaxAttackWork

// rworkerC holds one goroutine's state of RunC's releases.
type rworkerC struct {
	r      *runnerC
	src    rand.PCG
	rng    *rand.Rand
	labels []uint8
	seen   []bool
	canary []bool
	lik    []float64 // C
	col    []float64 // C + 1: a channel's releases
	auds   map[int]*BagAuditorC
	bagEta []float64
	dst    []float64
	dst2   []float64
	counts []int
	rel2   []float64
	logs   []float64
}

func (r *runnerC) newRWorker() *rworkerC {
	c := r.c
	w := &rworkerC{r: r, labels: make([]uint8, r.n), seen: make([]bool, r.n), canary: make([]bool, r.n),
		lik: make([]float64, c), col: make([]float64, c+1), auds: map[int]*BagAuditorC{}, counts: make([]int, c), rel2: make([]float64, c-1)}
	w.rng = rand.New(&w.src)
	if r.bag {
		w.bagEta, w.dst, w.dst2 = make([]float64, r.k*c), make([]float64, r.k*c), make([]float64, r.k*c)
	}
	return w
}

func (w *rworkerC) auditor(n int) *BagAuditorC {
	a := w.auds[n]
	if a == nil {
		var err error
		if a, err = NewBagAuditorC(w.r.m, n); err != nil {
			// Sizes above k are refused by the shape check before this.
			panic("audit: bag size: " + err.Error())
		}
		w.auds[n] = a
	}
	return a
}

// realize is realized.go's realize for C classes.
func (r *runnerC) realize() error {
	ws := make([]*rworkerC, par.Workers(r.opts.Workers, math.MaxInt))
	for i := range ws {
		ws[i] = r.newRWorker()
	}
	each := func(n int, fn func(w *rworkerC, i int)) { par.Each(n, len(ws), func(w, i int) { fn(ws[w], i) }) }
	M := r.opts.Draws
	draws := make([]releaseStats, M)
	prog := progressOf(r.opts.Progress)
	prog.Pass("releases", M)
	each(M, func(w *rworkerC, d int) { w.release(d, gameRealized, &draws[d]); prog.Done(1) })

	s := &r.sum
	pitSum, pitSq, pitN, units, err := foldRealized(r.m, s, draws)
	if err != nil {
		return err
	}

	var controlled []canaryTrial
	positions := r.canaryPositions()
	if r.opts.Canaries > 0 && positions == 0 {
		s.Canaries, s.EpsLower = 0, 0 // rr_prior with every set of one class
	}
	if C := r.opts.Canaries; C > 0 && positions > 0 {
		// As realized.go: rounds of as many releases as should complete
		// the canaries, each release keeping at most those still wanted.
		per := 0.9 * float64(positions) * r.canaryRate()
		for next := 0; len(controlled) < C && next < MaxCanaryReleases; {
			need := C - len(controlled)
			batch := min(MaxCanaryReleases-next, max(1, int(math.Ceil(float64(need)/per))))
			outs := make([]releaseStats, batch)
			for i := range outs {
				outs[i].limit = need
			}
			prog.Pass("canary releases", batch)
			each(batch, func(w *rworkerC, i int) { w.release(next+i, gameControlled, &outs[i]); prog.Done(1) })
			for i := range outs {
				o := &outs[i]
				if err := r.releaseErr(o, next+i, "canary release"); err != nil {
					return err
				}
				pitSum, pitSq, pitN = pitSum+o.pitSum, pitSq+o.pitSq, pitN+o.pitN
				controlled = append(controlled, o.trials...)
			}
			next += batch
		}
		controlled = controlled[:min(C, len(controlled))]
		s.Canaries = len(controlled)
		s.EpsLower = oneRunBound(controlled, 1-EpsConfidence).eps
	}
	g := guardStats{mech: r.m.String(), eps: r.eps, pitAlpha: GuardAlpha / 2, pitSum: pitSum, pitSq: pitSq, pitN: pitN,
		canaries: s.Canaries, controlled: controlled, epsLower: s.EpsLower,
		units: units, draws: M, z: s.RealizedZ, gain: s.RealizedGain, gainSE: s.RealizedGainSE}
	if err := g.check(); err != nil {
		return err
	}
	return nil
}

func (r *runnerC) mismatch(check, msg string) *SamplerError { return mismatch(r.m, check, msg) }

func (r *runnerC) releaseErr(o *releaseStats, i int, what string) error {
	return releaseErr(r.m, o, i, what)
}

// release draws the labels of release idx of game g, has the sampler
// release them and scans what it shows.
func (w *rworkerC) release(idx int, g game, out *releaseStats) {
	r := w.r
	c := r.c
	if g == gameRealized {
		w.src.Seed(r.opts.Seed^streamRealized, mix.SplitMix64(uint64(idx)))
		for i := range r.n {
			w.labels[i] = uint8(drawClass(r.eta[i*c:(i+1)*c], w.rng))
		}
	} else {
		p := r.canaryRate()
		w.src.Seed(r.opts.Seed^streamCanary, mix.SplitMix64(uint64(idx)))
		for i := range r.n {
			can := r.canaryOK(i) && (p == 1 || w.rng.Float64() < p)
			w.canary[i] = can
			y := uint8(0) // the other labels: class 0, known
			if can {
				a, b := r.canaryPair(i)
				y = a
				if w.rng.Float64() < 0.5 {
					y = b
				}
			}
			w.labels[i] = y
		}
	}
	seed := w.rng.Uint64()
	rel, err := r.opts.Sampler.ReleaseC(w.labels, r.m, seed)
	if err != nil {
		out.err = err
		return
	}
	if msg := w.checkShape(rel); msg != "" {
		out.bad = r.mismatch("release", msg)
		return
	}
	if r.bag {
		w.scanBags(rel, g != gameRealized, out)
	} else {
		w.scanRows(rel, g != gameRealized, out)
	}
}

// checkShape validates a release's columns and rows ("" if fine).
func (w *rworkerC) checkShape(rel *ReleasedC) string {
	r := w.r
	if rel == nil {
		return "the sampler returned no release"
	}
	n := len(rel.Row)
	switch {
	case r.shows() && len(rel.Label) != n:
		return fmt.Sprintf("%d released labels for %d rows", len(rel.Label), n)
	case r.bag && (len(rel.Bag) != n && !(r.single && rel.Bag == nil) || len(rel.Alpha) != n*(r.c-1)):
		return fmt.Sprintf("%d bag ids and %d proportions for %d rows of %d classes (want %d and %d)", len(rel.Bag), len(rel.Alpha), n, r.c, n, n*(r.c-1))
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
