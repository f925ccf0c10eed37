package model

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ckptFixture is a small group to checkpoint: 2 replicas, 10 steps per epoch.
type ckptFixture struct {
	tr, te logisticData
}

func newCkptFixture() ckptFixture {
	w, b := trueModel(8, 3, 2)
	return ckptFixture{tr: makeLogistic(2000, w, b, 4), te: makeLogistic(300, w, b, 5)}
}

func (f ckptFixture) cfg(t testing.TB, epochs int, dir string) GroupConfig {
	feat := denseFrame(f.tr.X, 8)
	return GroupConfig{Name: "ckpt", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 8, Hidden: []int{16}},
		Loss: LossDebiasedBCE, Epochs: epochs, Features: feat, CheckpointDir: dir, CheckpointEvery: Interval{Steps: 4},
		Replicas: []Replica{
			{Name: "a", Seed: 11, LR: 3e-3, Params: LossParams{FlipProb: 0.2}, Source: source(t, feat, srcOpts{labels: randomizedResponse(f.tr.Y, 0.2, 1), batch: 200, seed: 3})},
			{Name: "b", Seed: 12, LR: 1e-2, Params: LossParams{FlipProb: 0.1}, Source: source(t, feat, srcOpts{labels: randomizedResponse(f.tr.Y, 0.1, 2), batch: 200, seed: 4})},
		}}
}

func (f ckptFixture) predict(t testing.TB, g *Group) [][]float32 {
	return mustPredict(t, g, denseFrame(f.te.X, 8))
}

func sameLosses(a, b *Group) bool {
	for i := range a.Results {
		x, y := a.Results[i].FinalLoss, b.Results[i].FinalLoss
		if !(math.Abs(x-y) <= 1e-6*math.Max(1, math.Abs(x))) { // NaN fails

			return false
		}
	}
	return true
}

