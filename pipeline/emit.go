package pipeline

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

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
	return append([]string{"sweep", "-c", config}, setArgs(sets)...)
}

// slurmScript is an sbatch script running the sweep of config (an absolute
// path; sets are passed on to every task, env is exported in it) as an
// array of shards tasks; the logs directory is created, since Slurm opens
// --output before the script runs. With o.Requeue a task signalled
// o.SignalLead before its time limit stops after its current step (a
// checkpoint is written) and is requeued, to resume; with o.AuditJob the
// first task submits the audit and report as a job that starts once every
// task has succeeded (afterok).
func slurmScript(cfg *config.Config, config string, sets, env []string, o EmitOptions) ([]byte, error) {
	c := cfg.Cluster
	bin := c.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil || strings.Contains(exe, "go-build") {
			return nil, fmt.Errorf("cluster.binary: set the path of the train binary on the nodes (this process runs from a temporary go run build)")
		}
		bin = exe
	}
	lead, err := signalLead(c.Time, o)
	if err != nil {
		return nil, err
	}
	wd := c.Workdir
	if wd == "" {
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
	fmt.Fprintf(&b, "#!/bin/bash\n# Sweep %q: %d array tasks, one shard each (emitted by %s).\n", cfg.Name, o.Shards, Version)
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", jobName(cfg.Name))
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", o.Shards-1)
	resources := slurmResources(c, wd)
	for _, r := range resources {
		b.WriteString("#SBATCH " + r + "\n")
	}
	fmt.Fprintf(&b, "#SBATCH --output=%s/%%A_%%a.out\n", logs)
	if o.Requeue {
		fmt.Fprintf(&b, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@%d\n#SBATCH --open-mode=append\n", lead)
	}
	b.WriteString("set -euo pipefail\n")
	b.WriteString("# The config as emitted: only the TRAIN_* overrides of the environment emit ran in, pinned\n")
	b.WriteString("# below; any other TRAIN_ variable of the submitting shell (sbatch passes it on) is dropped.\n")
	b.WriteString("for v in $(compgen -e); do case $v in TRAIN_*) unset \"$v\" ;; esac; done\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString("export " + k + "=" + shellQuote(v) + "\n")
	}
	if o.AuditJob {
		writeAuditJob(&b, cfg, commandLine(append([]string{bin, "audit", "-c", config}, setArgs(sets)...)), resources, logs)
	}
	b.WriteString("# The shard comes from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT.\n")
	sweep := shellWords(append([]string{bin}, sweepArgs(config, sets)...))
	if !o.Requeue {
		b.WriteString("exec " + sweep + "\n")
		return b.Bytes(), nil
	}
	fmt.Fprintf(&b, `# Near its time limit Slurm sends USR1 to this shell (--signal, %d s before): it passes SIGTERM on to
# train, which stops after its current step (a checkpoint is written) and exits 143; the task is then
# requeued and resumes from the checkpoint. A SIGTERM of Slurm's own (scancel, the time limit) reaches
# train directly; this shell waits for it to stop.
requeue=
trap 'requeue=1; kill -TERM "$pid" 2>/dev/null || true' USR1
trap : TERM
%s &
pid=$!
while :; do
	wait "$pid" && rc=0 || rc=$?
	kill -0 "$pid" 2>/dev/null || break # a trapped signal ended the wait, not train
done
if [ -n "$requeue" ] && [ "$rc" -eq 143 ]; then
	echo "sweep: stopped ahead of the time limit; requeueing ${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID} (restart ${SLURM_RESTART_COUNT:-0})" >&2
	scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}" && exit 0
fi
exit "$rc"
`, lead, sweep)
	return b.Bytes(), nil
}

// slurmResources are the sbatch options of cluster's resources shared by
// the array and the audit job, and the working directory.
func slurmResources(c config.ClusterConfig, wd string) []string {
	out := []string{fmt.Sprintf("--cpus-per-task=%d", c.CPUsPerTask)}
	if c.Mem != "" {
		out = append(out, "--mem="+c.Mem)
	}
	if c.Time != "" {
		out = append(out, "--time="+c.Time)
	}
	if c.Partition != "" {
		out = append(out, "--partition="+c.Partition)
	}
	if c.GPUs > 0 {
		out = append(out, fmt.Sprintf("--gres=gpu:%d", c.GPUs))
	}
	return append(out, "--chdir="+wd)
}

// writeAuditJob writes the lines by which the array's first task, on its
// first start, submits audit (a shell command line) as a job that runs once
// every task of the array has succeeded (afterok; cancelled, not left
// pending, when one fails), with the array's resources, logging to logs.
func writeAuditJob(b *bytes.Buffer, cfg *config.Config, audit string, resources []string, logs string) {
	b.WriteString("# The audit and report: one job that starts once every array task has succeeded (afterok),\n")
	b.WriteString("# submitted by the first task on its first start (never outside Slurm, never on a requeue).\n")
	b.WriteString(`if [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && [ "${SLURM_ARRAY_TASK_ID:-}" = "${SLURM_ARRAY_TASK_MIN:-0}" ] && [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then` + "\n")
	b.WriteString("\tsbatch --parsable --dependency=afterok:\"$SLURM_ARRAY_JOB_ID\" --kill-on-invalid-dep=yes --export=ALL \\\n")
	fmt.Fprintf(b, "\t\t--job-name=%s", jobName(cfg.Name+"-audit"))
	for _, r := range resources {
		b.WriteString(" " + shellQuote(r))
	}
	fmt.Fprintf(b, " --output=%s \\\n", shellQuote(logs+"/audit-%j.out"))
	fmt.Fprintf(b, "\t\t--wrap=%s >&2 ||\n", shellQuote("exec "+audit))
	b.WriteString("\t\techo \"sweep: warning: the audit job was not submitted: run train audit after the sweep\" >&2\n")
	b.WriteString("fi\n")
}

// shellWords is words as one shell command line, each quoted.
func shellWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// commandLine is words as one shell command line, each quoted only when
// it holds anything but letters, digits and -_./:=,+@%.
func commandLine(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = w
		if w == "" || strings.IndexFunc(w, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
		}) >= 0 {
			q[i] = shellQuote(w)
		}
	}
	return strings.Join(q, " ")
}

