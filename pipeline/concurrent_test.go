package pipeline

import (
	"context"
	"errors"
	"fmt"
	"labelprivacy/config"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"labelprivacy/data"
	"labelprivacy/internal/memctl"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// concurrentConfig is a grid of 10 groups of one model each (5 settings ×
// 2 learning rates; 2 epochs of 24 steps) trained concurrent groups at a
// time.
func concurrentConfig(t *testing.T, concurrent int) *config.Config {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.Rows, c.Data.Synth.TestRows = 1536, 300
	c.Train.Epochs, c.Train.BatchSize, c.Train.Trials = 2, 64, 1
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1, 3}}, {Mechanism: pets.LLP, K: []int{8}},
		{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{2}}}
	c.Train.Replicas = config.Replicas{N: 1}
	c.Train.ConcurrentGroups = config.Replicas{N: concurrent}
	return c
}

// fitWith opens c and fits it with events to ev, returning the results,
// the clean runs' η̂ by run id, and Fit's error.
func fitWith(t *testing.T, ctx context.Context, c *config.Config, ev Events) ([]report.Run, map[string][]float64, error) {
	t.Helper()
	s, err := Open(context.Background(), c, Exclusive, ev)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := Fit(ctx, s, FitOptions{})
	eta := map[string][]float64{}
	for _, r := range runs {
		if r.Pet == pets.None {
			if eta[r.RunID], err = (store.Store{Dir: c.Output}).EtaHat(r.RunID, 2); err != nil {
				t.Fatal(err)
			}
		}
	}
	return runs, eta, err
}

// sameResults fails unless a and b hold the same runs with bit-identical
// metrics, learning curves and clean η̂; with resumed, a curve's training
// losses may differ by float32 rounding (below 1e-6 relative): the loss
// accumulator (float32, on the device) is read back at the checkpoint
// instead of at the next loss read, which groups the epoch's sum
// differently. Everything else, the parameters' predictions included, is
// bit for bit.
func sameResults(t *testing.T, what string, a, b []report.Run, etaA, etaB map[string][]float64, resumed bool) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%s: %d and %d runs", what, len(a), len(b))
	}
	sameCurve := func(x, y []report.EpochPoint) bool {
		if !resumed {
			return slices.Equal(x, y)
		}
		if len(y) < len(x) { // a run resumed at an epoch's end has the epochs after it
			x = x[len(x)-len(y):]
		}
		return slices.EqualFunc(x, y, func(p, q report.EpochPoint) bool {
			return p.Epoch == q.Epoch && p.TestAUC == q.TestAUC && p.TestLogLoss == q.TestLogLoss &&
				math.Abs(p.TrainLoss-q.TrainLoss) <= 1e-6*math.Abs(p.TrainLoss)
		})
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.RunID != y.RunID || x.TestAUC != y.TestAUC || x.TestLogLoss != y.TestLogLoss ||
			(x.TrainLoss != y.TrainLoss && !resumed) || x.Steps != y.Steps || !sameCurve(x.Curve, y.Curve) {
			t.Fatalf("%s: run %d (%s lr=%g): AUC %v / %v, log-loss %v / %v, loss %v / %v, steps %d / %d, curves %v / %v",
				what, i, x.Setting, x.LR, x.TestAUC, y.TestAUC, x.TestLogLoss, y.TestLogLoss, x.TrainLoss, y.TrainLoss,
				x.Steps, y.Steps, x.Curve, y.Curve)
		}
	}
	if len(etaA) == 0 {
		t.Fatalf("%s: no clean η̂ stored", what)
	}
	for id, e := range etaA {
		if !slices.Equal(e, etaB[id]) {
			t.Fatalf("%s: the clean run %s's η̂ differs", what, id)
		}
	}
}

func saidAtOnce(rec *recorder, n int) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.ContainsFunc(rec.info, func(m string) bool { return strings.Contains(m, fmt.Sprintf("training %d groups at once", n)) })
}

// Groups trained at once (each on its own backend and share of the cores)
// give every run bit for bit the result it gets when the groups train one
// after another: the same metrics, learning curves and clean η̂.
func TestConcurrentGroupsDoNotChangeResults(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 2 × 10 models")
	}
	one, etaOne, err := fitWith(t, context.Background(), concurrentConfig(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	two, etaTwo, err := fitWith(t, context.Background(), concurrentConfig(t, 2), rec)
	if err != nil {
		t.Fatal(err)
	}
	if !saidAtOnce(rec, 2) {
		t.Fatalf("the fit did not train 2 groups at once: %q", rec.info)
	}
	sameResults(t, "1 vs 2 groups at once", one, two, etaOne, etaTwo, false)
}

// cancelOnProgress cancels a fit at its first progress report of two
// groups at once (both in mid-training) and records the events.
type cancelOnProgress struct {
	recorder
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnProgress) Progress(p Progress) {
	if p.Stage == "fit" && strings.Contains(p.What, "2 groups at once") && !strings.Contains(p.What, "100%") {
		c.once.Do(c.cancel)
	}
}

// A fit training groups at once that is interrupted checkpoints every
// group in flight; the next fit resumes them, and every run ends with the
// result of an uninterrupted fit, bit for bit.
func TestConcurrentGroupsResume(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 2 × 10 models")
	}
	c := concurrentConfig(t, 2)
	c.Train.Epochs = 6 // progress at each epoch's end: mid-training
	uninterrupted := *c
	uninterrupted.Output, uninterrupted.Train.ConcurrentGroups = filepath.Join(t.TempDir(), "whole"), config.Replicas{N: 1}
	want, etaWant, err := fitWith(t, context.Background(), &uninterrupted, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stop := &cancelOnProgress{cancel: cancel}
	if _, _, err := fitWith(t, ctx, c, stop); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted fit: %v, want context.Canceled", err)
	}
	if !saidAtOnce(&stop.recorder, 2) {
		t.Fatalf("the fit did not train 2 groups at once: %q", stop.info)
	}
	rec := &recorder{}
	got, etaGot, err := fitWith(t, context.Background(), c, rec)
	if err != nil {
		t.Fatal(err)
	}
	resumed := 0
	for _, w := range rec.warns {
		if strings.Contains(w, "resumed from its checkpoint") {
			resumed++
		}
	}
	// Both groups were in mid-training when it stopped; one may still have
	// finished its last steps before it saw the stop (a loaded machine).
	if resumed < 1 {
		t.Fatalf("no group resumed from a checkpoint: %q", rec.warns)
	}
	t.Logf("%d groups resumed", resumed)
	sameResults(t, "resumed vs uninterrupted", want, got, etaWant, etaGot, true)
}