func TestCheckpointResume(t *testing.T) {
	f := newCkptFixture()
	const stepsPerEpoch = 10

	t.Run("finished group resumes at its end", func(t *testing.T) {
		dir := t.TempDir()
		g1 := mustTrain(t, f.cfg(t, 2, dir))
		if g1.Steps != 2*stepsPerEpoch || g1.ResumedFrom != 0 || g1.Checkpoints < 4 || g1.CheckpointS <= 0 || g1.CheckpointWriteS <= 0 {
			t.Fatalf("first run: %+v", g1)
		}
		g2 := mustTrain(t, f.cfg(t, 2, dir))
		if g2.ResumedFrom != 2*stepsPerEpoch || g2.StepsRun != 0 || g2.Steps != 2*stepsPerEpoch {
			t.Fatalf("second run: resumed from %d, ran %d, steps %d; want resume at %d, run 0", g2.ResumedFrom, g2.StepsRun, g2.Steps, 2*stepsPerEpoch)
		}
		if !slices.EqualFunc(f.predict(t, g1), f.predict(t, g2), slices.Equal) || !sameLosses(g1, g2) {
			t.Fatal("restored group predicts differently or lost its final losses")
		}
		if names, _ := listCheckpoints(dir); len(names) != ckptKeep {
			t.Errorf("directory keeps %v, want the newest %d", names, ckptKeep)
		}
	})

	t.Run("cancelled group resumes like an uninterrupted one", func(t *testing.T) {
		// Stopped in the last epoch, so the final loss needs the epoch's
		// loss sum saved before the stop.
		full := mustTrain(t, f.cfg(t, 2, ""))
		want := f.predict(t, full)
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		killed := f.cfg(t, 2, dir)
		killed.LossEvery = 1
		killed.Progress = func(p Progress) {
			if p.Step == 13 {
				cancel() // stop after step 13, mid epoch 2
			}
		}
		if _, err := TrainGroup(ctx, killed); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled group returned %v", err)
		}
		resumed := mustTrain(t, f.cfg(t, 2, dir))
		if resumed.ResumedFrom != 13 || resumed.Steps != 2*stepsPerEpoch {
			t.Fatalf("resumed from %d to %d, want 13 to %d", resumed.ResumedFrom, resumed.Steps, 2*stepsPerEpoch)
		}
		if !slices.EqualFunc(f.predict(t, resumed), want, slices.Equal) {
			t.Fatal("resumed group differs from the uninterrupted one")
		}
		if !sameLosses(resumed, full) {
			t.Fatalf("final losses %v, uninterrupted %v", resumed.Results, full.Results)
		}
	})

	t.Run("more epochs continue a finished group", func(t *testing.T) {
		dir := t.TempDir()
		mustTrain(t, f.cfg(t, 1, dir))
		more := mustTrain(t, f.cfg(t, 2, dir))
		full := mustTrain(t, f.cfg(t, 2, ""))
		if more.ResumedFrom != stepsPerEpoch || !slices.EqualFunc(f.predict(t, more), f.predict(t, full), slices.Equal) {
			t.Fatalf("resumed from %d; predictions equal to a 2-epoch run: false", more.ResumedFrom)
		}
	})

	// A crash can leave a temporary file; a disk can damage a complete one.
	// Either is set aside and the previous checkpoint used. Step 16's
	// checkpoint falls between two loss read-backs (LossEvery 50: at the
	// epoch ends), so resuming from it ends with the uninterrupted run's
	// final losses only if the checkpoint took in the losses accumulated on
	// the device since step 10.
	full := mustTrain(t, f.cfg(t, 2, ""))
	for _, damage := range []string{"truncated", "flipped byte", "empty", "leftover temporary"} {
		t.Run("damaged: "+damage, func(t *testing.T) {
			dir := t.TempDir()
			mustTrain(t, f.cfg(t, 2, dir)) // checkpoints at steps 16 and 20 remain
			names, _ := listCheckpoints(dir)
			newest := filepath.Join(dir, names[len(names)-1])
			wantStep := int64(16)
			b, _ := os.ReadFile(newest)
			switch damage {
			case "truncated":
				os.WriteFile(newest, b[:len(b)/2], 0o644)
			case "flipped byte":
				b[len(b)/2] ^= 0x10
				os.WriteFile(newest, b, 0o644)
			case "empty":
				os.WriteFile(newest, nil, 0o644)
			case "leftover temporary":
				os.WriteFile(filepath.Join(dir, ckptTmp+"ckpt-000000000024.lpck-123"), b[:100], 0o644)
				wantStep = 20
			}
			var notices []string
			cfg := f.cfg(t, 2, dir)
			cfg.Notices = func(s string) { notices = append(notices, s) }
			g := mustTrain(t, cfg)
			if g.ResumedFrom != wantStep || g.Steps != 20 {
				t.Fatalf("resumed from %d to %d; want %d, then 20", g.ResumedFrom, g.Steps, wantStep)
			}
			if !slices.EqualFunc(f.predict(t, g), f.predict(t, full), slices.Equal) || !sameLosses(g, full) {
				t.Fatalf("resumed from step %d: final losses %v, uninterrupted %v (or other predictions)", wantStep, g.Results, full.Results)
			}
			inc, _ := os.ReadDir(filepath.Join(dir, "incomplete"))
			if len(inc) != 1 || len(notices) != 1 || !strings.Contains(notices[0], "set aside") {
				t.Fatalf("set aside %v with notices %q", inc, notices)
			}
		})
	}

	t.Run("another group in the directory", func(t *testing.T) {
		dir := t.TempDir()
		mustTrain(t, f.cfg(t, 1, dir))
		other := f.cfg(t, 1, dir)
		other.Replicas[1].LR = 5e-3
		_, err := TrainGroup(t.Context(), other)
		if !errors.Is(err, ErrCheckpointMismatch) || !strings.Contains(err.Error(), `group "ckpt"`) {
			t.Fatalf("want a checkpoint mismatch naming the group, got %v", err)
		}
	})

	t.Run("wall-clock interval", func(t *testing.T) {
		cfg := f.cfg(t, 2, t.TempDir())
		cfg.CheckpointEvery = Interval{Every: time.Hour}
		if g := mustTrain(t, cfg); g.Checkpoints != 1 { // only the final one
			t.Fatalf("%d checkpoints within an hour's interval, want only the final one", g.Checkpoints)
		}
		cfg.CheckpointEvery = Interval{Every: time.Nanosecond}
		cfg.CheckpointDir = t.TempDir()
		if g := mustTrain(t, cfg); g.Checkpoints != 20 { // after each step but the last, plus the final one
			t.Fatalf("%d checkpoints at a 1ns interval, want 20", g.Checkpoints)
		}
	})
}

// TestKilledGroupResumes kills a training process with SIGKILL after its
// first checkpoints and resumes in this one: the result equals an
// uninterrupted run's exactly.
func TestKilledGroupResumes(t *testing.T) {
	const envDir = "LABELPRIVACY_MODEL_KILL_CHILD_DIR"
	f := newCkptFixture()
	cfg := func(dir string) GroupConfig {
		c := f.cfg(t, 150, dir) // 1500 steps: seconds, so the kill lands mid-training
		c.CheckpointEvery = Interval{Steps: 25}
		return c
	}
	if dir := os.Getenv(envDir); dir != "" {
		_, err := TrainGroup(context.Background(), cfg(dir))
		if err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("subprocess test skipped with -short")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledGroupResumes$")
	cmd.Env = append(os.Environ(), envDir+"="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if names, _ := listCheckpoints(dir); len(names) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no checkpoint from the child: %s", out.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed (it finished first?): %v\n%s", err, out.String())
	}
	resumed := mustTrain(t, cfg(dir))
	full := mustTrain(t, cfg(""))
	t.Logf("killed at or after step %d of %d; checkpoint stall %.3fs, writes %.3fs", resumed.ResumedFrom, full.Steps, resumed.CheckpointS, resumed.CheckpointWriteS)
	if resumed.ResumedFrom <= 0 || resumed.ResumedFrom >= full.Steps {
		t.Fatalf("resumed from step %d of %d", resumed.ResumedFrom, full.Steps)
	}
	if !slices.EqualFunc(f.predict(t, resumed), f.predict(t, full), slices.Equal) || !sameLosses(resumed, full) {
		t.Fatal("the resumed group differs from the uninterrupted one")
	}
}

