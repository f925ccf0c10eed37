package audit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/llp"
	"labelprivacy/pets"
)

// keyGroups returns the key groups of keys, each whole (ara_summary's
// bags), and the rule that made them.
func keyGroups(t *testing.T, keys []int64) (*llp.Bags, llp.Keyed) {
	t.Helper()
	part := llp.Keyed{Column: "group", Keys: keys}
	b, err := part.Partition(len(keys), len(keys), rand.NewPCG(1, 2), true)
	if err != nil {
		t.Fatal(err)
	}
	return b, part
}

// ara_summary on values, audited exactly on key groups of unequal sizes
// (1, 2, 3 and 4 rows; ten examples, shuffled keys), equals the
// brute-force enumeration of each group's values (the joint law of the
// group's Laplace-noised sum, integrated by Simpson's rule) at the value's
// rate: Lap(B/(v·ε)) on the sum. R2Adv, R2AdvRatio and TauAdv within 1e-5
// (the brute side's quadrature error, as TestRunValuesBruteForce), and
// the τ-bound at v·ε (not ε) within 1e-12. Without the groups the audit
// is refused naming bags.
func TestARASummaryValuesBruteForce(t *testing.T) {
	g := pets.Grid{Max: 2, Step: 0.5}
	v := g.Values()
	gp := g.Points()
	keys := []int64{7, 3, 3, 9, 9, 9, 1, 1, 1, 1}
	rand.New(rand.NewPCG(2, 3)).Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	n := len(keys)
	eta := valueEta(g, n, rand.New(rand.NewPCG(5, 7)))
	bags, _ := keyGroups(t, keys)
	cases := []struct {
		name       string
		eps, share float64
	}{{"eps2 all", 2, 1}, {"eps2 half", 2, 0.5}, {"eps16 quarter", 16, 0.25}}
	for _, tau := range []float64{0, 0.5} {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				m, err := pets.New(pets.Params{Kind: pets.ARASummary, Epsilon: tc.eps, ValueShare: tc.share, Values: g})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := RunValues(eta, m, ValueOptions{Tau: tau}); err == nil {
					t.Fatal("audited without its key groups")
				}
				res, err := RunValues(eta, m, ValueOptions{Seed: 3, Tau: tau, Bags: bags})
				if err != nil {
					t.Fatal(err)
				}
				lambda := tc.share * tc.eps / g.Max
				brute := make([]valueStat, n)
				for u := range bags.NumBags {
					mem := bags.Members(u)
					var ps [][]float64
					for _, i := range mem {
						ps = append(ps, eta[int(i)*gp:(int(i)+1)*gp])
					}
					for j, st := range bruteValueBag(ps, g, tau, lambda) {
						brute[mem[j]] = st
					}
				}
				var r2, tadv, post, vars, bnd float64
				for i := range n {
					p := eta[i*gp : (i+1)*gp]
					vi, ki := bruteVar(p, v), bruteWindow(p, v, tau)
					r2 += 1 - brute[i].post/vi
					tadv += brute[i].succ - ki
					post, vars = post+brute[i].post, vars+vi
					bnd += TauBound(ki, tc.share*tc.eps)
				}
				closeTo(t, "R2Adv", res.R2Adv, r2/float64(n), 1e-5)
				closeTo(t, "R2AdvRatio", res.R2AdvRatio, 1-post/vars, 1e-5)
				if d := res.TauAdv - tadv/float64(n); math.Abs(d) > 1e-5 {
					t.Errorf("TauAdv %v, brute force %v", res.TauAdv, tadv/float64(n))
				}
				closeTo(t, "TauAdvBound", res.TauAdvBound, bnd/float64(n), 1e-12)
				if res.NBags != 4 || res.Epsilon != tc.eps {
					t.Errorf("%d bags, ε %v", res.NBags, res.Epsilon)
				}
			})
		}
	}
}

// The realized attack on key groups through a sampler that follows the
// law agrees with the exact figures (|RealizedZ| ≤ GuardZ, false failure
// 1.1e-9), its canaries certify no more than 1.5·v·ε (the value's ε, not
// the release's), and a sampler at a quarter of the noise is caught.
func TestARASummaryValuesRealized(t *testing.T) {
	g := pets.Grid{Max: 40, Step: 1}
	const n = 600
	eta := valueEta(g, n, rand.New(rand.NewPCG(8, 9)))
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = int64(i % 37) // 37 groups of 16 or 17
	}
	bags, _ := keyGroups(t, keys)
	for _, share := range []float64{1, 0.5} {
		m, err := pets.New(pets.Params{Kind: pets.ARASummary, Epsilon: 8, ValueShare: share, Values: g})
		if err != nil {
			t.Fatal(err)
		}
		o := ValueOptions{Seed: 4, Tau: 1, Draws: 8, Canaries: 2000, Sampler: &lawSampler{scale: 1}, Bags: bags}
		res, err := RunValues(eta, m, o)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.RealizedZ) > GuardZ || !(res.EpsLower >= 0) || res.EpsLower > 1.5*share*8 {
			t.Errorf("share %v: RealizedZ %v, EpsLower %v", share, res.RealizedZ, res.EpsLower)
		}
		t.Logf("share %v: R2 %.4f realized %.4f ± %.4f; Z %.2f; ε ≥ %.3f (%d canaries)", share, res.R2Adv, res.RealizedR2, res.RealizedR2SE, res.RealizedZ, res.EpsLower, res.Canaries)
		o.Sampler = &lawSampler{scale: 0.25}
		if _, err := RunValues(eta, m, o); !errors.Is(err, ErrReleaseMismatch) {
			t.Errorf("share %v: a sampler at a quarter of the noise: %v", share, err)
		}
	}
}
