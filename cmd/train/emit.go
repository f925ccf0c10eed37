package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"labelprivacy/data"
)

// ClusterConfig holds the resources of emitted batch jobs.
type ClusterConfig struct {
	CPUsPerTask int    `mapstructure:"cpus_per_task" yaml:"cpus_per_task"` // Slurm --cpus-per-task, Kubernetes cpu request
	Mem         string `mapstructure:"mem" yaml:"mem"`                     // e.g. 8G (Slurm --mem; Kubernetes 8Gi)
	Time        string `mapstructure:"time" yaml:"time"`                   // Slurm --time, e.g. 04:00:00
	Partition   string `mapstructure:"partition" yaml:"partition"`         // Slurm --partition (empty: the default)
	GPUs        int    `mapstructure:"gpus" yaml:"gpus"`                   // GPUs per task (Slurm --gres=gpu:N; nvidia.com/gpu)
	Image       string `mapstructure:"image" yaml:"image"`                 // Kubernetes container image holding the train binary
	Binary      string `mapstructure:"binary" yaml:"binary"`               // train binary path on the nodes; empty: this executable (Slurm), "train" (Kubernetes)
	Workdir     string `mapstructure:"workdir" yaml:"workdir"`             // working directory of the tasks; empty: the current directory (Slurm), /work (Kubernetes)
}

func newEmitCmd(stdout io.Writer, lookup env) *cobra.Command {
	cmd := &cobra.Command{Use: "emit", Short: "Write a Slurm array script or a Kubernetes Indexed Job for a sweep"}
	for _, kind := range []string{"slurm", "k8s"} {
		var file, out string
		var sets []string
		var shards int
		c := &cobra.Command{
			Use:   kind + " -c FILE --shards N [--out FILE]",
			Short: map[string]string{"slurm": "an sbatch script with --array=0-(N-1)", "k8s": "an Indexed Job manifest (YAML) with N completions"}[kind],
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				if shards < 1 {
					return fmt.Errorf("--shards must be ≥ 1, got %d", shards)
				}
				cfg, err := loadConfig(file, sets, lookup)
				if err != nil {
					return err
				}
				abs, err := filepath.Abs(file)
				if err != nil {
					return err
				}
				var b []byte
				if kind == "slurm" {
					b, err = slurmScript(cfg, abs, sets, shards)
				} else {
					b, err = k8sManifest(cfg, abs, sets, shards)
				}
				if err != nil {
					return err
				}
				if out == "" {
					_, err = stdout.Write(b)
					return err
				}
				if err := data.WriteFileAtomic(out, b); err != nil {
					return err
				}
				if kind == "slurm" {
					os.Chmod(out, 0o755)
				}
				fmt.Fprintf(os.Stderr, "emit: wrote %s (%d shards)\n", out, shards)
				return nil
			},
		}
		c.Flags().StringVarP(&file, "config", "c", "", "config file (YAML)")
		c.Flags().StringArrayVar(&sets, "set", nil, "override a config key; passed on to every task")
		c.Flags().IntVar(&shards, "shards", 1, "number of shards (array tasks / completions)")
		c.Flags().StringVar(&out, "out", "", "file to write (default: stdout)")
		c.MarkFlagRequired("config")
		cmd.AddCommand(c)
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func sweepArgs(config string, sets []string) []string {
	args := []string{"sweep", "-c", config}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

func slurmScript(cfg *Config, config string, sets []string, shards int) ([]byte, error) {
	c := cfg.Cluster
	bin := c.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil || strings.Contains(exe, "go-build") {
			return nil, fmt.Errorf("cluster.binary: set the path of the train binary on the nodes (this process runs from a temporary go run build)")
		}
		bin = exe
	}
	wd := c.Workdir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	logs := filepath.Join(cfg.Output, "logs")
	if !filepath.IsAbs(logs) {
		logs = filepath.Join(wd, logs)
	}
	// Slurm opens --output before the script runs: the directory must exist.
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("emit: logs directory: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/bin/bash\n# Sweep %q: %d array tasks, one shard each (emitted by %s).\n", cfg.Name, shards, version)
	fmt.Fprintf(&b, "#SBATCH --job-name=lp-%s\n", cfg.Name)
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", shards-1)
	fmt.Fprintf(&b, "#SBATCH --cpus-per-task=%d\n", c.CPUsPerTask)
	if c.Mem != "" {
		fmt.Fprintf(&b, "#SBATCH --mem=%s\n", c.Mem)
	}
	if c.Time != "" {
		fmt.Fprintf(&b, "#SBATCH --time=%s\n", c.Time)
	}
	if c.Partition != "" {
		fmt.Fprintf(&b, "#SBATCH --partition=%s\n", c.Partition)
	}
	if c.GPUs > 0 {
		fmt.Fprintf(&b, "#SBATCH --gres=gpu:%d\n", c.GPUs)
	}
	fmt.Fprintf(&b, "#SBATCH --chdir=%s\n", wd)
	fmt.Fprintf(&b, "#SBATCH --output=%s/%%A_%%a.out\n", logs)
	b.WriteString("set -euo pipefail\n")
	b.WriteString("# The shard comes from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT.\n")
	b.WriteString("exec " + shellQuote(bin))
	for _, a := range sweepArgs(config, sets) {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

func k8sManifest(cfg *Config, config string, sets []string, shards int) ([]byte, error) {
	c := cfg.Cluster
	if c.Image == "" {
		return nil, fmt.Errorf("cluster.image: set the container image that holds the train binary")
	}
	bin := c.Binary
	if bin == "" {
		bin = "train"
	}
	wd := c.Workdir
	if wd == "" {
		wd = "/work"
	}
	res := map[string]any{"cpu": c.CPUsPerTask}
	if c.Mem != "" {
		res["memory"] = k8sQuantity(c.Mem)
	}
	limits := map[string]any{}
	if c.GPUs > 0 {
		limits["nvidia.com/gpu"] = c.GPUs
	}
	container := map[string]any{
		"name":       "sweep",
		"image":      c.Image,
		"workingDir": wd,
		"command":    append([]string{bin}, sweepArgs(config, sets)...),
		"env": []map[string]string{
			// JOB_COMPLETION_INDEX is set by Kubernetes for Indexed Jobs.
			{"name": "JOB_COMPLETIONS", "value": fmt.Sprint(shards)},
		},
		"resources": map[string]any{"requests": res},
	}
	if len(limits) > 0 {
		container["resources"].(map[string]any)["limits"] = limits
	}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": "lp-" + strings.ToLower(strings.ReplaceAll(cfg.Name, "_", "-"))},
		"spec": map[string]any{
			"completionMode": "Indexed",
			"completions":    shards,
			"parallelism":    shards,
			"backoffLimit":   shards * 2,
			"template": map[string]any{
				"spec": map[string]any{
					"restartPolicy": "Never",
					"containers":    []any{container},
				},
			},
		},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Sweep %q as a Kubernetes Indexed Job: %d completions, one shard each (emitted by %s).\n", cfg.Name, shards, version)
	b.WriteString("# The config and the output directory must be on a volume shared by every pod (mount it at workingDir).\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// k8sQuantity turns a Slurm memory size (8G, 500M, 8GB) into a Kubernetes
// binary quantity (8Gi, 500Mi); other forms pass through.
func k8sQuantity(mem string) string {
	m := strings.TrimSuffix(strings.ToUpper(mem), "B")
	for _, u := range []string{"K", "M", "G", "T"} {
		if strings.HasSuffix(m, u) {
			return m + "i"
		}
	}
	return mem
}