// setArgs are sets as --set flags.
func setArgs(sets []string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, "--set", s)
	}
	return out
}

// maxSignalLead is the longest lead sbatch --signal takes (its sig_time is
// 16 bits, in seconds).
const maxSignalLead = 65535 * time.Second

// signalLead is o.SignalLead in whole seconds, checked against Slurm's
// bound and the time limit (cluster.time: Slurm's forms, minutes, M:S,
// H:M:S, D-H, D-H:M, D-H:M:S): the signal must come after the task starts.
// Slurm may send it up to a minute early.
func signalLead(limit string, o EmitOptions) (int, error) {
	if !o.Requeue {
		return 0, nil
	}
	lead := o.SignalLead
	if lead < time.Second || lead > maxSignalLead {
		return 0, &config.FieldError{Key: "signal_lead", Msg: fmt.Sprintf("must be in [1s, %v], got %v", maxSignalLead, lead)}
	}
	if limit == "" {
		return int(lead / time.Second), nil
	}
	d, err := slurmDuration(limit)
	if err != nil {
		return 0, &config.FieldError{Key: "cluster.time", Msg: err.Error()}
	}
	if lead >= d {
		return 0, &config.FieldError{Key: "signal_lead", Msg: fmt.Sprintf("%v is not shorter than the time limit cluster.time %s (%v): "+
			"the signal would come before the task starts; a lead of a few minutes leaves time to checkpoint", lead, limit, d)}
	}
	return int(lead / time.Second), nil
}

// slurmDuration parses a Slurm time limit: minutes, M:S, H:M:S, D-H,
// D-H:M or D-H:M:S.
func slurmDuration(s string) (time.Duration, error) {
	days, rest, hasDays := strings.Cut(s, "-")
	if !hasDays {
		rest, days = days, "0"
	}
	var f []int
	for _, p := range append([]string{days}, strings.Split(rest, ":")...) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%q is not a Slurm time limit (minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S)", s)
		}
		f = append(f, n)
	}
	d, v := time.Duration(f[0])*24*time.Hour, f[1:]
	switch {
	case hasDays && len(v) <= 3:
		for i, unit := range []time.Duration{time.Hour, time.Minute, time.Second}[:len(v)] {
			d += time.Duration(v[i]) * unit
		}
	case len(v) == 1:
		d += time.Duration(v[0]) * time.Minute
	case len(v) == 2:
		d += time.Duration(v[0])*time.Minute + time.Duration(v[1])*time.Second
	case len(v) == 3:
		d += time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute + time.Duration(v[2])*time.Second
	default:
		return 0, fmt.Errorf("%q is not a Slurm time limit (minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S)", s)
	}
	return d, nil
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

