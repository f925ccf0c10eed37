package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/flock"
	"labelprivacy/ledger"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
)

// fakeExec stands in for the model: it checks what a trainer is handed
// (no label column, row ids in range, one target per row or per bag),
// records every batch a run receives and predicts a fixed function of the
// test features.
type fakeExec struct {
	t     *testing.T
	mu    sync.Mutex
	calls [][]string // run ids, per Execute
	fail  bool
	seen  map[string]*received // by run id
}

// received is what one run's trainer was handed.
type received struct {
	run     *runSpec
	loss    model.Loss
	params  model.LossParams
	batches []data.Batch // first epoch, copied
}

func (f *fakeExec) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	g := job.Group
	f.mu.Lock()
	var ids []string
	for _, r := range job.runs {
		ids = append(ids, r.ID)
	}
	f.calls = append(f.calls, ids)
	f.mu.Unlock()
	if f.fail {
		return nil, jobStats{}, errors.New("device on fire")
	}
	if len(g.Replicas) != len(job.runs) {
		f.t.Fatalf("%s: %d replicas for %d runs", g.Name, len(g.Replicas), len(job.runs))
	}
	var outs []outcome
	for i, run := range job.runs {
		rep := g.Replicas[i]
		if run.Plan.Loss != g.Loss {
			f.t.Errorf("%s: run %s has loss %s in a %s group", g.Name, run.ID, run.Plan.Loss, g.Loss)
		}
		rec := &received{run: run, loss: g.Loss, params: rep.Params}
		steps := int64(0)
		for {
			b, err := rep.Source.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, jobStats{}, err
			}
			steps++
			if b.X != nil {
				f.t.Errorf("an IndexOnly source gathered features")
			}
			for _, r := range b.RowIDs {
				if r < 0 || int(r) >= g.Features.Rows {
					f.t.Fatalf("row id %d outside %d feature rows", r, g.Features.Rows)
				}
			}
			want := b.Rows
			switch {
			case b.Sized: // bags of any size: each slot's α and size, each row's slot
				want = 2*b.BagSize + b.Rows
			case b.BagSize > 0:
				want = b.Rows / b.BagSize
			}
			if g.Model.Classes >= 3 {
				if b.TargetWidth != g.Model.Classes {
					f.t.Fatalf("target width %d for a model of %d classes", b.TargetWidth, g.Model.Classes)
				}
				want *= b.TargetWidth
			}
			if len(b.Target) != want {
				f.t.Fatalf("%d targets for %d rows (bag size %d)", len(b.Target), b.Rows, b.BagSize)
			}
			cp := *b
			cp.RowIDs, cp.Target = slices.Clone(b.RowIDs), slices.Clone(b.Target)
			rec.batches = append(rec.batches, cp)
		}
		f.mu.Lock()
		if f.seen == nil {
			f.seen = map[string]*received{}
		}
		f.seen[run.ID] = rec
		f.mu.Unlock()
		probs := make([]float32, job.Test.Rows)
		for i := range probs {
			probs[i] = float32(1 / (1 + math.Exp(-float64(job.Test.X[i*job.Test.Dim()]))))
		}
		if c := g.Model.Classes; c >= 3 {
			probs = probs[:0]
			for i := range job.Test.Rows {
				probs = append(probs, fakeProbsC(job.Test.X[i*job.Test.Dim()], c)...)
			}
		}
		outs = append(outs, outcome{Probs: probs, FinalLoss: 0.5, Steps: steps})
	}
	return outs, jobStats{WallS: 1, ExamplesPerS: 100}, nil
}

func (f *fakeExec) runs() []string {
	var all []string
	for _, c := range f.calls {
		all = append(all, c...)
	}
	return all
}

