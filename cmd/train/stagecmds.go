package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"labelprivacy/data"
	"labelprivacy/report"
)

// configFlags adds -c and --set to cmd.
func configFlags(cmd *cobra.Command, file *string, sets *[]string) {
	cmd.Flags().StringVarP(file, "config", "c", "", "config file (YAML)")
	cmd.Flags().StringArrayVar(sets, "set", nil, "override a config key (repeatable)")
	cmd.MarkFlagRequired("config")
}

func newFitCmd(stdout, stderr io.Writer, lookup env) *cobra.Command {
	var file string
	var sets []string
	cmd := &cobra.Command{
		Use:   "fit -c FILE",
		Short: "Privatize and train every PET setting × learning rate × trial; write runs.csv/.parquet and summary.csv",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openSession(cmd.Context(), file, sets, stdout, lookup)
			if err != nil {
				return err
			}
			results, err := fitAll(cmd.Context(), s, stdout, stderr)
			if err != nil {
				return err
			}
			return reportStage(s.cfg, runsTable(results), nil, nil, stdout)
		},
	}
	configFlags(cmd, &file, &sets)
	return cmd
}

// fitAll runs the release and fit stages over the whole grid and writes the
// run tables.
func fitAll(ctx context.Context, s *session, stdout, stderr io.Writer) ([]*runResult, error) {
	e, err := newFitEnv(s.cfg, s.ds, stderr)
	if err != nil {
		return nil, err
	}
	if _, err := e.backendOnce(); err != nil { // fail before any work
		return nil, err
	}
	if err := releaseStage(ctx, s.cfg, s.ds, s.specs, stdout); err != nil {
		return nil, err
	}
	results, err := fitStage(ctx, e, s.specs, stdout)
	if err != nil {
		return nil, err
	}
	if err := writeRunTables(s.cfg, results); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "fit: wrote %s, %s\n", filepath.Join(s.cfg.Output, "runs.csv"), filepath.Join(s.cfg.Output, "runs.parquet"))
	return results, nil
}

func newAuditCmd(stdout, stderr io.Writer, lookup env) *cobra.Command {
	var file string
	var sets []string
	cmd := &cobra.Command{
		Use:   "audit -c FILE",
		Short: "Exact attack advantage of every PET setting (after fit or a sweep); write audit.csv/.parquet, posteriors.parquet",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := openSession(cmd.Context(), file, sets, stdout, lookup)
			if err != nil {
				return err
			}
			results, err := finishedResults(s, stderr)
			if err != nil {
				return err
			}
			_, _, err = auditStage(s.cfg, s.ds, s.settings, results, stdout)
			return err
		},
	}
	configFlags(cmd, &file, &sets)
	return cmd
}

// finishedResults reads the stored results of the grid's finished runs.
func finishedResults(s *session, stderr io.Writer) ([]*runResult, error) {
	e, err := newFitEnv(s.cfg, s.ds, stderr)
	if err != nil {
		return nil, err
	}
	var out []*runResult
	for _, r := range s.specs {
		lossName, err := e.lossName(r.Setting)
		if err != nil {
			return nil, err
		}
		res, err := readRunResult(s.cfg, runID(e.key(r, lossName)))
		if err != nil {
			return nil, err
		}
		if res != nil {
			out = append(out, res)
		}
	}
	return out, nil
}

// resultSet is one --in directory of `train report`.
type resultSet struct {
	dir         string
	runs        *data.Table
	audit, post *data.Table
}

// loadResultSet reads a run directory: runs from runs/*.json (every finished
// run of every shard) or else runs.parquet; audit.parquet and
// posteriors.parquet when present.
func loadResultSet(dir string) (*resultSet, error) {
	rs := &resultSet{dir: dir}
	files, _ := filepath.Glob(filepath.Join(dir, "runs", "*.json"))
	var results []*runResult
	for _, f := range files {
		if strings.HasSuffix(f, ".failed.json") {
			continue
		}
		var r runResult
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &r)
		}
		if err != nil {
			return nil, fmt.Errorf("report: %s: %w", f, err)
		}
		results = append(results, &r)
	}
	switch {
	case len(results) > 0:
		slices.SortFunc(results, func(a, b *runResult) int { return strings.Compare(a.RunID, b.RunID) })
		rs.runs = runsTable(results)
	default:
		t, err := data.ReadTable(filepath.Join(dir, "runs.parquet"))
		if err != nil {
			return nil, fmt.Errorf("report: %s has no finished runs (runs/*.json or runs.parquet): %w", dir, err)
		}
		rs.runs = t
	}
	for _, x := range []struct {
		name string
		dst  **data.Table
	}{{"audit.parquet", &rs.audit}, {"posteriors.parquet", &rs.post}} {
		path := filepath.Join(dir, x.name)
		if !fileExists(path) {
			continue // not audited (yet)
		}
		t, err := data.ReadTable(path)
		if err != nil {
			return nil, err
		}
		*x.dst = t
	}
	return rs, nil
}

