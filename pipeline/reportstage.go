package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
	"labelprivacy/report/figures"
)

// Report writes the session's summary.csv/.parquet, figures and report.md
// from Fit's runs and Audit's result (nil: no audit). Runs outside the
// config's grid (left in the output by an earlier config) are left out and
// counted: report.md says how many.
func Report(s *Session, runs []report.Run, a *Audited) (*report.Summary, error) {
	g := store.Grid{Dataset: s.datasetID, Config: s.configID, Runs: runIDs(s.runs)}
	in := g.InGrid()
	if a == nil {
		a = &Audited{}
	}
	stored, _, err := store.Store{Dir: s.cfg.Output}.All()
	if err != nil {
		return nil, err
	}
	for _, r := range stored {
		if !in(r.RunID) {
			runs = append(runs, r) // counted as outside the grid, never averaged
		}
	}
	made := s.provenance()
	return writeReport(s.cfg.Output, "labelprivacy report: "+s.cfg.Name, &resultSet{Runs: runs, Audits: a.Audits, Posteriors: a.Posteriors,
		Calibration: a.Calibration, ValuePosteriors: a.ValuePosteriors},
		report.Options{InGrid: in}, nil, s.ev, reportMeta{made: &made, started: s.started, judge: s.trainingNotes, clock: s.clock})
}

// reportMeta is what report.md says made it, and how it judges whether
// its models trained (judge: the notes; nil: by their steps alone,
// trainingNotes without chance, for result sets read from disk).
type reportMeta struct {
	made    *report.Provenance
	started time.Time
	judge   func([]report.Run) []string
	clock   Clock // progress is reported with it
}

// resultSet is one run directory's results, as `train report` reads them.
type resultSet struct {
	Dir        string
	Runs       []report.Run
	Audits     []report.Audit
	Posteriors []report.Posterior
	// ValuePosteriors are the samples of an audit of conversion values.
	ValuePosteriors []report.ValuePosterior
	// Damaged are run records left out because they are not valid results.
	Damaged []error
	// Calibration holds the reliability tables of the audit's η.
	Calibration []report.Calibration
	// Grid is the directory's recorded grid (nil for sets written before
	// grids were recorded: then every run counts).
	Grid *store.Grid
}

// loadResultSet reads a run directory: every shard's runs/*.json (else
// runs.parquet), audit.parquet, posteriors.parquet and calibration.parquet
// when present, and grid.json.
func loadResultSet(dir string) (*resultSet, error) {
	st := store.Store{Dir: dir}
	rs := &resultSet{Dir: dir}
	var err error
	if rs.Runs, rs.Damaged, err = st.All(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if len(rs.Runs) == 0 {
		t, err := data.ReadTable(filepath.Join(dir, "runs.parquet"))
		if err != nil {
			return nil, fmt.Errorf("report: %s has no finished runs (runs/*.json or runs.parquet): %w", dir, err)
		}
		if rs.Runs, err = report.ReadRuns(t); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, "runs.parquet"), err)
		}
	}
	if t, err := readIfExists(filepath.Join(dir, "audit.parquet")); err != nil {
		return nil, err
	} else if t != nil {
		if rs.Audits, err = report.ReadAudits(t); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, "audit.parquet"), err)
		}
	}
	if t, err := readIfExists(filepath.Join(dir, "posteriors.parquet")); err != nil {
		return nil, err
	} else if t != nil {
		if rs.Posteriors, err = report.ReadPosteriors(t); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, "posteriors.parquet"), err)
		}
	}
	if t, err := readIfExists(filepath.Join(dir, "value_posteriors.parquet")); err != nil {
		return nil, err
	} else if t != nil {
		if rs.ValuePosteriors, err = report.ReadValuePosteriors(t); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, "value_posteriors.parquet"), err)
		}
	}
	if t, err := readIfExists(filepath.Join(dir, "calibration.parquet")); err != nil {
		return nil, err
	} else if t != nil {
		if rs.Calibration, err = report.ReadCalibration(t); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, "calibration.parquet"), err)
		}
	}
	if rs.Grid, err = st.ReadGrid(); err != nil {
		return nil, err
	}
	return rs, nil
}

