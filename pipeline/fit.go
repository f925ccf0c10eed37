package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"labelprivacy/internal/english"
	"labelprivacy/model"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// FitOptions configure the fit stage.
type FitOptions struct {
	// Shard selects the groups to train (zero: every group).
	Shard Shard
	// KeepGoing records a failed group's runs (runs/<id>.failed.json) and
	// goes on with the others (sweeps); otherwise the first failure stops
	// the stage.
	KeepGoing bool
	// executor trains the groups; nil: a modelExecutor for cfg.Backend
	// (newModelExecutor; Fit closes it).
	executor executor
}

// ErrFailedRuns is returned (wrapped) when a KeepGoing fit had failures.
var ErrFailedRuns = errors.New("fit: some runs failed")

// Fit makes the releases and trains every run of the shard's groups whose
// result is missing (finished runs are never retrained), storing each
// result under runs/. Every release a stage will read (releaseReaders) is
// verified against its ledger row before it is read, and one that is
// damaged or missing is made again, with a warning naming the file; the
// releases of the groups that train first are made before training, the
// others while groups train (releaseQueue). It returns the finished
// results of the shard's runs in grid order.
func Fit(ctx context.Context, s *Session, o FitOptions) ([]report.Run, error) {
	if s.light {
		panic("pipeline: Fit on a session opened without the training features")
	}
	if o.Shard.N == 0 {
		o.Shard = allShards
	}
	st := store.Store{Dir: s.cfg.Output}
	if err := st.PutGrid(store.Grid{Dataset: s.datasetID, Config: s.configID, Runs: runIDs(s.runs)}); err != nil {
		return nil, err
	}
	exec, closeExec, err := s.fitExecutor(o) // before any release: a missing plugin fails at once
	if err != nil {
		return nil, err
	}
	defer closeExec()
	mine, mineRuns, err := s.shardGroups(o.Shard)
	if err != nil {
		return nil, err
	}
	done, missing, err := s.storedResults(st, mineRuns)
	if err != nil {
		return nil, err
	}
	var todoGroups []*runGroup
	for _, g := range mine {
		if pendingRuns(g, done) != nil {
			todoGroups = append(todoGroups, g)
		}
	}
	atOnce := s.concurrentGroups(len(todoGroups), o.executor != nil)
	made, q, restore, err := s.startReleases(ctx, exec, releaseReaders(missing, mineRuns, done), todoGroups, atOnce)
	if err != nil {
		return nil, err
	}
	defer restore()
	defer q.close(true)
	fs := &fitState{f: &fitter{s: s, st: st, ev: s.ev}, st: st, o: o, q: q, done: done, todo: len(todoGroups)}
	execs, closeExecs, err := fs.executors(exec, atOnce)
	if err != nil {
		return nil, err
	}
	defer closeExecs()
	started := time.Now()
	if err := fs.trainAll(ctx, execs, todoGroups); err != nil {
		return nil, err
	}
	if err := q.close(false); err != nil {
		return nil, err
	}
	if q != nil {
		s.sayReleases(made.add(q.n), fmt.Sprintf(" (%d of them made while groups trained)", q.n.wrote+q.n.reused))
	}
	fs.sayTrained(time.Since(started).Seconds(), len(execs), len(mineRuns)-len(missing))
	return fs.results(mineRuns)
}

// fitExecutor is o's executor, or the session's backend's (closed by the
// function returned), with the backend's notice said.
func (s *Session) fitExecutor(o FitOptions) (executor, func(), error) {
	if o.executor != nil {
		return o.executor, func() {}, nil
	}
	me, err := newModelExecutor(s.cfg.Backend)
	if err != nil {
		return nil, nil, err
	}
	if msg := model.FallbackNotice(me.be); msg != "" {
		s.ev.Warn("backend", msg)
	}
	return me, func() { me.Close() }, nil
}

// shardGroups forms the session's groups and returns the shard's, with
// their runs in grid order, saying what a shard of a sweep trains.
func (s *Session) shardGroups(shard Shard) ([]*runGroup, []*runSpec, error) {
	replicas, err := s.Replicas()
	if err != nil {
		return nil, nil, err
	}
	groups := formGroups(s.runs, replicas)
	var mine []*runGroup
	var mineRuns []*runSpec
	for j, g := range groups {
		if shard.Owns(j) {
			mine = append(mine, g)
			mineRuns = append(mineRuns, g.Runs...)
		}
	}
	if shard != allShards {
		s.ev.Info("sweep", fmt.Sprintf("shard %s: %d of %s, %d of %s (up to %s per group)",
			shard, len(mine), english.Count(len(groups), "group"), len(mineRuns), english.Count(len(s.runs), "run"), english.Count(replicas, "model")))
		if shard.N > len(groups) {
			s.ev.Warn("sweep", idleShards(shard.N, len(groups), true))
		}
	}
	return mine, mineRuns, nil
}

