// Package pets implements the label privacy-enhancing technologies (PETs)
// audited in "Auditing Privacy Mechanisms via Label Inference Attacks":
//
//   - none: clean labels (the utility ceiling; label-DP ε = +Inf).
//   - bot (M_⊥, Section 2): releases nothing about the labels (ε = 0); the
//     baseline of the uninformed adversary.
//   - rr (Definition 2.1 and the text after it, Section 2): randomized
//     response, each binary label flipped independently with probability
//     π = 1/(1+e^ε); ε-label-DP. On C classes k-ary RR.
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
//     Learning with Label Differential Privacy", NeurIPS 2021): given a
//     public prior that does not depend on the row's label, RR within the
//     prior's top-k classes (on two classes: the prior's argmax label when
//     it is confident enough, RR(ε) otherwise); ε-label-DP. The prior comes
//     from a model trained on an earlier stage's release (package release,
//     StartRRPrior).
//   - ara_event (beyond the paper: Chrome's Attribution Reporting API,
//     event-level reports, exactly; package ara): a source's conversion
//     outcome, one of 1 + T·W classes, is the browser's output state, which
//     k-ary randomized response over the source's k = C(T·W + R, R) states
//     replaces with probability k/(k + e^ε − 1); the release is the state,
//     projected onto the classes (FormRRErased: states of two reports or
//     more show no class); ε-label-DP.
//   - ara_summary (the same API's summary reports): per group of rows
//     sharing a key, the sum of the conversions scaled into a share of the
//     contribution budget, with Laplace noise of scale L1/ε; ε-DP per
//     source, the count (share·ε)-label-DP. On conversion values
//     (Kind.SpecOn a grid: ValuesSpec) the sum of the clipped values in
//     the value's share v, released as the key's mean value, Lap(B/(v·ε))
//     on the sum: the value (v·ε)-label-DP (Mechanism.ValueEpsilon).
//
// Conversion values (values.go; issue 37): labels that are reals on a
// public grid 0, s, …, B (Grid). A kind that takes them (Takes.Values)
// returns a ValueLaw for Params.Values:
//
//   - laplace: z = y + Lap(B/ε), the baseline of label-DP regression.
//   - rr_bins (RR-on-Bins, Ghazi et al., "Regression with Label
//     Differential Privacy", ICLR 2023): RR over m contiguous bins of the
//     grid, each released as its weighted mean, the bins and m chosen for a
//     prior by a dynamic program (OptimalBins); the prior is public or a
//     noisy histogram of the training values (value_prior, ε₁ of ε: its
//     own step in the ledger, PriorStage and BinsStage).
//   - value_bags: the mean of a bag of k values, exact (not DP) or with
//     Lap(B/ε) on the sum.
//   - none and bot take values too (the value itself; nothing).
//
// Each kind takes labels of C classes (Params.Classes, 2..MaxClasses; every
// built-in kind but ara_summary takes C ≥ 3): k-ary RR, RRWithPrior over the prior's top-k
// set, bags of class counts with noise calibrated to their sensitivity
// Δ = 2; at C = 2 each is the binary mechanism bit for bit.
//
// A mechanism is one value, and a kind is one Scheme: its Spec says what
// the kind is — its parameters (Takes), label-DP ε and how it composes
// (Privacy), the shape of its release (Release), how a model learns from
// it (Train: a loss family and a target), how tables and figures show it
// (Look) — and its Law, made by New from validated Params on the
// Params.Classes classes, is how it releases and all that the rest of the
// program computes of it: an ExampleLaw (per example: the channel P(z | y)
// each example goes through, keyed by its public prior for a kind released
// with one, and the sampler; a channel may declare a closed form, Form) or
// a BagLaw (proportions: the law of the noise on each released count, its
// sensitivity, the sampler and the training target of a release). The
// built-in kinds are one file each (none.go, bot.go, rr.go, rrprior.go,
// llp.go, llplap.go, llpgeom.go, araevent.go, arasummary.go, laplace.go,
// rrbins.go, valuebags.go, valueprior.go), declaring their Kind and registering
// their Scheme; a kind from outside is one Register call. The packages
// above serve the values of this package's vocabulary (Release, Train,
// Privacy, Form, SumNoise, Look) and say which they serve (Serve: release,
// audit, pipeline, report and its figures), so Register refuses a kind one
// of them cannot serve with its sentence. No package above switches on a
// kind; CheckLaw checks a law against what it states. Curated bags
// (llp.Sorted, llp.Keyed) are a parameter of the release, not kinds: a
// bag's law given its labels does not depend on how it was formed. Files
// (ledgers, releases) name a kind by its name, never by its Kind value,
// which for a kind registered from outside depends on registration order.
//
// Every per-bag function takes the bag's actual size n (1 ≤ n), because a
// kept remainder bag may be smaller than k: noise scales and clipping use n.
//
// Besides sampling, the package provides the training targets of bags
// (BagLaw.Target: E[α_noise | α_clip] of LLP+Geom, Appendix C, which makes
// the released proportion mean-zero noisy as Theorems D.1/D.2 of Appendix D
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
