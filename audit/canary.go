package audit

import (
	"cmp"
	"math"
	"slices"
)

// The empirical ε lower bound (Summary.EpsLower): a distinguishing game
// played through the production sampler, certified by the one-run bound of
// Steinke, Nasr and Jagielski ("Privacy Auditing with One (1) Training
// Run", NeurIPS 2023, Theorem 3.1 for pure ε-DP).
//
// The games. A canary is an audit position whose label is a fair coin
// S_i ∈ {0, 1}, drawn independently of everything else the audit chooses.
// The auditor picks the dataset and the canary positions; the sampler (the
// production release code) makes the release with its own randomness
// (bags, noise).
//
//   - Controlled game (EpsLower). rr and bot: every audit position is a
//     canary. rr_prior: every position on the RR branch of its public prior
//     (the argmax branch releases a function of the prior alone: a canary
//     there is a guess at a coin the release does not show). The LLP family:
//     each position is a canary with probability canaryRate(k) and every
//     other label is fixed at 0, known to the attacker, so a bag shows its
//     canaries through the mechanism's noise alone. With one canary in a
//     bag, llp_geom's clipped release r gives the exact likelihood ratio
//     e^ε for r ≥ 1 and e^−ε for r = 0: the bag is RR(ε) of the canary.
//     llp_lap's gives e^±ε outside (0, 1) (probability ½(1 + e^−ε)), less
//     inside.
//   - Real-bags game (EpsLowerRealBags, the LLP family only). The same
//     canary positions, coins and release seeds, but the other labels are
//     drawn from η, unknown to the attacker: a canary hides among real
//     bag-mates as in the paper's audit. It is the weaker attacker's
//     certificate, not the mechanism's ε.
//
// The attacker scores each canary with the exact log-likelihood ratio
// s = log P(view | S_i = 1)/P(view | S_i = 0) of what its release shows
// (bag.go; in a bag the other canaries count as coins, the other labels
// at their known value or at η), and guesses T_i = 1{s > 0} on the canaries
// whose |s| is among the r largest, abstaining on the rest. The number of
// guesses r is chosen from the scores alone, before any coin is looked at:
// the r that maximizes the bound predicted by the stated law (each guess
// right with probability σ(|s|) = e^|s|/(1+e^|s|), the posterior at prior
// ½; Wilson's interval standing in for Clopper–Pearson). With W of the r
// guesses right,
//
//	EpsLower = max(0, logit(p_lo)),  p_lo = Clopper–Pearson lower bound of W/r at level alpha.
//
// Validity (confidence ≥ 1 − alpha for any label-free choice of guesses).
// Let V be everything the attacker sees (the releases and the public
// design: positions, fixed labels, η, priors; which canaries are played,
// how many releases and the cut at Options.Canaries depend on no coin) and
// T = A(V) its guesses.
// Each coin S_i enters one release; given all other labels (the other
// coins included) that release is ε-label-DP in S_i and the other releases
// do not depend on it, so P(V ∈ E | S_i = 1, S_<i) ≤ e^ε·P(V ∈ E | S_i = 0,
// S_<i) and conversely for every event E (the other coins and labels,
// independent of S_i, are mixed over on both sides). With prior ½ the
// posterior odds of S_i given V and S_<i therefore lie in [e^−ε, e^ε]:
// P(S_i = T_i | V, S_<i) ≤ p_ε = e^ε/(1+e^ε) for every guessed i. So given
// T, the number of right guesses W is a sum of r indicators, each right
// with conditional probability ≤ p_ε given the ones before it, hence
// stochastically at most Bin(r, p_ε) (couple each with a uniform U_i:
// 1{U_i ≤ p_i} ≤ 1{U_i ≤ p_ε}). EpsLower > ε means p_lo > p_ε, i.e.
// P(Bin(r, p_ε) ≥ W) < alpha (the Clopper–Pearson tail is increasing in
// p); the set of W for which that holds is an upper tail {W ≥ w*} of
// Bin(r, p_ε)-probability < alpha, so P(EpsLower > ε | T) < alpha, and
// unconditionally. Nothing assumes the canaries independent in what the
// release shows (several canaries share a bag): only each coin's fairness
// and the release's ε-DP in it. ∎
//
// EpsLower reports the bound at 95%; the guard recomputes the controlled
// game's at 1 − GuardAlpha (its own choice of r, also label-free) and
// fails the audit if it exceeds ε. A tight mechanism (rr; llp_geom in the
// controlled game) puts the 95% bound above ε in just under 5% of audits,
// by construction.

// MaxCanaryReleases caps the canary releases of one audit (Summary.Canaries
// says how many canaries were played; with few audit examples or large k
// it can fall short of Options.Canaries).
const MaxCanaryReleases = 256

// canaryRate is the probability that an audit position of an LLP-family
// canary release is a canary: 1/(2k) (at k = 8 about one canary in three
// shares its bag with another, and shows less there), raised as
// far as needed to place want canaries within half of MaxCanaryReleases
// releases of n positions, at most 1. It depends on no label.
func canaryRate(k, n, want int) float64 {
	p := 1 / (2 * float64(k))
	if n > 0 {
		p = max(p, float64(want)/(float64(n)*MaxCanaryReleases/2))
	}
	return min(1, p)
}

// canaryTrial is one canary: its coin and the attacker's score.
type canaryTrial struct {
	y uint8
	s float64 // log P(view | y=1)/P(view | y=0); ±Inf when the view decides
}

// oneRun is the one-run test on a list of trials at level alpha: the r
// guesses (chosen from the scores only), W of them right, and the bound.
type oneRun struct {
	guesses, right int
	eps            float64
}

// oneRunBound plays the test of the file comment: it sorts the trials by
// |s| (largest first; equal scores are guessed all together or not at
// all), chooses the number of guesses r that maximizes the Wilson lower bound of
// the predicted accuracy Σσ(|s|)/r at level alpha, and certifies the
// observed accuracy of those r guesses with Clopper–Pearson.
func oneRunBound(trials []canaryTrial, alpha float64) oneRun {
	idx := make([]int, 0, len(trials))
	for i, t := range trials {
		if t.s != 0 && !math.IsNaN(t.s) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return oneRun{}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(math.Abs(trials[b].s), math.Abs(trials[a].s)) })
	z := math.Sqrt2 * math.Erfcinv(2*alpha) // one-sided normal quantile of level alpha
	bestR, best, pred := 0, math.Inf(-1), 0.0
	for j, i := range idx {
		pred += sigmoid(math.Abs(trials[i].s))
		if j+1 < len(idx) && math.Abs(trials[idx[j+1]].s) == math.Abs(trials[i].s) {
			continue // a tie: guess all of it or none of it
		}
		if lo := wilsonLower(pred, j+1, z); lo > best {
			bestR, best = j+1, lo
		}
	}
	out := oneRun{guesses: bestR}
	for _, i := range idx[:bestR] {
		if (trials[i].s > 0) == (trials[i].y == 1) {
			out.right++
		}
	}
	if p := cpLower(out.right, bestR, alpha); p > 0.5 {
		out.eps = math.Log(p) - math.Log1p(-p)
	}
	return out
}

// sigmoid is e^x/(1+e^x) (1 at +Inf).
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// wilsonLower is the lower end of Wilson's score interval for w successes
// (real-valued: a predicted count) in n trials at normal quantile z.
func wilsonLower(w float64, n int, z float64) float64 {
	fn := float64(n)
	p := w / fn
	z2 := z * z
	return (p + z2/(2*fn) - z*math.Sqrt(max(0, p*(1-p))/fn+z2/(4*fn*fn))) / (1 + z2/fn)
}
