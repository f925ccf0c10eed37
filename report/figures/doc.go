// Package figures draws the figures of labelprivacy's report, as in
// "Auditing Privacy Mechanisms via Label Inference Attacks" (Section 4,
// Appendix C), from package report's typed results (Summary rows,
// Posterior samples, Audit and Calibration values). It is the only package
// that imports gonum.org/v1/plot; report.WriteMarkdown embeds what it
// returns (report.Figure values).
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
// WriteCurvePlots draws learning_curves from the runs' learning curves
// (report.Run.Curve): per setting a training-loss panel and a test-AUC
// panel, one hue and marker per learning rate, mean ± SE over trials per
// epoch; with one epoch, against the learning rate instead (the figure
// says so); a diverged loss (beyond ±1e4) as a marker at the top.
//
// WriteAuditPlots draws the audit's self-checks: realized_vs_predicted
// (E[adv] against the gain realized on releases of the production sampler,
// 95% bars, y = x) and calibration (the reliability diagram of η, Wilson
// intervals).
//
// Big and skewed grids stay readable by stated rules: an advantage axis
// whose values span more than 1.5 decades is symlog (symlogConstant); a
// figure of more than 6 curves or 24 settings becomes one panel per
// mechanism (crowdedCurves, crowdedPoints); a scatter panel shows at most
// 4 settings and a CDF row 4 (pickSettings); every curve has its own hue
// (curveColors); a marker that would hide another moves along the axis of
// a parameter only, never along a measured one, and on a panel whose axes
// are both measured stays at its values drawn open (dodge); settings that
// differ only in rr_prior's stage fraction or prior learning rate are
// curves of their own named by it (priorApart). Several result sets (a comparison's sides, the groups of a
// mixed summary: Set, WriteSets) are overlaid in one figure, the last
// solid with filled markers, the others dashed with open ones.
//
// Each figure is first built as a value (panels of series, error bars,
// reference lines, ticks, point labels, legend items) that tests inspect;
// drawing places every point label where it touches no line, marker, error
// bar or other label and stays inside the data area (one that fits nowhere
// is left out), and lays legends out as compact strips under the titles.
// A figure with nothing to draw is skipped (ErrNoData).
//
// For labels of C ≥ 3 classes (report.Row.Classes) every figure plots test
// accuracy (± SE) where it plots test AUC for binary labels, reads a
// posterior sample's prior and posterior as those of its drawn label, and
// says "C = 10 classes" in its title; result sets of different class
// counts are never drawn together.
package figures
