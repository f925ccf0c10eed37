package pipeline

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/offheap"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// Releases and runs at a size where the features live outside the Go heap
// (package offheap), under the collector's most eager setting (GOGC=1) and
// offheap's debug mode (every freed or collected array poisoned: a read of
// it faults every time). Each case runs in a child process, so that a fault
// fails its case instead of killing the test binary. On the code before
// issue 35, `privatize` of 1M rows faulted in about 3 of 5 runs per
// mechanism under GOGC=1 (release.Ship read the input's features through
// a frame literal without their owner, which the collector unmapped).

const (
	envLargeCase = "LABELPRIVACY_TEST_LARGE_CASE" // the child's case
	envLargeDir  = "LABELPRIVACY_TEST_LARGE_DIR"  // its datasets' folder
)

// largeCase is one child's work on the datasets of dir.
type largeCase struct {
	name string
	run  func(dir, tmp string) error
}

func privatizeCase(name, dataset string, p pets.Params) largeCase {
	return largeCase{name, func(dir, tmp string) error {
		out := filepath.Join(tmp, "out", "release.arrow")
		got, err := Privatize(PrivatizeOptions{In: filepath.Join(dir, dataset, "train.arrow"), Out: out, Params: p,
			Ledger: filepath.Join(tmp, "ledger", "privacy_ledger.csv")})
		if err != nil {
			return err
		}
		f, err := data.ReadFrame(got.Path)
		if err != nil {
			return err
		}
		defer f.Close()
		in, err := data.ReadFrame(filepath.Join(dir, dataset, "train.arrow"))
		if err != nil {
			return err
		}
		defer in.Close()
		if len(f.RawLabelColumns()) > 0 || f.Row != nil {
			return fmt.Errorf("the release carries %v (row %v)", f.RawLabelColumns(), f.Row != nil)
		}
		if f.Dim() != in.Dim() || f.Rows < in.Rows-p.K {
			return fmt.Errorf("the release has %d rows of %d features, the input %d of %d", f.Rows, f.Dim(), in.Rows, in.Dim())
		}
		return sameFeatureRows(in, f)
	}}
}

// sameFeatureRows checks that every release row's features are an input
// row's (shuffled): the sums of each feature agree when nothing was
// dropped, and a sample of rows is found among the input's.
func sameFeatureRows(in, out *data.Frame) error {
	d := in.Dim()
	seen := make(map[string]bool, in.Rows)
	key := func(f *data.Frame, i int) string { return fmt.Sprint(f.X[i*d : (i+1)*d]) }
	for i := 0; i < in.Rows; i++ {
		if i%97 == 0 || in.Rows < 10_000 {
			seen[key(in, i)] = true
		}
	}
	found := 0
	for i := range out.Rows {
		if seen[key(out, i)] {
			found++
		}
	}
	// ~1/97 of the release's rows are sampled input rows; a release made
	// of other bytes finds none.
	if want := out.Rows / 97 / 2; found < want {
		return fmt.Errorf("%d release rows match sampled input rows, want ≥ %d: the release holds bytes of no input row", found, want)
	}
	return nil
}

func fitAuditCase(name string, pc []config.PetConfig) largeCase {
	return largeCase{name, func(dir, tmp string) error {
		c := config.Defaults()
		c.Name, c.Output, c.Seed = "large", filepath.Join(tmp, "out"), 3
		c.Data.Path = filepath.Join(dir, "groups")
		c.Model.Hidden = []int{4}
		c.Train.Epochs, c.Train.BatchSize, c.Train.Trials = 1, 4096, 1
		c.Train.LearningRates = []float64{0.01}
		c.Pets = append([]config.PetConfig{{Mechanism: pets.None}}, pc...)
		c.Audit.Examples = 2000
		c.Privacy.Ledger = filepath.Join(tmp, "ledger", "sim.csv")
		if err := Run(context.Background(), &c, nil, StageAll); err != nil {
			return err
		}
		sum, err := os.ReadFile(filepath.Join(c.Output, "summary.csv"))
		if err != nil {
			return err
		}
		if n := strings.Count(string(sum), "\n"); n != 1+len(c.Pets) { // header + one row a setting
			return fmt.Errorf("summary.csv has %d lines, want %d:\n%s", n, 1+len(c.Pets), sum)
		}
		return nil
	}}
}

