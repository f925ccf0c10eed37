package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"labelprivacy/audit"
	"labelprivacy/report/internal/display"
)

// writeModelAttacks writes report.md's "Attacks on the trained models"
// section: per setting the model attack on members and non-members beside
// the release's exact advantage (the bracket), its E[adv] and realized
// attack, and the canaries through training beside the release's own.
func writeModelAttacks(b *strings.Builder, audits []Audit) {
	var as []Audit
	rows, canaries := 0, 0
	prior := ""
	for _, a := range audits {
		if a.ModelRuns > 0 || a.ModelCanaries > 0 {
			as = append(as, a)
			rows, canaries = max(rows, a.ModelRows), max(canaries, a.ModelCanaries)
			if prior == "" {
				prior = a.ModelPrior
			}
		}
	}
	if len(as) == 0 {
		return
	}
	slices.SortStableFunc(as, func(a, b Audit) int {
		if c := strings.Compare(a.Dataset+a.ConfigID, b.Dataset+b.ConfigID); c != 0 {
			return c
		}
		return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
	})
	b.WriteString("\n## Attacks on the trained models\n\n")
	fmt.Fprintf(b, "Each trained model guessed the labels of %d of its own training rows (*members*) and of the audit "+
		"rows, which no model trained on (*non-members*), by its argmax (for bags, each row's own prediction), scored "+
		"against the true labels. *Model attack*: its accuracy minus the prior-only attacker's (η: %s) on the same rows, "+
		"mean ± SE over the best learning rate's trials. A model is post-processing of its release, so it can reveal no "+
		"more than the release does: *release, same rows* is the exact expected advantage of the Bayes attacker who sees "+
		"the very releases those models trained on, on the same rows (computed with the true η; — without it). It is the "+
		"bracket: a model above it beyond chance (false-failure rate %g per model) fails the audit, since its trainer then "+
		"read something its release does not carry. *E[adv]* is the audit's on the audit rows under the same η (the true "+
		"one where the data has it: eadv_true), *realized* the audit's realized attack (under the audit's η).", rows, prior, audit.GuardAlpha)
	if canaries > 0 {
		fmt.Fprintf(b, " *ε ≥, model*: canaries through training — per setting one more model trained on a release of "+
			"the training rows in which %d rows carry fair coins (the other labels drawn from the true η), each canary "+
			"scored by that model's log-odds less η's, certified at 95%% by the same one-run bound as the release's own "+
			"game (*ε ≥, release*).", canaries)
	}
	b.WriteString("\n\n| setting | label-DP ε | model attack | ± SE | non-members | ± SE | release, same rows | E[adv] | realized | ε ≥, release | ε ≥, model |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, a := range as {
		eadv := a.EAdv
		if a.ModelPrior == "true" && a.EtaSource != "true" && !math.IsNaN(a.EAdvTrue) {
			eadv = a.EAdvTrue
		}
		real := a.RealizedGain
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", code(a.Setting), fmtNum(a.Summary.Epsilon, 3),
			fmtNum(a.ModelAdv, 3), fmtSE(a.ModelAdvSE, 2, func(v float64) string { return fmtNum(v, 2) }),
			fmtNum(a.ModelAdvNonmember, 3), fmtSE(a.ModelAdvNonmemberSE, 2, func(v float64) string { return fmtNum(v, 2) }),
			fmtNum(a.ModelReleaseAdv, 4), fmtNum(eadv, 4), fmtNum(real, 4), fmtFixed(a.EpsLower, 3), fmtFixed(a.EpsLowerModel, 3))
	}
}
