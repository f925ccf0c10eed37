// Package report turns labelprivacy's results into the comparisons and
// figures of "Auditing Privacy Mechanisms via Label Inference Attacks"
// (Section 4, Appendix C): per privacy setting, what a label-privacy
// mechanism (PET) costs (test AUC of models trained on privatized labels)
// and protects (the Bayes-optimal attacker's advantage, Section 3).
//
// # Values, not tables
//
// Results travel between stages as Go values:
//
//   - Run, one trained model: the row of runs.csv and the whole of
//     runs/<run_id>.json (MarshalJSON writes NaN and ±Inf as "nan", "inf",
//     "-inf");
//   - Audit, one setting's audit (an audit.Summary with the setting's
//     identity); Posterior, one audited example (an audit.Sample);
//   - Summary (rows of Row), Comparison.
//
// data.Table is only the file form: RunsTable/ReadRuns, AuditTable/
// ReadAudits, PosteriorTable/ReadPosteriors, SummaryTable and
// ComparisonTable write and read runs.csv/.parquet, audit.csv/.parquet,
// posteriors.parquet, summary.csv/.parquet and compare.csv/.parquet. Each
// keeps the columns of the first file format first, in their order, and
// appends the newer ones; readers accept files of the first format (the
// newer fields then read as NaN or zero).
//
// # The reporting rule
//
// BestLR is Appendix C's rule ("for each privacy parameter, we report the
// mean AUC of the learning rate with the highest mean AUC"): per setting,
// the learning rate with the highest mean test AUC over trials (ties: the
// smaller), with its mean, standard error (NaN with a single trial: one run
// says nothing about the spread) and number of trials. Summarize applies it
// and joins each setting with its audit.
//
// Results never mix: runs of different datasets (Run.Dataset, identity by
// content) or model configs (Run.ConfigID) are never averaged. Summarize
// fails with ErrMixed naming them, or with Options.AllowMixed keeps them as
// separate rows (and WritePlots draws one set of figures per group). Runs
// outside the current grid (Options.InGrid) are left out and counted, and
// so are repeated runs of merged result sets and runs with a NaN AUC;
// report.md says how many and why. Compare diffs two summaries with
// standard errors and a 2-SE flag. Rows are in canonical order: dataset,
// config, then mechanism in pets.Kind order (none, bot, rr, llp, llp_lap,
// llp_geom), k, ε.
//
// # Figures
//
// WritePlots draws, as PNG (120 dpi) and SVG:
//
//   - auc_by_setting: test AUC (± SE) per setting, one panel per mechanism
//     against its parameter, the clean model and bot as reference lines;
//     the cost side alone, drawn before any audit;
//   - auc_vs_eadv, auc_vs_ma_p98: Figure 3, test AUC against the expected
//     additive advantage (Definition 3.1; ± SE both ways) or the 98th
//     percentile of |multiplicative advantage| (Definition 3.6; a log(1+x)
//     axis with a tick at every integer up to 5, then 10, 20, 50 …, and a
//     position for ∞); RR one curve across ε, LLP across k, LLP+Lap and
//     LLP+Geom one curve per k across ε; auc_vs_eadv also draws each DP
//     setting's ε-DP worst case (audit.IEAdvBound) as a ring;
//   - posterior_scatter: Figures 1 and 2 (top), prior vs posterior;
//   - advantage_cdfs: Figure 2 (middle, bottom), CDFs of the per-example
//     advantages.
//
// WriteAuditPlots draws the audit's self-checks: realized_vs_predicted
// (E[adv] against the gain realized on releases of the production sampler,
// 95% bars, y = x) and calibration (the reliability diagram of η).
//
// Each figure is first built as a value (panels of series, error bars,
// reference lines, ticks, point labels, legend items) that tests inspect;
// drawing places every point label where it touches no line, marker, error
// bar or other label and stays inside the data area (one that fits nowhere
// is left out), and lays legends out as compact strips under the titles.
// A figure with nothing to draw is skipped (ErrNoData). WriteMarkdown
// writes report.md deterministically (no timestamps), for diffing and
// golden tests.
package report
