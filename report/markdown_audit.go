package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"labelprivacy/audit"
	"labelprivacy/internal/english"

	"labelprivacy/report/internal/display"
)

// writeAuditChecks writes report.md's "Audit checks" section: per audited
// setting E[adv] beside the gain realized through the production sampler,
// the ε-DP worst case and the empirical ε lower bounds of the two canary
// games.
func writeAuditChecks(b *strings.Builder, audits []Audit) {
	if len(audits) == 0 {
		return
	}
	as := slices.Clone(audits)
	slices.SortStableFunc(as, func(a, b Audit) int {
		if c := strings.Compare(a.Dataset, b.Dataset); c != 0 {
			return c
		}
		if c := strings.Compare(a.ConfigID, b.ConfigID); c != 0 {
			return c
		}
		return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
	})
	draws, canaries := 0, 0
	for _, a := range as {
		draws, canaries = max(draws, a.RealizedDraws), max(canaries, a.Canaries)
	}
	b.WriteString("\n## Audit checks\n\n")
	if draws > 0 {
		fmt.Fprintf(b, "E[adv] is computed exactly from each mechanism's stated likelihood. To check it against what the "+
			"mechanism really releases, the audit drew %d fresh releases of the audit labels (labels drawn from η) through "+
			"the production release code and ran the Bayes attacker on what each release shows (for LLP, the bags it made). "+
			"*Realized* is its accuracy gain over the prior-only attacker, mean ± SE over the releases; it estimates E[adv]. "+
			"*z* compares the realized gains with the exact prediction on the releases' own bags. An audit fails — it never "+
			"reaches this table — when the releases disagree with the stated likelihood: a release impossible under it, "+
			"a likelihood (PIT) test or the canary ε bound beyond a false-failure rate of %g each, or |z| > %g.\n\n",
			draws, audit.GuardAlpha, audit.GuardZ)
	}
	multi := 0 // the audits' class count when it is 3 or more
	for _, a := range as {
		if a.Classes >= 3 {
			multi = a.Classes
		}
	}
	if multi > 0 {
		fmt.Fprintf(b, "*ε-DP worst case*: the largest E[adv] that any ε-label-DP mechanism could give on this audit set of "+
			"%d classes — RR(ε) on %d classes attains it, so RR's ratio is 1 (the posterior odds between two classes move by "+
			"at most e^±ε; see `audit.IEAdvBoundC`).", multi, multi)
	} else {
		b.WriteString("*ε-DP worst case*: the largest E[adv] that any ε-label-DP mechanism could give on this audit set — " +
			"RR(ε) attains it, so RR's ratio is 1 (posterior odds move by at most e^±ε; see `audit.IEAdvBound`).")
	}
	if canaries > 0 {
		fmt.Fprintf(b, " *ε ≥ (95%%)*: a lower bound on ε at 95%% confidence from a distinguishing game on up to %d "+
			"canaries (random labels) released through the production code, with every other label fixed and known to the "+
			"attacker (for the LLP family: bags whose other members are known zeros), each scored by its exact likelihood "+
			"ratio and certified by the one-run bound of Steinke, Nasr and Jagielski (2023): what the releases show about "+
			"the mechanism's ε. For llp, which has no ε, it says how far from private the setting is. *ε ≥, real bags* "+
			"(LLP family): the same canaries among audit examples whose labels the attacker does not know, as in the "+
			"paper's audit. A mechanism as tight as rr shows a 95%% bound above its ε in just under 5%% of audits; the "+
			"audit fails only when the bound at confidence 1 − %g does.",
			canaries, audit.GuardAlpha)
	}
	b.WriteString("\n\n")
	mixed := false
	for _, a := range as {
		mixed = mixed || a.Dataset != as[0].Dataset || a.ConfigID != as[0].ConfigID
	}
	head := "| setting | label-DP ε | E[adv] | ± SE | realized | ± SE | z | ε-DP worst case | E[adv] / worst | ε ≥ (95%) | ε ≥, real bags | canaries |"
	align := "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	if mixed {
		head, align = "| dataset | config "+head, "|---|---"+align
	}
	b.WriteString(head + "\n" + align + "\n")
	for _, a := range as {
		if mixed {
			fmt.Fprintf(b, "| %s | %s ", code(a.Dataset), code(a.ConfigID))
		}
		ratio := math.NaN()
		if a.EAdvBound > 0 {
			ratio = a.EAdv / a.EAdvBound
		}
		canaryCell := dash
		if a.Canaries > 0 {
			canaryCell = fmt.Sprint(a.Canaries)
		}
		eadv := fmtNum(a.EAdv, 4)
		if a.EAdvEstimated {
			eadv = "≈" + eadv
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			code(a.Setting), fmtNum(a.Summary.Epsilon, 3), eadv, fmtSE(a.EAdvSE, 2, func(v float64) string { return fmtNum(v, 2) }),
			fmtNum(a.RealizedGain, 4), fmtSE(a.RealizedGainSE, a.RealizedDraws, func(v float64) string { return fmtNum(v, 2) }),
			fmtFixed(a.RealizedZ, 2), fmtNum(a.EAdvBound, 4), fmtFixed(ratio, 3), fmtFixed(a.EpsLower, 3), fmtFixed(a.EpsLowerRealBags, 3),
			canaryCell)
	}
	writeEstimated(b, as)
}

