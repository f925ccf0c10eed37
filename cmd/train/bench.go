package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"labelprivacy/pipeline"
)

// newBenchCmd measures the group trainer: aggregate steady-state examples/s,
// CPU per example and compile time per (loss, R), on any backend (`train
// bench --backend xla:cuda` on a GPU).
func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var o pipeline.BenchOptions
	cmd := &cobra.Command{
		Use:   "bench [--backend go] [--model higgs_mlp] [--losses bce,debiased_bce,propmatch] [--replicas 1,8,64]",
		Short: "Benchmark the trainer: aggregate examples/s, CPU per example and compile time per loss and group size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			applyBackendEnv(o.Backend, stderr)
			o.Warn = func(msg string) { fmt.Fprintf(stderr, "train: warning: %s\n", msg) }
			return flagError(pipeline.Bench(cmd.Context(), o, stdout), nil)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Backend, "backend", "go", "go | go:matmul=avx512|avx2|simplego | xla:cpu | xla:cuda")
	if err := o.Model.UnmarshalText([]byte("higgs_mlp")); err != nil {
		panic(err) // programmer bug: the default model name
	}
	f.TextVar(&o.Model, "model", o.Model, "higgs_mlp | mlp | kdd_embed")
	f.IntVar(&o.Features, "features", 28, "dense features of mlp and higgs_mlp (Higgs: 28)")
	f.StringSliceVar(&o.Losses, "losses", []string{"bce", "debiased_bce", "propmatch"}, "losses to measure")
	f.IntSliceVar(&o.Replicas, "replicas", []int{1, 8, 64}, "group sizes R")
	f.IntVar(&o.Batch, "batch", 1024, "rows per model and step")
	f.IntVar(&o.BagSize, "k", 64, "bag size of per-bag losses")
	f.IntVar(&o.Steps, "steps", 20, "steps per group (the first is not timed)")
	f.IntVar(&o.Groups, "groups", 1, "independent groups of each R trained at once, sharing the cores as train fit does (train.concurrent_groups); rates are their aggregate")
	f.BoolVar(&o.SparseEmbedding, "sparse", true, "kdd_embed: lazy Adam on the touched rows")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the measured groups to this file (go tool pprof)")
	return cmd
}

// applyBackendEnv sets the environment a backend needs
// (pipeline.BackendEnv: go-xla's CUDA checks off for CUDA plugins) unless
// the user set it, saying so on stderr: the one place this program changes
// its environment.
func applyBackendEnv(backend string, stderr io.Writer) {
	for k, v := range pipeline.BackendEnv(backend) {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
			fmt.Fprintf(stderr, "train: %s=%s for backend %s (set it to override)\n", k, v, backend)
		}
	}
}
