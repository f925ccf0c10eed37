package audit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"labelprivacy/internal/oracle"
	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// zMC is the tolerance of the Monte-Carlo checks in standard errors:
// P(|Z| > 5.5) = 3.8e-8 under the normal approximation (the per-trial score
// is bounded and averaged over ≥ 20000 independent trials, and the SE is
// estimated from as many), so with the 10 checks of TestMonteCarloAttacker
// the false-failure rate is < 4e-7 were the seed random.
const zMC = 5.5

// TestMonteCarloAttacker simulates the attack end to end, independently of
// the exact code paths of Run: labels y ~ Bernoulli(η) and releases drawn
// with the mechanism's own release functions (ReleaseRR, ReleaseBag) on the
// same bag partition as Run (read from its samples), the Bayes posterior
// computed from internal/oracle's likelihoods and leave-one-out laws
// obtained by direct convolution, the attacker guessing 1{posterior ≥ ½}
// and the prior attacker 1{η ≥ ½}. Two estimates of the advantage, the
// attacker's mean accuracy difference and its Rao–Blackwellization (the
// same given the release, label noise integrated out; see scores), must
// each match Run's exact EAdv within zMC standard errors over 20000 trials.
// The second is precise enough that a 10% error in EAdv moves it by
// ≥ zMC+2 SEs, which the test asserts for every case (for llp_lap k=4
// ε=0.25, EAdv = 0.0059 with SE 2e-5: 29 SEs).
func TestMonteCarloAttacker(t *testing.T) {
	const n, trials = 64, 20000
	gen := rand.New(rand.NewPCG(21, 22))
	eta := make([]float64, n)
	for i := range eta {
		eta[i] = gen.Float64()
		if i%8 == 0 {
			eta[i] = 0.5 + 0.1*gen.Float64() // some maximally uncertain ones
		}
	}
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 1},
		{Kind: pets.LLP, K: 8},
		{Kind: pets.LLPGeom, K: 8, Epsilon: 1},
		{Kind: pets.LLPLap, K: 8, Epsilon: 1},
		{Kind: pets.LLPLap, K: 4, Epsilon: 0.25, Secure: true},
	} {
		m := testutil.MustNew(p)
		t.Run(m.String(), func(t *testing.T) {
			const seed = 5
			res, err := Run(eta, m, Options{Seed: seed, LabelDraws: 1, MaxSamples: n})
			if err != nil {
				t.Fatal(err)
			}
			k := max(1, m.K())
			// The partition Run used, from its samples (all kept).
			members := make([][]int, max(1, res.NBags))
			for _, sm := range res.Samples {
				b := max(0, sm.Bag)
				members[b] = append(members[b], sm.Index)
			}
			perm := slices.Concat(members...)
			if len(perm) != n {
				t.Fatalf("%d samples, want %d", len(perm), n)
			}
			// Leave-one-out laws by direct convolution, per bag member.
			loo := make([][]float64, n)
			for b := 0; b < n/k; b++ {
				bag := make([]float64, k)
				for i := range bag {
					bag[i] = eta[perm[b*k+i]]
				}
				for i := range bag {
					loo[b*k+i] = directLOO(bag, i)
				}
			}
			r := rand.New(rand.NewPCG(99, uint64(p.Kind)))
			y := make([]uint8, n)
			rel := make([]uint8, n)
			var raw, rb moments
			for range trials {
				for i, e := range eta {
					y[i] = 0
					if r.Float64() < e {
						y[i] = 1
					}
				}
				var sRaw, sRB float64
				add := func(e, l1, l0 float64, y uint8) {
					a, b := scores(e, l1, l0, y)
					sRaw += a
					sRB += b
				}
				if !m.Kind().IsLLP() {
					m.ExampleLaw().Release(rel, y, nil, r)
					for i, e := range eta {
						l1 := likelihood(m, float64(rel[i]), 1, 1)
						l0 := likelihood(m, float64(rel[i]), 1, 0)
						add(e, l1, l0, y[i])
					}
				} else {
					for b := 0; b < n/k; b++ {
						s := 0
						for i := range k {
							s += int(y[perm[b*k+i]])
						}
						alpha := m.ReleaseBag(s, k, r)
						lik := make([]float64, k+1)
						for s := range lik {
							lik[s] = likelihood(m, alpha, k, s)
						}
						for i := range k {
							j := b*k + i
							e, q := eta[perm[j]], loo[j]
							var l1, l0 float64
							for s := 0; s <= k; s++ {
								if s > 0 {
									l1 += q[s-1] * lik[s]
								}
								if s < k {
									l0 += q[s] * lik[s]
								}
							}
							add(e, l1, l0, y[perm[j]])
						}
					}
				}
				raw.add(sRaw / float64(n))
				rb.add(sRB / float64(n))
			}
			for _, c := range []struct {
				name string
				mo   moments
			}{{"attacker", raw}, {"Rao-Blackwellized", rb}} {
				mean, se := c.mo.mean(), c.mo.se()
				t.Logf("exact EAdv %.5f, %s Monte Carlo %.5f ± %.5f", res.EAdv, c.name, mean, se)
				if d := math.Abs(mean - res.EAdv); d > zMC*se {
					t.Errorf("%s Monte Carlo advantage %.5f differs from exact %.5f by %.3g > %g SE (%.3g)",
						c.name, mean, res.EAdv, d, zMC, se)
				}
			}
			if 0.1*res.EAdv < (zMC+2)*rb.se() {
				t.Errorf("SE %.3g cannot see a 10%% error in EAdv %.5f", rb.se(), res.EAdv)
			}
		})
	}
}

