package main

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// version is the tool version recorded in outputs.
const version = "labelprivacy 0.1.0"

// run executes the CLI with args, writing results to stdout and progress and
// diagnostics to stderr.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	root := newRootCmd(stdout, os.Stderr, os.LookupEnv)
	root.SetArgs(append([]string{}, args...)) // non-nil: cobra falls back to os.Args on nil
	return root.ExecuteContext(ctx)
}

// env is the environment lookup (os.LookupEnv, or a map in tests).
type env func(string) (string, bool)

func newRootCmd(stdout, stderr io.Writer, lookup env) *cobra.Command {
	root := &cobra.Command{
		Use:   "train",
		Short: "Measure what label-privacy mechanisms cost and protect",
		Long: `train runs the labelprivacy pipeline from a config file: data, privatized
labels (RR, LLP, LLP+Laplace, LLP+Geometric), training, audit and reports.

With no arguments it runs the embedded default config (configs/quickstart.yaml).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPipeline(cmd.Context(), "", nil, stdout, stderr, lookup)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newRunCmd(stdout, stderr, lookup), newDataCmd(stdout, stderr), newPrivatizeCmd(stdout), newFitCmd(stdout, stderr, lookup),
		newAuditCmd(stdout, stderr, lookup), newSweepCmd(stdout, stderr, lookup), newReportCmd(stdout), newVersionCmd(stdout))
	return root
}

func newRunCmd(stdout, stderr io.Writer, lookup env) *cobra.Command {
	var file string
	var sets []string
	cmd := &cobra.Command{
		Use:   "run [-c FILE] [--set key=value]...",
		Short: "Run every stage of the pipeline for a config",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPipeline(cmd.Context(), file, sets, stdout, stderr, lookup)
		},
	}
	cmd.Flags().StringVarP(&file, "config", "c", "", "config file (YAML); default: the embedded configs/quickstart.yaml")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key, e.g. --set train.epochs=3 (repeatable; values are YAML)")
	return cmd
}

func newVersionCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the tool version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { io.WriteString(stdout, version+"\n") },
	}
}
