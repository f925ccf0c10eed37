// Package pets implements the label privacy-enhancing technologies (PETs)
// audited in "Auditing Privacy Mechanisms via Label Inference Attacks":
//
//   - none: clean labels (the utility ceiling; label-DP ε = +Inf).
//   - bot (M_⊥, Section 2): releases nothing about the labels (ε = 0); the
//     baseline of the uninformed adversary.
//   - rr (Definition 2.1 and the text after it, Section 2): randomized
//     response, each binary label flipped independently with probability
//     π = 1/(1+e^ε); ε-label-DP.
//   - llp (Section 2): label proportions; rows are partitioned at random into
//     bags of k and only the proportion α = (sum of labels)/k of each bag is
//     released. Not differentially private (ε = +Inf).
//   - llp_lap (Section 4 "Mechanisms", Appendix C "Training with LLP+Lap"):
//     α + Lap(1/(kε)) per bag; ε-label-DP.
//   - llp_geom (Section 4 "Mechanisms", Appendix C "Training with LLP+Geom"):
//     the integer bag sum plus two-sided geometric noise Z = G⁺ − G⁻
//     (success probability 1−e^{−ε}), clipped to [0, k] and released as a
//     proportion; ε-label-DP, and identical in distribution to rr(ε) at k = 1.
//   - rr_prior (beyond the paper: RRWithPrior of Ghazi et al., "Deep
//     Learning with Label Differential Privacy", NeurIPS 2021, two classes):
//     given a public prior p = P(y=1|x) that does not depend on the row's
//     label, release the prior's argmax label when max(p, 1−p) ≥
//     e^ε/(1+e^ε), RR(ε) otherwise (PriorBranch, ReleaseRRPrior); ε-label-DP.
//     The prior comes from a model trained on an earlier stage's release
//     (package release, StartRRPrior).
//   - C classes (Multiclass): k-ary rr, RRWithPrior, bags of class counts; at C = 2 the binary releases bit for bit.
//
// Every per-bag function takes the bag's actual size n (1 ≤ n), because a
// kept remainder bag may be smaller than k: noise scales and clipping use n.
//
// Besides sampling, the package provides the debiasing used for training
// (Debias: E[α_noise | α_clip] of LLP+Geom, Appendix C, which makes the
// released proportion mean-zero noisy as Theorems D.1/D.2 of Appendix D
// require) and privacy accounting of a person's history of releases
// (Compose: basic, advanced and privacy-loss-distribution composition;
// Step.Group charges several rows of one person in one draw). The
// per-person privacy ledger that records releases and composes them is
// package ledger. The exact likelihoods P(release | labels) that tests
// check samplers against live in internal/oracle; the audit computes its
// own in O(k) per bag member.
//
// Randomness comes from a caller-supplied Rand: a seeded *math/rand/v2.Rand
// for reproducible experiments, or NewSecureRand (crypto/rand) for
// deployment. All samplers are exact up to floating-point rounding of the
// probabilities they compare against (relative error ~1e-15): geometric
// variates are drawn by Google's binary-search method with a full-precision
// uniform, RR flips compare a full-precision uniform with π. With
// Params.Secure the Laplace mechanism samples on a power-of-two grid, which
// is not vulnerable to the floating-point attack on textbook Laplace
// sampling (Mironov, CCS 2012).
package pets