// k8sManifest is a Kubernetes Indexed Job running the sweep of cfgFile with
// o.Shards completions (JOB_COMPLETIONS is set for the shard, and env, the
// TRAIN_* overrides). The directory emit runs in (cwd) is the volume every
// pod mounts at workdir: the config must lie under it, and the pods' -c is
// its path there. With o.Requeue a pod has o.SignalLead to checkpoint after
// SIGTERM, and a disrupted one is made again without counting as failed.
// A Job cannot start another after it (Slurm's afterok): its header says
// how to run the audit.
func k8sManifest(cfg *config.Config, cfgFile, cwd string, sets, env []string, o EmitOptions, warn func(string)) ([]byte, error) {
	shards := o.Shards
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
	rel, err := filepath.Rel(cwd, cfgFile)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("emit k8s: the config %s is outside the current directory %s, which the pods see at workingDir %s "+
			"(cluster.workdir): run emit from the shared directory that holds the config", cfgFile, cwd, wd)
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
	pod := map[string]any{"restartPolicy": "Never", "containers": []any{container}}
	spec := map[string]any{
		"completionMode": "Indexed",
		"completions":    shards,
		"parallelism":    shards,
		"backoffLimit":   shards * 2,
		"template":       map[string]any{"spec": pod},
	}
	if o.Requeue {
		if o.SignalLead < time.Second {
			return nil, &config.FieldError{Key: "grace_period", Msg: fmt.Sprintf("must be ≥ 1s, got %v", o.SignalLead)}
		}
		// SIGTERM, then this long to checkpoint before SIGKILL; an evicted or
		// preempted pod is made again (resuming from the checkpoint) without
		// counting as a failure.
		pod["terminationGracePeriodSeconds"] = int(o.SignalLead / time.Second)
		spec["podFailurePolicy"] = map[string]any{"rules": []any{map[string]any{
			"action": "Ignore", "onPodConditions": []any{map[string]any{"type": "DisruptionTarget"}}}}}
	}
	job := map[string]any{
		"apiVersion": "batch/v1",
		"kind":       "Job",
		"metadata":   map[string]any{"name": jobName(cfg.Name)},
		"spec":       spec,
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Sweep %q as a Kubernetes Indexed Job: %d completions, one shard each (emitted by %s).\n", cfg.Name, shards, Version)
	fmt.Fprintf(&b, "# Mount the shared volume that holds %s (the config is %s there) at workingDir %s in every pod:\n", cwd, rel, wd)
	b.WriteString("# the output directory must be on it too. TRAIN_* overrides emit ran with are set in env.\n")
	b.WriteString("# A Job starts no job after it (Slurm's afterok): once it completes (kubectl wait --for=condition=complete\n")
	b.WriteString("# job/" + jobName(cfg.Name) + "), run the audit and report in a pod that mounts the volume: " + commandLine(append([]string{bin, "audit", "-c", podConfig}, setArgs(sets)...)) + "\n")
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
	// AuditJob (Slurm): the first array task submits `train audit` as a
	// job that starts once every task has succeeded (afterok).
	AuditJob bool
	// Requeue: Slurm signals each task SignalLead before its time limit
	// (--signal=B:USR1), the task checkpoints, stops and is requeued
	// (--requeue), and resumes; Kubernetes gives a pod SignalLead between
	// SIGTERM and SIGKILL (terminationGracePeriodSeconds) and does not count
	// a disrupted pod (evicted, preempted) against the job's backoffLimit.
	Requeue    bool
	SignalLead time.Duration
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
		b, err = slurmScript(cfg, abs, inv.Sets, env, o)
		mode = 0o755
	case "k8s":
		cwd, werr := os.Getwd()
		if werr != nil {
			return nil, werr
		}
		b, err = k8sManifest(cfg, abs, cwd, inv.Sets, env, o, warn)
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