func readIfExists(path string) (*data.Table, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data.ReadTable(path)
}

// merge concatenates result sets; a run counts when it is in the grid of
// any set that recorded one (run ids are content hashes, so a run of one
// set may belong to another's grid). A set without a grid (written before
// grids were recorded) makes every run count.
func merge(sets []*resultSet) (*resultSet, func(string) bool) {
	out := &resultSet{}
	var grids []func(string) bool
	all := false
	for _, s := range sets {
		out.Runs = append(out.Runs, s.Runs...)
		out.Audits = append(out.Audits, s.Audits...)
		out.Posteriors = append(out.Posteriors, s.Posteriors...)
		out.Calibration = append(out.Calibration, s.Calibration...)
		if s.Grid == nil {
			all = true
			continue
		}
		grids = append(grids, s.Grid.InGrid())
	}
	if all {
		return out, nil
	}
	return out, func(id string) bool {
		for _, g := range grids {
			if g(id) {
				return true
			}
		}
		return false
	}
}

// ReportOptions configure `train report`.
type ReportOptions struct {
	In  []string // run directories, merged
	Out string
	// Compare, when set, holds two run directories A and B: ΔAUC and
	// Δadvantage (B − A) with standard errors.
	Compare []string
	// AllowMixed keeps runs of different datasets or configs as separate
	// rows instead of failing.
	AllowMixed bool
	// Invocation is the command line that asked for the report (its
	// provenance in report.md).
	Invocation config.Invocation
}

// ReportSets merges result sets and writes summary.csv/.parquet, figures,
// report.md and, with Compare, compare.csv/.parquet.
func ReportSets(o ReportOptions, ev Events) error {
	switch {
	case len(o.Compare) != 0 && len(o.Compare) != 2:
		return &config.FieldError{Key: "compare", Msg: fmt.Sprintf("takes two directories (A,B or A B), got %d", len(o.Compare))}
	case len(o.In) == 0 && len(o.Compare) == 0:
		return &config.FieldError{Key: "in", Msg: "give at least one run directory (or `compare` A B)"}
	}
	clock := clockOf(ev)
	ev = &syncEvents{ev: orDiscard(ev)}
	started := time.Now()
	made := &report.Provenance{Tool: Version, Revision: Revision(), Started: started.Format(time.RFC3339),
		Command: o.Invocation.Command, Env: o.Invocation.Env}
	load := func(dirs []string) (*resultSet, func(string) bool, error) {
		var sets []*resultSet
		for _, d := range dirs {
			s, err := loadResultSet(d)
			if err != nil {
				return nil, nil, err
			}
			for _, e := range s.Damaged {
				ev.Warn("report", e.Error()+": left out")
			}
			sets = append(sets, s)
		}
		rs, in := merge(sets)
		return rs, in, nil
	}
	dirs := o.In
	if len(dirs) == 0 {
		dirs = o.Compare[1:]
	}
	rs, in, err := load(dirs)
	if err != nil {
		return err
	}
	var cmp *comparison
	if len(o.Compare) == 2 {
		cmp = &comparison{names: [2]string{o.Compare[0], o.Compare[1]}, allowMixed: o.AllowMixed, sidesOnly: len(o.In) == 0}
		for i, d := range o.Compare {
			set, in, err := load([]string{d})
			if err != nil {
				return err
			}
			if cmp.sums[i], err = report.Summarize(set.Runs, set.Audits, report.Options{InGrid: in, AllowMixed: o.AllowMixed}); err != nil {
				return fmt.Errorf("report: %s: %w", d, err)
			}
			cmp.post[i] = set.Posteriors
		}
		cmp.configDiff, cmp.configNote = configDiff(o.Compare[0], o.Compare[1])
	}
	_, err = writeReport(o.Out, "labelprivacy report", rs, report.Options{InGrid: in, AllowMixed: o.AllowMixed}, cmp, ev,
		reportMeta{made: made, started: started, clock: clock})
	return err
}

