package audit

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"labelprivacy/internal/oracle"
	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// curatedCase is a small audit set with key groups of 1 to 7 examples, so
// that bags within keys (remainders kept) have every size from 1 to k.
func curatedCase() (eta []float64, keys []int64) {
	r := rand.New(rand.NewPCG(21, 22))
	for g, m := range []int{1, 2, 3, 4, 5, 6, 7, 3, 9} {
		for range m {
			e := r.Float64()
			switch r.IntN(8) {
			case 0:
				e = 0
			case 1:
				e = 1
			case 2:
				e = 0.5
			}
			eta = append(eta, e)
			keys = append(keys, int64(g%7)) // groups 0 and 7 share key 0: 10 rows
		}
	}
	return eta, keys
}

// TestGivenBagsBruteForce audits llp, llp_geom and llp_lap within given
// curated bags of every size from 1 to k = 4 (bags within key groups with
// their remainders kept, and sorted bags) and compares, per example: its
// bag (the given one), IEAdv with enumeration of all 2^n label vectors of
// its bag (llp, llp_geom: 1e-12; llp_lap: quadrature of the Laplace
// density, 1e-6 as in TestLapIntegral), and its first draw's posterior
// with Bayes' rule on the brute-force joint law (1e-9). EAdv is the mean
// over the examples in bags (1e-12) and NExamples/NDropped follow the
// bags.
func TestGivenBagsBruteForce(t *testing.T) {
	eta, keys := curatedCase()
	n := len(eta)
	vals := make([]float32, n)
	for i, e := range eta {
		vals[i] = float32(e)
	}
	const k = 4
	for _, part := range []llp.Partitioner{llp.Keyed{Column: "g", Keys: keys}, llp.Sorted{Feature: "eta", Values: vals}} {
		for _, keep := range []bool{true, false} {
			bags, err := part.Partition(n, k, rand.NewPCG(1, 2), keep)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []pets.Params{{Kind: pets.LLP, K: k}, {Kind: pets.LLPGeom, K: k, Epsilon: 1}, {Kind: pets.LLPLap, K: k, Epsilon: 0.5}} {
				m := testutil.MustNew(p)
				res, err := Run(eta, m, Options{Seed: 3, LabelDraws: 2, MaxSamples: n, Bags: bags})
				if err != nil {
					t.Fatal(err)
				}
				name := part.Rule().String() + " " + m.String()
				if res.NExamples != bags.Kept() || res.NDropped != bags.Dropped || res.NBags != bags.NumBags || len(res.Samples) != bags.Kept() {
					t.Fatalf("%s keep=%v: %d examples %d dropped %d bags %d samples; want %d %d %d", name, keep,
						res.NExamples, res.NDropped, res.NBags, len(res.Samples), bags.Kept(), bags.Dropped, bags.NumBags)
				}
				byIndex := map[int]Sample{}
				for _, s := range res.Samples {
					byIndex[s.Index] = s
				}
				total := 0.0
				sizes := map[int]bool{}
				for b := range bags.NumBags {
					mem := bags.Members(b)
					sz := len(mem)
					sizes[sz] = true
					be := make([]float64, sz)
					for i, row := range mem {
						be[i] = eta[row]
					}
					joint := bruteBag(be)
					want := bruteMembers(p.Kind, p.Epsilon, be, joint)
					for i, row := range mem {
						s, ok := byIndex[int(row)]
						if !ok || s.Bag != b {
							t.Fatalf("%s: example %d not sampled in bag %d (%+v)", name, row, b, s)
						}
						tol := 1e-12
						if p.Kind == pets.LLPLap {
							tol = 1e-6
						}
						if math.Abs(s.IEAdv-want[i]) > tol {
							t.Errorf("%s keep=%v bag %d (size %d) member %d: IEAdv %.15g, brute force %.15g", name, keep, b, sz, i, s.IEAdv, want[i])
						}
						if post := brutePosterior(p.Kind, p.Epsilon, joint, i, s.Release); math.Abs(s.Posterior-post) > 1e-9 {
							t.Errorf("%s bag %d member %d: posterior %.15g, Bayes %.15g (release %v)", name, b, i, s.Posterior, post, s.Release)
						}
						total += want[i]
					}
				}
				if keep && part.Rule().Kind == llp.RuleKey && len(sizes) < k {
					t.Fatalf("bag sizes %v: the case does not cover every size 1..%d", sizes, k)
				}
				if want := total / float64(bags.Kept()); math.Abs(res.EAdv-want) > 1e-6 {
					t.Errorf("%s: EAdv %.15g, mean of brute force %.15g", name, res.EAdv, want)
				}
			}
		}
	}
}