// FuzzReadCheckpoint: no file makes the reader panic or allocate beyond its
// size, and whatever it accepts matches its header. The seed corpus (run by
// plain go test) holds a valid checkpoint and damaged copies.
func FuzzReadCheckpoint(f *testing.F) {
	dir := f.TempDir()
	s := &snapshot{step: 3, epochLossSum: []float64{1, 2}, lastEpochLoss: []float64{math.NaN(), 0.5},
		tensors: []ckptTensor{{Name: "param/w", Dims: []int{2, 3}}, {Name: "param/b", Dims: []int{2}}},
		data:    [][]float32{{1, 2, 3, 4, 5, 6}, {-1, 1}}}
	if err := writeCheckpoint(dir, `{"x":1}`, s); err != nil {
		f.Fatal(err)
	}
	valid, err := os.ReadFile(filepath.Join(dir, ckptName(3)))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:40])
	f.Add([]byte{})
	flipped := slices.Clone(valid)
	flipped[len(flipped)-20] ^= 1
	f.Add(flipped)
	huge := bytes.Replace(valid, []byte(`[2,3]`), []byte(`[2000000000,3000000000]`), 1)
	f.Add(huge)
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "c.lpck")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		h, data, err := readCheckpoint(p)
		if err != nil {
			if !errors.Is(err, errDamaged) {
				t.Fatalf("error %v is not a damaged-checkpoint error", err)
			}
			return
		}
		if len(data) != len(h.Tensors) {
			t.Fatalf("%d tensors for %d in the header", len(data), len(h.Tensors))
		}
		for i, ts := range h.Tensors {
			n := 1
			for _, d := range ts.Dims {
				n *= d
			}
			if len(data[i]) != n {
				t.Fatalf("tensor %s: %d values for dims %v", ts.Name, len(data[i]), ts.Dims)
			}
		}
		if bytes.Equal(b, valid) && (h.Step != 3 || !slices.Equal(data[0], s.data[0]) || !math.IsNaN(floatsOf(h.LastEpochLoss)[0])) {
			t.Fatalf("valid checkpoint read back as %+v %v", h, data)
		}
	})
}

// TestHostTableCheckpointResume: kdd_embed's host-kept table is written to
// checkpoints from the live table (no snapshot copy); a group cancelled
// mid-training resumes from one and ends exactly as an uninterrupted group.
func TestHostTableCheckpointResume(t *testing.T) {
	const width, buckets = 5, 150
	idx, mask, y := sparseData(1200, width, buckets, 7)
	tidx, tmask, _ := sparseData(300, width, buckets, 8)
	feat, test := sparseFrame(idx, mask, width), sparseFrame(tidx, tmask, width)
	cfg := func(dir string) GroupConfig {
		return GroupConfig{Name: "kddckpt", Backend: goBackend(t), Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets},
			Loss: LossBCE, Epochs: 2, Features: feat, SparseEmbedding: true, Resident: ResidentNever,
			CheckpointDir: dir, CheckpointEvery: Interval{Steps: 3},
			Replicas: []Replica{
				{Name: "a", Seed: 1, LR: 3e-3, Source: source(t, feat, srcOpts{labels: y, batch: 100, seed: 1})},
				{Name: "b", Seed: 2, LR: 1e-2, Source: source(t, feat, srcOpts{labels: y, batch: 100, seed: 2})},
			}}
	}
	full := mustTrain(t, cfg(""))
	if full.Resident || full.Checkpoints != 0 {
		t.Fatalf("reference group: resident %v, %d checkpoints", full.Resident, full.Checkpoints)
	}
	want := mustPredict(t, full, test)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	killed := cfg(dir)
	killed.LossEvery = 1
	killed.Progress = func(p Progress) {
		if p.Step == 17 {
			cancel()
		}
	}
	if _, err := TrainGroup(ctx, killed); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled group returned %v", err)
	}
	resumed := mustTrain(t, cfg(dir))
	if resumed.ResumedFrom != 17 || resumed.Steps != 24 {
		t.Fatalf("resumed from %d to %d, want 17 to 24", resumed.ResumedFrom, resumed.Steps)
	}
	if !slices.EqualFunc(mustPredict(t, resumed, test), want, slices.Equal) {
		t.Fatal("the group resumed from a host-table checkpoint predicts differently from the uninterrupted one")
	}
}
