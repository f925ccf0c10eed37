package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/data"
)

// Figure is a plot to embed in report.md.
type Figure struct {
	Path    string // the PNG; linked relative to report.md's directory
	Title   string // section heading and alt text
	Caption string // optional text under the image
}

// Markdown is the content of report.md.
type Markdown struct {
	Title      string      // default "labelprivacy report"
	Summary    *data.Table // Summarize's output (required)
	Comparison *data.Table // Compare's output; nil: no comparison section
	// CompareNames names Compare's a and b sides in the text (default
	// "a", "b"), e.g. {"baseline", "this run"}.
	CompareNames [2]string
	Figures      []Figure
	Notes        []string // extra paragraphs after the summary table
}

// WriteMarkdown writes report.md to path atomically: the title, the
// reporting rule, the summary table (settings in canonical order, numbers
// with fixed precision, ∞ for +Inf, — for NaN/not applicable), the merge
// counts from the summary's Meta, the comparison table if any, and the
// figures as relative PNG links. The output depends only on its inputs (no
// timestamps), so it can be diffed and golden-tested.
func WriteMarkdown(path string, md Markdown) error {
	if md.Summary == nil {
		return fmt.Errorf("report: WriteMarkdown: nil summary")
	}
	if err := checkTable(md.Summary); err != nil {
		return fmt.Errorf("report: WriteMarkdown: summary: %w", err)
	}
	var b strings.Builder
	title := md.Title
	if title == "" {
		title = "labelprivacy report"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	b.WriteString("Each row is one privacy setting. Following the paper's reporting rule (Appendix C, " +
		"\"AUC vs Advantage Experimental Setup\"), *best LR* is the learning rate with the highest mean test AUC " +
		"over trials, and *test AUC* is that learning rate's mean ± standard error over its trials. " +
		"*E[adv]* is the expected additive advantage of the Bayes-optimal label-inference attacker, " +
		"*MA p98* the 98th percentile of |multiplicative advantage| (|Δ log-odds|, nats) and " +
		"*MA = ∞* the fraction of examples whose label is fully exposed.\n\n")

	b.WriteString("## Summary\n\n")
	if err := writeSummaryTable(&b, md.Summary); err != nil {
		return err
	}
	if note := mergeNote(md.Summary.Meta); note != "" {
		b.WriteString("\n" + note + "\n")
	}
	for _, n := range md.Notes {
		b.WriteString("\n" + n + "\n")
	}

	if md.Comparison != nil {
		na, nb := md.CompareNames[0], md.CompareNames[1]
		if na == "" {
			na = "a"
		}
		if nb == "" {
			nb = "b"
		}
		fmt.Fprintf(&b, "\n## Comparison: %s vs %s\n\n", na, nb)
		fmt.Fprintf(&b, "Δ = %s − %s; SE = √(SE_%s² + SE_%s²). *Significant*: |Δ| > 2·SE for AUC or E[adv]. "+
			"Settings present on one side only are listed with the side that has them.\n\n", nb, na, na, nb)
		if err := writeComparisonTable(&b, md.Comparison, na, nb); err != nil {
			return err
		}
	}

	if len(md.Figures) > 0 {
		b.WriteString("\n## Figures\n")
		dir := filepath.Dir(path)
		for _, f := range md.Figures {
			link := f.Path
			if rel, err := filepath.Rel(dir, f.Path); err == nil && filepath.IsAbs(dir) == filepath.IsAbs(f.Path) {
				link = rel
			}
			link = filepath.ToSlash(link)
			t := f.Title
			if t == "" {
				t = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
			}
			fmt.Fprintf(&b, "\n### %s\n\n![%s](%s)\n", t, t, link)
			if f.Caption != "" {
				fmt.Fprintf(&b, "\n%s\n", f.Caption)
			}
		}
	}
	return data.WriteFileAtomic(path, []byte(b.String()))
}

func mergeNote(meta map[string]string) string {
	get := func(k string) (int, bool) {
		v, ok := meta[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(v)
		return n, err == nil
	}
	runs, ok := get(MetaRunsRead)
	if !ok {
		return ""
	}
	dups, _ := get(MetaDuplicates)
	conf, _ := get(MetaConflicts)
	nan, _ := get(MetaNaNAUC)
	aconf, _ := get(MetaAuditConflicts)
	s := fmt.Sprintf("Runs read: %d; duplicate (setting, lr, trial, run_id) rows dropped: %d", runs, dups)
	if conf > 0 {
		s += fmt.Sprintf(" (**%d with a different test AUC** than the row kept)", conf)
	}
	s += "."
	if nan > 0 {
		s += fmt.Sprintf(" Runs with a NaN test AUC ignored: %d.", nan)
	}
	if aconf > 0 {
		s += fmt.Sprintf(" Conflicting duplicate audit rows (first kept): %d.", aconf)
	}
	return s
}

func writeSummaryTable(b *strings.Builder, t *data.Table) error {
	c := &cols{t: t, what: "summary"}
	setting, pet, k := c.str("setting"), c.str("pet"), c.i64("k")
	eps, ldp, lr := c.f64("epsilon"), c.f64("label_dp_epsilon"), c.f64("best_lr")
	auc, se, n := c.f64("auc_mean"), c.f64("auc_se"), c.i64("n_trials")
	eadv, eadvSE, p98, inf := c.f64("eadv"), c.f64("eadv_se"), c.f64("ma_p98"), c.f64("ma_inf_frac")
	if c.err != nil {
		return c.err
	}
	b.WriteString("| setting | mechanism | k | ε | label-DP ε | best LR | test AUC | ± SE | trials | E[adv] | ± SE | MA p98 (nats) | MA = ∞ |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, i := range canonicalRows(setting, pet, k, eps) {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %s | %s | %s | %s |\n",
			code(setting[i]), cell(petName(pet[i])), fmtK(k[i]), fmtEps(eps[i]), fmtNum(ldp[i], 3),
			fmtNum(lr[i], 3), fmtFixed(auc[i], 4), fmtFixed(se[i], 4), n[i],
			fmtNum(eadv[i], 3), fmtNum(eadvSE[i], 2), fmtNum(p98[i], 3), fmtPct(inf[i]))
	}
	return nil
}

func writeComparisonTable(b *strings.Builder, t *data.Table, na, nb string) error {
	c := &cols{t: t, what: "comparison"}
	setting, pet, k, eps := c.str("setting"), c.str("pet"), c.i64("k"), c.f64("epsilon")
	aucA, aucB, dAUC, dAUCse := c.f64("auc_a"), c.f64("auc_b"), c.f64("d_auc"), c.f64("d_auc_se")
	eA, eB, dE, dEse := c.f64("eadv_a"), c.f64("eadv_b"), c.f64("d_eadv"), c.f64("d_eadv_se")
	sig := c.get("significant")
	onlyIn := c.str("only_in")
	if c.err != nil {
		return c.err
	}
	sg, ok := sig.([]bool)
	if !ok {
		return fmt.Errorf("%w: report: comparison column \"significant\" is %T, want []bool", data.ErrSchema, sig)
	}
	fmt.Fprintf(b, "| setting | AUC %s | AUC %s | ΔAUC ± SE | E[adv] %s | E[adv] %s | ΔE[adv] ± SE | significant | only in |\n",
		cell(na), cell(nb), cell(na), cell(nb))
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|:-:|---|\n")
	for _, i := range canonicalRows(setting, pet, k, eps) {
		s := ""
		if sg[i] {
			s = "**yes**"
		}
		only := ""
		switch onlyIn[i] {
		case "a":
			only = cell(na)
		case "b":
			only = cell(nb)
		default:
			only = cell(onlyIn[i])
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			code(setting[i]), fmtFixed(aucA[i], 4), fmtFixed(aucB[i], 4), fmtDelta(dAUC[i], dAUCse[i], true),
			fmtNum(eA[i], 3), fmtNum(eB[i], 3), fmtDelta(dE[i], dEse[i], false), s, only)
	}
	return nil
}

// canonicalRows returns row indices in the canonical setting order.
func canonicalRows(setting, pet []string, k []int64, eps []float64) []int {
	idx := make([]int, len(setting))
	for i := range idx {
		idx[i] = i
	}
	keyOf := func(i int) settingKey { return settingKey{setting[i], pet[i], k[i], eps[i]} }
	slices.SortStableFunc(idx, func(a, b int) int { return compareKeys(keyOf(a), keyOf(b)) })
	return idx
}

// cell escapes text for a Markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// code formats s as inline code in a table cell.
func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(s, "|", `\|`) + "`"
}

