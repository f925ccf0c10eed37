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
// require), privacy accounting of a person's history of releases (Compose:
// basic, advanced and privacy-loss-distribution composition) and a
// per-person privacy ledger (Ledger). The exact
// likelihoods P(release | labels) that tests check samplers against live in
// internal/oracle; the audit computes its own in O(k) per bag member.
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
//
// # The privacy ledger
//
// The ledger is three files beside the raw data (LedgerFile, KeyPath,
// PeoplePath), never beside a release: privacy_ledger.csv, one row per
// release (and one more for a release aborted); privacy_ledger.key, a
// random 32-byte HMAC-SHA-256 key created with the ledger (mode 0600); and
// privacy_ledger.people, every person the ledger has seen with its release
// history. A person is a row of the released data, identified by an id
// column when there is one, otherwise by the values of its features
// (PersonHasher), so permuted, subset and re-imported copies of the same
// people are the same people; identical rows are one person (over-counting,
// the safe direction). Everything stored is keyed: whoever holds the ledger
// (and a release) but not the key cannot test guesses of labels or people.
//
// Each release records the people it covers; people with the same release
// history share one class record, so a release of n people costs one pass
// over the people file (about 7 bytes per person) and no copy per release.
// Each CSV row reports the worst covered person: columns, in order:
//
//	id                  release id (unique; an aborted release repeats it)
//	status              released | aborted
//	input               the labelled file released
//	labels              Keys.Labels: hmac-sha256: + hex HMAC of the row count
//	                    and the labels (reuse checks; useless without the key)
//	rows, people        release rows; distinct people among them
//	mechanism, k        none | bot | rr | llp | llp_lap | llp_geom; bag size (0
//	                    outside the LLP family)
//	epsilon             label-DP ε of this release (inf for none and llp, 0
//	                    for bot)
//	noise               secure (crypto/rand) | seeded (explicit seed: whoever
//	                    learns it can undo the release) | seeded-simulation
//	                    (seeded from a config inside a measurement run)
//	seed                decimal uint64 seed; empty for secure (read it as a
//	                    string: pandas turns large seeds into floats)
//	path, sha256        release file and hex SHA-256 of its bytes
//	releases            the worst covered person's live releases (this one
//	                    included; for an aborted row, excluded)
//	people_at_worst     covered people whose eps_total equals the worst
//	eps_total           min of the bounds below: that person is
//	                    (eps_total, δ')-label-DP over all releases so far
//	eps_total_basic     Σ ε (Composition.Basic), (ε, 0)-DP
//	eps_total_drv       Dwork–Rothblum–Vadhan √(2 ln(1/δ')Σε²) + Σε(e^ε−1)
//	eps_total_drv_quad  the same with the mean loss bounded by 2ε² (the form
//	                    of Roth and Smith's lecture notes on adaptive data
//	                    analysis): √(2 ln(1/δ')Σε²) + Σ2ε²
//	eps_total_pld       privacy loss distribution composition (pld.go), an
//	                    upper bound within PLDError (≤ 1e-4 per rounding) of
//	                    the exact optimal ε of these mechanisms
//	delta_prime         δ' of the totals
//	time                RFC 3339 UTC with nanoseconds
//	reason              why an aborted release was aborted; empty otherwise
//
// Once a person is in a release that is not DP (llp, none), every total of
// that person is inf from then on. Infinite values are written "inf", which
// pandas.read_csv reads as a float. Write-ahead: the people file is
// rewritten and the row appended, under one exclusive flock, before the
// release file is renamed into place; a crash in between over-counts. A
// budget (Ledger.SetBudget) refuses a release that would take any person
// above it, writing nothing. Ledgers of the two earlier formats (per
// mechanism; per label column under a plain SHA-256) are refused with
// instructions: they record no people and cannot be converted.
package pets