func newReportCmd(stdout io.Writer) *cobra.Command {
	var ins, compare []string
	var out string
	cmd := &cobra.Command{
		Use:   "report --in DIR [--in DIR2]... --out DIR [--compare A B]",
		Short: "Merge result sets; write summary.csv/.parquet, the paper's plots and report.md; compare two sets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(compare) != 0 && len(compare) != 2 {
				return fmt.Errorf("--compare takes two directories, got %d", len(compare))
			}
			if len(ins) == 0 && len(compare) == 0 {
				return fmt.Errorf("give at least one --in DIR (or --compare A B)")
			}
			return runReport(ins, compare, out, stdout)
		},
	}
	cmd.Flags().StringArrayVar(&ins, "in", nil, "a run directory (OUT of a config); repeatable: result sets are merged")
	cmd.Flags().StringVar(&out, "out", "", "directory for summary.csv, summary.parquet, report.md and figures/")
	cmd.Flags().StringSliceVar(&compare, "compare", nil, "two run directories A,B: ΔAUC and Δadvantage (B − A) with standard errors")
	cmd.MarkFlagRequired("out")
	return cmd
}

func mergeSets(sets []*resultSet) (*data.Table, []*data.Table, *data.Table, error) {
	var runs, posts []*data.Table
	var audits []*data.Table
	for _, s := range sets {
		runs = append(runs, s.runs)
		if s.audit != nil {
			audits = append(audits, s.audit)
		}
		if s.post != nil {
			posts = append(posts, s.post)
		}
	}
	r, err := report.Concat(runs...)
	if err != nil {
		return nil, nil, nil, err
	}
	var p *data.Table
	if len(posts) > 0 {
		if p, err = report.Concat(posts...); err != nil {
			return nil, nil, nil, err
		}
	}
	return r, audits, p, nil
}

func runReport(ins, compare []string, out string, stdout io.Writer) error {
	load := func(dirs []string) ([]*resultSet, error) {
		var sets []*resultSet
		for _, d := range dirs {
			s, err := loadResultSet(d)
			if err != nil {
				return nil, err
			}
			sets = append(sets, s)
		}
		return sets, nil
	}
	summarize := func(dirs []string) (*data.Table, *data.Table, error) {
		sets, err := load(dirs)
		if err != nil {
			return nil, nil, err
		}
		runs, audits, post, err := mergeSets(sets)
		if err != nil {
			return nil, nil, err
		}
		sum, err := report.Summarize(runs, audits)
		return sum, post, err
	}
	dirs := ins
	if len(dirs) == 0 {
		dirs = compare[1:]
	}
	summary, post, err := summarize(dirs)
	if err != nil {
		return err
	}
	md := report.Markdown{Title: "labelprivacy report", Summary: summary}
	if len(compare) == 2 {
		a, _, err := summarize(compare[:1])
		if err != nil {
			return err
		}
		b, _, err := summarize(compare[1:])
		if err != nil {
			return err
		}
		cmp, err := report.Compare(a, b)
		if err != nil {
			return err
		}
		if err := cmp.WriteCSV(filepath.Join(out, "compare.csv")); err != nil {
			return err
		}
		if err := cmp.WriteParquet(filepath.Join(out, "compare.parquet")); err != nil {
			return err
		}
		md.Comparison, md.CompareNames = cmp, [2]string{compare[0], compare[1]}
		printComparison(stdout, cmp)
	}
	if err := summary.WriteCSV(filepath.Join(out, "summary.csv")); err != nil {
		return err
	}
	if err := summary.WriteParquet(filepath.Join(out, "summary.parquet")); err != nil {
		return err
	}
	figs, err := report.WritePlots(filepath.Join(out, "figures"), summary, post)
	if err != nil {
		return err
	}
	md.Figures = figs
	if err := report.WriteMarkdown(filepath.Join(out, "report.md"), md); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %d settings, %s runs read, %s duplicates dropped; wrote %s\n", summary.Rows(),
		summary.Meta[report.MetaRunsRead], summary.Meta[report.MetaDuplicates], filepath.Join(out, "report.md"))
	return nil
}

// printComparison prints the settings whose difference exceeds 2 SE.
func printComparison(w io.Writer, cmp *data.Table) {
	col := func(name string) any {
		for _, c := range cmp.Columns {
			if c.Name == name {
				return c.Values
			}
		}
		return nil
	}
	setting, _ := col("setting").([]string)
	sig, _ := col("significant").([]bool)
	dAUC, _ := col("d_auc").([]float64)
	dSE, _ := col("d_auc_se").([]float64)
	n := 0
	for i := range setting {
		if i < len(sig) && sig[i] {
			fmt.Fprintf(w, "compare: %-22s ΔAUC %+.4f ± %.4f  (> 2 SE)\n", setting[i], dAUC[i], dSE[i])
			n++
		}
	}
	fmt.Fprintf(w, "compare: %d of %d settings differ by more than 2 SE\n", n, len(setting))
}
