package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"labelprivacy/data"
)

// shard is the i-th of n disjoint parts of a sweep: run j belongs to shard
// j mod n, so shards partition the runs exactly.
type shard struct{ I, N int }

func (s shard) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

func (s shard) owns(j int) bool { return j%s.N == s.I }

func parseShard(v string) (shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return shard{}, fmt.Errorf("shard %q: want i/n with 0 ≤ i < n", v)
	}
	return shard{i, n}, nil
}

// resolveShard picks the shard: --shard wins; then a Slurm array task
// (SLURM_ARRAY_TASK_ID − SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT);
// then a Kubernetes Indexed Job (JOB_COMPLETION_INDEX of JOB_COMPLETIONS,
// which the emitted manifest sets); else the whole sweep (0/1).
func resolveShard(flag string, lookup env) (shard, string, error) {
	if flag != "" {
		s, err := parseShard(flag)
		return s, "--shard", err
	}
	get := func(k string) (int, bool, error) {
		v, ok := lookup(k)
		if !ok || v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, true, fmt.Errorf("$%s=%q is not an integer", k, v)
		}
		return n, true, nil
	}
	if id, ok, err := get("SLURM_ARRAY_TASK_ID"); ok || err != nil {
		if err != nil {
			return shard{}, "", err
		}
		count, okc, err := get("SLURM_ARRAY_TASK_COUNT")
		if err != nil || !okc {
			return shard{}, "", fmt.Errorf("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not (%v)", err)
		}
		lo, _, err := get("SLURM_ARRAY_TASK_MIN")
		if err != nil {
			return shard{}, "", err
		}
		s, err := parseShard(fmt.Sprintf("%d/%d", id-lo, count))
		return s, "Slurm array task", err
	}
	if idx, ok, err := get("JOB_COMPLETION_INDEX"); ok || err != nil {
		if err != nil {
			return shard{}, "", err
		}
		count, okc, err := get("JOB_COMPLETIONS")
		if err != nil || !okc {
			return shard{}, "", fmt.Errorf("JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (%v); set it to the Job's completions", err)
		}
		s, err := parseShard(fmt.Sprintf("%d/%d", idx, count))
		return s, "Kubernetes indexed job", err
	}
	return shard{0, 1}, "default", nil
}

// failedPath marks a run that failed (its error, for `sweep status`).
func failedPath(cfg *Config, id string) string { return filepath.Join(runsDir(cfg), id+".failed.json") }

type runFailure struct {
	RunID   string `json:"run_id"`
	Setting string `json:"setting"`
	LR      jfloat `json:"lr"`
	Trial   int    `json:"trial"`
	Error   string `json:"error"`
}

