package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The sbatch script: the resources of cluster.*, by default a requeue ahead
// of the time limit (--signal-lead) and the audit as a job after every task
// (afterok), each turned off by its flag; a lead that does not fit in the
// time limit is refused.
func TestEmitSlurm(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "cluster: {cpus_per_task: 3, mem: 2G, time: \"01:00:00\", partition: gpu, gpus: 1, binary: /opt/bin/train}\n")
	logs := filepath.Join(out, "logs")
	resources := []string{"#SBATCH --cpus-per-task=3", "#SBATCH --mem=2G", "#SBATCH --time=01:00:00", "#SBATCH --partition=gpu", "#SBATCH --gres=gpu:1"}
	requeue := []string{"#SBATCH --requeue\n", "#SBATCH --open-mode=append\n", `trap 'requeue=1; kill -TERM "$pid" 2>/dev/null || true' USR1`,
		"'/opt/bin/train' 'sweep' '-c' '" + cfg + "' '--set' 'train.trials=4' &\n", `scontrol requeue "${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}"`}
	auditJob := []string{`sbatch --parsable --dependency=afterok:"$SLURM_ARRAY_JOB_ID" --kill-on-invalid-dep=yes`,
		"--job-name=lp-sweeptest-audit '--cpus-per-task=3' '--mem=2G' '--time=01:00:00' '--partition=gpu' '--gres=gpu:1'",
		"--output='" + logs + "/audit-%j.out'", "--wrap='exec /opt/bin/train audit -c " + cfg + " --set train.trials=4'",
		`[ "${SLURM_ARRAY_TASK_ID:-}" = "${SLURM_ARRAY_TASK_MIN:-0}" ] && [ "${SLURM_RESTART_COUNT:-0}" = 0 ]`}
	exec := "exec '/opt/bin/train' 'sweep' '-c' '" + cfg + "' '--set' 'train.trials=4'\n"
	cases := []struct {
		name        string
		flags       []string
		has, hasNot []string
	}{
		{"defaults", nil, append(append(append([]string{"#SBATCH --signal=B:USR1@300\n"}, requeue...), auditJob...), resources...), []string{exec}},
		{"a lead of 90 s", []string{"--signal-lead", "90s"}, []string{"#SBATCH --signal=B:USR1@90\n"}, nil},
		{"no requeue", []string{"--requeue=false"}, append([]string{exec}, auditJob...), append([]string{"--signal", "USR1"}, requeue...)},
		{"no audit job", []string{"--audit-job=false"}, requeue, []string{"afterok", "sbatch --parsable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			script, err := cli(t, nil, append([]string{"sweep", "emit", "slurm", "-c", cfg, "--shards", "5", "--set", "train.trials=4"}, tc.flags...)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range append([]string{"#!/bin/bash", "#SBATCH --job-name=lp-sweeptest", "#SBATCH --array=0-4", "#SBATCH --output=" + logs + "/%A_%a.out"}, tc.has...) {
				if !strings.Contains(script, want) {
					t.Fatalf("script lacks %q:\n%s", want, script)
				}
			}
			for _, not := range tc.hasNot {
				if strings.Contains(script, not) {
					t.Fatalf("script holds %q:\n%s", not, script)
				}
			}
		})
	}
	if st, err := os.Stat(logs); err != nil || !st.IsDir() {
		t.Fatalf("the logs directory Slurm writes to was not created: %v", err)
	}
	for _, lead := range []string{"1h", "2h", "0s", "20h"} {
		if _, err := cli(t, nil, "sweep", "emit", "slurm", "-c", cfg, "--signal-lead", lead); err == nil || !strings.HasPrefix(err.Error(), "--signal-lead: ") {
			t.Errorf("--signal-lead %s with a time limit of 1 h: err = %v", lead, err)
		}
	}
}

