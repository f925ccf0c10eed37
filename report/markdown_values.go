package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"labelprivacy/report/internal/display"
)

// The report of conversion values (a Summary of valuesKey): its own
// reporting rule (the lowest mean test MSE), summary table and audit
// checks.

// valuesIntro is report.md's paragraph on the rule and the columns of a
// report of conversion values.
const valuesIntro = "Conversion values: each row is one privacy setting. *Best LR* is the learning rate with the lowest " +
	"mean test MSE over trials (the paper's rule with MSE in place of AUC), *test MSE* that learning rate's mean ± " +
	"standard error over its trials (n/a with a single trial) and *test R²* its mean 1 − MSE/Var(test values). The " +
	"audit's Bayes attacker knows each audit example's prior over the grid and the mechanism: *R²-adv* is the mean over " +
	"the examples of the share of the prior variance the release removes, 1 − E[Var(y | release)]/Var(y) (*ratio*: the " +
	"same of the sums), *τ-adv* its gain in the chance of guessing the value within ±τ, and *worst case* the largest " +
	"τ-adv any ε-label-DP mechanism could give (e^ε·κ/(e^ε·κ + 1 − κ) − κ, κ the blind chance). All three are exact.\n\n"

// writeValueSummaryTable is writeSummaryTable for conversion values.
func writeValueSummaryTable(b *strings.Builder, s *Summary, mixed, audit bool) {
	head := "| setting | mechanism | k | ε | label-DP ε | best LR | test MSE | ± SE | test R² | trials |"
	align := "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
	if mixed {
		head = "| dataset | config " + head
		align = "|---|---" + align
	}
	if audit {
		head += " R²-adv | ± SE | ratio | τ-adv | ± SE | worst case |"
		align += "--:|--:|--:|--:|--:|--:|"
	}
	b.WriteString(head + "\n" + align + "\n")
	f4 := func(v float64) string { return fmtFixed(v, 4) }
	f5 := func(v float64) string { return noNegZero(fmtFixed(v, 5)) }
	for _, r := range s.Rows {
		if mixed {
			fmt.Fprintf(b, "| %s | %s ", code(r.Dataset), code(r.ConfigID))
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |",
			code(r.Setting), cell(display.PetName(r.Pet)), fmtK(r.K), fmtEps(r.Epsilon), fmtNum(r.LabelDPEpsilon, 3), fmtNum(r.BestLR, 3),
			fmtFixed(r.MSEMean, 1), fmtSE(r.MSESE, r.NTrials, func(v float64) string { return fmtFixed(v, 1) }), fmtFixed(r.R2Mean, 4), r.NTrials)
		if audit {
			if r.Audited {
				fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s |", f5(r.R2Adv), fmtSE(r.R2AdvSE, 2, f5), f4(r.R2AdvRatio), f5(r.TauAdv),
					fmtSE(r.TauAdvSE, 2, f5), fmtOr(r.TauAdvBound, f4))
			} else {
				fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s |", dash, dash, dash, dash, dash, dash)
			}
		}
		b.WriteString("\n")
	}
}

// fmtOr is f(v), or — for NaN.
func fmtOr(v float64, f func(float64) string) string {
	if math.IsNaN(v) {
		return dash
	}
	return f(v)
}

// writeValueAuditChecks is writeAuditChecks for conversion values: the
// realized attack through the production release code, its z against the
// exact figures and the canaries' ε bound.
func writeValueAuditChecks(b *strings.Builder, audits []Audit) {
	var as []Audit
	for _, a := range audits {
		if a.ValueMax > 0 {
			as = append(as, a)
		}
	}
	if len(as) == 0 {
		return
	}
	slices.SortStableFunc(as, func(a, b Audit) int {
		return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
	})
	draws, canaries := 0, 0
	for _, a := range as {
		draws, canaries = max(draws, a.RealizedDraws), max(canaries, a.Canaries)
	}
	b.WriteString("\n## Audit checks\n\n")
	if draws == 0 {
		b.WriteString("No realized attack was drawn (`audit.realized_draws: 0`): the figures above are exact but unchecked " +
			"against the production release code.\n")
		return
	}
	fmt.Fprintf(b, "The figures above are exact, from each mechanism's stated law. To check them against what the mechanism "+
		"really releases, the audit drew %d releases of values drawn from each example's prior through the production release "+
		"code (value_bags: on the audit's bags) and ran the Bayes attacker on each: *realized R²* is 1 − Σ(y − E[y | release])²/Σ "+
		"Var(y) (it estimates the ratio), *realized τ* its gain in hits within ±τ; *z* the larger in size of the two "+
		"standardized differences from the exact prediction. A likelihood (PIT) test of every release unit, |z| > 6.1 "+
		"(with 1,000 units or more) and the canary bound beyond ε at confidence 1 − 1e-9 each fail the audit. *ε ≥ (95%%)* "+
		"is the one-run bound of up to %d canaries, each a fair coin between the values 0 and B (bag-mates known zeros).\n\n",
		draws, canaries)
	b.WriteString("| setting | label-DP ε | realized R² | ± SE | ratio (exact) | realized τ | ± SE | τ-adv (exact) | z | ε ≥ (95%) | canaries |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	f4 := func(v float64) string { return fmtFixed(v, 4) }
	f5 := func(v float64) string { return noNegZero(fmtFixed(v, 5)) }
	for _, a := range as {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", code(a.Setting), fmtNum(a.Summary.Epsilon, 3),
			fmtOr(a.RealizedR2, f4), fmtOr(a.RealizedR2SE, f4), fmtOr(a.R2AdvRatio, f4), fmtOr(a.RealizedGain, f5),
			fmtOr(a.RealizedGainSE, f5), fmtOr(a.TauAdv, f5), fmtOr(a.RealizedZ, func(v float64) string { return fmtFixed(v, 2) }),
			fmtOr(a.EpsLower, func(v float64) string { return fmtFixed(v, 3) }), a.Canaries)
	}
}

// noNegZero is a formatted number that rounds to zero without its sign
// ("-0.00000": an exact advantage of −1e-17 from rounding).
func noNegZero(s string) string {
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}
