package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"labelprivacy/data"
)

func newDataCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "data", Short: "Import or synthesize datasets (Arrow IPC + meta.json)"}
	imp := &cobra.Command{Use: "import", Short: "Import a dataset (higgs | libsvm)"}
	imp.AddCommand(newImportCmd("higgs", stdout, stderr), newImportCmd("libsvm", stdout, stderr))
	cmd.AddCommand(imp, newSynthCmd(stdout))
	return cmd
}

// importStatus formats an import's progress: rows, MB read and MB/s, and,
// when the input's size is known, the percentage and an ETA from the
// position in the (possibly compressed) input.
func importStatus(kind string, p data.ImportProgress, elapsed time.Duration) string {
	mb := float64(p.Bytes) / 1e6
	s := fmt.Sprintf("import %s: %d rows, %.0f MB (%.0f MB/s)", kind, p.Rows, mb, mb/max(elapsed.Seconds(), 1e-9))
	if p.InputSize > 0 && p.InputPos > 0 {
		frac := float64(p.InputPos) / float64(p.InputSize)
		eta := time.Duration(float64(elapsed) * (1 - frac) / frac)
		s = fmt.Sprintf("import %s: %.1f%% ETA %s, %d rows, %.0f MB (%.0f MB/s)", kind, 100*frac, roundDur(eta), p.Rows, mb, mb/max(elapsed.Seconds(), 1e-9))
	}
	if p.Dropped > 0 {
		s += fmt.Sprintf(", %d dropped", p.Dropped)
	}
	return s
}

func newImportCmd(kind string, stdout, stderr io.Writer) *cobra.Command {
	var o data.ImportOptions
	var buckets uint32
	cmd := &cobra.Command{
		Use:  kind + " --in FILE --out DIR",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			status := newStatusLine(stderr)
			start := time.Now()
			o.Progress = func(p data.ImportProgress) { status.show(importStatus(kind, p, time.Since(start))) }
			var m *data.Meta
			var err error
			if kind == "higgs" {
				m, err = data.ImportHiggs(cmd.Context(), o)
			} else {
				if buckets == 0 {
					return fmt.Errorf("--hash-buckets must be ≥ 1 (the paper's KDD Cup 2012 setting: %d)", data.DefaultHashBuckets)
				}
				o.HashBuckets = buckets
				m, err = data.ImportLibSVM(cmd.Context(), o)
			}
			status.clear()
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "data: wrote %s (train %d rows, test %d rows, dropped %d) in %s\n",
				o.Out, m.TrainRows, m.TestRows, m.DroppedRows, time.Since(start).Round(time.Millisecond))
			if m.NonBinaryValues > 0 {
				fmt.Fprintf(stdout, "data: note: %d feature values were neither 0 nor 1 and were kept as presence\n", m.NonBinaryValues)
			}
			if m.DuplicateIndices > 0 {
				fmt.Fprintf(stdout, "data: note: %d repeated feature indices within a row were dropped\n", m.DuplicateIndices)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.In, "in", "", "input file (plain, .gz or .bz2)")
	f.StringVar(&o.Out, "out", "", "dataset directory to write")
	f.Int64Var(&o.TestRows, "test-rows", 10000, "the first N rows form the test set (the paper: 10,000)")
	f.BoolVar(&o.DropInvalid, "drop-invalid", false, "drop rows with NaN/Inf or out-of-range values (counted) instead of failing")
	if kind == "higgs" {
		cmd.Short = "Import the UCI HIGGS.csv[.gz] (label first, 28 features)"
	} else {
		cmd.Short = "Import a libsvm file (KDD Cup 2012), hashing feature indices"
		f.StringVar(&o.TestIn, "test", "", "separate test file (then --test-rows, if set, takes its first rows)")
		f.Uint32Var(&buckets, "hash-buckets", data.DefaultHashBuckets, "hash buckets for feature indices")
	}
	cmd.MarkFlagRequired("in")
	cmd.MarkFlagRequired("out")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if kind == "libsvm" && o.TestIn != "" && !cmd.Flags().Changed("test-rows") {
			o.TestRows = 0 // the whole --test file
		}
		return nil
	}
	return cmd
}

func newSynthCmd(stdout io.Writer) *cobra.Command {
	var o data.SynthOptions
	var kind string
	cmd := &cobra.Command{
		Use:   "synth --out DIR --kind logistic|beta|uniform --rows N --seed S",
		Short: "Synthesize a dataset with known η(x) = P(y=1|x)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := data.ParseSynthKind(kind)
			if err != nil {
				return fmt.Errorf("--kind: %w", err)
			}
			o.Kind = k
			m, err := data.Synth(cmd.Context(), o)
			if err != nil {
				return err
			}
			note := ""
			if m.BayesAUC != nil {
				note = fmt.Sprintf(", Bayes AUC %.4f", *m.BayesAUC)
			}
			fmt.Fprintf(stdout, "data: wrote %s (%s, train %d rows, test %d rows, %d features%s)\n",
				o.Out, m.Kind, m.TrainRows, m.TestRows, len(m.Features), note)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Out, "out", "", "dataset directory to write")
	f.StringVar(&kind, "kind", "logistic", "logistic | beta | uniform")
	f.IntVar(&o.Rows, "rows", 0, "training rows")
	f.IntVar(&o.TestRows, "test-rows", 10000, "test rows")
	f.IntVar(&o.Features, "features", 28, "dense features")
	f.IntVar(&o.Groups, "groups", 0, "add an integer key column `group`: x0 in this many equiprobable bins (0: none)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of every random choice")
	cmd.MarkFlagRequired("out")
	cmd.MarkFlagRequired("rows")
	return cmd
}
