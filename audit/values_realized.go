package audit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/internal/mix"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// The self-checks of RunValues with a Sampler, as for classes
// (realized.go): the exact figures come from the mechanism's stated law,
// so RunValues also draws Draws releases of drawn audit values through the
// production code and checks them three ways, each with a stated
// false-failure rate:
//
//  1. Likelihood. Given the drawn values, each release unit's law is known:
//     laplace's z − y and a noisy bag's n·mean − Σy are Lap(b), an rr_bins
//     release is the own bin's value with probability Keep, and an exact
//     bag's mean is its sum over n. An impossible release (a value that is
//     no bin's, an exact mean that is not the bag's, a bag whose members
//     disagree) fails at once; otherwise the randomized probability
//     integral transform of each unit is Uniform(0, 1) and the mean of
//     v − ½ and of (v − ½)² − 1/12 stay within Bernstein's bound at
//     GuardAlpha each.
//  2. Attack. Per unit (an example; a bag), u = Σ((y − E[y | z])² − post)
//     and u' = Σ(hit − succ), hit = 1{y in the window of largest posterior
//     mass}, have mean 0 (post and succ, the exact figures, are their
//     expectations); RealizedZ is the larger in size of Σu/√Σu² and
//     Σu'/√max(Σu'², Σ succ(1 − succ)) over the units of the Draws
//     releases, and |RealizedZ| > GuardZ fails the audit with at least
//     GuardMinUnits units. RealizedR2 and RealizedGain (the realized
//     τ-advantage) are the means over the releases.
//  3. ε (canaries): every audit position (per example) or a canaryRate
//     share of them, their bag-mates fixed at 0 (bags), carries a fair coin
//     between the values 0 and B; the attacker scores each with the exact
//     log-likelihood ratio of its release, and the one-run bound of
//     canary.go certifies ε ≥ EpsLower at 95%; its bound at 1 − GuardAlpha
//     must not exceed the channel's ε.
//
// The releases of value_bags use the audit's bags (FixedBags): the check
// covers how a bag's mean is released, not how bags are formed (llp's
// tests cover that), and every member's bag-mates' law is the exact one.

// ValueSampler releases value vectors through the production release code
// (the pipeline: release.ApplyValues with simulation noise). It must be
// safe for concurrent use.
type ValueSampler interface {
	// ReleaseValues releases values (grid points, one per audit example,
	// in audit order) through m, with bins for rr_bins and the partition
	// bags for value_bags (nil otherwise), its randomness drawn from seed.
	ReleaseValues(values []float64, m *pets.Mechanism, bins *pets.Bins, bags llp.Partitioner, seed uint64) (*ValuesReleased, error)
}

// ValuesReleased is what a release of values shows, one entry per row.
type ValuesReleased struct {
	Row   []int     // the audit example of each row (each at most once)
	Value []float64 // per example: the released value (nil for bags)
	Bag   []int64   // bags: each row's bag
	Mean  []float64 // bags: its bag's released mean
}

// FixedBags is the partition that always returns its bags: the audit's
// bags, for a sampler to release (the rule it reports is As, random's
// when zero; key groups report a key rule, which a release of key groups
// asks for).
type FixedBags struct {
	Bags *llp.Bags
	As   llp.Rule
}

// Partition returns the bags (n and k must be theirs).
func (f FixedBags) Partition(n, k int, _ rand.Source, _ bool) (*llp.Bags, error) {
	if n != f.Bags.N {
		return nil, fmt.Errorf("audit: fixed bags of %d rows asked for %d", f.Bags.N, n)
	}
	return f.Bags, nil
}

// Rule is As (the random rule when zero: the bags were drawn at random).
func (f FixedBags) Rule() llp.Rule { return f.As }

// fixedBags is the audit's bags as a partition for its sampler (nil
// without bags): whole key groups for a kind of key groups (ara_summary).
func (r *valueRunner) fixedBags() llp.Partitioner {
	if r.bags == nil {
		return nil
	}
	f := FixedBags{Bags: r.bags}
	if r.m.Spec().Takes.KeyGroups {
		f.As = llp.Rule{Kind: llp.RuleKey, Column: "audit-groups"}
	}
	return f
}