// storedResults reads the stored result of each run: done holds the
// finished ones, missing the others in order; a damaged record is set aside
// (and its run trained again), with a warning.
func (s *Session) storedResults(st store.Store, runs []*runSpec) (done map[string]*report.Run, missing []*runSpec, err error) {
	done = map[string]*report.Run{}
	for _, r := range runs {
		res, err := st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			s.ev.Warn("fit", d.Error()+": set aside as "+filepath.Base(d.Path)+".damaged; the run is trained again")
			err = st.SetAside(d)
		}
		if err != nil {
			return nil, nil, err
		}
		if res != nil {
			done[r.ID] = res
		} else {
			missing = append(missing, r)
		}
	}
	return done, missing, nil
}

// startReleases makes the releases the first groups read now and queues
// the others, made while groups train (releaseQueue), each before a group
// reads it; restore puts the session's events back once the queue is done
// (its events and the groups' interleave meanwhile).
func (s *Session) startReleases(ctx context.Context, exec executor, readers []*runSpec, todo []*runGroup, atOnce int) (
	made releaseCount, q *releaseQueue, restore func(), err error) {
	now, queued := s.splitReleases(readers, todo, atOnce)
	if made, err = s.makeUnits(ctx, now, exec, nil); err != nil {
		s.peopleSorted = nil
		return made, nil, nil, err
	}
	restore = func() {}
	if queued == nil {
		s.peopleSorted = nil
		s.sayReleases(made, "")
	} else {
		orig := s.ev
		s.ev = &syncEvents{ev: orig}
		restore = func() { s.ev = orig }
	}
	return made, s.queueReleases(ctx, queued), restore, nil
}

// fitState is one Fit's training: the results so far (done) and the counts
// its groups share, under f.mu.
type fitState struct {
	f    *fitter
	st   store.Store
	o    FitOptions
	q    *releaseQueue
	done map[string]*report.Run
	todo int // groups with runs to train

	trained, failed, byOthers int
}

// executors are the n executors groups train on at once (exec first; the
// others closed by the function returned).
func (fs *fitState) executors(exec executor, n int) ([]executor, func(), error) {
	s := fs.f.s
	if c := s.cfg.Train.ConcurrentGroups.N; c > 1 && !s.cfg.Backend.IsGo() {
		s.ev.Warn("fit", fmt.Sprintf("train.concurrent_groups: %d is for backend go; %s trains one group at a time "+
			"(a device trains more models per group instead: train.replicas)", c, s.cfg.Backend))
	}
	execs, err := fs.f.executors(exec, n)
	if err != nil {
		return nil, nil, err
	}
	return execs, func() {
		for _, e := range execs[1:] {
			if me, ok := e.(*modelExecutor); ok {
				me.Close()
			}
		}
	}, nil
}

// trainAll trains the groups, several at once on execs; a group another
// process is training is waited for afterwards (that process may have
// died), and what it left is trained then.
func (fs *fitState) trainAll(ctx context.Context, execs []executor, groups []*runGroup) error {
	f := fs.f
	var later []*runGroup
	err := f.each(ctx, execs, groups, func(ctx context.Context, exec executor, g *runGroup) error {
		f.mu.Lock()
		idle := pendingRuns(g, fs.done) == nil
		f.mu.Unlock()
		if idle {
			return nil
		}
		took, err := fs.fit(ctx, exec, g, false)
		if err == nil && !took {
			f.mu.Lock()
			later = append(later, g)
			f.mu.Unlock()
		}
		return err
	})
	if err != nil {
		return err
	}
	return f.each(ctx, execs, later, func(ctx context.Context, exec executor, g *runGroup) error {
		_, err := fs.fit(ctx, exec, g, true)
		return err
	})
}