func largeCases() []largeCase {
	return []largeCase{
		privatizeCase("privatize rr", "binary", pets.Params{Kind: pets.RR, Epsilon: 1}),
		privatizeCase("privatize llp", "binary", pets.Params{Kind: pets.LLP, K: 64}),
		privatizeCase("privatize llp_lap", "binary", pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 1}),
		privatizeCase("privatize llp_geom", "binary", pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 1}),
		privatizeCase("privatize rr 10 classes", "classes", pets.Params{Kind: pets.RR, Epsilon: 1}),
		privatizeCase("privatize llp_geom 10 classes", "classes", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2}),
		fitAuditCase("fit and audit rr_prior and curated bags", []config.PetConfig{
			{Mechanism: pets.RRPrior, Epsilon: []float64{1}},
			{Mechanism: pets.LLP, K: []int{8}, Bags: []llp.Rule{mustRule("sorted:x1")}},
			{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}, Bags: []llp.Rule{mustRule("key:group")}}}),
	}
}

func mustRule(s string) llp.Rule {
	r, err := llp.ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// TestLargeReleasesUnderGC: privatize of 1M rows through every mechanism
// privatize takes (binary and 10 classes), and fit + audit of 300k rows
// with rr_prior and curated bags, each in a child under GOGC=1 and
// LABELPRIVACY_OFFHEAP=debug: each succeeds, its release holds the input's
// feature rows and no label, and no mapped array was collected without its
// owner's Free (offheap's Dropped count stays 0 in the child).
func TestLargeReleasesUnderGC(t *testing.T) {
	if name := os.Getenv(envLargeCase); name != "" {
		runLargeChild(t, name)
		return
	}
	if testing.Short() {
		t.Skip("1M-row releases in child processes (about a minute); -short skips")
	}
	dir := t.TempDir()
	ctx := context.Background()
	for _, o := range []data.SynthOptions{
		{Kind: data.SynthLogistic, Rows: 1_000_000, TestRows: 1000, Features: 28, Seed: 3, Out: filepath.Join(dir, "binary")},
		{Kind: data.SynthMulticlass, Classes: 10, Rows: 1_000_000, TestRows: 1000, Features: 16, Seed: 4, Out: filepath.Join(dir, "classes")},
		{Kind: data.SynthLogistic, Rows: 300_000, TestRows: 3000, Features: 8, Seed: 5, Groups: 16, Out: filepath.Join(dir, "groups")},
	} {
		if _, err := data.Synth(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range largeCases() {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestLargeReleasesUnderGC$", "-test.v")
			cmd.Env = append(os.Environ(), envLargeCase+"="+c.name, envLargeDir+"="+dir, "GOGC=1",
				offheap.EnvDebug+"=debug", "XDG_DATA_HOME="+t.TempDir(), "HOME="+t.TempDir(), "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestLargeReleasesUnderGC") {
				t.Fatalf("%s: %v\n%s", c.name, err, tail(string(out), 4000))
			}
		})
	}
}

func runLargeChild(t *testing.T, name string) {
	if !offheap.Debugging() {
		t.Fatalf("the child runs without %s=debug", offheap.EnvDebug)
	}
	for _, c := range largeCases() {
		if c.name != name {
			continue
		}
		if err := c.run(os.Getenv(envLargeDir), t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if s := offheap.ReadStats(); s.Dropped > 0 {
			t.Fatalf("%d mapped arrays were collected without their owner's Free (%+v)", s.Dropped, s)
		}
		return
	}
	t.Fatalf("no case %q", name)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
