package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"labelprivacy/model"
)

// newBenchCmd measures the replica trainer: aggregate steady-state
// examples/s and compile time per (loss, R), on any backend (issue 11's
// table; `train bench --backend xla:cuda` on a GPU).
func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var backend, kind, losses, replicas, cpuProfile string
	var cfg model.BenchConfig
	cmd := &cobra.Command{
		Use:   "bench [--backend go] [--model higgs_mlp] [--losses bce,debiased_bce,propmatch] [--replicas 1,8,64]",
		Short: "Benchmark the trainer: aggregate examples/s and compile time per loss and group size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := model.ParseKind(kind)
			if err != nil {
				return fmt.Errorf("--model: %w", err)
			}
			cfg.Model = model.ModelConfig{Kind: k, InputDim: 28}
			for _, s := range strings.Split(losses, ",") {
				l, err := model.ParseLoss(s)
				if err != nil {
					return fmt.Errorf("--losses: %w", err)
				}
				cfg.Losses = append(cfg.Losses, l)
			}
			for _, s := range strings.Split(replicas, ",") {
				r, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || r < 1 {
					return fmt.Errorf("--replicas: %q is not a whole number ≥ 1", s)
				}
				cfg.Replicas = append(cfg.Replicas, r)
			}
			applyBackendEnv(backend, stderr)
			be, err := model.NewBackend(backend)
			if err != nil {
				return fmt.Errorf("--backend: %w", err)
			}
			defer be.Finalize()
			fmt.Fprintf(stdout, "backend %s, matmul %s", backend, model.Matmul(be))
			if note := model.MatmulNote(); note != "" && model.Matmul(be) == model.MatmulSimplego {
				fmt.Fprintf(stdout, " (sgemm not installed: %s)", note)
			}
			fmt.Fprintln(stdout)
			fmt.Fprintf(stdout, "%-10s %-13s %5s %6s %10s %14s %16s %13s %11s\n", "model", "loss", "R", "batch", "compile_s", "examples_per_s", "per_model_ex_s", "cpu_us_per_ex", "state_MiB")
			cfg.Row = func(r model.BenchRow) {
				fmt.Fprintf(stdout, "%-10s %-13s %5d %6d %10.2f %14.0f %16.0f %13.1f %11.1f\n", r.Model, r.Loss, r.Replicas, r.Batch,
					r.CompileS, r.ExamplesPerS, r.PerReplicaExamplesPerS, r.CPUPerExampleUs, float64(r.StateBytes)/(1<<20))
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
				defer pprof.StopCPUProfile()
			}
			_, err = model.Bench(cmd.Context(), be, cfg)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&backend, "backend", "go", "go | xla:cpu | xla:cuda")
	f.StringVar(&kind, "model", "higgs_mlp", "higgs_mlp | mlp | kdd_embed")
	f.StringVar(&losses, "losses", "bce,debiased_bce,propmatch", "losses to measure")
	f.StringVar(&replicas, "replicas", "1,8,64", "group sizes R")
	f.IntVar(&cfg.Batch, "batch", 1024, "rows per model and step")
	f.IntVar(&cfg.BagSize, "k", 64, "bag size of per-bag losses")
	f.IntVar(&cfg.Steps, "steps", 20, "steps per group (the first is not timed)")
	f.BoolVar(&cfg.SparseEmbedding, "sparse", true, "kdd_embed: lazy Adam on the touched rows")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the measured groups to this file (go tool pprof)")
	return cmd
}

// applyBackendEnv sets the environment a backend needs (model.BackendEnv:
// go-xla's CUDA checks off for CUDA plugins) unless the user set it, saying
// so on stderr: the one place this program changes its environment.
func applyBackendEnv(backend string, stderr io.Writer) {
	for k, v := range model.BackendEnv(backend) {
		if _, set := os.LookupEnv(k); !set {
			os.Setenv(k, v)
			fmt.Fprintf(stderr, "train: %s=%s for backend %s (set it to override)\n", k, v, backend)
		}
	}
}