// bruteMembers returns each member's IEAdv by enumeration (llp, llp_geom)
// or quadrature (llp_lap).
func bruteMembers(kind pets.Kind, eps float64, eta []float64, joint [2][][]float64) []float64 {
	n := len(eta)
	switch kind {
	case pets.LLP:
		return bruteIEAdv(eta, func(r, s int) float64 {
			if r == s {
				return 1
			}
			return 0
		})
	case pets.LLPGeom:
		pmf := make([][]float64, n+1)
		for s := range pmf {
			pmf[s] = oracle.GeomPMF(eps, n, s)
		}
		return bruteIEAdv(eta, func(r, s int) float64 { return pmf[s][r] })
	}
	out := make([]float64, n)
	for i, e := range eta {
		out[i] = math.Min(e, 1-e) - quadLost(joint[1][i], joint[0][i], eps)
	}
	return out
}

// brutePosterior is P(y_i = 1 | α) from the brute-force joint law of the
// bag and the oracle's likelihood of the released proportion α.
func brutePosterior(kind pets.Kind, eps float64, joint [2][][]float64, i int, alpha float64) float64 {
	n := len(joint[0]) // members
	var j1, j0 float64
	for s := 0; s <= n; s++ {
		var l float64
		switch kind {
		case pets.LLP:
			if int(math.Round(alpha*float64(n))) == s {
				l = 1
			}
		case pets.LLPGeom:
			l = math.Exp(oracle.GeomLogPMF(eps, n, s, int(math.Round(alpha*float64(n)))))
		case pets.LLPLap:
			l = oracle.LapDensity(eps, n, s, alpha)
		}
		j1 += joint[1][i][s] * l
		j0 += joint[0][i][s] * l
	}
	if j1+j0 == 0 {
		return math.NaN()
	}
	return j1 / (j1 + j0)
}

// TestGivenRandomBagsMatchDefault: handing Run the very partition it would
// draw itself gives the same EAdv and SE (1e-12): the example-weighted
// ratio estimator reduces to the random-bag formula for equal bag sizes.
func TestGivenRandomBagsMatchDefault(t *testing.T) {
	eta := uniformEta(4003, 5)
	for _, p := range []pets.Params{{Kind: pets.LLP, K: 8}, {Kind: pets.LLPGeom, K: 16, Epsilon: 2}} {
		m := testutil.MustNew(p)
		def, err := Run(eta, m, Options{Seed: 9, LabelDraws: 3})
		if err != nil {
			t.Fatal(err)
		}
		bags, _ := llp.Partition(len(eta), p.K, rand.NewPCG(9, streamPartition), false)
		given, err := Run(eta, m, Options{Seed: 9, LabelDraws: 3, Bags: bags})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(def.EAdv-given.EAdv) > 1e-12 || math.Abs(def.EAdvSE-given.EAdvSE) > 1e-12 ||
			def.MAP98 != given.MAP98 || def.NExamples != given.NExamples {
			t.Errorf("%s: default %v ± %v (p98 %v), given %v ± %v (p98 %v)", m, def.EAdv, def.EAdvSE, def.MAP98, given.EAdv, given.EAdvSE, given.MAP98)
		}
	}
}