// train.concurrent_groups: on backend go a number as given (at most the
// groups to train), auto as many as GOMAXPROCS, 1 with an injected
// executor, and 1 when two groups would not fit in half the available
// memory; on XLA always 1.
func TestConcurrentGroupsResolved(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	session := func(backend string, n int, hidden []int) *Session {
		c := testConfig(t.TempDir())
		c.Backend, c.Train.ConcurrentGroups, c.Model.Hidden = mustBackend(t, backend), config.Replicas{N: n}, hidden
		return &Session{cfg: c, train: &data.Frame{Rows: 1000, Features: []string{"a", "b"}, X: make([]float32, 2000)}}
	}
	small := []int{8}
	for _, tc := range []struct {
		name     string
		s        *Session
		todo     int
		injected bool
		want     int
	}{
		{"explicit", session("go", 3, small), 10, false, 3},
		{"explicit, fewer groups", session("go", 3, small), 2, false, 2},
		{"explicit on xla", session("xla:cuda", 2, small), 10, false, 1},
		{"auto: GOMAXPROCS", session("go", 0, small), 10, false, 4},
		{"auto: the groups left", session("go", 0, small), 3, false, 3},
		{"auto: none left", session("go", 0, small), 0, false, 1},
		{"auto on xla", session("xla:cuda", 0, small), 10, false, 1},
		{"auto, injected executor", session("go", 0, small), 10, true, 1},
		{"auto: a model too large for two at once", session("go", 0, []int{100000, 100000}), 10, false, 1},
	} {
		if _, ok := memctl.Available(); !ok && tc.s.cfg.Model.Hidden[0] > 8 {
			continue // no memory figure here: nothing is bounded by it
		}
		if got := tc.s.concurrentGroups(tc.todo, tc.injected); got != tc.want {
			t.Errorf("%s: %d groups at once, want %d", tc.name, got, tc.want)
		}
	}
}

// progressRecorder keeps every progress report.
type progressRecorder struct {
	recorder
	got []Progress
}

func (p *progressRecorder) Progress(pr Progress) { p.got = append(p.got, pr) }

// Groups training at once share one progress line: every group in flight
// with its share done, their examples/s summed, the longest ETA; one group
// alone reports as it would by itself.
func TestProgressBoardMerges(t *testing.T) {
	rec := &progressRecorder{}
	b := &progressBoard{ev: rec, slots: 2}
	a, c := &runGroup{}, &runGroup{}
	b.show(a, Progress{Stage: "fit", What: "rr_eps1 lr=0.001 trial=0", Step: 10, Steps: 40, ExamplesPerS: 100, ETA: 3 * time.Second, UnitsDone: 1, Units: 5})
	if last := rec.got[len(rec.got)-1]; last.What != "rr_eps1 lr=0.001 trial=0" || last.Step != 10 {
		t.Fatalf("one group: %+v, want its own report", last)
	}
	b.show(c, Progress{Stage: "fit", What: "llp_k8 lr=0.01 trial=1", Step: 30, Steps: 40, ExamplesPerS: 50, ETA: time.Second, UnitsDone: 1, Units: 5})
	m := rec.got[len(rec.got)-1]
	want := "2 groups at once: rr_eps1 lr=0.001 trial=0 25%; llp_k8 lr=0.01 trial=1 75%"
	if m.What != want || m.ExamplesPerS != 150 || m.ETA != 3*time.Second || m.Units != 5 || !strings.Contains(m.String(), "150 ex/s") {
		t.Fatalf("merged: %+v (%q), want %q, 150 ex/s, ETA 3s", m, m.String(), want)
	}
	b.done(a)
	b.show(c, Progress{Stage: "fit", What: "llp_k8 lr=0.01 trial=1", Step: 35, Steps: 40, ExamplesPerS: 80})
	if last := rec.got[len(rec.got)-1]; last.What != "llp_k8 lr=0.01 trial=1" || last.Step != 35 {
		t.Fatalf("after one finished: %+v, want the other's own report", last)
	}
}
