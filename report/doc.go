// Package report turns labelprivacy's result tables into the comparisons and
// figures of "Auditing Privacy Mechanisms via Label Inference Attacks"
// (Section 4): a per-setting summary of what each label-privacy mechanism
// (PET) costs and protects, a comparison of two result sets, the paper's
// figures as PNG and SVG, and a Markdown report.
//
// # Inputs
//
// Three tables (data.Table; extra columns are ignored):
//
//   - runs, one row per trained model: setting, pet, k, epsilon,
//     label_dp_epsilon, lr, trial, run_id, test_auc, …
//   - audit, one row per setting: setting, eadv, eadv_se, ma_p98,
//     ma_inf_frac, … (ma_* may be +Inf)
//   - posteriors, sampled examples: setting, pet, k, epsilon, prior,
//     posterior, ieadv, abs_ma (abs_ma may be +Inf)
//
// # Summary (the paper's reporting rule)
//
// Summarize applies Appendix C's rule ("AUC vs Advantage Experimental
// Setup"): "for each privacy parameter, we report the mean AUC of the
// learning rate with the highest mean AUC" — best_lr is the argmax of the
// mean test AUC over trials (ties: the smaller learning rate), reported with
// its standard error and trial count, joined with the audit's advantages.
// Result sets merge by Concat (union by column name) before Summarize;
// duplicate (setting, lr, trial, run_id) rows are dropped and counted in the
// summary's Meta (MetaDuplicates, MetaConflicts). Compare diffs two
// summaries with standard errors and a 2-SE flag.
//
// Rows are always in the canonical order: mechanism as in PetOrder (none,
// bot, rr, llp, llp_lap, llp_geom), then k, then ε.
//
// # Figures
//
//   - PlotAUCvsAdvantage: Figure 3 — test AUC against the expected additive
//     advantage ("eadv") or the 98th-percentile multiplicative advantage
//     ("ma_p98"); RR one curve across ε, LLP across k, LLP+Lap and LLP+Geom
//     one curve per k across ε, the clean model as a dashed line. Infinite
//     ma_p98 values are drawn at a marked "∞" position at the right edge.
//   - PlotScatter: Figures 1 and 2 (top) — prior vs posterior per example,
//     one panel per mechanism, coloured by parameter, with y = x.
//   - PlotCDFs: Figure 2 (middle and bottom) — CDFs of the individual
//     expected advantage and of |multiplicative advantage| per setting.
//
// Each writes pathNoExt.png (120 dpi) and pathNoExt.svg atomically, with
// fonts of 10 pt or more. With nothing to draw they return an error wrapping
// ErrNoData and write nothing; WritePlots runs all four and skips those.
// WriteMarkdown writes report.md (title, summary table, comparison, figure
// links) deterministically, for diffing and golden tests.
package report
