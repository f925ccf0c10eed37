package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/pets"
)

// zMC is the tolerance of the Monte-Carlo checks in standard errors:
// P(|Z| > 5.5) = 3.8e-8 under the normal approximation (the per-trial score
// is bounded and averaged over ≥ 20000 independent trials, and the SE is
// estimated from as many), so with the 5 checks of TestMonteCarloAttacker
// the false-failure rate is < 2e-7 ≤ 1e-6 were the seed random.
const zMC = 5.5

// TestMonteCarloAttacker simulates the attack end to end, independently of
// the exact code paths of Run: labels y ~ Bernoulli(η) and releases drawn
// with the mechanism's own release functions (ReleaseRR, ReleaseBag) on the
// same bag partition as Run, the Bayes posterior computed from pets'
// Likelihood and leave-one-out laws obtained by direct convolution, the
// attacker guessing 1{posterior ≥ ½} and the prior attacker 1{η ≥ ½}. The
// mean accuracy difference must match Run's exact EAdv within zMC standard
// errors (over trials).
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
		m := pets.MustNew(p)
		t.Run(m.String(), func(t *testing.T) {
			const seed = 5
			res, err := Run(eta, m, Options{Seed: seed, LabelDraws: 1})
			if err != nil {
				t.Fatal(err)
			}
			k := max(1, m.K())
			// The partition Run used: the same seeded stream.
			perm := make([]int, n)
			for i := range perm {
				perm[i] = i
			}
			if m.Kind().IsLLP() {
				perm = rand.New(rand.NewPCG(seed, streamPartition)).Perm(n)
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
			var sum, sum2 float64
			for range trials {
				for i, e := range eta {
					y[i] = 0
					if r.Float64() < e {
						y[i] = 1
					}
				}
				score := 0.0
				if !m.Kind().IsLLP() {
					m.ReleaseRR(rel, y, r)
					for i, e := range eta {
						l1 := m.Likelihood(float64(rel[i]), 1, 1)
						l0 := m.Likelihood(float64(rel[i]), 1, 0)
						score += accDiff(e*l1 >= (1-e)*l0, e >= 0.5, y[i])
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
							lik[s] = m.Likelihood(alpha, k, s)
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
							score += accDiff(e*l1 >= (1-e)*l0, e >= 0.5, y[perm[j]])
						}
					}
				}
				score /= float64(n)
				sum += score
				sum2 += score * score
			}
			mean := sum / trials
			se := math.Sqrt((sum2/trials - mean*mean) / (trials - 1))
			t.Logf("exact EAdv %.5f, Monte Carlo %.5f ± %.5f", res.EAdv, mean, se)
			if d := math.Abs(mean - res.EAdv); d > zMC*se {
				t.Errorf("Monte Carlo advantage %.5f differs from exact %.5f by %.3g > %g SE (%.3g)", mean, res.EAdv, d, zMC, se)
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