// TestSortedBags: bags of examples sorted by η (uniform) are homogeneous.
// Their labels are more often all equal, so more labels are fully exposed
// (|MA| = ∞ for 25% of draws against 0.6% in random bags), while the additive
// advantage, measured against the prior η the attacker already has, is
// lower (EAdv 0.027 vs 0.046: a proportion of like members says little
// beyond their common η). The audit must tell the two rules apart: both
// differences are asserted beyond 10 SE / a factor 2.
func TestSortedBags(t *testing.T) {
	eta := uniformEta(8000, 6)
	vals := make([]float32, len(eta))
	for i, e := range eta {
		vals[i] = float32(e)
	}
	m := testutil.MustNew(pets.Params{Kind: pets.LLP, K: 8})
	random, err := Run(eta, m, Options{Seed: 1, LabelDraws: 1})
	if err != nil {
		t.Fatal(err)
	}
	bags, _ := llp.Sorted{Feature: "eta", Values: vals}.Partition(len(eta), 8, rand.NewPCG(1, 2), false)
	sorted, err := Run(eta, m, Options{Seed: 1, LabelDraws: 1, Bags: bags})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("llp k=8 EAdv: random bags %.4f ± %.4f, sorted by η %.4f ± %.4f", random.EAdv, random.EAdvSE, sorted.EAdv, sorted.EAdvSE)
	t.Logf("|MA| = ∞: random %.4f, sorted %.4f", random.MAInfFrac, sorted.MAInfFrac)
	if sorted.EAdv > random.EAdv-10*(random.EAdvSE+sorted.EAdvSE) {
		t.Errorf("sorted bags EAdv %.4f not clearly below random bags' %.4f", sorted.EAdv, random.EAdv)
	}
	if !(sorted.MAInfFrac > 2*random.MAInfFrac) {
		t.Errorf("sorted bags expose %.4f of labels, random %.4f: want at least twice", sorted.MAInfFrac, random.MAInfFrac)
	}
}