type comparison struct {
	names      [2]string
	sums       [2]*report.Summary
	post       [2][]report.Posterior
	allowMixed bool
	// sidesOnly: the report is of the two sides alone (no --in), whose
	// Summary section shows each side.
	sidesOnly bool
	// configDiff lists every config key that differs between the sides'
	// config.resolved.yaml (nil: one could not be read, configNote says
	// which, and the keys the runs record are named instead).
	configDiff []string
	configNote string
}

// configDiff compares the config.resolved.yaml of two output directories,
// key by key (config.Diff): every key whose value differs, an empty list
// when none does, or nil and a note naming a side whose file is missing or
// unreadable (a directory written by `train report`, or before configs
// were written out).
func configDiff(a, b string) ([]string, string) {
	var cs [2]*config.Config
	var missing []string
	for i, d := range []string{a, b} {
		path := filepath.Join(d, "config.resolved.yaml")
		c, err := config.Load(config.Source{File: path})
		if err != nil {
			missing = append(missing, path)
			continue
		}
		cs[i] = c
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("No config to compare key by key in %s (a config.resolved.yaml is written by train run, fit, "+
			"audit and sweep): only the keys the runs record are compared.", strings.Join(missing, " and "))
	}
	d, err := config.Diff(cs[0], cs[1])
	if err != nil {
		return nil, fmt.Sprintf("The configs could not be compared key by key (%v): only the keys the runs record are compared.", err)
	}
	if d == nil {
		d = []string{}
	}
	return d, ""
}

// sets are the comparison's two sides as figure sets, A first (drawn
// dashed with open markers) and B last (solid), each named by its
// directory and, when the configs differ, its values of the keys that
// differ.
func (c *comparison) sets(rows []report.Comparison) []figures.Set {
	var diff []string
	for _, r := range rows {
		if r.ConfigDiff != "" {
			diff = strings.Split(r.ConfigDiff, "; ")
			break
		}
	}
	var out []figures.Set
	for i, side := range []string{"A", "B"} {
		name := side + ": " + c.names[i]
		var vals []string
		for _, d := range diff {
			key, change, _ := strings.Cut(d, ": ")
			a, b, _ := strings.Cut(change, " → ")
			vals = append(vals, key+"="+[]string{a, b}[i])
		}
		if len(vals) > 0 {
			name += " (" + strings.Join(vals, ", ") + ")"
		}
		// A side of several groups is drawn group by group.
		for _, g := range figures.GroupSets(c.sums[i], c.post[i]) {
			g.Name = strings.TrimSpace(name + " " + g.Name)
			out = append(out, g)
		}
	}
	return out
}