func newSweepCmd(stdout, stderr io.Writer, lookup env) *cobra.Command {
	var file, shardFlag string
	var sets []string
	cmd := &cobra.Command{
		Use:   "sweep -c FILE [--shard i/n] [--set key=value]...",
		Short: "Train this shard's part of the grid (skipping finished runs); status; emit Slurm/Kubernetes jobs",
		Long: `sweep trains the runs of one shard of the config's grid (PET settings × learning
rates × trials). Each finished run writes OUT/runs/<run_id>.json atomically; a rerun skips
finished runs, and a run killed mid-training resumes from its checkpoint. Shards partition
the runs exactly and may run concurrently on one shared filesystem.

The shard comes from --shard i/n, else a Slurm array task (SLURM_ARRAY_TASK_ID,
SLURM_ARRAY_TASK_COUNT), else a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, JOB_COMPLETIONS).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sh, from, err := resolveShard(shardFlag, lookup)
			if err != nil {
				return err
			}
			return runSweep(cmd.Context(), file, sets, sh, from, stdout, stderr, lookup)
		},
	}
	cmd.Flags().StringVarP(&file, "config", "c", "", "config file (YAML)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key (repeatable)")
	cmd.Flags().StringVar(&shardFlag, "shard", "", "this process's shard i/n (0 ≤ i < n)")
	cmd.MarkFlagRequired("config")
	cmd.AddCommand(newSweepStatusCmd(stdout, lookup), newEmitCmd(stdout, lookup))
	return cmd
}

func runSweep(ctx context.Context, file string, sets []string, sh shard, from string, stdout, stderr io.Writer, lookup env) error {
	s, err := openSession(ctx, file, sets, stdout, lookup)
	if err != nil {
		return err
	}
	var mine []runSpec
	for j, r := range s.specs {
		if sh.owns(j) {
			mine = append(mine, r)
		}
	}
	fmt.Fprintf(stdout, "sweep: shard %s (%s): %d of %d runs\n", sh, from, len(mine), len(s.specs))
	if len(mine) == 0 {
		return nil
	}
	e, err := newFitEnv(s.cfg, s.ds, stderr)
	if err != nil {
		return err
	}
	if _, err := e.backendOnce(); err != nil { // fail before any work
		return err
	}
	if err := releaseStage(ctx, s.cfg, s.ds, mine, stdout); err != nil {
		return err
	}
	e.keepGoing = true
	_, err = fitStage(ctx, e, mine, stdout)
	return err
}

// sweepStatus counts done, failed and missing runs of the grid.
type sweepStatus struct {
	Done, Failed, Missing int
	BySetting             map[string][3]int // done, failed, missing
	Order                 []string
}

func statusOf(cfg *Config, settings []petSetting, specs []runSpec, e *fitEnv) (*sweepStatus, error) {
	st := &sweepStatus{BySetting: map[string][3]int{}}
	for _, s := range settings {
		st.Order = append(st.Order, s.ID())
	}
	for _, r := range specs {
		lossName, err := e.lossName(r.Setting)
		if err != nil {
			return nil, err
		}
		id := runID(e.key(r, lossName))
		c := st.BySetting[r.Setting.ID()]
		switch done, err := readRunResult(cfg, id); {
		case err != nil:
			return nil, err
		case done != nil:
			st.Done++
			c[0]++
		case fileExists(failedPath(cfg, id)):
			st.Failed++
			c[1]++
		default:
			st.Missing++
			c[2]++
		}
		st.BySetting[r.Setting.ID()] = c
	}
	return st, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func newSweepStatusCmd(stdout io.Writer, lookup env) *cobra.Command {
	var file string
	var sets []string
	cmd := &cobra.Command{
		Use:   "status -c FILE",
		Short: "Count done, failed and missing runs of a sweep",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(file, sets, lookup)
			if err != nil {
				return err
			}
			settings, err := expandPets(cfg.Pets)
			if err != nil {
				return err
			}
			ds, err := statusDataset(cfg)
			if err != nil {
				return err
			}
			e, err := newFitEnv(cfg, ds, io.Discard)
			if err != nil {
				return err
			}
			st, err := statusOf(cfg, settings, expandRuns(cfg, settings), e)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-24s %6s %6s %8s\n", "setting", "done", "failed", "missing")
			for _, id := range st.Order {
				c := st.BySetting[id]
				fmt.Fprintf(stdout, "%-24s %6d %6d %8d\n", id, c[0], c[1], c[2])
			}
			fmt.Fprintf(stdout, "%-24s %6d %6d %8d\n", "total", st.Done, st.Failed, st.Missing)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "config", "c", "", "config file (YAML)")
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key (repeatable)")
	cmd.MarkFlagRequired("config")
	return cmd
}

// statusDataset reads only what run ids depend on: the dataset's meta and
// the training file's schema (not its rows), without synthesizing anything.
func statusDataset(cfg *Config) (*data.Dataset, error) {
	dir := cfg.Data.Path
	if dir == "" {
		dir = filepath.Join(cfg.Output, "data")
	}
	m, err := data.ReadMeta(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("sweep status: no dataset at %s yet (no shard has started): %w", dir, err)
	}
	if err != nil {
		return nil, err
	}
	train, err := data.ReadSchema(filepath.Join(dir, data.TrainFile))
	if err != nil {
		return nil, err
	}
	return &data.Dataset{Dir: dir, Meta: m, Train: train}, nil
}

func recordFailure(cfg *Config, id string, r runSpec, runErr error) error {
	b, err := json.MarshalIndent(runFailure{RunID: id, Setting: r.Setting.ID(), LR: jfloat(r.LR), Trial: r.Trial, Error: runErr.Error()}, "", "  ")
	if err != nil {
		return err
	}
	return data.WriteFileAtomic(failedPath(cfg, id), append(b, '\n'))
}