// accDiff is 1{informed guess correct} − 1{prior guess correct}.
func accDiff(informed, prior bool, y uint8) float64 {
	v := 0.0
	if informed == (y == 1) {
		v++
	}
	if prior == (y == 1) {
		v--
	}
	return v
}

// likelihood is P(release | true sum s) of one release of m on a unit of n
// rows, from the oracle: the 0/1 label for rr and none (n = 1), the
// proportion for llp, llp_geom (a probability) and llp_lap (a density).
func likelihood(m *pets.Mechanism, release float64, n, s int) float64 {
	eps := m.Params().Epsilon
	switch m.Kind() {
	case pets.None:
		eps = math.Inf(1)
		fallthrough
	case pets.RR:
		return oracle.RR(eps, uint8(release), uint8(s))
	case pets.LLP:
		if math.Round(release*float64(n)) == float64(s) {
			return 1
		}
		return 0
	case pets.LLPGeom:
		return math.Exp(oracle.GeomLogPMF(eps, n, s, int(math.Round(release*float64(n)))))
	case pets.LLPLap:
		return oracle.LapDensity(eps, n, s, release)
	}
	panic("no likelihood for " + m.String())
}

// scores returns the two per-example estimates of the advantage for prior
// e, likelihoods l1 = P(z | y=1), l0 = P(z | y=0) of the realized release z
// and the true label y: the attacker's 1{Bayes guess correct} − 1{prior
// guess correct}, and its conditional expectation given z (Rao–Blackwell:
// P(y = Bayes guess | z) − P(y = prior guess | z), from the posterior),
// which has the same mean and removes the label's own noise.
func scores(e, l1, l0 float64, y uint8) (attacker, rb float64) {
	informed, prior := e*l1 >= (1-e)*l0, e >= 0.5
	post := e * l1 / (e*l1 + (1-e)*l0)
	pick := func(guess bool) float64 {
		if guess {
			return post
		}
		return 1 - post
	}
	return accDiff(informed, prior, y), pick(informed) - pick(prior)
}

// moments accumulates the mean and variance of independent trials.
type moments struct{ n, sum, sum2 float64 }

func (m *moments) add(x float64) { m.n++; m.sum += x; m.sum2 += x * x }
func (m *moments) mean() float64 { return m.sum / m.n }

// se is the standard error of the mean.
func (m *moments) se() float64 {
	mu := m.mean()
	return math.Sqrt((m.sum2/m.n - mu*mu) / (m.n - 1))
}
