// Package release applies a label privacy mechanism (package pets) to a
// dataset's labels and publishes the result: the pipeline's "privatize"
// stage, usable as a library.
//
// A Release holds what a mechanism of Section 2 of the paper releases about
// a label column — randomized-response labels (rr), or a random partition
// into bags of k with one proportion per bag (llp, and with Laplace or
// clipped geometric noise, Section 4 "Mechanisms" and Appendix C, with the
// debiased proportion of llp_geom) — and nothing else: no raw label, no
// seed, no random state, no hash of the labels.
//
// Randomness. Bags and noise come from two independent streams: for a
// release meant to leave the machine, crypto/rand (pets.NewSecureRand,
// Noise secure, the default of `train privatize`); for a reproducible one,
// PCG streams of an explicit seed (Noise seeded: anyone who learns the seed
// undoes the release); inside train run/fit/sweep, PCG streams of a seed
// derived from the config seed (Noise seeded-simulation: measurement, not
// deployment). The seed is recorded only in the privacy ledger, the run
// records and config.resolved.yaml, which stay with the raw data.
//
// Two file layouts:
//   - Ship: features plus the release columns (label_rr; or bag_id, alpha
//     and, for llp_geom, alpha_debiased), rows in a random order (bag order
//     for the LLP family, a random permutation otherwise) so that row order
//     cannot reveal labels of an input sorted by label, and no row numbers.
//   - Simulation: the release columns plus `row`, the dataset row each
//     release row refers to, and no features: the trainer reads the
//     features from the dataset, and a grid of thousands of releases costs
//     a few bytes per row each.
//
// Curated bags: Options.Partition replaces the random partition by
// llp.Sorted (rows sorted by one feature, cut into bags of k) or llp.Keyed
// (bags within the groups of a key column); the caller passes the feature
// or key values in, and the metadata records bag_rule. Nil keeps the
// random bags, bit for bit.
//
// A kind released with a prior (rr_prior: randomized response with a
// prior, Ghazi et al. 2021) is made in two stages (StartRRPrior, Finish):
// stage 1's rows go through the uniform prior's channel (rr_prior: RR(ε)),
// a model trained on that release gives the prior of stage 2's rows, which
// go through the channels of those priors (rr_prior: RRWithPrior); the
// release records each row's prior and stage and what its channel shows
// (its branch: whether it shows nothing, on two classes; the classes it
// releases, on C), all public quantities. A release of counts
// (ReleaseCounts) is each row's label through the kind's BagLaw as a bag of
// one: alpha (alpha_1 …), no bag id, rows in input order.
//
// Labels of C ≥ 3 classes (the mechanism's Classes, from the dataset): rr
// releases the class by k-ary RR (label_rr); the LLP family releases each
// bag's class counts as proportions of classes 1..C−1 (alpha_1 …
// alpha_{C−1}, class 0's implied; with noise on each count calibrated to
// the count vector's sensitivity Δ = 2, pets.BagLaw.Sensitivity) and,
// for llp_geom, their debiased values (alpha_debiased_1 …); rr_prior's
// stage 1 goes through the uniform prior (k-ary RR), stage 2 through
// RRWithPrior's top-k set of each row's prior over the classes (prior_0 …
// prior_{C−1}, prior_set, prior_set_size, stage). The file's metadata
// records classes; C = 2 is the binary release, byte for byte. A label
// that is not a class below C is refused (ErrLabel), naming its row.
//
// LabelLikeColumns finds the feature columns that give the labels away (a
// copy of the label, a coding of it: Ship would carry every raw label in
// them), each rule judged against chance; privatize refuses them unless
// named.
//
// Publish records first: the file's SHA-256 is computed without writing
// it, its ledger row (with the totals of the people it covers, Covered,
// each row charged, rows of one bag as one draw, Draws) is appended, and
// only then is the file written and put in place (NoReplace: never over a
// file that appeared meanwhile, ErrExists); a write that fails marks the
// row aborted (the charge stays). A release therefore never exists
// anywhere, not even as a temporary, without its ledger row.
package release