// writeEstimated says which settings' E[adv] is estimated rather than
// exact (audit.Summary.EAdvEstimated; marked ≈ in the table), and how.
func writeEstimated(b *strings.Builder, as []Audit) {
	var est []string
	for _, a := range as {
		if a.EAdvEstimated {
			est = append(est, fmt.Sprintf("%s (%s per bag)", code(a.Setting), english.Count(a.BagDraws, "release")))
		}
	}
	if len(est) == 0 {
		return
	}
	fmt.Fprintf(b, "\nE[adv] marked ≈ is estimated, not exact: %s. Summing over every release a bag can show would cost "+
		"too much there (llp_geom with many classes, llp_lap's continuous release), so each member's IEAdv is the mean of "+
		"max_y P(y | release) − max_y η_y over releases drawn from the bag's exact law: an unbiased estimate, whose "+
		"sampling error ± SE includes. Those bags are checked against the ε-DP worst case together (Hoeffding, "+
		"false-failure rate %g) rather than one by one.\n", strings.Join(est, ", "), audit.GuardAlpha)
}

// writeEtaQuality writes report.md's section on the attacker's η: which η
// the headline uses, what that means, E[adv] under other η, and the
// reliability table of η on the calibration rows.
func writeEtaQuality(b *strings.Builder, audits []Audit, cals []Calibration) {
	if len(audits) == 0 {
		return
	}
	b.WriteString("\n## The attacker's η\n\n")
	writeEtaSource(b, audits)
	writeOtherEta(b, audits)
	writeReliability(b, audits, cals)
}

// writeEtaSource names the headline η (every audit's eta_source) and says
// what E[adv] under it means: for the clean model's η̂, how it compares
// with the truth (measured) and how often it is below E[adv] under the
// true η in this run; for the true η, that E[adv] is exact.
func writeEtaSource(b *strings.Builder, audits []Audit) {
	srcs := map[string]bool{}
	for _, a := range audits {
		srcs[a.EtaSource] = true
	}
	var names []string
	clean := false
	for _, s := range sortedKeys(srcs) {
		names = append(names, code(s))
		clean = clean || strings.HasPrefix(s, "clean_model")
	}
	fmt.Fprintf(b, "The headline E[adv] uses η = %s. ", strings.Join(names, ", "))
	if clean {
		b.WriteString("With the clean model's η̂ it is the advantage of an attacker who *believes* η̂; how far that is " +
			"from the truth depends on η̂'s calibration (table below). Measured on synthetic data (uniform and Beta(2,30) " +
			"η, where η̂ ran about 0.02 high in every bin; 60 label vectors × 4 releases through `train privatize`): E[adv] " +
			"with η̂ overstated what an attacker using η̂ realized against labels drawn from the true η (uniform rr ε=1: " +
			"0.0556 vs 0.0526 ± 0.0004, z +7.4; Beta(2,30) llp k=8: 0.0016 vs 0.0007), and the advantage under the true " +
			"η lay between the two every time: η̂'s prediction and a real η̂ attacker bracket the truth. A flatter η̂ " +
			"raises the prediction while the real gain falls.")
		below, n := 0, 0
		for _, a := range audits {
			if a.EAdvTrue > 0 && !math.IsNaN(a.EAdv) {
				n++
				if a.EAdv < a.EAdvTrue {
					below++
				}
			}
		}
		if n > 0 {
			fmt.Fprintf(b, " In this run E[adv] with η̂ is below its value under the true η for %d of %d settings "+
				"(column *true η*).", below, n)
		}
	} else if srcs["true"] {
		b.WriteString("The synthetic data's true η: E[adv] is exact for this distribution.")
	}
	b.WriteString("\n")
}

// otherEta says which of E[adv] under other η some audit has (not NaN):
// recalibrated (Platt-scaled η̂), the true η, the clean trials' range.
type otherEta struct{ cal, tru, tri bool }