const dash = "—"

func fmtK(k int64) string {
	if k == 0 {
		return dash
	}
	return strconv.FormatInt(k, 10)
}

func fmtEps(e float64) string {
	if e == 0 {
		return dash
	}
	return fmtNum(e, 4)
}

// fmtNum: sig significant digits, ∞ for +Inf, — for NaN.
func fmtNum(v float64, sig int) string {
	switch {
	case math.IsNaN(v):
		return dash
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	}
	return strconv.FormatFloat(v, 'g', sig, 64)
}

// fmtFixed: dec decimals, ∞ for +Inf, — for NaN.
func fmtFixed(v float64, dec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmtNum(v, dec)
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func fmtPct(f float64) string {
	if math.IsNaN(f) {
		return dash
	}
	if f == 0 {
		return "0%"
	}
	return pct(f)
}

// fmtDelta formats a signed difference and its SE.
func fmtDelta(d, se float64, fixed bool) string {
	if math.IsNaN(d) {
		return dash
	}
	f := func(v float64) string {
		if fixed {
			return fmtFixed(v, 4)
		}
		return fmtNum(v, 3)
	}
	s := f(d)
	if strings.Trim(s, "-0.") == "" { // a zero or a rounded-away tiny difference
		s = strings.TrimPrefix(s, "-")
	}
	if !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "∞") {
		s = "+" + s
	}
	return s + " ± " + f(se)
}

