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
//   - C classes (Params.Classes, 3..MaxClasses, for the kinds whose Spec
//     takes them: every built-in kind): the Mechanism's Multiclass law —
//     k-ary rr, RRWithPrior over the prior's top-k classes, bags of class
//     counts with noise calibrated to their sensitivity Δ = 2 — answers its
//     releases and flip probability; at C = 2 the binary releases bit for
//     bit.
//
// A mechanism is one value. Each kind above is one type in one file
// (none.go, bot.go, rr.go, llp.go, llplap.go, llpgeom.go, rrprior.go)
// implementing Scheme: its Spec says what the kind is for the rest of the
// program — its parameters (Takes), label-DP ε and how it composes
// (Privacy), what a release shows and writes (Release), how a model
// learns from it (Train: a loss family and a target column), how tables
// and figures show it (Look) — and its Law, built by New from validated
// Params, is how it releases and what the audit computes from: an
// ExampleLaw (the channels P(z | y), y ∈ [0, C), it draws each example
// through, chosen by a public prior for rr_prior) or a BagLaw (the law of
// the noise on a bag's sum: exact, clipped two-sided geometric or
// Laplace). Each file declares its Kind and registers its Scheme; the
// registry (kind.go, Register for kinds from outside) lists them; ParseKind,
// Kinds and Kind.Spec go through it, so that no package above switches
// on a kind. Curated bags (llp.Sorted, llp.Keyed) are a parameter of the
// release, not kinds: a bag's law given its labels does not depend on how
// it was formed.
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
