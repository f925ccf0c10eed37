// Package audit measures how much a label PET helps an attacker reconstruct
// labels, following Section 3 of "Auditing Privacy Mechanisms via Label
// Inference Attacks" and its experimental protocol (Section 4 "Estimating class conditionals",
// Appendix C "Estimating Attack Advantage").
//
// The input is an audit set of class conditionals η_i = P(y_i = 1 | x_i):
// the true η of a synthetic distribution, or the scores of a model trained
// without any PET as a proxy (Section 4). The attacker knows the η values and
// the mechanism; the optimal attacker is the Bayes posterior (Lemma A.1), and
// the baseline is the uninformed attacker that sees the output of M_⊥ (the
// prior). Run computes, for a pets.Mechanism (rr, llp, llp_lap, llp_geom,
// plus none and bot):
//
//   - IEAdv_i (Definition 3.1), the individual expected attack advantage:
//     min(η_i, 1−η_i) − E_z[min(post_i(z), 1−post_i(z))], exactly — no
//     sampling. For rr it is Theorem 3.5 / A.17,
//     (min(η,1−η) − π)·1{η ∈ [π, 1−π]}, π = 1/(1+e^ε). For the LLP family
//     the audit examples are split into seeded random bags of k by
//     llp.Partition (the mechanism of Section 2; a remainder is dropped;
//     Sample.Bag names each example's bag), and within a bag
//     post_i(z) = η_i·P(z | y_i = 1)/P(z), where P(z | y_i = b) sums the
//     mechanism's likelihood over the leave-one-out Poisson-binomial law of
//     the other k−1 labels; the release z is the proportion (llp), the
//     clipped geometric release (llp_geom, pets' GeomPMF), or the Laplace
//     release (llp_lap, pets' LapDensity), whose expectation is an integral
//     computed in closed form piecewise between the k+1 atoms. With η ≡ p
//     this reduces to Theorem 3.2. EAdv is the mean of IEAdv_i.
//   - The multiplicative advantage (Definition 3.6) I = logit(post) −
//     logit(η) = log P(z | y_i=1)/P(z | y_i=0), realized by drawing labels
//     and releases through the mechanism: its |I| quantiles (p98 is the
//     privacy axis of Figure 3) and the fraction of infinite values (an llp
//     bag whose labels are all equal reveals them: Theorem 3.7 bounds how
//     often). For ε-DP mechanisms |I| ≤ ε (rr: |I| = ε for every release);
//     the audit checks every realized |I| against ε uncapped, and a value
//     above ε + DPTolerance (1e-9, rounding) fails Run with a *DPViolation:
//     the mechanism's law or implementation breaks its ε.
//   - Bounded random samples of (prior, posterior) pairs, IEAdv_i and |I|
//     per example, for the scatter plots of Figure 1 and the CDFs of
//     Figure 2.
//
// Beyond the paper: rr_prior (randomized response with a prior, Ghazi et
// al. 2021) is audited per example from its public prior (Options.Prior):
// the argmax branch reveals nothing (IEAdv 0, |I| 0), the RR branch is rr's
// closed form; its EAdv can match rr's where the attacker's η is already
// confident, so |I| (0 or ε per example) is what separates the two. Curated
// LLP bags (sorted by a feature, within key groups) are audited within the
// bags the release's own rule forms on the audit examples (Options.Bags),
// of any size up to k; EAdv is then the mean over the examples in bags.
//
// Exactness and cost: the bag-sum law is an O(k²) product recursion per
// bag, and each member's leave-one-out law an O(k) deconvolution that runs
// forward or backward so that it never cancels (measured relative accuracy
// ~3e-15 at k = 512 for every probability above 1e-150, far tails included);
// every likelihood sum of llp_geom and llp_lap is
// assembled from two O(k) exponential smoothing passes. An audit costs
// O(n·k) time and O(k) memory per worker besides the inputs, the bag
// permutation, a fixed 3.3 MB |I| histogram per worker and the samples.
// Results depend only on the seed, not on the number of workers.
//
// Labels with C classes (RunC; 3 ≤ C ≤ 64, and C = 2 is Run exactly). η_i
// is a vector over the classes (n×C row-major), the Bayes attacker guesses
// the posterior's argmax and IEAdv_i = E_z[max_y P(y_i = y | z)] −
// max_y η_iy (multiclass.go): k-ary rr in closed form, rr_prior on the set
// its public prior chooses (RRWithPrior, Ghazi et al. 2021), the LLP family
// (bags releasing the proportions of classes 1..C−1, noise of Δ = 2 per
// changed label) by an exact dynamic program over the count vectors of the
// other members of each bag (multibag.go: C(k+C−1, C−1) states; the exact
// audit stops at C = 10: k ≤ 13, C = 3: k ≤ 127, and refuses larger bags
// naming "k"). Where the release space of a bag cannot be enumerated at
// reasonable cost (llp_geom past ExactWork, llp_lap at C ≥ 3), each
// member's IEAdv is estimated without bias from OptionsC.BagDraws sampled
// releases and Summary.EAdvEstimated says so; EAdvSE, over bags, then
// includes the sampling error. |MA| is the largest change of log posterior
// odds between two classes (MultAdvC), checked against ε; EAdvBound
// averages IEAdvBoundC (the ε-DP worst case for C classes, attained by
// RRWithPrior with prior η; proof in multiclass.go). With a SamplerC,
// realizedc.go attacks releases of the production code, checks their
// likelihood (PIT per row or per released count, Bernstein at 1e-9) and
// certifies ε from canaries that are coins between two classes (classes 1
// and 2: a swap moves two released counts, the full Δ). Samples carry the
// drawn label's prior and posterior probability.
//
// Conversion values (RunValues; values.go, values_exact.go,
// values_bags.go, values_realized.go): η_i is a law over the mechanism's
// grid; the Bayes attacker's posterior gives the R²-advantage 1 −
// E_z[Var(y | z)]/Var(y) (mean over examples, and the ratio of the sums)
// and the τ-advantage E_z[max_g P(|y − g| ≤ τ | z)] − max_g P(|y − g| ≤
// τ), checked against its ε-DP worst case e^ε κ/(e^ε κ + 1 − κ) − κ. The
// figures are exact: sums over the releases for rr_bins and exact bags,
// closed forms between the atoms of a Laplace release (the likelihood is
// piecewise exponential; a mixture of two laws fixed on each interval, an
// upper envelope of lines for the τ-success), bag members through the
// convolution of their bag-mates' laws (truncated with a stated bound).
// With a ValueSampler the realized attack, a PIT likelihood check and
// canaries between 0 and B check the releases against the law.
//
// Attacks on trained models (model.go): ReleasePosteriors computes the
// exact posteriors of training rows given the very release a model trained
// on; ModelAttack scores the model's argmax guesses of those rows' labels
// against the true ones over the prior-only attacker, and tests them
// against the release (a model is post-processing of it, so given the
// release its guesses are right with the posterior probability of what
// they guess: Bernstein at a stated level); CanaryBound certifies ε from
// canaries scored by a model (canaries through training).
package audit