// TestRRPriorAuditBruteForce: for every example (uniform η, priors on a
// grid including 0, 1, ½ and 1e-9 on either side of both branch
// boundaries; the float rounding of the boundary itself is pets' test) the
// audit's IEAdv, its
// first draw's posterior and |MA| equal the brute-force values from the
// oracle's likelihood P(z | y) of rr_prior, enumerating y and z (1e-12);
// argmax-branch examples have IEAdv 0, |MA| 0, posterior = η; EAdv is the
// mean and the mean |MA| is ε times the RR-branch share (rr: ε); with every
// prior ½, rr_prior's audit is rr's.
func TestRRPriorAuditBruteForce(t *testing.T) {
	for _, eps := range []float64{0.5, 1, 2, 4} {
		m := testutil.MustNew(pets.Params{Kind: pets.RRPrior, Epsilon: eps})
		pi := m.FlipProb()
		eta := uniformEta(3000, uint64(10*eps))
		prior := make([]float64, len(eta))
		r := rand.New(rand.NewPCG(4, uint64(eps*8)))
		for i := range prior {
			prior[i] = r.Float64()
		}
		copy(prior, []float64{0, 1, 0.5, pi - 1e-9, 1 - pi + 1e-9, pi + 1e-9, 1 - pi - 1e-9})
		res, err := Run(eta, m, Options{Seed: 2, LabelDraws: 3, MaxSamples: len(eta), Prior: prior})
		if err != nil {
			t.Fatal(err)
		}
		sum, argmax := 0.0, 0
		for _, s := range res.Samples {
			e, p := eta[s.Index], prior[s.Index]
			var l [2][2]float64 // l[y][z]
			for y := range uint8(2) {
				for z := range uint8(2) {
					l[y][z] = oracle.RRPrior(eps, p, z, y)
				}
			}
			lost := 0.0
			for z := range 2 {
				lost += math.Min(e*l[1][z], (1-e)*l[0][z])
			}
			ie := math.Min(e, 1-e) - lost
			z := int(s.Release)
			post := e * l[1][z] / (e*l[1][z] + (1-e)*l[0][z])
			ma := math.Abs(math.Log(l[1][z]) - math.Log(l[0][z]))
			if l[1][0] == l[0][0] { // argmax branch: the release ignores y
				argmax++
				ma = 0
			}
			if math.Abs(s.IEAdv-ie) > 1e-12 || math.Abs(s.Posterior-post) > 1e-12 || math.Abs(s.AbsMA-ma) > 1e-12 {
				t.Fatalf("ε=%v η=%v p=%v z=%d: IEAdv %v post %v |MA| %v; brute force %v %v %v", eps, e, p, z, s.IEAdv, s.Posterior, s.AbsMA, ie, post, ma)
			}
			sum += ie
		}
		if argmax == 0 || argmax == len(eta) {
			t.Fatalf("ε=%v: %d argmax examples: the case misses a branch", eps, argmax)
		}
		if want := sum / float64(len(eta)); math.Abs(res.EAdv-want) > 1e-12 {
			t.Errorf("ε=%v: EAdv %v, brute force %v", eps, res.EAdv, want)
		}
		// Mean |MA|: ε on the RR branch, 0 on the argmax branch (rr: ε).
		if want := eps * float64(len(eta)-argmax) / float64(len(eta)); math.Abs(res.MAMean-want) > 1e-12*eps {
			t.Errorf("ε=%v: mean |MA| %v, want ε·(RR-branch share) = %v", eps, res.MAMean, want)
		}
		// The uniform prior is RR.
		half := slices.Repeat([]float64{0.5}, len(eta))
		a, err := Run(eta, m, Options{Seed: 2, LabelDraws: 1, Prior: half})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Run(eta, testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: eps}), Options{Seed: 2, LabelDraws: 1})
		if math.Abs(a.EAdv-b.EAdv) > 1e-15 || a.MAP50 != b.MAP50 || math.Abs(b.MAMean-eps) > 1e-12*eps || a.MAMean != b.MAMean {
			t.Errorf("ε=%v: rr_prior with prior ½: EAdv %v |MA| p50 %v; rr %v %v", eps, a.EAdv, a.MAP50, b.EAdv, b.MAP50)
		}
	}
}

func TestCuratedValidation(t *testing.T) {
	eta := uniformEta(20, 1)
	llp8 := testutil.MustNew(pets.Params{Kind: pets.LLP, K: 4})
	rrp := testutil.MustNew(pets.Params{Kind: pets.RRPrior, Epsilon: 1})
	bags, _ := llp.Partition(20, 4, rand.NewPCG(1, 1), false)
	other, _ := llp.Partition(24, 4, rand.NewPCG(1, 1), false)
	big, _ := llp.Partition(20, 8, rand.NewPCG(1, 1), false)
	for _, tc := range []struct {
		name  string
		m     *pets.Mechanism
		o     Options
		param string
	}{
		{"bags for rr", testutil.MustNew(pets.Params{Kind: pets.RR, Epsilon: 1}), Options{LabelDraws: 1, Bags: bags}, "bags"},
		{"bags of other rows", llp8, Options{LabelDraws: 1, Bags: other}, "bags"},
		{"bags above k", llp8, Options{LabelDraws: 1, Bags: big}, "bags"},
		{"rr_prior without priors", rrp, Options{LabelDraws: 1}, "prior"},
		{"priors for llp", llp8, Options{LabelDraws: 1, Prior: make([]float64, 20)}, "prior"},
		{"short priors", rrp, Options{LabelDraws: 1, Prior: make([]float64, 3)}, "prior"},
		{"NaN prior", rrp, Options{LabelDraws: 1, Prior: append(make([]float64, 19), math.NaN())}, "prior"},
	} {
		_, err := Run(eta, tc.m, tc.o)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: error %v, want a ParamError for %q", tc.name, err, tc.param)
		}
	}
}
