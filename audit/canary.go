package audit

import "math"

// The empirical ε lower bound (Summary.EpsLower), in the style of the DP
// auditing of Jagielski, Ullman and Oprea ("Auditing Differentially Private
// Machine Learning: How Private is Private SGD?", NeurIPS 2020) and Nasr et
// al. ("Adversary Instantiation: Lower Bounds for Differentially Private
// Machine Learning", IEEE S&P 2021): a distinguishing game played through
// the production sampler.
//
// Canaries are audit positions given η = ½ and a uniformly random label
// (rr and bot: every position of a canary release; the LLP family: each
// position with probability 1/k, the other members of its bag real audit
// examples with labels drawn from η, so the canary sits in a real bag of
// the release; one trial per bag, its first canary in release order, a
// choice that does not depend on any label). The attacker scores each
// trial with the log-likelihood ratio s = log P(z | y=1)/P(z | y=0) of what
// the release shows (the multiplicative advantage of Definition 3.6 at
// prior ½) and plays nTests fixed tests "guess 1 iff s > t":
// t = 0 (the Bayes guess), "s = +∞" (certain of 1) and "s > −∞" (not
// certain of 0). For an ε-label-DP release every test has
// TPR ≤ e^ε·FPR and 1 − FPR ≤ e^ε·(1 − TPR) (the release given the
// canary's label is ε-DP whatever the other labels and the partition,
// which do not depend on it), so
//
//	ε ≥ max(ln(TPR/FPR), ln((1−FPR)/(1−TPR))).
//
// With one-sided Clopper–Pearson bounds TPR_lo and FPR_hi at level
// alpha/(2·nTests) each, the union bound makes
// max over tests of ln(TPR_lo/FPR_hi) and ln((1−FPR_hi)/(1−TPR_lo)) a lower
// bound on ε with confidence ≥ 1 − alpha. EpsLower reports it at 95%;
// the guard recomputes it at 1 − GuardAlpha and fails the audit if that
// exceeds ε. (For rr the tests are tight, TPR/FPR = e^ε exactly, so the 95%
// bound itself lands above ε now and then: rarely, see the tests.)

// MaxCanaryReleases caps the canary releases of one audit (bags of k hold
// about 0.63·n/k trials per release: with large k and a small audit set the
// trial count falls short of Options.Canaries; Summary.Canaries says how
// many were played).
const MaxCanaryReleases = 256

// nTests is the number of fixed tests of the canary attack.
const nTests = 3

// canaryTrial is one canary: its label and the attacker's score.
type canaryTrial struct {
	y uint8
	s float64
}

// canaryCounts are the positives of each test per class.
type canaryCounts struct {
	tp, fp [nTests]int
	n1, n0 int
}

func countCanaries(trials []canaryTrial) canaryCounts {
	var c canaryCounts
	for _, t := range trials {
		pos := [nTests]bool{t.s > 0, math.IsInf(t.s, 1), !math.IsInf(t.s, -1)}
		for j, p := range pos {
			if !p {
				continue
			}
			if t.y == 1 {
				c.tp[j]++
			} else {
				c.fp[j]++
			}
		}
		if t.y == 1 {
			c.n1++
		} else {
			c.n0++
		}
	}
	return c
}

// epsLower is the lower bound on ε at confidence 1 − alpha (≥ 0).
func (c canaryCounts) epsLower(alpha float64) float64 {
	if c.n1 == 0 || c.n0 == 0 {
		return 0
	}
	a := alpha / (2 * nTests)
	best := 0.0
	for j := range nTests {
		tlo, fhi := cpLower(c.tp[j], c.n1, a), cpUpper(c.fp[j], c.n0, a)
		if tlo > 0 {
			best = max(best, math.Log(tlo/fhi))
		}
		if fhi < 1 {
			best = max(best, math.Log((1-fhi)/(1-tlo)))
		}
	}
	return best
}
