package pipeline

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"labelprivacy/config"
	"labelprivacy/internal/memctl"
	"labelprivacy/model"
)

// TestRefusesWhatDoesNotFit: a model or a dataset larger than the memory
// this machine has available is refused when the session opens, before
// anything is synthesized, loaded or allocated, in one line that names the
// key and gives the estimate (a 10^9-wide hidden layer used to end in a Go
// out-of-memory crash and a 213-line stack trace).
func TestRefusesWhatDoesNotFit(t *testing.T) {
	if _, ok := memctl.Available(); !ok {
		t.Skip("available memory unknown here: nothing is refused")
	}
	t.Run("model.hidden", func(t *testing.T) {
		out := t.TempDir()
		c := testConfig(out)
		c.Model.Kind, c.Model.Hidden = model.KindMLP, []int{1_000_000_000, 1_000_000_000} // 10^18 parameters
		_, err := Open(context.Background(), c, Exclusive, nil)
		if err == nil {
			t.Fatal("a model of 10^18 parameters was accepted")
		}
		msg := err.Error()
		for _, want := range []string{"model.hidden", "1e+18 parameters", "GB", "for 1 model with", "available", "train.batch_size 64"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q does not say %q", msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("error spans lines: %q", msg)
		}
		if left, err := os.ReadDir(out); err != nil || len(left) != 0 {
			t.Errorf("the refusal left %v in the output (%v): nothing may be written before it", left, err)
		}
	})
	t.Run("data.synth.rows", func(t *testing.T) {
		c := testConfig(t.TempDir())
		c.Data.Synth.Rows = 1 << 50
		_, err := Open(context.Background(), c, Exclusive, nil)
		if err == nil || !strings.Contains(err.Error(), "data.synth.rows: the dataset needs about") {
			t.Fatalf("a dataset of 2^50 rows: %v", err)
		}
	})
	t.Run("fits", func(t *testing.T) {
		s := openTest(t, testConfig(t.TempDir()))
		m, err := s.plannedMeta()
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.estimateMemory(m)
		// 800 rows × (4 features + label, eta, batch source): about 27 kB;
		// mlp 4→8→1: 49 parameters.
		if err != nil || e.data < 20e3 || e.data > 40e3 || e.fp.Params != 49 {
			t.Errorf("estimate of the test config: %+v, %v", e, err)
		}
	})
	// model.hidden's default ([64, 64], mlp's) is not higgs_mlp's or
	// kdd_embed's: each estimates its own layers (configs/higgs.yaml, which
	// names no hidden layers, was refused with "higgs_mlp has hidden
	// layers [300 300 300 300]; use kind mlp for [64 64]").
	for _, tc := range []struct {
		kind   model.Kind
		params float64
	}{
		{model.KindHiggsMLP, 4*300 + 300 + 3*(300*300+300) + 301},
		{model.KindMLP, 4*64 + 64 + 64*64 + 64 + 65},
	} {
		t.Run("default hidden/"+tc.kind.String(), func(t *testing.T) {
			c := testConfig(t.TempDir())
			c.Model.Kind = tc.kind
			c.Model.Hidden = config.Defaults().Model.Hidden
			s := openTest(t, c)
			m, err := s.plannedMeta()
			if err != nil {
				t.Fatal(err)
			}
			e, err := s.estimateMemory(m)
			if err != nil || e.fp.Params != tc.params {
				t.Errorf("%s: %g parameters, want %g (%v)", tc.kind, e.fp.Params, tc.params, err)
			}
		})
	}
}

// Under `ulimit -v` (RLIMIT_AS) a model that fits in MemAvailable but not
// in the address space the limit leaves is refused when the session opens,
// in one line naming the limit (it passed a guard that read MemAvailable
// and the cgroup only, then died in Go's allocator with a 214-line dump).
// The limit is set in a re-executed child, never in this process.
func TestRefusesOverRlimit(t *testing.T) {
	if avail, ok := memctl.Available(); !ok || avail < 4<<30 {
		t.Skip("needs 4 GiB available: the 1 GB model must pass MemAvailable for the rlimit to be what refuses it")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRefusesOverRlimitChild$", "-test.v")
	cmd.Env = append(os.Environ(), "PIPELINE_RLIMIT_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestRefusesOverRlimitChild") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestRefusesOverRlimitChild is TestRefusesOverRlimit's child: with its
// soft RLIMIT_AS at its mapped size + 256 MiB, a 64M-parameter model
// (about 1 GB with Adam's moments) must be refused by Open, naming
// RLIMIT_AS.
func TestRefusesOverRlimitChild(t *testing.T) {
	if os.Getenv("PIPELINE_RLIMIT_CHILD") == "" {
		t.Skip("child of TestRefusesOverRlimit")
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmSize:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		t.Fatal("no VmSize")
	}
	vm, _ := strconv.ParseUint(string(m[1]), 10, 64)
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil {
		t.Fatal(err)
	}
	r.Cur = vm<<10 + 256<<20
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &r); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	c := testConfig(out)
	c.Model.Kind, c.Model.Hidden = model.KindMLP, []int{8000, 8000}
	s, err := Open(context.Background(), c, Exclusive, nil)
	if err == nil {
		s.Close()
		t.Fatal("a 1 GB model was accepted with 256 MiB of address space left")
	}
	msg := err.Error()
	t.Logf("refused: %s", msg)
	for _, want := range []string{"model.hidden", "RLIMIT_AS", "ulimit -v " + strconv.FormatUint(r.Cur>>10, 10), "make model.hidden smaller"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
}
