// Package report turns labelprivacy's results into the tables, comparisons
// and report.md of "Auditing Privacy Mechanisms via Label Inference
// Attacks" (Section 4, Appendix C; package report/figures draws its
// figures): per privacy setting, what a label-privacy
// mechanism (PET) costs (test AUC of models trained on privatized labels;
// test accuracy for labels of C ≥ 3 classes)
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
//   - Summary (rows of Row), Comparison;
//   - Figure, a drawn figure for report.md (package report/figures makes them).
//
// data.Table is only the file form: RunsTable/ReadRuns, AuditTable/
// ReadAudits, PosteriorTable/ReadPosteriors, SummaryTable and
// ComparisonTable write and read runs.csv/.parquet, audit.csv/.parquet,
// posteriors.csv/.parquet, summary.csv/.parquet and compare.csv/.parquet. Each
// table has one schema (its columns, in file order) from which both files
// are written and read, and, for runs, the JSON record too; README lists
// the columns (a test holds it to the schemas). Each keeps the columns of
// the first file format first, in their order, and appends the newer
// ones; readers accept files of the first format (the newer fields then
// read as NaN or zero). A k or ε that does not apply to a mechanism is a
// null cell (data.Nullable: empty in CSV, a Parquet null, NaN in pandas),
// read back as 0. CurveTable writes learning_curves.csv/.parquet from the
// runs' per-epoch curves (Run.Curve).
//
// # Configs and provenance
//
// Every run carries its config's name and the keys its config_id
// fingerprints, as "key=value; …" (Run.Config): summaries and comparisons
// name the keys two configs differ in (Row.ConfigDiff, ConfigDiff,
// Comparison.ConfigDiff) instead of two hashes. Run.Provenance says what
// made a run (tool, revision, start, command line, TRAIN_* variables,
// config in words); Origins groups runs by it for report.md.
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
// # Labels of C classes
//
// Every run, audit, summary and comparison carries its labels' class count
// (Run.Classes, column classes: 2 for binary labels, also for files
// written before it existed). For C ≥ 3 the rule's metric is test accuracy
// (MetricFor), the one multi-class label-DP results are reported in;
// test_auc then holds the macro one-vs-rest AUC (the binary AUC at C = 2),
// reported beside it. report.md shows accuracy and macro AUC columns and
// "C = 10 classes" in its headings; the figures plot accuracy where they
// plot AUC for binary labels. Results of different class counts are never
// summarized or compared together (ErrMixed, whatever AllowMixed says).
//
// Results never mix: runs of different datasets (Run.Dataset, identity by
// content) or model configs (Run.ConfigID) are never averaged. Summarize
// fails with ErrMixed naming them, or with Options.AllowMixed keeps them as
// separate rows (and the figures get one set per group). Runs
// outside the current grid (Options.InGrid) are left out and counted, and
// so are repeated runs of merged result sets and runs with a NaN AUC;
// report.md says how many and why. Compare diffs two summaries with
// standard errors and a 2-SE flag. Rows are in canonical order: dataset,
// config, then mechanism in pets.Kind order (none, bot, rr, llp, llp_lap,
// llp_geom), k, ε.
//
// # report.md and figures
//
// WriteMarkdown writes report.md from its inputs alone: the provenance
// (what made the report and its runs, the date, the wall time) comes in as
// Markdown.Made, WallS and Origins, which golden tests leave out; the
// figures it links are drawn by package
// report/figures (the only user of gonum/plot) and passed in as Figure
// values. Mechanism names, the canonical setting order and percentages are
// shared with the figures through report/internal/display.
package report
