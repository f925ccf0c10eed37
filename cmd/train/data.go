package main

import (
	"github.com/spf13/cobra"

	"labelprivacy/pipeline"
)

func newDataCmd(ev pipeline.Events) *cobra.Command {
	cmd := &cobra.Command{Use: "data", Short: "Import or synthesize datasets (Arrow IPC + meta.json)"}
	imp := &cobra.Command{Use: "import", Short: "Import a dataset (higgs | libsvm | csv)"}
	imp.AddCommand(newImportCmd("higgs", ev), newImportCmd("libsvm", ev), newImportCmd("csv", ev))
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
	switch kind {
	case "higgs":
		cmd.Short = "Import the UCI HIGGS.csv[.gz] (label first, 28 features)"
	case "libsvm":
		cmd.Short = "Import a libsvm file (KDD Cup 2012), hashing feature indices"
		f.StringVar(&o.Import.TestIn, "test", "", "separate test file (then --test-rows, if set, takes its first rows)")
		f.Uint32Var(&o.Import.HashBuckets, "hash-buckets", o.Import.HashBuckets, "hash buckets for feature indices")
		f.IntVar(&o.Import.Classes, "classes", 0, "labels are the classes 0..C−1 (2 ≤ C ≤ 64; default: binary 0/1, ±1)")
		valueFlags(cmd, &o)
	case "csv":
		cmd.Short = "Import a csv file with a header line: --label names the label column, the others are dense features"
		f.StringVar(&o.Import.LabelColumn, "label", "", "the label column's header name")
		f.IntVar(&o.Import.Classes, "classes", 0, "labels are the classes 0..C−1 (2 ≤ C ≤ 64; default: binary 0/1, ±1)")
		valueFlags(cmd, &o)
		cmd.MarkFlagRequired("label")
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
		Use:   "synth --out DIR --kind logistic|beta|uniform|multiclass|conversions|values [--classes C | --trigger-data T --windows W | --value-max B] --rows N --seed S",
		Short: "Synthesize a dataset with known η(x) = P(y=1|x) (multiclass, conversions: η_c(x) = P(y=c|x); values: a zero-inflated log-normal per row)",
		Args:  cobra.NoArgs,
		RunE:  datasetCmd(&o, ev),
	}
	s := &o.Synth
	f := cmd.Flags()
	f.StringVar(&s.Out, "out", "", "dataset directory to write")
	f.TextVar(&s.Kind, "kind", s.Kind, "logistic | beta | uniform | multiclass | conversions | values")
	f.IntVar(&s.Classes, "classes", 0, "multiclass: label classes C, 2..64")
	f.IntVar(&s.TriggerData, "trigger-data", 0, "conversions: trigger-data values T (classes 1 + T·W ≤ 64: 0 no report, 1 + t·W + w a report of t in window w)")
	f.IntVar(&s.Windows, "windows", 0, "conversions: reporting windows W")
	f.Float64Var(&s.ConversionRate, "conversion-rate", 0, "conversions: share of rows that convert, in (0, 1) (0: data.DefaultConversionRate, 0.05)")
	f.IntVar(&s.Rows, "rows", 0, "training rows")
	f.IntVar(&s.TestRows, "test-rows", s.TestRows, "test rows")
	f.IntVar(&s.Features, "features", s.Features, "dense features")
	f.IntVar(&s.Groups, "groups", 0, "add an integer key column `group`: x0 in this many equiprobable bins (0: none)")
	f.Float64Var(&s.ValueMax, "value-max", 0, "values: the grid's B (0: 400)")
	f.Float64Var(&s.ValueStep, "value-step", 0, "values: the grid's step (0: 1)")
	f.Float64Var(&s.ZeroRate, "zero-rate", 0, "values: the share of zero values, in (0, 1) (0: 0.9)")
	f.Uint64Var(&s.Seed, "seed", s.Seed, "seed of every random choice")
	cmd.MarkFlagRequired("out")
	cmd.MarkFlagRequired("rows")
	return cmd
}

// valueFlags adds the flags of an import of conversion values: --value-max
// B (labels are values when it is set) and --value-step.
func valueFlags(cmd *cobra.Command, o *pipeline.DatasetOptions) {
	f := cmd.Flags()
	var step float64
	f.Float64Var(&o.Import.Values.Max, "value-max", 0, "labels are conversion values on the grid [0, B]: clipped to B and rounded to --value-step (0: classes)")
	f.Float64Var(&step, "value-step", 1, "the values' grid step (with --value-max)")
	pre := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		if o.Import.Values.Max != 0 {
			o.Import.Values.Step = step
		}
		if pre != nil {
			return pre(cmd, args)
		}
		return nil
	}
}
