package pipeline

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"

	"labelprivacy/config"
	"labelprivacy/model"
)

// BenchOptions configure Bench (`train bench`): the group trainer on
// synthetic rows of a model's shape.
type BenchOptions struct {
	Backend  string     // go | go:<options> | xla:cpu | xla:cuda
	Model    model.Kind // higgs_mlp (the default) | mlp | kdd_embed
	Features int        // dense features of mlp and higgs_mlp (default 28: Higgs)
	Losses   []string   // loss names (default bce, debiased_bce, propmatch)
	Replicas []int      // group sizes R (default 1, 8, 64)
	Batch    int        // rows per model and step (default 1024)
	BagSize  int        // per-bag losses (default 64)
	Steps    int        // steps per group; the first is not timed (default 20)
	// Groups is how many independent groups of each R train at once, each
	// on its own backend, sharing the cores as train fit's concurrent groups
	// do (train.concurrent_groups); default 1. The row's rates are the
	// aggregate of all of them.
	Groups int
	// SparseEmbedding: kdd_embed's lazy Adam on the rows a step touches.
	SparseEmbedding bool
	// Warn, when set, receives the warning that backend go runs GoMLX's own
	// slow kernel because sgemm's hook refused to install (once per process).
	Warn func(msg string)
	// CPUProfile, when set, is a file to write a CPU profile of the
	// measured groups to (go tool pprof).
	CPUProfile string
}

// BackendEnv is what the environment must hold for a backend (go-xla's
// CUDA checks off for a CUDA plugin), for a program to set before Open or
// Bench unless its user did: pipeline itself never changes the
// environment.
func BackendEnv(backend string) map[string]string { return model.BackendEnv(backend) }

// Bench measures the trainer on o's backend and writes a table to w: per
// (loss, R) the aggregate steady-state examples/s, per-model examples/s,
// CPU µs per example (robust to other load on the machine), compile time,
// the state size and the groups trained at once (o.Groups); its first line
// says the backend and which matrix-product path runs.
func Bench(ctx context.Context, o BenchOptions, w io.Writer) error {
	cfg := model.BenchConfig{Model: model.ModelConfig{Kind: o.Model, InputDim: o.Features}, Replicas: o.Replicas,
		Batch: o.Batch, BagSize: o.BagSize, Steps: o.Steps, SparseEmbedding: o.SparseEmbedding}
	if cfg.Model.Kind == 0 {
		cfg.Model.Kind = model.KindHiggsMLP
	}
	if cfg.Model.Kind != model.KindKDDEmbed && cfg.Model.InputDim == 0 {
		cfg.Model.InputDim = 28
	}
	if len(o.Losses) == 0 {
		o.Losses = []string{"bce", "debiased_bce", "propmatch"}
	}
	for _, s := range o.Losses {
		l, err := model.ParseLoss(strings.TrimSpace(s))
		if err != nil {
			return &config.FieldError{Key: "losses", Msg: err.Error()}
		}
		cfg.Losses = append(cfg.Losses, l)
	}
	if len(cfg.Replicas) == 0 {
		cfg.Replicas = []int{1, 8, 64}
	}
	if o.Groups < 0 {
		return &config.FieldError{Key: "groups", Msg: fmt.Sprintf("must be ≥ 1, got %d", o.Groups)}
	}
	be, err := model.NewBackend(o.Backend)
	if err != nil {
		return &config.FieldError{Key: "backend", Msg: err.Error()}
	}
	defer be.Finalize()
	for range o.Groups - 1 {
		more, err := model.NewBackend(o.Backend)
		if err != nil {
			return &config.FieldError{Key: "backend", Msg: err.Error()}
		}
		defer more.Finalize()
		cfg.Alongside = append(cfg.Alongside, more)
	}
	if msg := model.FallbackNotice(be); msg != "" && o.Warn != nil {
		o.Warn(msg)
	}
	fmt.Fprintf(w, "backend %s, matmul %s", o.Backend, model.Matmul(be))
	if note := model.MatmulNote(); note != "" && model.Matmul(be) == model.MatmulSimplego {
		fmt.Fprintf(w, " (sgemm not installed: %s)", note)
	}
	fmt.Fprintf(w, "\n%-10s %-13s %5s %6s %10s %14s %16s %13s %11s %6s\n", "model", "loss", "R", "batch", "compile_s",
		"examples_per_s", "per_model_ex_s", "cpu_us_per_ex", "state_MiB", "groups")
	cfg.Row = func(r model.BenchRow) {
		fmt.Fprintf(w, "%-10s %-13s %5d %6d %10.2f %14.0f %16.0f %13.1f %11.1f %6d\n", r.Model, r.Loss, r.Replicas, r.Batch,
			r.CompileS, r.ExamplesPerS, r.PerReplicaExamplesPerS, r.CPUPerExampleUs, float64(r.StateBytes)/(1<<20), r.Groups)
	}
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return &config.FieldError{Key: "cpuprofile", Msg: err.Error()}
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return &config.FieldError{Key: "cpuprofile", Msg: err.Error()}
		}
		defer pprof.StopCPUProfile()
	}
	_, err = model.Bench(ctx, be, cfg)
	return err
}