// fit trains g under its group lock (so that two processes given the same
// shard never train one group at once), unless the lock is held and wait is
// false; it reports whether it took the lock. A failed group of a KeepGoing
// fit is recorded (runs/<id>.failed.json) and the fit goes on.
func (fs *fitState) fit(ctx context.Context, exec executor, g *runGroup, wait bool) (bool, error) {
	f := fs.f
	lock, err := f.lockGroup(ctx, g, wait)
	if lock == nil || err != nil {
		return false, err
	}
	defer f.unlockGroup(lock)
	f.mu.Lock()
	pending, others, err := f.refresh(g, fs.done) // results another process stored meanwhile
	fs.byOthers += others
	f.mu.Unlock()
	if err != nil || pending == nil {
		return true, err
	}
	if err := fs.q.wait(ctx, pending); err != nil { // the stage's failure, not the runs'
		return true, err
	}
	results, err := f.fitGroup(ctx, exec, g, pending, fs.todo)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if !fs.o.KeepGoing || ctx.Err() != nil {
			return true, err
		}
		f.ev.Error("fit", strings.TrimPrefix(err.Error(), "fit: "))
		for _, r := range pending {
			if rerr := fs.st.PutFailure(store.Failure{RunID: r.ID, Setting: r.Setting.ID, LR: r.LR, Trial: r.Trial, Error: err.Error()}); rerr != nil {
				return true, rerr
			}
		}
		fs.failed += len(pending)
		return true, nil
	}
	for _, res := range results {
		fs.done[res.RunID] = res
	}
	fs.trained += len(results)
	return true, nil
}

// sayTrained says what the fit trained in wall seconds on n executors,
// and what it skipped (already done), failed or found done by another
// process.
func (fs *fitState) sayTrained(wall float64, n, skipped int) {
	f, s := fs.f, fs.f.s
	if f.examples > 0 {
		s.ev.Info("fit", fmt.Sprintf("%s in %s trained in %.1f s, %d at a time: %.0f examples/s in all (evaluation and writing included)",
			english.Count(fs.trained, "model"), english.Count(f.groups, "group"), wall, n, float64(f.examples)/wall))
		if f.probeS > 0 && s.modelProbe() != nil {
			s.ev.Info("fit", s.modelProbeCost(f.probeS, wall))
		}
	}
	if skipped > 0 || fs.failed > 0 || fs.byOthers > 0 {
		msg := fmt.Sprintf("%s trained, %d already done (skipped), %d failed", english.Count(fs.trained, "run"), skipped, fs.failed)
		if fs.byOthers > 0 {
			msg += fmt.Sprintf(", %d finished meanwhile by another process", fs.byOthers)
		}
		s.ev.Info("fit", msg)
	}
}

// results are the finished results of runs in their order, with the notes
// on models that barely trained; an error wrapping ErrFailedRuns when some
// failed.
func (fs *fitState) results(runs []*runSpec) ([]report.Run, error) {
	s := fs.f.s
	var out []report.Run
	for _, r := range runs {
		if res := fs.done[r.ID]; res != nil {
			out = append(out, *res)
		}
	}
	for _, n := range s.trainingNotes(out) {
		s.ev.Warn("fit", n)
	}
	if fs.failed > 0 {
		return out, fmt.Errorf("%w: %d of %s (see %s/*.failed.json)", ErrFailedRuns, fs.failed, english.Count(len(runs), "run"), fs.st.RunsDir())
	}
	return out, nil
}

// idleShards says that n shards are more than the grid's groups (a shard
// owns whole groups): n − groups of them have nothing to do.
func idleShards(n, groups int, exact bool) string {
	of := english.Count(groups, "group")
	if !exact {
		of = "at most " + of
	}
	enough := english.Count(groups, "shard") + " are enough"
	if groups == 1 {
		enough = "1 shard is enough"
	}
	return fmt.Sprintf("%d shards for a grid of %s: %d of them will have nothing to do (%s)", n, of, n-groups, enough)
}

// releaseReaders lists the runs whose releases a stage will read, so that
// Fit verifies (and remakes, saying why) exactly those: the releases of the
// runs to train, and, finished or not, the trial-0 release of each
// rr_prior setting, whose test priors the audit reads. Releases of
// finished runs that nothing reads are not checked: remaking a damaged one
// would only charge the ledger again.
func releaseReaders(missing, mine []*runSpec, done map[string]*report.Run) []*runSpec {
	out := slices.Clone(missing)
	for _, r := range mine {
		if done[r.ID] != nil && r.Setting.Kind.Spec().Release.WithPrior() && r.Trial == 0 {
			out = append(out, r)
		}
	}
	return out
}

func runIDs(runs []*runSpec) []string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	return ids
}

// pendingRuns lists g's runs without a result (nil: none).
func pendingRuns(g *runGroup, done map[string]*report.Run) []*runSpec {
	var out []*runSpec
	for _, r := range g.Runs {
		if done[r.ID] == nil {
			out = append(out, r)
		}
	}
	return out
}