// compareMessage says how many settings differ by more than 2 SE, and
// what could not be tested: a single trial has no standard error, so a
// ΔAUC of single trials (and a ΔE[adv] without audits) says nothing.
func compareMessage(rows []report.Comparison) string {
	both, tested, aucTested := 0, 0, 0
	sig, sigMetric, sigEAdv := 0, 0, 0
	for _, r := range rows {
		if r.OnlyIn != report.InBoth {
			continue
		}
		both++
		if r.Tested {
			tested++
		}
		if r.TestedMetric() {
			aucTested++
		}
		if r.Significant() {
			sig++
		}
		if r.SignificantMetric {
			sigMetric++
		}
		if r.SignificantEAdv {
			sigEAdv++
		}
	}
	metric := "AUC"
	if len(rows) > 0 && report.MetricFor(rows[0].Classes) == report.MetricAccuracy {
		metric = "accuracy"
	}
	switch {
	case both == 0:
		return fmt.Sprintf("no setting in both sets (%s compared)", english.Count(len(rows), "setting"))
	case tested == 0:
		return fmt.Sprintf("none of %s in both sets could be tested: a single trial gives no standard error and "+
			"neither set is audited; train more trials (train.trials ≥ 2) or audit both sets", english.Count(both, "setting"))
	}
	msg := fmt.Sprintf("%d of %s differ by more than 2 SE", sig, english.Count(both, "setting"))
	if sig > 0 {
		msg += fmt.Sprintf(": %d in %s, %d in E[adv]", sigMetric, metric, sigEAdv)
	}
	var notes []string
	if tested < both {
		notes = append(notes, fmt.Sprintf("%d not testable: no standard error", both-tested))
	}
	if aucTested == 0 {
		notes = append(notes, fmt.Sprintf("E[adv] only: single trials give Δ%s no standard error", metric))
	} else if aucTested < both {
		notes = append(notes, fmt.Sprintf("Δ%s tested for %d, the others have a single trial", metric, aucTested))
	}
	if len(notes) > 0 {
		msg += " (" + strings.Join(notes, "; ") + ")"
	}
	return msg
}

// drawFigures writes the report's figures into dir: the result sets'
// (figures.WriteSets), the learning curves of the runs counted and the
// audit's self-checks, reporting the figures written as it goes.
func drawFigures(dir string, sets []figures.Set, counted []report.Run, rs *resultSet, ev Events, clock Clock) ([]report.Figure, error) {
	if clock == nil {
		clock = wallClock{}
	}
	m := startMeter(ev, clock, Progress{Stage: "report", What: "drawing figures in " + dir})
	defer m.Stop()
	m.Pass("figures", 0)
	var figs []report.Figure
	for _, draw := range []func() ([]report.Figure, error){
		func() ([]report.Figure, error) { return figures.WriteSets(dir, sets) },
		func() ([]report.Figure, error) { return figures.WriteCurvePlots(dir, counted) },
		func() ([]report.Figure, error) { return figures.WriteAuditPlots(dir, rs.Audits, rs.Calibration) },
	} {
		f, err := draw()
		if err != nil {
			return nil, err
		}
		figs = append(figs, f...)
		m.Done(len(f))
	}
	return figs, nil
}

// significantLine is the console's line for a setting whose difference
// in the reporting metric or in E[adv] is beyond 2 SE: each difference
// with its SE, and which of the two is beyond.
func significantLine(r report.Comparison) string {
	name, beyond := "ΔAUC", []string{}
	if report.MetricFor(r.Classes) == report.MetricAccuracy {
		name = "Δaccuracy"
	}
	d, se := r.DMetric()
	if r.SignificantMetric {
		beyond = append(beyond, name)
	}
	if r.SignificantEAdv {
		beyond = append(beyond, "ΔE[adv]")
	}
	return fmt.Sprintf("%-22s %s %+.4f ± %.4f  ΔE[adv] %+.4f ± %.4f  (beyond 2 SE: %s)", r.Setting, name, d, se, r.DEAdv, r.DEAdvSE,
		strings.Join(beyond, " and "))
}

