package main

import (
	"github.com/spf13/cobra"

	"labelprivacy/pipeline"
)

func newDataCmd(ev pipeline.Events) *cobra.Command {
	cmd := &cobra.Command{Use: "data", Short: "Import or synthesize datasets (Arrow IPC + meta.json)"}
	imp := &cobra.Command{Use: "import", Short: "Import a dataset (higgs | libsvm)"}
	imp.AddCommand(newImportCmd("higgs", ev), newImportCmd("libsvm", ev))
	cmd.AddCommand(imp, newSynthCmd(ev))
	return cmd
}

// datasetCmd makes the dataset o describes.
func datasetCmd(o *pipeline.DatasetOptions, ev pipeline.Events) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		_, err := pipeline.MakeDataset(cmd.Context(), *o, ev)
		return flagError(err, nil)
	}
}

func newImportCmd(kind string, ev pipeline.Events) *cobra.Command {
	o := pipeline.NewDatasetOptions(kind)
	cmd := &cobra.Command{Use: kind + " --in FILE --out DIR", Args: cobra.NoArgs, RunE: datasetCmd(&o, ev)}
	f := cmd.Flags()
	f.StringVar(&o.Import.In, "in", "", "input file (plain, .gz or .bz2)")
	f.StringVar(&o.Import.Out, "out", "", "dataset directory to write")
	f.Int64Var(&o.Import.TestRows, "test-rows", o.Import.TestRows, "the first N rows form the test set (the paper: 10,000)")
	f.BoolVar(&o.Import.DropInvalid, "drop-invalid", false, "drop rows with NaN/Inf or out-of-range values (counted) instead of failing")
	if kind == "higgs" {
		cmd.Short = "Import the UCI HIGGS.csv[.gz] (label first, 28 features)"
	} else {
		cmd.Short = "Import a libsvm file (KDD Cup 2012), hashing feature indices"
		f.StringVar(&o.Import.TestIn, "test", "", "separate test file (then --test-rows, if set, takes its first rows)")
		f.Uint32Var(&o.Import.HashBuckets, "hash-buckets", o.Import.HashBuckets, "hash buckets for feature indices")
		f.IntVar(&o.Import.Classes, "classes", 0, "labels are the classes 0..C−1 (2 ≤ C ≤ 64; default: binary 0/1, ±1)")
	}
	cmd.MarkFlagRequired("in")
	cmd.MarkFlagRequired("out")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if kind == "libsvm" && o.Import.TestIn != "" && !cmd.Flags().Changed("test-rows") {
			o.Import.TestRows = 0 // the whole --test file
		}
		return nil
	}
	return cmd
}

func newSynthCmd(ev pipeline.Events) *cobra.Command {
	o := pipeline.NewDatasetOptions("synth")
	cmd := &cobra.Command{
		Use:   "synth --out DIR --kind logistic|beta|uniform|multiclass|conversions [--classes C | --trigger-data T --windows W] --rows N --seed S",
		Short: "Synthesize a dataset with known η(x) = P(y=1|x) (multiclass, conversions: η_c(x) = P(y=c|x))",
		Args:  cobra.NoArgs,
		RunE:  datasetCmd(&o, ev),
	}
	s := &o.Synth
	f := cmd.Flags()
	f.StringVar(&s.Out, "out", "", "dataset directory to write")
	f.TextVar(&s.Kind, "kind", s.Kind, "logistic | beta | uniform | multiclass | conversions")
	f.IntVar(&s.Classes, "classes", 0, "multiclass: label classes C, 2..64")
	f.IntVar(&s.TriggerData, "trigger-data", 0, "conversions: trigger-data values T (classes 1 + T·W ≤ 64: 0 no report, 1 + t·W + w a report of t in window w)")
	f.IntVar(&s.Windows, "windows", 0, "conversions: reporting windows W")
	f.Float64Var(&s.ConversionRate, "conversion-rate", 0, "conversions: share of rows that convert, in (0, 1) (0: data.DefaultConversionRate, 0.05)")
	f.IntVar(&s.Rows, "rows", 0, "training rows")
	f.IntVar(&s.TestRows, "test-rows", s.TestRows, "test rows")
	f.IntVar(&s.Features, "features", s.Features, "dense features")
	f.IntVar(&s.Groups, "groups", 0, "add an integer key column `group`: x0 in this many equiprobable bins (0: none)")
	f.Uint64Var(&s.Seed, "seed", s.Seed, "seed of every random choice")
	cmd.MarkFlagRequired("out")
	cmd.MarkFlagRequired("rows")
	return cmd
}