// realize runs the checks of the file comment.
func (r *valueRunner) realize() error {
	g := &guardStats{mech: r.m.String(), eps: r.eps, pitAlpha: GuardAlpha}
	fixed := r.fixedBags()
	values := make([]float64, r.n)
	w, c := make([]float64, r.gp), make([]float64, r.gp+1)
	var sumU, sumU2, sumT, sumT2, floorT float64
	gains, r2s := make([]float64, r.o.Draws), make([]float64, r.o.Draws)
	r.prog.Pass("releases", r.o.Draws)
	for d := range r.o.Draws {
		seed := mix.SplitMix64(r.o.Seed ^ streamValueDraws ^ uint64(d)*0x9e3779b97f4a7c15)
		rng := rand.New(rand.NewPCG(seed, streamValueDraws))
		for i := range values {
			values[i] = r.drawValue(i, rng.Float64())
		}
		rel, err := r.o.Sampler.ReleaseValues(values, r.m, r.o.Bins, fixed, seed)
		if err != nil {
			return fmt.Errorf("audit: %s: release %d: %w", r.m, d, err)
		}
		z, bagN, err := r.readRelease(rel)
		if err != nil {
			return err
		}
		if err := r.pit(g, values, z, bagN, rng); err != nil {
			return err
		}
		var sq, vs, hits, kap float64
		// Per release unit (a row, or a bag): summed in the order units are
		// first met, not a map's (random) order, so the same seed gives the
		// same bits.
		unitU, unitT := map[int]float64{}, map[int]float64{}
		var units []int
		for i := range r.n {
			if bagN[i] == 0 {
				continue
			}
			r.weights(i, z[i], bagN[i], w)
			post := r.summarizePosterior(w, c)
			if r.law.Form() == pets.ValueIdentity {
				post = valuePost{mean: values[i]}
			}
			e := (values[i] - post.mean) * (values[i] - post.mean)
			hit := 0.0
			if at, _ := r.g.Index(values[i]); at >= post.win && at < post.win+r.l {
				hit = 1
			}
			unit := i
			if r.bags != nil {
				unit = int(r.bags.BagOf[i])
			}
			st := r.stat[i]
			if _, seen := unitT[unit]; !seen {
				units = append(units, unit)
			}
			unitU[unit] += e - st.post
			unitT[unit] += hit - st.succ
			floorT += st.succ * (1 - st.succ)
			sq, vs, hits, kap = sq+e, vs+r.pri[i].vari, hits+hit, kap+r.pri[i].kappa
		}
		for _, unit := range units {
			u, t := unitU[unit], unitT[unit]
			sumU, sumU2 = sumU+u, sumU2+u*u
			sumT, sumT2 = sumT+t, sumT2+t*t
		}
		g.units += len(units)
		nn := float64(r.sum.NExamples)
		gains[d] = (hits - kap) / nn
		r2s[d] = math.NaN()
		if vs > 0 {
			r2s[d] = 1 - sq/vs
		}
		r.prog.Done(1)
	}
	g.draws = r.o.Draws
	zr := sumU / math.Sqrt(max(sumU2, 1e-300))
	zt := sumT / math.Sqrt(max(sumT2, floorT, 1e-300))
	g.z = zt
	if math.Abs(zr) > math.Abs(zt) {
		g.z = zr
	}
	s := &r.sum
	s.RealizedDraws, s.RealizedZ = r.o.Draws, g.z
	s.RealizedGain, s.RealizedGainSE = meanSE(gains)
	s.RealizedR2, s.RealizedR2SE = meanSE(r2s)
	g.gain, g.gainSE = s.RealizedGain, s.RealizedGainSE
	if r.o.Canaries > 0 {
		if err := r.canaries(g); err != nil {
			return err
		}
	}
	if err := g.check(); err != nil {
		return err
	}
	return nil
}

