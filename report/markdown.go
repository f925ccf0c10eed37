package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/internal/atomicfile"
	"labelprivacy/internal/english"

	"labelprivacy/report/internal/display"
)

// Figure is a plot to embed in report.md.
type Figure struct {
	Path    string // the PNG; linked relative to report.md's directory
	Title   string // section heading and alt text
	Caption string // optional text under the image
}

// Markdown is the content of report.md.
type Markdown struct {
	Title      string       // default "labelprivacy report"
	Summary    *Summary     // Summarize's result (required)
	Comparison []Comparison // Compare's result; nil: no comparison section
	// CompareNames names Compare's a and b sides in the text (default
	// "a", "b"), e.g. {"baseline", "this run"}.
	CompareNames [2]string
	// CompareSides, when both are set, are the summaries of the two sides:
	// the Summary section shows each (a, then b) in place of Summary's
	// table.
	CompareSides [2]*Summary
	// CompareConfigDiff lists every config key whose value differs between
	// the two sides' configs, "key: a → b" (nil: the keys the rows record,
	// ComparedConfigDiffs, are named instead); CompareConfigNote says what
	// it could not read (e.g. a side without config.resolved.yaml).
	CompareConfigDiff []string
	CompareConfigNote string
	Figures           []Figure
	Notes             []string // extra paragraphs after the summary table
	// AuditHint is the command that adds audit results, shown once when
	// settings are not audited; default "train audit -c CONFIG".
	AuditHint string
	// Audits, when any, add the audit's self-checks (realized advantage,
	// ε-DP worst case, empirical ε) and the quality of its η;
	// Calibration the reliability tables of η.
	Audits      []Audit
	Calibration []Calibration
	// Made is what wrote this report (nil: no provenance is written, as in
	// golden tests); WallS the seconds from the command's start to the
	// report (0: not given); Origins what made the runs it reports
	// (Origins), listed under "Provenance".
	Made    *Provenance
	WallS   float64
	Origins []Origin
}

