package pipeline

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/atomicfile"
)

// Version is the tool version recorded in emitted jobs and outputs.
const Version = "labelprivacy 0.2.0"

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func sweepArgs(config string, sets []string) []string {
	args := []string{"sweep", "-c", config}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	return args
}

// slurmScript is an sbatch script running the sweep of config (an absolute
// path; sets are passed on to every task, env is exported in it) as an
// array of shards tasks; the logs directory is created, since Slurm opens
// --output before the script runs.
func slurmScript(cfg *config.Config, config string, sets, env []string, shards int) ([]byte, error) {
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
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return nil, fmt.Errorf("emit: logs directory: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "#!/bin/bash\n# Sweep %q: %d array tasks, one shard each (emitted by %s).\n", cfg.Name, shards, Version)
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", jobName(cfg.Name))
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
	b.WriteString("# The config as emitted: only the TRAIN_* overrides of the environment emit ran in, pinned\n")
	b.WriteString("# below; any other TRAIN_ variable of the submitting shell (sbatch passes it on) is dropped.\n")
	b.WriteString("for v in $(compgen -e); do case $v in TRAIN_*) unset \"$v\" ;; esac; done\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString("export " + k + "=" + shellQuote(v) + "\n")
	}
	b.WriteString("# The shard comes from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT.\n")
	b.WriteString("exec " + shellQuote(bin))
	for _, a := range sweepArgs(config, sets) {
		b.WriteString(" " + shellQuote(a))
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

// jobName is "lp-" + the config name as a DNS-1123 label (what Kubernetes
// requires of a Job name, and a safe Slurm job name): lower-case letters,
// digits and '-', starting and ending alphanumeric, at most 63 characters.
func jobName(name string) string {
	var b strings.Builder
	b.WriteString("lp-")
	dash := true
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-")
	}
	if s == "lp" {
		s = "lp-sweep"
	}
	return s
}

// k8sManifest is a Kubernetes Indexed Job running the sweep of config with
// shards completions (JOB_COMPLETIONS is set for the shard, and env, the
// TRAIN_* overrides). The directory emit runs in (cwd) is the volume every
// pod mounts at workdir: the config must lie under it, and the pods' -c is
// its path there.
func k8sManifest(cfg *config.Config, config, cwd string, sets, env []string, shards int, warn func(string)) ([]byte, error) {
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
	rel, err := filepath.Rel(cwd, config)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("emit k8s: the config %s is outside the current directory %s, which the pods see at workingDir %s "+
			"(cluster.workdir): run emit from the shared directory that holds the config", config, cwd, wd)
	}
	podConfig := path.Join(wd, filepath.ToSlash(rel))
	for _, p := range []struct{ key, path string }{{"output", cfg.Output}, {"data.path", cfg.Data.Path}, {"privacy.ledger", cfg.Privacy.Ledger}} {
		if filepath.IsAbs(p.path) && wd != cwd {
			warn(fmt.Sprintf("%s %s is an absolute path of this host: the pods use it as it is, while this directory (%s) is their %s; "+
				"make it relative, or mount it at the same path in the pods", p.key, p.path, cwd, wd))
		}
	}
	envs := []map[string]string{{"name": "JOB_COMPLETIONS", "value": fmt.Sprint(shards)}}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envs = append(envs, map[string]string{"name": k, "value": v})
	}
	res := map[string]any{"cpu": c.CPUsPerTask}
	if c.Mem != "" {
		res["memory"] = k8sQuantity(c.Mem)
	}
	container := map[string]any{
		"name":       "sweep",
		"image":      c.Image,
		"workingDir": wd,
		"command":    append([]string{bin}, sweepArgs(podConfig, sets)...),
		"env":        envs,
		"resources":  map[string]any{"requests": res},
	}
	if c.GPUs > 0 {
		container["resources"].(map[string]any)["limits"] = map[string]any{"nvidia.com/gpu": c.GPUs}
	}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": jobName(cfg.Name)},
		"spec": map[string]any{
			"completionMode": "Indexed",
			"completions":    shards,
			"parallelism":    shards,
			"backoffLimit":   shards * 2,
			"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{container},
			}},
		},
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Sweep %q as a Kubernetes Indexed Job: %d completions, one shard each (emitted by %s).\n", cfg.Name, shards, Version)
	fmt.Fprintf(&b, "# Mount the shared volume that holds %s (the config is %s there) at workingDir %s in every pod:\n", cwd, rel, wd)
	b.WriteString("# the output directory must be on it too. TRAIN_* overrides emit ran with are set in env.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// gridGroups counts the groups a sweep of cfg forms (shards own whole
// groups), reading at most the dataset's meta.json. It is exact unless
// train.replicas is auto on an XLA backend or the dataset is not there yet;
// then it counts groups of one run, an upper bound.
func gridGroups(cfg *config.Config) (int, bool, error) {
	rows, exact, classes := cfg.Data.Synth.Rows, true, cfg.Data.Synth.Classes
	if cfg.Data.Path != "" {
		m, err := data.ReadMeta(cfg.Data.Path)
		if err != nil {
			rows, exact, classes = math.MaxInt32, false, 2
		} else {
			rows, classes = int(m.TrainRows), m.NumClasses()
		}
	}
	settings, err := expandSettings(cfg.Pets, classes)
	if err != nil {
		return 0, false, err
	}
	runs, err := expandRuns(cfg, settings, gridData{TrainRows: rows})
	if err != nil {
		return 0, false, err
	}
	replicas := 1
	switch {
	case !cfg.Train.Replicas.Auto():
		replicas = cfg.Train.Replicas.N
	case !cfg.Backend.IsGo():
		exact = false
	}
	if !exact {
		replicas = 1
	}
	return len(formGroups(runs, replicas)), exact, nil
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

// EmitOptions describe a batch job running a sweep.
type EmitOptions struct {
	Kind   string // "slurm" (an sbatch array script) or "k8s" (a Kubernetes Indexed Job)
	Shards int    // array tasks / completions, ≥ 1
	// Warn receives notices (more shards than groups, host paths in a
	// Kubernetes job); nil: dropped.
	Warn func(string)
	// Out is the file to write (atomically; an sbatch script executable);
	// empty: only return the bytes.
	Out string
}

// Emit writes the batch job running cfg's sweep in o.Shards shards and
// returns its bytes: one shard per Slurm array task or Kubernetes
// completion, each running `train sweep` on the config as cfg was given
// (cfg.Invocation: its file, made absolute since the tasks run elsewhere,
// its --set overrides, and its TRAIN_ variables, set in every task).
func Emit(cfg *config.Config, o EmitOptions) ([]byte, error) {
	if o.Shards < 1 {
		return nil, &config.FieldError{Key: "shards", Msg: fmt.Sprintf("must be ≥ 1, got %d", o.Shards)}
	}
	inv := cfg.Invocation
	if inv.ConfigFile == "" {
		return nil, fmt.Errorf("emit: the config was not loaded from a file (config.Load): the tasks could not load it")
	}
	abs, err := filepath.Abs(inv.ConfigFile)
	if err != nil {
		return nil, err
	}
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	env := slices.Sorted(slices.Values(inv.Env))
	var b []byte
	mode := os.FileMode(0o644)
	switch o.Kind {
	case "slurm":
		b, err = slurmScript(cfg, abs, inv.Sets, env, o.Shards)
		mode = 0o755
	case "k8s":
		cwd, werr := os.Getwd()
		if werr != nil {
			return nil, werr
		}
		b, err = k8sManifest(cfg, abs, cwd, inv.Sets, env, o.Shards, warn)
	default:
		return nil, fmt.Errorf("emit: kind %q is neither slurm nor k8s", o.Kind)
	}
	if err == nil {
		if groups, exact, gerr := gridGroups(cfg); gerr == nil && o.Shards > groups {
			warn(idleShards(o.Shards, groups, exact))
		}
	}
	if err != nil || o.Out == "" {
		return b, err
	}
	if err := atomicfile.WriteFile(o.Out, b); err != nil {
		return nil, err
	}
	if err := os.Chmod(o.Out, mode); err != nil {
		return nil, fmt.Errorf("emit: %w", err)
	}
	return b, nil
}
