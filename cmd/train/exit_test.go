package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// child is this test binary run as the train program (TestMain) with args.
func child(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	a, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "LABELPRIVACY_CLI_ARGS="+string(a))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	return cmd, &out
}

// status is the exit status of a finished child (0 when it succeeded).
func status(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// The exit status says what kind of ending it was: 2 for a command line or
// config that was refused before anything ran (cobra's errors, config
// keys, types, ranges, flag values), 1 for a command that ran and failed,
// 0 for success. Each case runs the program as a process.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	cfg := writeSweepConfig(t, filepath.Join(dir, "out"), "")
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want int
		says string // in the output
	}{
		{"version", []string{"version"}, 0, "labelprivacy"},
		{"unknown flag", []string{"run", "--bogus"}, 2, "unknown flag: --bogus"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate" for "train"`},
		{"unknown subcommand", []string{"sweep", "statu", "-c", cfg}, 2, "Did you mean this?\n\tstatus"},
		{"missing required flag", []string{"fit"}, 2, `required flag(s) "config" not set`},
		{"bad flag value", []string{"sweep", "emit", "slurm", "-c", cfg, "--shards", "two"}, 2, `invalid argument "two" for "--shards"`},
		{"unknown key", []string{"fit", "-c", cfg, "--set", "train.epoch=3"}, 2, "did you mean train.epochs?"},
		{"unknown key as key=value", []string{"fit", "-c", cfg, "train.epoch=3"}, 2, "did you mean train.epochs?"},
		{"bad type", []string{"fit", "-c", cfg, "--set", "train.epochs=many"}, 2, "train.epochs"},
		{"out of range", []string{"fit", "-c", cfg, "--set", "train.epochs=0"}, 2, "train.epochs"},
		{"missing config file", []string{"fit", "-c", filepath.Join(dir, "none.yaml")}, 2, "none.yaml"},
		{"flag value refused by the command", []string{"sweep", "-c", cfg, "--shard", "5/2"}, 2, "--shard"},
		{"privatize without epsilon", []string{"privatize", "--in", filepath.Join(dir, "x.arrow"), "--pet", "rr", "--out", filepath.Join(dir, "o.arrow")}, 2, "--epsilon"},
		{"failure", []string{"data", "synth", "--out", filepath.Join(notDir, "ds"), "--kind", "uniform", "--rows", "100", "--test-rows", "20"}, 1, notDir},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd, out := child(t, tc.args...)
			got := status(t, cmd.Run())
			if got != tc.want || !strings.Contains(out.String(), tc.says) {
				t.Fatalf("%q: exit status %d, want %d; output (want %q in it):\n%s", tc.args, got, tc.want, tc.says, out)
			}
		})
	}
}

// Ctrl-C and SIGTERM stop a training sweep after its group checkpoints:
// exit status 130 (SIGINT) and 143 (SIGTERM), a checkpoint left to resume
// from and no run counted as done.
func TestExitCodeInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model until it is interrupted")
	}
	for _, tc := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := writeSweepConfig(t, out, "")
			cmd, log := child(t, "sweep", "-c", cfg, "--set", "pets=[{mechanism: rr, epsilon: 2}]", "--set", "train.trials=1",
				"--set", "train.learning_rates=[0.01]", "--set", "train.epochs=400", "--set", "train.batch_size=32", "--set", "train.checkpoint_every=20")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			deadline := time.Now().Add(2 * time.Minute)
			for len(checkpointFiles(out)) == 0 {
				select {
				case err := <-exited:
					t.Fatalf("the sweep ended (%v) before a checkpoint appeared:\n%s", err, log)
				case <-time.After(10 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no checkpoint after 2 minutes:\n%s", log)
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-exited:
			case <-time.After(2 * time.Minute):
				cmd.Process.Kill()
				t.Fatalf("still running 2 minutes after %v:\n%s", tc.sig, log)
			}
			if got := status(t, err); got != tc.want {
				t.Fatalf("exit status %d after %v, want %d:\n%s", got, tc.sig, tc.want, log)
			}
			if !strings.Contains(log.String(), "(checkpointed: true)") || len(checkpointFiles(out)) == 0 {
				t.Fatalf("no orderly stop with a checkpoint left (%v):\n%s", checkpointFiles(out), log)
			}
			if done, _ := filepath.Glob(filepath.Join(out, "runs", "*.json")); len(done) != 0 {
				t.Fatalf("an interrupted run was recorded: %v", done)
			}
		})
	}
}
