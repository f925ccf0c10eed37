package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pipeline"
	"labelprivacy/report"
)

// userHome is HOME before TestMain points it away: the go command a test
// runs finds its build and module caches there.
var userHome string

// TestMain lets a test re-run this binary as the train CLI, exactly as main
// runs it (for signal and exit-code tests): LABELPRIVACY_CLI_ARGS holds
// the JSON-encoded arguments.
func TestMain(m *testing.M) {
	if a := os.Getenv("LABELPRIVACY_CLI_ARGS"); a != "" {
		// A child running the CLI: its environment is the test's.
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(mainStatus(args)) // as main: signals, exit codes
	}
	// No test reaches the user's own default ledger: HOME and XDG_DATA_HOME
	// point into a folder removed at the end (tests that privatize set
	// their own, in t.TempDir()).
	userHome = os.Getenv("HOME")
	home, err := os.MkdirTemp("", "train-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv("HOME", home)
	os.Setenv("XDG_DATA_HOME", filepath.Join(home, "data"))
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

func TestResolveShard(t *testing.T) {
	tests := []struct {
		name string
		flag string
		env  map[string]string
		want pipeline.Shard
		err  string
	}{
		{"default", "", nil, pipeline.Shard{I: 0, N: 1}, ""},
		{"flag", "2/5", nil, pipeline.Shard{I: 2, N: 5}, ""},
		{"flag wins over slurm", "1/3", map[string]string{"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, pipeline.Shard{I: 1, N: 3}, ""},
		{"slurm", "", map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, pipeline.Shard{I: 3, N: 4}, ""},
		{"slurm offset array", "", map[string]string{"SLURM_ARRAY_TASK_ID": "11", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_COUNT": "2"}, pipeline.Shard{I: 1, N: 2}, ""},
		{"k8s", "", map[string]string{"JOB_COMPLETION_INDEX": "2", "JOB_COMPLETIONS": "3"}, pipeline.Shard{I: 2, N: 3}, ""},
		{"bad flag", "3/3", nil, pipeline.Shard{}, "0 ≤ i < n"},
		{"flag not a fraction", "2", nil, pipeline.Shard{}, "want i/n"},
		{"slurm without count", "", map[string]string{"SLURM_ARRAY_TASK_ID": "1"}, pipeline.Shard{}, "SLURM_ARRAY_TASK_COUNT"},
		{"k8s without completions", "", map[string]string{"JOB_COMPLETION_INDEX": "1"}, pipeline.Shard{}, "JOB_COMPLETIONS"},
		{"slurm garbage", "", map[string]string{"SLURM_ARRAY_TASK_ID": "x", "SLURM_ARRAY_TASK_COUNT": "2"}, pipeline.Shard{}, "not an integer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := pipeline.ResolveShard(tc.flag, mapEnv(tc.env).LookupEnv)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

const sweepConfig = `
name: sweeptest
seed: 3
output: OUT
data: {synth: {kind: logistic, rows: 3000, test_rows: 600, features: 6}}
model: {kind: mlp, hidden: [16]}
train: {epochs: 1, batch_size: 128, learning_rates: [0.01, 0.003], trials: 2}
pets:
  - {mechanism: none}
  - {mechanism: rr, epsilon: [1]}
  - {mechanism: llp_lap, k: [4], epsilon: [2]}
audit: {eta: true, examples: 500, label_draws: 2}
`

func writeSweepConfig(t *testing.T, out, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sweep.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(sweepConfig, "OUT", out, 1)+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Three shards run concurrently on one directory; together they train
// every run exactly once; the report sees each once; status agrees; a
// rerun trains nothing; a lost result file is retrained alone.
func TestSweepShardsConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 12 small models")
	}
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "")
	// Make the dataset first so the concurrent shards only read it.
	if _, err := cli(t, nil, "sweep", "-c", cfg, "--shard", "0/100"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() {
			var o, e bytes.Buffer
			root := newRootCmd(&o, &e, mapEnv(map[string]string{"SLURM_ARRAY_TASK_ID": fmt.Sprint(i), "SLURM_ARRAY_TASK_COUNT": "3"}))
			root.SetArgs([]string{"sweep", "-c", cfg})
			errs[i] = root.ExecuteContext(context.Background())
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "runs", "*.json"))
	if len(files) != 12 {
		t.Fatalf("%d run files, want 12 (3 settings × 2 lr × 2 trials)", len(files))
	}
	status, err := cli(t, nil, "sweep", "status", "-c", cfg)
	if err != nil || !strings.Contains(status, "total                        12      0        0") {
		t.Fatalf("status: %v\n%s", err, status)
	}
	if _, err := cli(t, nil, "audit", "-c", cfg); err != nil {
		t.Fatal(err)
	}
	rep := filepath.Join(t.TempDir(), "rep")
	o, err := cli(t, nil, "report", "--in", out, "--in", out, "--out", rep)
	if err != nil {
		t.Fatal(err)
	}
	// The same directory twice: each run appears twice and is deduplicated.
	if !strings.Contains(o, "3 settings from 24 runs (12 duplicate runs dropped)") {
		t.Fatalf("report: %s", o)
	}
	sum, err := data.ReadTable(filepath.Join(rep, "summary.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Columns {
		if c.Name == "n_trials" {
			for i, n := range c.Values.([]int64) {
				if n != 2 {
					t.Fatalf("setting %d has %d trials, want 2", i, n)
				}
			}
		}
	}
	// Rerun: nothing to do.
	o, err = cli(t, nil, "sweep", "-c", cfg)
	if err != nil || !strings.Contains(o, "0 runs trained, 12 already done") {
		t.Fatalf("rerun: %v\n%s", err, o)
	}
	// A lost result is retrained, and only it.
	os.Remove(files[5])
	if s, _ := cli(t, nil, "sweep", "status", "-c", cfg); !strings.Contains(s, "total                        11      0        1") {
		t.Fatalf("status after loss:\n%s", s)
	}
	o, err = cli(t, nil, "sweep", "-c", cfg)
	if err != nil || !strings.Contains(o, "1 run trained, 11 already done") {
		t.Fatalf("retrain: %v\n%s", err, o)
	}
}

// A group killed with SIGKILL mid-training leaves no result; the rerun
// resumes it from its checkpoint (one unit for the whole group) and ends
// with the results of an uninterrupted run, nothing lost or duplicated:
// alone (replicas 1) and as a group of 4 runs.
func TestSweepSIGKILLResume(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess training")
	}
	for _, tc := range []struct {
		name           string
		set            []string
		runs, releases int
	}{
		{"alone", []string{"--set", "train.trials=1", "--set", "train.learning_rates=[0.01]"}, 1, 1},
		{"group of 4", []string{"--set", "train.trials=2", "--set", "train.learning_rates=[0.01,0.003]", "--set", "train.replicas=4"}, 4, 2},
	} {
		t.Run(tc.name, func(t *testing.T) { sigkillResume(t, tc.set, tc.runs, tc.releases) })
	}
}

func sigkillResume(t *testing.T, extraSets []string, nRuns, nReleases int) {
	extra := "\n"
	killed := filepath.Join(t.TempDir(), "killed")
	cfg := writeSweepConfig(t, killed, extra)
	set := append([]string{"--set", "pets=[{mechanism: rr, epsilon: 2}]",
		"--set", "train.epochs=40", "--set", "train.batch_size=32", "--set", "train.checkpoint_every=20"}, extraSets...)
	args, _ := json.Marshal(append([]string{"sweep", "-c", cfg}, set...))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LABELPRIVACY_CLI_ARGS="+string(args))
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for a checkpoint to appear, then SIGKILL.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the run ended (%v) before a checkpoint appeared:\n%s", err, stderr.String())
		default:
		}
		if len(checkpointFiles(killed)) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint after 2 minutes:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	if err := <-exited; err == nil {
		t.Skipf("the run finished before it could be killed:\n%s", stderr.String())
	}
	if files, _ := filepath.Glob(filepath.Join(killed, "runs", "*.json")); len(files) != 0 {
		t.Fatalf("a killed run left results %v", files)
	}
	var o, e bytes.Buffer
	root := newRootCmd(&o, &e, mapEnv(nil))
	root.SetArgs(append([]string{"sweep", "-c", cfg}, set...))
	if err := root.ExecuteContext(context.Background()); err != nil {
		failed, _ := filepath.Glob(filepath.Join(killed, "runs", "*.failed.json"))
		for _, f := range failed {
			b, _ := os.ReadFile(f)
			t.Logf("%s: %s", f, b)
		}
		t.Logf("checkpoint files: %v", checkpointFiles(killed))
		t.Fatal(err)
	}
	if !strings.Contains(e.String(), "resumed from its checkpoint at step") {
		t.Fatalf("rerun did not resume:\nstdout %s\nstderr %s", o.String(), e.String())
	}
	// The same run uninterrupted, in another directory.
	clean := filepath.Join(t.TempDir(), "clean")
	cfg2 := writeSweepConfig(t, clean, extra)
	if _, err := cli(t, nil, append([]string{"sweep", "-c", cfg2}, set...)...); err != nil {
		t.Fatal(err)
	}
	a, _ := filepath.Glob(filepath.Join(killed, "runs", "*.json"))
	b, _ := filepath.Glob(filepath.Join(clean, "runs", "*.json"))
	if len(a) != nRuns || len(b) != nRuns {
		t.Fatalf("results %v vs %v, want %d each", a, b, nRuns)
	}
	for i := range a {
		if filepath.Base(a[i]) != filepath.Base(b[i]) {
			t.Fatalf("run ids %v vs %v", a, b)
		}
		var ra, rb report.Run
		ba, _ := os.ReadFile(a[i])
		bb, _ := os.ReadFile(b[i])
		json.Unmarshal(ba, &ra)
		json.Unmarshal(bb, &rb)
		if ra.Steps != rb.Steps || ra.TestAUC != rb.TestAUC || ra.TrainLoss != rb.TrainLoss {
			t.Fatalf("resumed run %s: steps %d AUC %v; uninterrupted: steps %d AUC %v", ra.RunID, ra.Steps, ra.TestAUC, rb.Steps, rb.TestAUC)
		}
	}
	// Each release once in the ledger, though the killed sweep ran twice.
	if entries, err := ledger.Read(filepath.Join(killed, ledger.File)); err != nil || len(entries) != nReleases {
		t.Fatalf("ledger: %d rows (%v)", len(entries), err)
	}
	if ck := checkpointFiles(killed); len(ck) != 0 {
		t.Fatalf("checkpoints left after the run finished: %v", ck)
	}
}

// checkpointFiles lists the regular files under out/checkpoints.
func checkpointFiles(out string) []string {
	var files []string
	filepath.WalkDir(filepath.Join(out, "checkpoints"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	return files
}