// WritePlots writes the report's figures into dir (PNG and SVG each) and
// returns them for WriteMarkdown, in this order:
//
//	auc_vs_eadv       PlotAUCvsAdvantage(summary, "eadv")    paper Fig. 3
//	auc_vs_ma_p98     PlotAUCvsAdvantage(summary, "ma_p98")  paper Fig. 3
//	posterior_scatter PlotScatter(post)                      paper Figs. 1–2
//	advantage_cdfs    PlotCDFs(post)                         paper Fig. 2
//
// A figure with nothing to draw (no audit joined, post nil or empty) is
// skipped, not an error; any other error is returned.
func WritePlots(dir string, summary, post *data.Table) ([]Figure, error) {
	type job struct {
		name, title, caption string
		run                  func(string) error
	}
	jobs := []job{
		{"auc_vs_eadv", "Test AUC vs expected additive advantage",
			"Paper Fig. 3. One point per privacy setting: x = expected additive advantage of the Bayes-optimal attacker " +
				"(audit), y = mean test AUC of the best learning rate (± SE over trials). RR varies ε, LLP varies k, " +
				"LLP+Lap/LLP+Geom have one curve per k across ε. Dashed line: the model trained on clean labels.",
			func(p string) error { return PlotAUCvsAdvantage(summary, "eadv", p) }},
		{"auc_vs_ma_p98", "Test AUC vs 98th-percentile multiplicative advantage",
			"Paper Fig. 3. As above with x = 98th percentile of |multiplicative advantage| (nats, log(1+x) axis). " +
				"Settings whose 98th percentile is infinite (more than 2% of labels fully exposed, e.g. LLP with " +
				"homogeneous bags) are drawn at the position marked ∞, right of the dashed separator.",
			func(p string) error { return PlotAUCvsAdvantage(summary, "ma_p98", p) }},
		{"posterior_scatter", "Prior vs posterior",
			"Paper Figs. 1–2 (top). One point per sampled example: the attacker's posterior P(y=1 | x, release) " +
				"against the prior η(x). Points on y = x reveal nothing; posteriors of 0 or 1 expose the label.",
			func(p string) error { return PlotScatter(post, p) }},
		{"advantage_cdfs", "CDFs of per-example advantage",
			"Paper Fig. 2 (middle, bottom). Empirical CDFs of the individual expected advantage and of " +
				"|multiplicative advantage|; infinite values jump to 1 at the ∞ position.",
			func(p string) error { return PlotCDFs(post, p) }},
	}
	var figs []Figure
	for _, j := range jobs {
		base := filepath.Join(dir, j.name)
		if err := j.run(base); err != nil {
			if errors.Is(err, ErrNoData) {
				continue
			}
			return figs, err
		}
		figs = append(figs, Figure{Path: base + ".png", Title: j.title, Caption: j.caption})
	}
	return figs, nil
}