// readRelease checks a release's shape and returns each example's release
// (its value, or its bag's mean) and its bag's size (1 per example; 0:
// not released).
func (r *valueRunner) readRelease(rel *ValuesReleased) (z []float64, bagN []int, err error) {
	bad := func(msg string) error { return mismatch(r.m, "release", msg) }
	z, bagN = make([]float64, r.n), make([]int, r.n)
	bags := r.law.Form() == pets.ValueBagMean
	switch {
	case !bags && len(rel.Value) != len(rel.Row), bags && (len(rel.Mean) != len(rel.Row) || len(rel.Bag) != len(rel.Row)):
		return nil, nil, bad("a release's columns disagree in length")
	}
	first := map[int64]float64{}
	size := map[int64]int{}
	for k, i := range rel.Row {
		if i < 0 || i >= r.n || bagN[i] != 0 {
			return nil, nil, bad(fmt.Sprintf("row %d names example %d (out of range or twice)", k, i))
		}
		bagN[i] = 1
		if !bags {
			z[i] = rel.Value[k]
			continue
		}
		b := rel.Bag[k]
		if m, ok := first[b]; ok && m != rel.Mean[k] {
			return nil, nil, bad(fmt.Sprintf("bag %d's rows release means %v and %v", b, m, rel.Mean[k]))
		}
		first[b], z[i] = rel.Mean[k], rel.Mean[k]
		size[b]++
	}
	if bags {
		for k, i := range rel.Row {
			bagN[i] = size[rel.Bag[k]]
			if r.bags.BagOf[i] < 0 || bagN[i] != r.bags.Size(int(r.bags.BagOf[i])) {
				return nil, nil, bad(fmt.Sprintf("example %d is in a bag of %d rows; the audit's bags put it in another", i, bagN[i]))
			}
		}
	}
	for i := range r.n {
		if bagN[i] == 0 && (r.bags == nil || r.bags.BagOf[i] >= 0) {
			return nil, nil, bad(fmt.Sprintf("example %d was not released", i))
		}
	}
	return z, bagN, nil
}

// pit adds each release unit's probability integral transform given the
// drawn values (or fails on an impossible release).
func (r *valueRunner) pit(g *guardStats, values, z []float64, bagN []int, rng *rand.Rand) error {
	add := func(v float64) {
		g.pitSum += v - 0.5
		g.pitSq += (v-0.5)*(v-0.5) - 1.0/12
		g.pitN++
	}
	lapCDF := func(d float64) float64 {
		if d < 0 {
			return 0.5 * math.Exp(d*r.lambda)
		}
		return 1 - 0.5*math.Exp(-d*r.lambda)
	}
	switch r.law.Form() {
	case pets.ValueNothing:
		for i, x := range z {
			if bagN[i] > 0 && x != 0 {
				return mismatch(r.m, "release", fmt.Sprintf("example %d released %v; bot releases nothing (0)", i, x))
			}
		}
	case pets.ValueLaplace:
		for i, x := range z {
			add(lapCDF(x - values[i]))
		}
	case pets.ValueBins:
		b := r.o.Bins
		for i, x := range z {
			j := b.ValueIndex(x)
			if j < 0 {
				return mismatch(r.m, "release", fmt.Sprintf("example %d released %v, the value of no bin %v", i, x, b.Values))
			}
			y, _ := r.g.Index(values[i])
			var below float64
			for k := range j {
				below += b.Prob(k, y)
			}
			add(below + rng.Float64()*b.Prob(j, y))
		}
	case pets.ValueBagMean:
		for u := range r.bags.NumBags {
			mem := r.bags.Members(u)
			var sum float64
			for _, i := range mem {
				sum += values[i]
			}
			n := float64(len(mem))
			d := z[mem[0]]*n - sum
			if r.lambda == 0 {
				if math.Abs(d) > 1e-9*r.g.Max*n {
					return mismatch(r.m, "release", fmt.Sprintf("bag %d released the mean %v; its values sum to %v over %d rows", u, z[mem[0]], sum, len(mem)))
				}
				continue
			}
			add(lapCDF(d))
		}
	}
	return nil
}