// writeOtherEta writes the table of E[adv] on the same bags under other
// η, one row per setting in canonical order, when some audit has one.
func writeOtherEta(b *strings.Builder, audits []Audit) {
	has := func(f func(Audit) float64) bool {
		for _, a := range audits {
			if !math.IsNaN(f(a)) {
				return true
			}
		}
		return false
	}
	o := otherEta{cal: has(func(a Audit) float64 { return a.EAdvCalibrated }), tru: has(func(a Audit) float64 { return a.EAdvTrue }),
		tri: has(func(a Audit) float64 { return a.EAdvTrialMin })}
	if !o.cal && !o.tru && !o.tri {
		return
	}
	o.writeHead(b)
	as := slices.Clone(audits)
	slices.SortStableFunc(as, func(a, b Audit) int {
		return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
	})
	for _, a := range as {
		o.writeRow(b, a)
	}
}

// writeHead says what each column's η is, then the table's header.
func (o otherEta) writeHead(b *strings.Builder) {
	b.WriteString("\nE[adv] on the same bags under other η: ")
	var parts []string
	if o.cal {
		parts = append(parts, "*recalibrated* — η Platt-scaled on the calibration rows")
	}
	if o.tru {
		parts = append(parts, "*true η* — the synthetic data's truth")
	}
	if o.tri {
		parts = append(parts, "*clean trials* — the range over the η̂ of each clean-model trial at the best learning rate")
	}
	b.WriteString(strings.Join(parts, "; ") + ".\n\n")
	head, align := "| setting | E[adv] |", "|---|--:|"
	if o.cal {
		head, align = head+" recalibrated |", align+"--:|"
	}
	if o.tru {
		head, align = head+" true η |", align+"--:|"
	}
	if o.tri {
		head, align = head+" clean trials (min – max) |", align+"--:|"
	}
	b.WriteString(head + "\n" + align + "\n")
}

// writeRow writes audit a's row: E[adv] and the columns o has.
func (o otherEta) writeRow(b *strings.Builder, a Audit) {
	fmt.Fprintf(b, "| %s | %s |", code(a.Setting), fmtNum(a.EAdv, 4))
	if o.cal {
		fmt.Fprintf(b, " %s |", fmtNum(a.EAdvCalibrated, 4))
	}
	if o.tru {
		fmt.Fprintf(b, " %s |", fmtNum(a.EAdvTrue, 4))
	}
	if o.tri {
		if math.IsNaN(a.EAdvTrialMin) {
			fmt.Fprintf(b, " %s |", dash)
		} else {
			fmt.Fprintf(b, " %s – %s (%s) |", fmtNum(a.EAdvTrialMin, 4), fmtNum(a.EAdvTrialMax, 4), english.Count(a.EtaTrials, "trial"))
		}
	}
	b.WriteString("\n")
}

// writeReliability writes each calibration's reliability table of η (per
// bin: rows, mean η, the fraction of 1s or of top class = label for C ≥ 3,
// and their gap), or, with none and no audit that had calibration rows,
// says why η's calibration was not measured.
func writeReliability(b *strings.Builder, audits []Audit, cals []Calibration) {
	if len(cals) == 0 {
		rows := 0
		for _, a := range audits {
			rows = max(rows, a.CalibrationRows)
		}
		if rows == 0 {
			b.WriteString("\nη's calibration was not measured: no test rows after the audit set (`audit.calibration_rows` " +
				"uses the test rows after the first `audit.examples`; add test rows).\n")
		}
		return
	}
	for _, c := range cals {
		title := "Reliability of η"
		if len(cals) > 1 {
			title += " (dataset " + code(c.Dataset) + ")"
		}
		fmt.Fprintf(b, "\n**%s** (`%s`) on %d calibration rows — test rows after the audit set, used neither for "+
			"training nor for the audit: ECE %.4f, Brier %.4f.\n\n", title, c.EtaSource, c.N, c.ECE, c.Brier)
		if c.ClassesOf(audits) >= 3 {
			b.WriteString("Top label: each row's η is the probability of its most likely class, counted as 1 when that class is the label.\n\n")
			b.WriteString("| top-class η bin | rows | mean top-class η | fraction top class = label | mean η − fraction |\n|---|--:|--:|--:|--:|\n")
		} else {
			b.WriteString("| η bin | rows | mean η | fraction 1 | mean η − fraction |\n|---|--:|--:|--:|--:|\n")
		}
		for _, cb := range c.Bins {
			gap := cb.MeanEta - cb.Rate
			fmt.Fprintf(b, "| [%.1f, %.1f%s | %d | %s | %s | %s |\n", cb.Lo, cb.Hi, map[bool]string{true: "]", false: ")"}[cb.Hi >= 1],
				cb.N, fmtFixed(cb.MeanEta, 4), fmtFixed(cb.Rate, 4), fmtSigned(gap))
		}
	}
}

func fmtSigned(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmt.Sprintf("%+.4f", v)
}