func TestEmitK8s(t *testing.T) {
	cfg := writeSweepConfig(t, "out", "cluster: {image: reg/lp:1, mem: 4G, gpus: 1}\n")
	t.Chdir(filepath.Dir(cfg)) // the shared directory the pods mount at /work
	manifest, err := cli(t, nil, "sweep", "emit", "k8s", "-c", cfg, "--shards", "4")
	if err != nil {
		t.Fatal(err)
	}
	var job struct {
		Kind string
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int
			Parallelism    int
			Template       struct {
				Spec struct {
					RestartPolicy string `yaml:"restartPolicy"`
					Containers    []struct {
						Image     string
						Command   []string
						Env       []struct{ Name, Value string }
						Resources struct {
							Requests map[string]any
							Limits   map[string]any
						}
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(manifest), &job); err != nil {
		t.Fatalf("manifest is not YAML: %v\n%s", err, manifest)
	}
	c := job.Spec.Template.Spec.Containers
	if job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != 4 || len(c) != 1 ||
		c[0].Image != "reg/lp:1" || strings.Join(c[0].Command, " ") != "train sweep -c /work/sweep.yaml" ||
		len(c[0].Env) != 1 || c[0].Env[0].Name != "JOB_COMPLETIONS" || c[0].Env[0].Value != "4" ||
		c[0].Resources.Requests["memory"] != "4Gi" || c[0].Resources.Limits["nvidia.com/gpu"] != 1 {
		t.Fatalf("manifest:\n%s", manifest)
	}
	// A pod has the grace period to checkpoint after SIGTERM; a disrupted one
	// (evicted, preempted) does not count against backoffLimit; the header
	// says how to run the audit after the Job (there is no afterok).
	var policy struct {
		Spec struct {
			PodFailurePolicy struct {
				Rules []struct {
					Action          string
					OnPodConditions []struct{ Type string } `yaml:"onPodConditions"`
				}
			} `yaml:"podFailurePolicy"`
			Template struct {
				Spec struct {
					Grace *int `yaml:"terminationGracePeriodSeconds"`
				}
			}
		}
	}
	for _, tc := range []struct {
		flags []string
		grace int // 0: none set, and no failure policy
	}{{nil, 300}, {[]string{"--grace-period", "2m"}, 120}, {[]string{"--requeue=false"}, 0}} {
		m, err := cli(t, nil, append([]string{"sweep", "emit", "k8s", "-c", cfg, "--shards", "4"}, tc.flags...)...)
		if err != nil {
			t.Fatal(err)
		}
		policy.Spec.Template.Spec.Grace, policy.Spec.PodFailurePolicy.Rules = nil, nil
		if err := yaml.Unmarshal([]byte(m), &policy); err != nil {
			t.Fatal(err)
		}
		rules, grace := policy.Spec.PodFailurePolicy.Rules, policy.Spec.Template.Spec.Grace
		switch {
		case tc.grace == 0 && (grace != nil || rules != nil):
			t.Errorf("%q: grace period %v, failure policy %+v; want none", tc.flags, grace, rules)
		case tc.grace > 0 && (grace == nil || *grace != tc.grace || len(rules) != 1 || rules[0].Action != "Ignore" ||
			len(rules[0].OnPodConditions) != 1 || rules[0].OnPodConditions[0].Type != "DisruptionTarget"):
			t.Errorf("%q: grace period %v, failure policy %+v; want %d s and Ignore on DisruptionTarget", tc.flags, grace, rules, tc.grace)
		}
		if !strings.Contains(m, "kubectl wait --for=condition=complete\n# job/lp-sweeptest), run the audit and report in a pod that mounts the volume: train audit -c /work/sweep.yaml\n") {
			t.Errorf("the manifest does not say how to run the audit after the Job:\n%s", m)
		}
	}
	if _, err := cli(t, nil, "sweep", "emit", "k8s", "-c", writeSweepConfig(t, "o", ""), "--shards", "2"); err == nil || !strings.Contains(err.Error(), "cluster.image") {
		t.Fatalf("no image: err = %v", err)
	}
}

// A failed run is reported by status and retried by the next sweep.
func TestSweepStatusFailed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "")
	set := []string{"--set", "pets=[{mechanism: none}]", "--set", "train.trials=1", "--set", "train.learning_rates=[0.01]"}
	if _, err := cli(t, nil, append([]string{"sweep", "-c", cfg}, set...)...); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(out, "runs", "*.json"))
	if len(files) != 1 {
		t.Fatalf("run files %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".json")
	os.Remove(files[0])
	c, err := loadConfig(cfg, []string{"pets=[{mechanism: none}]", "train.trials=1", "train.learning_rates=[0.01]"}, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	failed := filepath.Join(c.Output, "runs", id+".failed.json")
	if err := os.WriteFile(failed, []byte(`{"run_id": "`+id+`", "setting": "none", "error": "invalid argument"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status, err := cli(t, nil, append([]string{"sweep", "status", "-c", cfg}, set...)...)
	if err != nil || !strings.Contains(status, "total                         0      1        0") {
		t.Fatalf("status: %v\n%s", err, status)
	}
	if _, err := cli(t, nil, append([]string{"sweep", "-c", cfg}, set...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(failed); err == nil {
		t.Fatal("the failure record outlived a successful retry")
	}
}

// parseSets turns a task's arguments after `sweep -c FILE` into --set
// values.
func parseSets(t *testing.T, args []string) []string {
	t.Helper()
	var sets []string
	for i := 0; i < len(args); i += 2 {
		if args[i] != "--set" || i+1 >= len(args) {
			t.Fatalf("unexpected task arguments %q", args)
		}
		sets = append(sets, args[i+1])
	}
	return sets
}

// The emitted jobs run the config emit loaded: the TRAIN_* overrides of its
// environment and its --set flags reach every task (they were dropped from
// the Kubernetes job, whose pods ran another config), and the pods' -c is
// the config's path inside their workingDir (it was the host's absolute
// path). Each task's config, loaded from what the job gives it, equals the
// host's. The sbatch script also drops TRAIN_ variables of the submitting
// shell that emit did not see.
func TestEmitCarriesOverrides(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	bin := filepath.Join(dir, "fake-train")
	got := filepath.Join(dir, "task.txt")
	// A stand-in for the train binary: records its environment's TRAIN_
	// variables and its arguments.
	fake := "#!/bin/sh\nenv | grep '^TRAIN_' | sort > " + got + "\necho --- >> " + got + "\nfor a in \"$@\"; do echo \"$a\" >> " + got + "; done\n"
	if err := os.WriteFile(bin, []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("cfgs", 0o755); err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(sweepConfig, "OUT", "out", 1) + "cluster: {image: reg/lp:1, binary: " + bin + "}\n"
	if err := os.WriteFile("cfgs/sweep.yaml", []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TRAIN_TRAIN_EPOCHS": "3", "TRAIN_AUDIT_EXAMPLES": "123", "TRAIN_PETS": "[{mechanism: rr, epsilon: 0.5}]"}
	sets := []string{"train.trials=3", "name=it's"}
	host, err := loadConfig("cfgs/sweep.yaml", sets, mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-c", "cfgs/sweep.yaml", "--shards", "2", "--set", sets[0], "--set", sets[1]}
	sameConfig := func(t *testing.T, file string, sets []string, env map[string]string) {
		t.Helper()
		task, err := loadConfig(file, sets, mapEnv(env))
		if err != nil {
			t.Fatal(err)
		}
		// How each was invoked (the config file's path as given) differs by
		// construction; the settings must not.
		task.Invocation = host.Invocation
		if !reflect.DeepEqual(task, host) {
			t.Fatalf("a task's config differs from the emitting host's:\ntask %+v\nhost %+v", *task, *host)
		}
	}

	t.Run("k8s", func(t *testing.T) {
		manifest, err := cli(t, env, append([]string{"sweep", "emit", "k8s"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		var job struct {
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							WorkingDir string `yaml:"workingDir"`
							Command    []string
							Env        []struct{ Name, Value string }
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal([]byte(manifest), &job); err != nil {
			t.Fatal(err)
		}
		c := job.Spec.Template.Spec.Containers[0]
		podEnv := map[string]string{}
		for _, e := range c.Env {
			podEnv[e.Name] = e.Value
		}
		if c.WorkingDir != "/work" || len(c.Command) < 4 || c.Command[3] != "/work/cfgs/sweep.yaml" {
			t.Fatalf("workingDir %q, command %q: want -c /work/cfgs/sweep.yaml", c.WorkingDir, c.Command)
		}
		// The pod's /work is this directory.
		sameConfig(t, filepath.Join(dir, strings.TrimPrefix(c.Command[3], "/work/")), parseSets(t, c.Command[4:]), podEnv)

		_, err = cli(t, env, "sweep", "emit", "k8s", "-c", filepath.Join(t.TempDir(), "elsewhere.yaml"), "--shards", "2")
		if err == nil {
			t.Fatal("a config outside the mounted directory was accepted")
		}
	})

	t.Run("slurm", func(t *testing.T) {
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Skip("no bash")
		}
		script, err := cli(t, env, append([]string{"sweep", "emit", "slurm"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		sh := filepath.Join(dir, "sweep.sbatch")
		if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bash, sh)
		// What sbatch passes on from the submitting shell: a stray override.
		cmd.Env = append(os.Environ(), "TRAIN_TRAIN_BATCH_SIZE=7", "TRAIN_TRAIN_EPOCHS=9")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s\n%s", err, out, script)
		}
		b, err := os.ReadFile(got)
		if err != nil {
			t.Fatal(err)
		}
		envPart, argPart, _ := strings.Cut(string(b), "---\n")
		taskEnv := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(envPart), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				taskEnv[k] = v
			}
		}
		if !reflect.DeepEqual(taskEnv, env) {
			t.Fatalf("the task's TRAIN_ variables %v, want exactly %v", taskEnv, env)
		}
		a := strings.Split(strings.TrimSuffix(argPart, "\n"), "\n")
		if len(a) < 3 || a[0] != "sweep" || a[1] != "-c" {
			t.Fatalf("task arguments %q", a)
		}
		sameConfig(t, a[2], parseSets(t, a[3:]), taskEnv)
	})
}

// More shards than the grid has groups: emit warns, naming how many are
// enough (12 runs, one per group on the go backend).
func TestEmitWarnsIdleShards(t *testing.T) {
	cfg := writeSweepConfig(t, filepath.Join(t.TempDir(), "out"), "cluster: {binary: /opt/bin/train}\n")
	var stdout, stderr bytes.Buffer
	root := newRootCmd(&stdout, &stderr, mapEnv(nil))
	root.SetArgs([]string{"sweep", "emit", "slurm", "-c", cfg, "--shards", "50"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "50 shards for a grid of 12 groups: 38 of them will have nothing to do (12 shards are enough)"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("stderr %q lacks %q", stderr.String(), want)
	}
	stderr.Reset()
	root = newRootCmd(&stdout, &stderr, mapEnv(nil))
	root.SetArgs([]string{"sweep", "emit", "slurm", "-c", cfg, "--shards", "12"})
	if err := root.ExecuteContext(context.Background()); err != nil || strings.Contains(stderr.String(), "nothing to do") {
		t.Fatalf("12 shards for 12 groups: %v, %q", err, stderr.String())
	}
}

// emit --out says how many shards it wrote: "1 shard", "3 shards".
func TestEmitOutShardCount(t *testing.T) {
	cfg := writeSweepConfig(t, filepath.Join(t.TempDir(), "out"), "cluster: {binary: /opt/bin/train}\n")
	for _, tc := range []struct {
		shards, want string
	}{{"1", "(1 shard)"}, {"3", "(3 shards)"}} {
		script := filepath.Join(t.TempDir(), "job.sh")
		out, err := cli(t, nil, "sweep", "emit", "slurm", "-c", cfg, "--shards", tc.shards, "--out", script)
		if err != nil {
			t.Fatal(err)
		}
		if want := "wrote " + script + " " + tc.want; !strings.Contains(out, want) {
			t.Errorf("--shards %s: stdout %q lacks %q", tc.shards, out, want)
		}
	}
}

// The emitted script's requeue and audit job, run by bash with stand-ins
// for train, sbatch and scontrol: USR1 (Slurm's --signal, ahead of the
// time limit) reaches train as one SIGTERM, and its exit 143 requeues the
// task (exit 0); Slurm's own SIGTERM (the time limit, scancel) to the shell
// and train stops train once and fails the task with 143, not requeued;
// the first task submits the audit job afterok on its first start only.
func TestEmitSlurmRequeueScript(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	write := func(name, body string) string {
		p := filepath.Join(dir, "bin", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// train: says it started (and its pid), stops on SIGTERM with 143 as the
	// real one does.
	train := write("train", `echo "train $1 $$" >> `+log+`; trap 'echo "train got TERM" >> `+log+`; exit 143' TERM; while :; do sleep 0.02; done`+"\n")
	write("sbatch", `echo "sbatch $*" >> `+log+"; echo 99\n")
	write("scontrol", `echo "scontrol $*" >> `+log+"\n")
	cfg := writeSweepConfig(t, filepath.Join(dir, "out"), "cluster: {binary: "+train+"}\n")
	script, err := cli(t, nil, "sweep", "emit", "slurm", "-c", cfg, "--shards", "2")
	if err != nil {
		t.Fatal(err)
	}
	sh := filepath.Join(dir, "sweep.sbatch")
	if err := os.WriteFile(sh, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		env    []string
		signal func(shell, train int)
		rc     int
		calls  []string // calls.log, line by line
	}{
		{"USR1 ahead of the time limit: requeued", []string{"SLURM_RESTART_COUNT=0"},
			func(shell, _ int) { syscall.Kill(shell, syscall.SIGUSR1) }, 0,
			[]string{"sbatch --parsable --dependency=afterok:7", "train sweep", "train got TERM", "scontrol requeue 7_0"}},
		{"Slurm's SIGTERM to every process: failed, not requeued", []string{"SLURM_RESTART_COUNT=1"},
			func(shell, train int) { syscall.Kill(shell, syscall.SIGTERM); syscall.Kill(train, syscall.SIGTERM) }, 143,
			[]string{"train sweep", "train got TERM"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(log)
			cmd := exec.Command(bash, sh)
			cmd.Env = append(os.Environ(), append([]string{"PATH=" + filepath.Join(dir, "bin") + ":" + os.Getenv("PATH"),
				"SLURM_ARRAY_JOB_ID=7", "SLURM_ARRAY_TASK_ID=0", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_COUNT=2"}, tc.env...)...)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var trainPID int
			for deadline := time.Now().Add(30 * time.Second); trainPID == 0; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("train never started:\n%s", out.String())
				}
				if b, _ := os.ReadFile(log); strings.Contains(string(b), "\n") {
					_, after, _ := strings.Cut(string(b), "train sweep ")
					fmt.Sscan(after, &trainPID)
				}
			}
			tc.signal(cmd.Process.Pid, trainPID)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the script did not end:\n%s", out.String())
			}
			if got := status(t, err); got != tc.rc {
				t.Errorf("exit status %d, want %d:\n%s", got, tc.rc, out.String())
			}
			b, _ := os.ReadFile(log)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(lines) != len(tc.calls) {
				t.Fatalf("calls %q, want %q", lines, tc.calls)
			}
			for i, want := range tc.calls {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("call %d %q, want %q…", i, lines[i], want)
				}
			}
		})
	}
}