func openTest(t *testing.T, c *config.Config) *Session {
	t.Helper()
	s, err := Open(context.Background(), c, Exclusive, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Fit trains each missing run exactly once, in groups of at most
// train.replicas runs of one loss (and bag size); a rerun trains nothing; a
// lost result is retrained alone; each (setting, trial) release is made
// once, recorded in the ledger and free of seeds.
func TestFitSchedulesEachRunOnce(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Replicas = config.Replicas{N: 3}
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	res, err := Fit(context.Background(), s, FitOptions{executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	trained := ex.runs()
	slices.Sort(trained)
	var want []string
	for _, r := range s.runs {
		if r.Setting.Trains() {
			want = append(want, r.ID)
		}
	}
	slices.Sort(want)
	if !slices.Equal(trained, want) || len(res) != len(s.runs) {
		t.Fatalf("trained %d runs (want %d, each once); %d results for %d runs", len(trained), len(want), len(res), len(s.runs))
	}
	for _, call := range ex.calls {
		if len(call) > 3 {
			t.Fatalf("a group of %d runs with replicas 3", len(call))
		}
	}
	// 3 settings that release × 2 trials, each once.
	entries, err := ledger.Read(s.ledgerPath())
	if err != nil || len(entries) != 6 {
		t.Fatalf("ledger: %d rows (%v), want 6", len(entries), err)
	}
	for _, e := range entries {
		if e.Noise != pets.NoiseSimulation || e.Seed == "" {
			t.Fatalf("ledger row %+v", e)
		}
		md, err := data.ReadMetadata(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range md {
			if strings.Contains(k, "seed") || v == e.Seed {
				t.Fatalf("release %s metadata %q=%q carries its seed", e.Path, k, v)
			}
		}
		if md["noise"] != string(pets.NoiseSimulation) {
			t.Fatalf("release %s noise %q", e.Path, md["noise"])
		}
	}
	// Rerun: nothing to train, no new release.
	ex2 := &fakeExec{t: t}
	if _, err := Fit(context.Background(), s, FitOptions{executor: ex2}); err != nil || len(ex2.calls) != 0 {
		t.Fatalf("rerun trained %v (%v)", ex2.calls, err)
	}
	if e2, _ := ledger.Read(s.ledgerPath()); len(e2) != 6 {
		t.Fatalf("a rerun added ledger rows: %d", len(e2))
	}
	// A lost result is retrained, alone.
	lost := s.runs[5]
	os.Remove(store.Store{Dir: c.Output}.ResultPath(lost.ID))
	ex3 := &fakeExec{t: t}
	if _, err := Fit(context.Background(), s, FitOptions{executor: ex3}); err != nil || !slices.Equal(ex3.runs(), []string{lost.ID}) {
		t.Fatalf("retrained %v, want only %s (%v)", ex3.calls, lost.ID, err)
	}
}

// Shards partition the groups: two shards train every run exactly once
// between them; a failing executor records failures and sweep status
// reports them.
func TestFitShardsAndFailures(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Replicas = config.Replicas{N: 2}
	s := openTest(t, c)
	var all []string
	for i := range 2 {
		ex := &fakeExec{t: t}
		if _, err := Fit(context.Background(), s, FitOptions{Shard: Shard{i, 2}, executor: ex}); err != nil {
			t.Fatal(err)
		}
		all = append(all, ex.runs()...)
	}
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != len(all) || len(all) != 16 { // 4 training settings × 2 LR × 2 trials
		t.Fatalf("two shards trained %d runs (%d distinct), want 16 once each", len(all), len(slices.Compact(all)))
	}

	c2 := testConfig(filepath.Join(t.TempDir(), "out2"))
	s2 := openTest(t, c2)
	_, err := Fit(context.Background(), s2, FitOptions{KeepGoing: true, executor: &fakeExec{t: t, fail: true}})
	if !errors.Is(err, ErrFailedRuns) {
		t.Fatalf("err = %v", err)
	}
	s2.Close()
	st, err := SweepStatus(context.Background(), c2)
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed != 16 || st.Done != 4 || st.Missing != 0 { // bot's 4 runs train nothing and cannot fail
		t.Fatalf("status %+v", st)
	}
	// Trained again, every run is stored and its failure record cleared.
	s2 = openTest(t, c2)
	if _, err := Fit(context.Background(), s2, FitOptions{KeepGoing: true, executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if st, err = SweepStatus(context.Background(), c2); err != nil || st.Failed != 0 || st.Done != 20 {
		t.Fatalf("after a successful fit: status %+v (%v)", st, err)
	}
	if left, _ := filepath.Glob(filepath.Join(c2.Output, "runs", "*.failed.json")); len(left) > 0 {
		t.Fatalf("failure records left: %v", left)
	}
}

// A single-writer stage holds the output: a second one fails at once and
// names the holder; sweep shards share it.
func TestOutputLock(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	s := openTest(t, c)
	_, err := Open(context.Background(), c, Exclusive, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("second writer: err = %v, want it to name pid %d", err, os.Getpid())
	}
	if _, err := Open(context.Background(), c, Shared, nil); err == nil {
		t.Fatal("a shard opened an output held by a single writer")
	}
	s.Close()
	a, err := Open(context.Background(), c, Shared, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(context.Background(), c, Shared, nil)
	if err != nil {
		t.Fatalf("two shards: %v", err)
	}
	b.Close()
}

// slowExec is fakeExec taking d per group, so that concurrent fits overlap.
type slowExec struct {
	*fakeExec
	d time.Duration
}

func (e slowExec) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	time.Sleep(e.d)
	return e.fakeExec.Execute(ctx, job)
}

// Two processes given the same shard (a resubmitted array task, a typo)
// never train one group at once: each group's lock makes the second skip
// it, train another and come back for what is left; between them every run
// is trained exactly once and both return every result of the shard. No
// group lock file is left behind.
// Each process training two groups at once takes the same locks: still
// each group is trained once.
func TestSameShardTwiceTrainsEachGroupOnce(t *testing.T) {
	for _, concurrent := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d groups at once", concurrent), func(t *testing.T) { sameShardTwice(t, concurrent) })
	}
}

func sameShardTwice(t *testing.T, concurrent int) {
	defer func(p time.Duration) { groupLockPoll = p }(groupLockPoll)
	groupLockPoll = 10 * time.Millisecond
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	c.Train.ConcurrentGroups = config.Replicas{N: concurrent}
	openTest(t, c).Close() // the dataset first, so both only read it
	ex := &fakeExec{t: t}
	shard := Shard{1, 2}
	var wg sync.WaitGroup
	var sessions [2]*Session
	var recs [2]*recorder
	var results [2][]string
	var errs [2]error
	for i := range sessions {
		rec := &recorder{}
		s, err := Open(context.Background(), c, Shared, rec)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		sessions[i], recs[i] = s, rec
	}
	for i, s := range sessions {
		wg.Go(func() {
			res, err := Fit(context.Background(), s, FitOptions{Shard: shard, executor: slowExec{ex, 20 * time.Millisecond}})
			for _, r := range res {
				results[i] = append(results[i], r.RunID)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := sessions[0]
	replicas, _ := s.Replicas()
	var want, all []string
	for j, g := range formGroups(s.runs, replicas) {
		if shard.Owns(j) {
			for _, r := range g.Runs {
				all = append(all, r.ID)
				if r.Setting.Trains() {
					want = append(want, r.ID)
				}
			}
		}
	}
	trained := ex.runs()
	slices.Sort(trained)
	slices.Sort(want)
	if !slices.Equal(trained, want) {
		t.Fatalf("trained %d runs %v; want each of the shard's %d once", len(trained), trained, len(want))
	}
	for i := range results {
		slices.Sort(results[i])
		slices.Sort(all)
		if !slices.Equal(results[i], all) {
			t.Errorf("process %d returned %d results, want the shard's %d", i, len(results[i]), len(all))
		}
	}
	skipped := 0
	for _, rec := range recs {
		for _, m := range rec.info {
			if strings.Contains(m, "is being trained by pid") {
				skipped++
			}
		}
	}
	if skipped == 0 {
		t.Error("neither process said it skipped a group another was training")
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".locks", "*")); len(left) != 0 {
		t.Errorf("group locks left behind: %v", left)
	}
	if _, err := os.Stat(filepath.Join(out, ".locks")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty folder of group locks was left behind (%v)", err)
	}
}

// A group whose training failed leaves no lock file behind, whether the
// fit keeps going (a sweep: failures recorded) or stops at the error, and
// the folder of group locks goes once empty; a lock another holder has in
// that folder stays, and so does the folder.
func TestFailedGroupsLeaveNoLocks(t *testing.T) {
	for _, tc := range []struct {
		name      string
		keepGoing bool
		other     bool
	}{
		{"keep going", true, false},
		{"stop", false, false},
		{"another holder's lock", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			s := openTest(t, c)
			locks := store.Store{Dir: c.Output}.LocksDir()
			other := filepath.Join(locks, "other.lock")
			if tc.other {
				l, err := flock.Acquire(other, flock.Exclusive, false, "another grid's group")
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			_, err := Fit(context.Background(), s, FitOptions{KeepGoing: tc.keepGoing, executor: &fakeExec{t: t, fail: true}})
			if err == nil || (tc.keepGoing && !errors.Is(err, ErrFailedRuns)) {
				t.Fatalf("err = %v, want the failure", err)
			}
			left, _ := filepath.Glob(filepath.Join(locks, "*"))
			if tc.other {
				if !slices.Equal(left, []string{other, other + ".holders"}) {
					t.Fatalf("left in %s: %v, want only the other holder's lock", locks, left)
				}
				if _, err := flock.Acquire(other, flock.Exclusive, false, "test"); !errors.Is(err, flock.ErrHeld) {
					t.Fatalf("the other holder's lock was let go: %v", err)
				}
				return
			}
			if len(left) != 0 {
				t.Fatalf("failed groups left %v", left)
			}
			if _, err := os.Stat(locks); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("the empty folder of group locks was left behind (%v)", err)
			}
		})
	}
}

// More shards than groups: every shard warns that some will have nothing
// to do, naming how many are enough.
func TestFitWarnsIdleShards(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	s, rec := openRec(t, c)
	groups := len(formGroups(s.runs, 1))
	n := groups * 10
	if _, err := Fit(context.Background(), s, FitOptions{Shard: Shard{n - 1, n}, executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d shards for a grid of %d groups: %d of them will have nothing to do (%d shards are enough)", n, groups, n-groups, groups)
	if !slices.ContainsFunc(rec.warns, func(w string) bool { return strings.Contains(w, want) }) {
		t.Fatalf("warnings %q lack %q", rec.warns, want)
	}
}

// fakeProbsC is the fake executor's prediction over c classes for a row
// whose first feature is x: the softmax of (j − (c−1)/2)·x, j = 0..c−1, in
// float32 (rows with |x| large put nearly all mass on class 0 or c−1).
func fakeProbsC(x float32, c int) []float32 {
	out := make([]float32, c)
	var sum float64
	e := make([]float64, c)
	for j := range c {
		e[j] = math.Exp((float64(j) - float64(c-1)/2) * 2 * float64(x))
		sum += e[j]
	}
	for j := range c {
		out[j] = float32(e[j] / sum)
	}
	return out
}

// idleShards names how many shards are enough, singular for one group.
func TestIdleShardsCounts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		n, groups int
		exact     bool
		want      string
	}{
		{"one group", 3, 1, true, "3 shards for a grid of 1 group: 2 of them will have nothing to do (1 shard is enough)"},
		{"two groups", 5, 2, true, "5 shards for a grid of 2 groups: 3 of them will have nothing to do (2 shards are enough)"},
		{"at most", 4, 1, false, "4 shards for a grid of at most 1 group: 3 of them will have nothing to do (1 shard is enough)"},
	} {
		if got := idleShards(tc.n, tc.groups, tc.exact); got != tc.want {
			t.Errorf("%s: %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