// canaries plays the canary game (file comment) and records EpsLower.
func (r *valueRunner) canaries(g *guardStats) error {
	B := r.g.Max
	perRelease := r.n
	rate := 1.0
	if r.bags != nil {
		rate = canaryRate(r.m.K(), r.n, r.o.Canaries)
		perRelease = max(1, int(rate*float64(r.sum.NExamples)))
	}
	releases := min(MaxCanaryReleases, (r.o.Canaries+perRelease-1)/perRelease)
	values := make([]float64, r.n)
	isCanary := make([]bool, r.n)
	fixed := r.fixedBags()
	var trials []canaryTrial
	r.prog.Pass("canary releases", releases)
	for d := range releases {
		if len(trials) >= r.o.Canaries {
			break
		}
		seed := mix.SplitMix64(r.o.Seed ^ streamValueCanary ^ uint64(d)*0x9e3779b97f4a7c15)
		rng := rand.New(rand.NewPCG(seed, streamValueCanary))
		for i := range values {
			isCanary[i] = (r.bags == nil || r.bags.BagOf[i] >= 0) && (rate >= 1 || rng.Float64() < rate)
			values[i] = 0
			if isCanary[i] && rng.Uint64()&1 == 1 {
				values[i] = B
			}
		}
		rel, err := r.o.Sampler.ReleaseValues(values, r.m, r.o.Bins, fixed, seed)
		if err != nil {
			return fmt.Errorf("audit: %s: canary release %d: %w", r.m, d, err)
		}
		z, bagN, err := r.readRelease(rel)
		if err != nil {
			return err
		}
		for i := range r.n {
			if !isCanary[i] || bagN[i] == 0 || len(trials) >= r.o.Canaries {
				continue
			}
			y := uint8(0)
			if values[i] == B {
				y = 1
			}
			trials = append(trials, canaryTrial{y: y, s: r.canaryScore(i, z[i], bagN[i], isCanary)})
		}
		r.prog.Done(1)
	}
	g.canaries, g.controlled = len(trials), trials
	s := &r.sum
	s.Canaries = len(trials)
	s.EpsLower = oneRunBound(trials, 1-EpsConfidence).eps
	g.epsLower = s.EpsLower
	if !(r.m.Spec().Privacy.DP() && !math.IsInf(r.m.Epsilon(), 1)) {
		g.canaries = 0 // not DP: nothing to check against
	}
	return nil
}

// canaryScore is log P(z | canary i at B)/P(z | at 0): per example its
// release's; in a bag its mean's, the bag's other canaries fair coins
// between 0 and B and its other members 0.
func (r *valueRunner) canaryScore(i int, z float64, bagN int, isCanary []bool) float64 {
	B := r.g.Max
	switch r.law.Form() {
	case pets.ValueNothing:
		return 0
	case pets.ValueLaplace:
		return (math.Abs(z) - math.Abs(z-B)) * r.lambda
	case pets.ValueBins:
		b := r.o.Bins
		j := b.ValueIndex(z)
		top, _ := r.g.Index(B)
		return math.Log(b.Prob(j, top)) - math.Log(b.Prob(j, 0))
	}
	// A bag: m canaries among its members, h of the others at B.
	m := 0
	for _, k := range r.bags.Members(int(r.bags.BagOf[i])) {
		if isCanary[k] {
			m++
		}
	}
	total := z * float64(bagN)
	logLik := func(self float64) float64 {
		var terms []float64
		for h := 0; h <= m-1; h++ {
			lc := lchoose(m-1, h) - float64(m-1)*math.Ln2
			t := B * (float64(h) + self)
			if r.lambda == 0 {
				if math.Abs(total-t) <= 1e-9*B*float64(bagN) {
					terms = append(terms, lc)
				}
				continue
			}
			terms = append(terms, lc-r.lambda*math.Abs(total-t))
		}
		return logSumExp(terms)
	}
	return logLik(1) - logLik(0)
}