// WriteMarkdown writes report.md to path atomically: the title, the
// reporting rule, the dataset and model config (or, for a mixed summary,
// dataset and config columns), the summary table (settings in canonical
// order, numbers with fixed precision, ∞ for +Inf, "n/a" for the SE of a
// single trial, — where nothing applies), a single hint when settings are
// not audited (the audit columns are left out when none is), the merge
// counts (duplicates, runs outside the grid, NaN AUCs), the comparison
// table if any, and the figures as relative PNG links. The output depends
// only on its inputs (no timestamps), so it can be diffed and golden-tested.
func WriteMarkdown(path string, md Markdown) error {
	if md.Summary == nil {
		return fmt.Errorf("report: WriteMarkdown: nil summary")
	}
	s := md.Summary
	var b strings.Builder
	title := md.Title
	if title == "" {
		title = "labelprivacy report"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if md.Made != nil {
		b.WriteString(madeLine(md.Made, md.WallS) + "\n\n")
	}
	values := s.Classes == valuesKey
	writeIntro(&b, s.Classes)
	writeSummary(&b, md)
	if values {
		writeValueAuditChecks(&b, md.Audits)
	} else {
		writeAuditChecks(&b, md.Audits)
		writeModelAttacks(&b, md.Audits)
		writeEtaQuality(&b, md.Audits, md.Calibration)
	}
	if md.Comparison != nil {
		writeComparison(&b, md)
	}
	writeFigures(&b, filepath.Dir(path), md.Figures)
	writeProvenance(&b, md)
	return atomicfile.WriteFile(path, []byte(b.String()))
}

// writeIntro writes the reporting rule and what the columns mean, for
// conversion values, C ≥ 3 classes (accuracy) or binary labels (AUC).
func writeIntro(b *strings.Builder, classes int) {
	switch {
	case classes == valuesKey:
		b.WriteString(valuesIntro)
	case MetricFor(classes) == MetricAccuracy:
		fmt.Fprintf(b, "Labels of C = %d classes. Each row is one privacy setting. Following the paper's reporting rule "+
			"(Appendix C, \"AUC vs Advantage Experimental Setup\") with test accuracy in place of AUC, as multi-class "+
			"label-DP results are reported, *best LR* is the learning rate with the highest mean test accuracy over trials, "+
			"*test accuracy* (the fraction of test rows whose most probable class is the label) is that learning rate's "+
			"mean ± standard error over its trials (n/a with a single trial) and *macro AUC* its mean one-vs-rest AUC "+
			"(the AUC of each class against the rest, averaged over the classes). "+
			"*E[adv]* is the expected additive advantage of the Bayes-optimal label-inference attacker (its accuracy at "+
			"guessing each label from the release, minus the prior's), *MA p98* the 98th percentile of |multiplicative "+
			"advantage| (the largest change of the log posterior odds between two classes, nats) and *MA = ∞* the "+
			"fraction of examples for which the release rules a class out (infinite posterior odds against it).\n\n", classes)
	default:
		b.WriteString("Each row is one privacy setting. Following the paper's reporting rule (Appendix C, " +
			"\"AUC vs Advantage Experimental Setup\"), *best LR* is the learning rate with the highest mean test AUC " +
			"over trials, and *test AUC* is that learning rate's mean ± standard error over its trials " +
			"(n/a with a single trial). " +
			"*E[adv]* is the expected additive advantage of the Bayes-optimal label-inference attacker, " +
			"*MA p98* the 98th percentile of |multiplicative advantage| (|Δ log-odds|, nats) and " +
			"*MA = ∞* the fraction of examples whose label is fully exposed.\n\n")
	}
}

// writeSummary writes the Summary section: the result group (or the
// several groups' note), the summary table (one per side of a comparison
// with both sides), the hint when settings are not audited, the η sources,
// the merge note and md.Notes.
func writeSummary(b *strings.Builder, md Markdown) {
	s := md.Summary
	b.WriteString("## Summary" + ClassesTitle(s.Classes) + "\n\n")
	mixed := len(s.Datasets) > 1 || len(s.Configs) > 1
	sides := md.CompareSides[0] != nil && md.CompareSides[1] != nil
	if !mixed && !sides && len(s.Rows) > 0 {
		b.WriteString(groupLine(s.Rows[0].Dataset, s.Rows[0].ConfigID))
	}
	if mixed && !sides {
		fmt.Fprintf(b, "**Several result groups** (%d datasets, %d model configs): runs of different datasets or "+
			"configs are never averaged; each (dataset, config) has its own rows.\n\n", len(s.Datasets), len(s.Configs))
	}
	audited, unaudited := 0, 0
	for _, r := range s.Rows {
		if r.Audited {
			audited++
		} else {
			unaudited++
		}
	}
	if sides {
		for i, side := range md.CompareSides {
			sm := len(side.Datasets) > 1 || len(side.Configs) > 1
			fmt.Fprintf(b, "### %s\n\n", cell(compareName(md.CompareNames, i)))
			if !sm && len(side.Rows) > 0 {
				b.WriteString(groupLine(side.Rows[0].Dataset, side.Rows[0].ConfigID))
			}
			writeSummaryTable(b, side, sm, slices.ContainsFunc(side.Rows, func(r Row) bool { return r.Audited }))
			b.WriteString("\n")
		}
	} else if s.Classes == valuesKey {
		writeValueSummaryTable(b, s, mixed, audited > 0)
	} else {
		writeSummaryTable(b, s, mixed, audited > 0)
	}
	hint := md.AuditHint
	if hint == "" {
		hint = "train audit -c CONFIG"
	}
	switch {
	case len(s.Rows) > 0 && audited == 0:
		fmt.Fprintf(b, "\n**Not audited:** run `%s` to add the attack advantages (E[adv], MA) and their figures.\n", hint)
	case unaudited > 0:
		fmt.Fprintf(b, "\n%d of %d settings were not audited (— in the audit columns): run `%s`.\n", unaudited, len(s.Rows), hint)
	}
	if src := etaSources(s.Rows); src != "" {
		b.WriteString("\n" + src + "\n")
	}
	b.WriteString("\n" + mergeNote(s) + "\n")
	for _, n := range md.Notes {
		b.WriteString("\n" + n + "\n")
	}
}

// writeComparison writes the Comparison section of md.Comparison (B − A
// with its SE and the two tests): its rule, the sides, the config keys
// that differ and the table.
func writeComparison(b *strings.Builder, md Markdown) {
	na, nb := compareName(md.CompareNames, 0), compareName(md.CompareNames, 1)
	cc := md.Summary.Classes
	if len(md.Comparison) > 0 {
		cc = md.Comparison[0].Classes
	}
	fmt.Fprintf(b, "\n## Comparison: %s vs %s%s\n\n", na, nb, ClassesTitle(cc))
	mn := MetricFor(cc).Short()
	fmt.Fprintf(b, "Δ = %s − %s; SE = √(SE_%s² + SE_%s²). Each difference is tested on its own: *%s > 2 SE* "+
		"when |Δ%s| > 2·SE, *E[adv] > 2 SE* when |ΔE[adv]| > 2·SE (n/a with a single trial, whose SE is unknown, "+
		"or without an audit). Settings present on one side only are listed with the side that has them.\n\n",
		nb, na, na, nb, mn, mn)
	writeSides(b, md.Comparison, na, nb)
	writeConfigDiff(b, md, na, nb)
	writeComparisonTable(b, md.Comparison, na, nb)
}

// writeFigures writes the Figures section (none without figures): each
// figure's title (default its file's name), its link relative to dir
// (the report's folder) where one is, and its caption.
func writeFigures(b *strings.Builder, dir string, figs []Figure) {
	if len(figs) == 0 {
		return
	}
	b.WriteString("\n## Figures\n")
	for _, f := range figs {
		link := f.Path
		if rel, err := filepath.Rel(dir, f.Path); err == nil && filepath.IsAbs(dir) == filepath.IsAbs(f.Path) {
			link = rel
		}
		link = filepath.ToSlash(link)
		t := f.Title
		if t == "" {
			t = strings.TrimSuffix(filepath.Base(f.Path), filepath.Ext(f.Path))
		}
		fmt.Fprintf(b, "\n### %s\n\n![%s](%s)\n", t, t, link)
		if f.Caption != "" {
			fmt.Fprintf(b, "\n%s\n", f.Caption)
		}
	}
}

// madeLine is report.md's first line under the title: tool, revision,
// date, wall time and command.
func madeLine(p *Provenance, wallS float64) string {
	s := "*Made by " + p.Tool + " (" + revisionWords(p.Revision, false) + ")"
	if p.Started != "" {
		s += ", started " + p.Started
	}
	if wallS > 0 {
		s += fmt.Sprintf(", %s wall time", fmtDuration(wallS))
	}
	s += ".*"
	if p.Command != "" {
		s += " Command: `" + p.Command + "`"
		if len(p.Env) > 0 {
			s += " with `" + strings.Join(p.Env, " ") + "`"
		}
		s += "."
	}
	return s
}

// NoRevision says why a build has no VCS revision: Go stamps one only
// into a binary made by go build or go install inside a git checkout,
// without -buildvcs=false.
const NoRevision = "no VCS revision recorded (built by go run or go test, with -buildvcs=false, or outside a git checkout)"

// revisionWords is "revision `rev`" (quoted as code when code), or says
// that the build recorded none (NoRevision; its short form when !code).
func revisionWords(rev string, code bool) string {
	switch {
	case rev != "" && code:
		return "revision `" + rev + "`"
	case rev != "":
		return "revision " + rev
	case code:
		return NoRevision
	}
	return "no VCS revision recorded"
}

// fmtDuration formats seconds as "12.3 s", "4 min 5 s" or "2 h 3 min".
func fmtDuration(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1f s", s)
	case s < 3600:
		return fmt.Sprintf("%d min %d s", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%d h %d min", int(s)/3600, int(s)%3600/60)
}

// writeProvenance writes the Provenance section: what wrote the report
// (config, command, environment) and what made its runs.
func writeProvenance(b *strings.Builder, md Markdown) {
	if md.Made == nil && len(md.Origins) == 0 {
		return
	}
	b.WriteString("\n## Provenance\n\n")
	if p := md.Made; p != nil {
		fmt.Fprintf(b, "This report: %s, %s", p.Tool, revisionWords(p.Revision, true))
		if p.Started != "" {
			fmt.Fprintf(b, ", started %s", p.Started)
		}
		if md.WallS > 0 {
			fmt.Fprintf(b, ", total wall time %s", fmtDuration(md.WallS))
		}
		b.WriteString(".\n")
		writeInvocation(b, *p)
	}
	if len(md.Origins) > 0 {
		fmt.Fprintf(b, "\nThe runs reported (%d) were made by:\n\n", sumRuns(md.Origins))
		for _, o := range md.Origins {
			if o.Tool == "" {
				fmt.Fprintf(b, "- %s written before provenance was recorded.\n", english.Count(o.Runs, "run"))
				continue
			}
			fmt.Fprintf(b, "- %s: %s (%s)", english.Count(o.Runs, "run"), o.Tool, revisionWords(o.Revision, false))
			if o.Started != "" {
				fmt.Fprintf(b, ", started %s", o.Started)
			}
			if o.Command != "" {
				fmt.Fprintf(b, ", `%s`", o.Command)
			}
			if len(o.Env) > 0 {
				fmt.Fprintf(b, " with `%s`", strings.Join(o.Env, " "))
			}
			if o.ConfigSummary != "" {
				fmt.Fprintf(b, "; %s", o.ConfigSummary)
			} else if o.ConfigName != "" {
				fmt.Fprintf(b, "; config %q", o.ConfigName)
			}
			b.WriteString(".\n")
		}
	}
}

// writeInvocation lists a command's line, environment, config file and
// config summary.
func writeInvocation(b *strings.Builder, p Provenance) {
	b.WriteString("\n")
	if p.Command != "" {
		fmt.Fprintf(b, "- Command: `%s`\n", p.Command)
	}
	if len(p.Env) > 0 {
		fmt.Fprintf(b, "- Environment: `%s`\n", strings.Join(p.Env, "`, `"))
	}
	if p.ConfigFile != "" {
		fmt.Fprintf(b, "- Config file: `%s`\n", p.ConfigFile)
	}
	if p.ConfigSummary != "" {
		fmt.Fprintf(b, "- Config: %s\n", p.ConfigSummary)
	}
}

func sumRuns(os []Origin) int {
	n := 0
	for _, o := range os {
		n += o.Runs
	}
	return n
}

// groupLine names a single group's dataset and model config.
func groupLine(dataset, config string) string {
	var parts []string
	if dataset != "" {
		parts = append(parts, "dataset "+code(dataset))
	}
	if config != "" {
		parts = append(parts, "model config "+code(config))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Results of " + strings.Join(parts, ", ") + ".\n\n"
}

// etaSources says which prior the audit's attacker used.
func etaSources(rows []Row) string {
	seen := map[string]bool{}
	for _, r := range rows {
		if r.Audited && r.EtaSource != "" {
			seen[r.EtaSource] = true
		}
	}
	if len(seen) == 0 {
		return ""
	}
	var srcs []string
	for _, k := range sortedKeys(seen) {
		srcs = append(srcs, code(k))
	}
	return "Attacker's prior η (audit): " + strings.Join(srcs, ", ") + "."
}

func mergeNote(s *Summary) string {
	note := fmt.Sprintf("Runs read: %d; duplicate (setting, lr, trial, run_id) %s dropped: %d", s.RunsRead,
		english.Noun(s.Duplicates, "run", "runs"), s.Duplicates)
	if s.Conflicts > 0 {
		note += fmt.Sprintf(" (**%d with a different test AUC or accuracy** than the run kept)", s.Conflicts)
	}
	note += "."
	if s.OutOfGrid > 0 {
		note += fmt.Sprintf(" **Left out: %d %s outside this config's grid** (e.g. left in the output directory by an "+
			"earlier config; counting them would add trials that this config did not train).", s.OutOfGrid,
			english.Noun(s.OutOfGrid, "run", "runs"))
	}
	if s.NaNAUC > 0 {
		note += fmt.Sprintf(" Runs with a NaN %s left out: %d.", MetricFor(s.Classes), s.NaNAUC)
	}
	if s.AuditConflicts > 0 {
		note += fmt.Sprintf(" Conflicting duplicate audit rows (one kept): %d.", s.AuditConflicts)
	}
	return note
}

// writeSummaryTable writes the summary's rows; for C ≥ 3 classes the
// metric columns are test accuracy and macro AUC, each ± SE.
func writeSummaryTable(b *strings.Builder, s *Summary, mixed, audit bool) {
	multi := MetricFor(s.Classes) == MetricAccuracy
	head := "| setting | mechanism | k | ε | label-DP ε | best LR | test AUC | ± SE | trials |"
	align := "|---|---|--:|--:|--:|--:|--:|--:|--:|"
	if multi {
		head = "| setting | mechanism | k | ε | label-DP ε | best LR | test accuracy | ± SE | macro AUC | ± SE | trials |"
		align = "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
	}
	if mixed {
		head = "| dataset | config " + head
		align = "|---|---" + align
	}
	if audit {
		head += " E[adv] | ± SE | mean MA (nats) | MA p98 (nats) | MA = ∞ |"
		align += "--:|--:|--:|--:|--:|"
	}
	b.WriteString(head + "\n" + align + "\n")
	for _, r := range s.Rows {
		if mixed {
			cfg := code(r.ConfigID)
			if r.ConfigName != "" {
				cfg += " " + cell(r.ConfigName)
			}
			if r.ConfigDiff != "" {
				cfg += " (" + cell(strings.ReplaceAll(r.ConfigDiff, configSep, ", ")) + ")"
			}
			fmt.Fprintf(b, "| %s | %s ", code(r.Dataset), cfg)
		}
		f4 := func(v float64) string { return fmtFixed(v, 4) }
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | ",
			code(r.Setting), cell(display.PetName(r.Pet)), fmtK(r.K), fmtEps(r.Epsilon), fmtNum(r.LabelDPEpsilon, 3), fmtNum(r.BestLR, 3))
		if multi {
			fmt.Fprintf(b, "%s | %s | ", fmtFixed(r.AccuracyMean, 4), fmtSE(r.AccuracySE, r.NTrials, f4))
		}
		fmt.Fprintf(b, "%s | %s | %d |", fmtFixed(r.AUCMean, 4), fmtSE(r.AUCSE, r.NTrials, f4), r.NTrials)
		if audit {
			if r.Audited {
				fmt.Fprintf(b, " %s | %s | %s | %s | %s |", fmtNum(r.EAdv, 3), fmtSE(r.EAdvSE, 2, func(v float64) string { return fmtNum(v, 2) }),
					fmtNum(r.MAMean, 3), fmtNum(r.MAP98, 3), fmtPct(r.MAInfFrac))
			} else {
				fmt.Fprintf(b, " %s | %s | %s | %s | %s |", dash, dash, dash, dash, dash)
			}
		}
		b.WriteString("\n")
	}
}

// fmtSE formats a standard error: "n/a" when it is NaN because there are
// fewer than 2 units (n ≥ 1), — when there is nothing at all (n = 0).
func fmtSE(se float64, n int, f func(float64) string) string {
	if math.IsNaN(se) {
		if n >= 1 {
			return "n/a"
		}
		return dash
	}
	return f(se)
}

// writeSides says which datasets and configs each side holds, and warns
// when they differ (a comparison made with AllowMixed).
func writeSides(b *strings.Builder, cs []Comparison, na, nb string) {
	side := func(ds, cfg func(Comparison) string) []string {
		seen := map[string]bool{}
		for _, c := range cs {
			if ds(c) != "" {
				seen["dataset "+code(ds(c))+" config "+code(cfg(c))] = true
			}
		}
		return sortedKeys(seen)
	}
	a := side(func(c Comparison) string { return c.DatasetA }, func(c Comparison) string { return c.ConfigIDA })
	bb := side(func(c Comparison) string { return c.DatasetB }, func(c Comparison) string { return c.ConfigIDB })
	fmt.Fprintf(b, "%s: %s. %s: %s.", cell(na), strings.Join(a, "; "), cell(nb), strings.Join(bb, "; "))
	if !slices.Equal(a, bb) {
		b.WriteString(" **The two sides differ in dataset or config** (compared with `--allow-mixed`).")
	}
	b.WriteString("\n\n")
}

// compareName is side i's name in the text: CompareNames[i], else "a" or
// "b".
func compareName(names [2]string, i int) string {
	if names[i] != "" {
		return names[i]
	}
	return [2]string{"a", "b"}[i]
}

// writeConfigDiff names the config keys that differ between the sides:
// every key of their configs (CompareConfigDiff) or, without those, the
// keys the rows record, one group per pair of configs compared.
func writeConfigDiff(b *strings.Builder, md Markdown, na, nb string) {
	groups := [][]string{md.CompareConfigDiff}
	if md.CompareConfigDiff == nil {
		groups = nil
		for _, d := range ComparedConfigDiffs(md.Comparison) {
			groups = append(groups, strings.Split(d, configSep))
		}
	}
	if len(groups) > 0 && len(groups[0]) > 0 {
		fmt.Fprintf(b, "Config keys that differ (%s → %s): ", cell(na), cell(nb))
		for i, g := range groups {
			if i > 0 {
				b.WriteString("; and ")
			}
			parts := make([]string, len(g))
			for j, p := range g {
				parts[j] = code(p)
			}
			b.WriteString(strings.Join(parts, ", "))
		}
		b.WriteString(". The figures overlay both sides: " + cell(na) + " dashed with open markers, " + cell(nb) + " solid.")
		if md.CompareConfigNote != "" {
			b.WriteString(" " + md.CompareConfigNote)
		}
		b.WriteString("\n\n")
	} else if md.CompareConfigNote != "" {
		b.WriteString(md.CompareConfigNote + "\n\n")
	}
}

// writeComparisonTable writes the comparison's rows with their reporting
// metric (accuracy for C ≥ 3 classes, AUC for binary labels).
func writeComparisonTable(b *strings.Builder, cs []Comparison, na, nb string) {
	grouped := false
	m := MetricAUC
	for _, c := range cs {
		grouped = grouped || c.Dataset != "" || c.ConfigID != ""
		m = MetricFor(c.Classes)
	}
	mn := m.Short()
	head := fmt.Sprintf("| setting | %s %s | %s %s | Δ%s ± SE | %s > 2 SE | E[adv] %s | E[adv] %s | ΔE[adv] ± SE | E[adv] > 2 SE | only in |",
		mn, cell(na), mn, cell(nb), mn, mn, cell(na), cell(nb))
	align := "|---|--:|--:|--:|:-:|--:|--:|--:|:-:|---|"
	if grouped {
		head, align = "| dataset | config "+head, "|---|---"+align
	}
	b.WriteString(head + "\n" + align + "\n")
	for _, c := range cs {
		flag := func(sig, tested bool) string {
			switch {
			case c.OnlyIn != InBoth:
				return ""
			case sig:
				return "**yes**"
			case !tested:
				return "n/a" // no standard error on this difference
			}
			return "no"
		}
		only := ""
		switch c.OnlyIn {
		case OnlyInA:
			only = cell(na)
		case OnlyInB:
			only = cell(nb)
		}
		if grouped {
			fmt.Fprintf(b, "| %s | %s ", code(c.Dataset), code(c.ConfigID))
		}
		va, vb := c.AUCA, c.AUCB
		if m == MetricAccuracy {
			va, vb = c.AccuracyA, c.AccuracyB
		}
		d, se := c.DMetric()
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			code(c.Setting), fmtFixed(va, 4), fmtFixed(vb, 4), fmtDelta(d, se, true), flag(c.SignificantMetric, c.TestedMetric()),
			fmtNum(c.EAdvA, 3), fmtNum(c.EAdvB, 3), fmtDelta(c.DEAdv, c.DEAdvSE, false), flag(c.SignificantEAdv, c.TestedEAdv()), only)
	}
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

func fmtK(k int) string {
	if k == 0 {
		return dash
	}
	return strconv.Itoa(k)
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
	return display.Percent(f)
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
	if math.IsNaN(se) {
		return s + " ± n/a"
	}
	return s + " ± " + f(se)
}