// writeReport summarizes rs and writes the report files under out.
func writeReport(out, title string, rs *resultSet, opts report.Options, cmp *comparison, ev Events, meta reportMeta) (*report.Summary, error) {
	sum, err := report.Summarize(rs.Runs, rs.Audits, opts)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	counted := rs.Runs
	if opts.InGrid != nil {
		counted = nil
		for _, r := range rs.Runs {
			if opts.InGrid(r.RunID) {
				counted = append(counted, r)
			}
		}
	}
	md := report.Markdown{Title: title, Summary: sum, Audits: rs.Audits, Calibration: rs.Calibration,
		Made: meta.made, Origins: report.Origins(counted)}
	judge := meta.judge
	if judge == nil {
		judge = func(runs []report.Run) []string { return trainingNotes(runs, nil, false) }
	}
	for _, n := range judge(counted) {
		md.Notes = append(md.Notes, "**Barely trained:** "+n+".")
	}
	figSets := figures.GroupSets(sum, rs.Posteriors)
	if cmp != nil {
		rows, err := report.Compare(cmp.sums[0], cmp.sums[1], report.CompareOptions{AllowMixed: cmp.allowMixed})
		if err != nil {
			return nil, err
		}
		t := report.ComparisonTable(rows)
		if err := t.WriteCSV(filepath.Join(out, "compare.csv")); err != nil {
			return nil, err
		}
		if err := t.WriteParquet(filepath.Join(out, "compare.parquet")); err != nil {
			return nil, err
		}
		md.Comparison, md.CompareNames = rows, cmp.names
		md.CompareConfigDiff, md.CompareConfigNote = cmp.configDiff, cmp.configNote
		if cmp.sidesOnly {
			md.CompareSides = cmp.sums
		}
		switch {
		case cmp.configDiff == nil:
			ev.Warn("compare", cmp.configNote)
			for _, d := range report.ComparedConfigDiffs(rows) {
				ev.Info("compare", "config keys that differ (A → B): "+d)
			}
		case len(cmp.configDiff) == 0:
			ev.Info("compare", "the two configs (config.resolved.yaml) agree in every key")
		default:
			ev.Info("compare", "config keys that differ (A → B): "+strings.Join(cmp.configDiff, "; "))
		}
		for _, r := range rows {
			if r.Significant() {
				ev.Info("compare", significantLine(r))
			}
		}
		ev.Info("compare", compareMessage(rows))
		figSets = cmp.sets(rows)
	}
	t := report.SummaryTable(sum)
	if err := t.WriteCSV(filepath.Join(out, "summary.csv")); err != nil {
		return nil, err
	}
	if err := t.WriteParquet(filepath.Join(out, "summary.parquet")); err != nil {
		return nil, err
	}
	var figs []report.Figure
	if sum.Classes == report.ValuesKey {
		figs, err = drawValueFigures(filepath.Join(out, "figures"), sum, counted, rs)
	} else {
		figs, err = drawFigures(filepath.Join(out, "figures"), figSets, counted, rs, ev, meta.clock)
	}
	if err != nil {
		return nil, err
	}
	md.Figures = figs
	if !meta.started.IsZero() {
		md.WallS = time.Since(meta.started).Seconds()
	}
	path := filepath.Join(out, "report.md")
	if err := report.WriteMarkdown(path, md); err != nil {
		return nil, err
	}
	var notes []string
	if sum.Duplicates > 0 {
		notes = append(notes, fmt.Sprintf("%d duplicate runs dropped", sum.Duplicates))
	}
	if sum.OutOfGrid > 0 {
		notes = append(notes, fmt.Sprintf("%s outside the grid left out", english.Count(sum.OutOfGrid, "run")))
	}
	extra := ""
	if len(notes) > 0 {
		extra = " (" + strings.Join(notes, "; ") + ")"
	}
	ev.Info("report", fmt.Sprintf("%s from %s%s; wrote %s, %s, %s under %s", english.Count(len(sum.Rows), "setting"), english.Count(sum.RunsRead, "run"), extra,
		filepath.Join(out, "summary.csv"), path, english.Count(len(figs), "figure"), filepath.Join(out, "figures")))
	return sum, nil
}

// drawValueFigures writes the figures of a report of conversion values:
// figures.WriteValuePlots and the runs' learning curves.
func drawValueFigures(dir string, sum *report.Summary, counted []report.Run, rs *resultSet) ([]report.Figure, error) {
	figs, err := figures.WriteValuePlots(dir, sum, rs.ValuePosteriors)
	if err != nil {
		return nil, err
	}
	curves, err := figures.WriteCurvePlots(dir, counted)
	return append(figs, curves...), err
}
