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
	exec := o.executor
	if exec == nil {
		me, err := newModelExecutor(s.cfg.Backend) // before any release: a missing plugin fails at once
		if err != nil {
			return nil, err
		}
		defer me.Close()
		if msg := model.FallbackNotice(me.be); msg != "" {
			s.ev.Warn("backend", msg)
		}
		exec = me
	}
	replicas, err := s.Replicas()
	if err != nil {
		return nil, err
	}
	groups := formGroups(s.runs, replicas)
	var mine []*runGroup
	var mineRuns []*runSpec
	for j, g := range groups {
		if o.Shard.Owns(j) {
			mine = append(mine, g)
			mineRuns = append(mineRuns, g.Runs...)
		}
	}
	if o.Shard != allShards {
		s.ev.Info("sweep", fmt.Sprintf("shard %s: %d of %s, %d of %s (up to %s per group)",
			o.Shard, len(mine), english.Count(len(groups), "group"), len(mineRuns), english.Count(len(s.runs), "run"), english.Count(replicas, "model")))
		if o.Shard.N > len(groups) {
			s.ev.Warn("sweep", idleShards(o.Shard.N, len(groups), true))
		}
	}
	// Which runs are missing, and their releases.
	done := map[string]*report.Run{}
	var missing []*runSpec
	for _, r := range mineRuns {
		res, err := st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			s.ev.Warn("fit", d.Error()+": set aside as "+filepath.Base(d.Path)+".damaged; the run is trained again")
			err = st.SetAside(d)
		}
		if err != nil {
			return nil, err
		}
		if res != nil {
			done[r.ID] = res
		} else {
			missing = append(missing, r)
		}
	}
	var todoGroups []*runGroup
	for _, g := range mine {
		if pendingRuns(g, done) != nil {
			todoGroups = append(todoGroups, g)
		}
	}
	todo := len(todoGroups)
	atOnce := s.concurrentGroups(todo, o.executor != nil)
	// The releases the first groups read are made now; the others while
	// groups train (releaseQueue), each before a group reads it.
	now, queued := s.splitReleases(releaseReaders(missing, mineRuns, done), todoGroups, atOnce)
	made, err := s.makeUnits(ctx, now, exec, nil)
	if err != nil {
		s.peopleSorted = nil
		return nil, err
	}
	if queued == nil {
		s.peopleSorted = nil
		s.sayReleases(made, "")
	} else {
		orig := s.ev
		s.ev = &syncEvents{ev: orig} // the queue's events and the groups' interleave
		defer func() { s.ev = orig }()
	}
	q := s.queueReleases(ctx, queued)
	defer q.close(true)
	f := &fitter{s: s, st: st, ev: s.ev}
	if n := s.cfg.Train.ConcurrentGroups.N; n > 1 && !s.cfg.Backend.IsGo() {
		s.ev.Warn("fit", fmt.Sprintf("train.concurrent_groups: %d is for backend go; %s trains one group at a time "+
			"(a device trains more models per group instead: train.replicas)", n, s.cfg.Backend))
	}
	execs, err := f.executors(exec, atOnce)
	if err != nil {
		return nil, err
	}
	for _, e := range execs[1:] {
		if me, ok := e.(*modelExecutor); ok {
			defer me.Close()
		}
	}
	trained, failed, byOthers := 0, 0, 0
	started := time.Now()
	// fit trains g under its group lock (so that two processes given the
	// same shard never train one group at once), unless the lock is held
	// and wait is false; it reports whether it took the lock. Groups that
	// train at once share f.mu for done and the counts.
	fit := func(ctx context.Context, exec executor, g *runGroup, wait bool) (bool, error) {
		lock, err := f.lockGroup(ctx, g, wait)
		if lock == nil || err != nil {
			return false, err
		}
		defer f.unlockGroup(lock)
		f.mu.Lock()
		pending, others, err := f.refresh(g, done) // results another process stored meanwhile
		byOthers += others
		f.mu.Unlock()
		if err != nil || pending == nil {
			return true, err
		}
		if err := q.wait(ctx, pending); err != nil { // the stage's failure, not the runs'
			return true, err
		}
		results, err := f.fitGroup(ctx, exec, g, pending, todo)
		f.mu.Lock()
		defer f.mu.Unlock()
		if err != nil {
			if !o.KeepGoing || ctx.Err() != nil {
				return true, err
			}
			f.ev.Error("fit", strings.TrimPrefix(err.Error(), "fit: "))
			for _, r := range pending {
				if rerr := st.PutFailure(store.Failure{RunID: r.ID, Setting: r.Setting.ID, LR: r.LR, Trial: r.Trial, Error: err.Error()}); rerr != nil {
					return true, rerr
				}
			}
			failed += len(pending)
			return true, nil
		}
		for _, res := range results {
			done[res.RunID] = res
		}
		trained += len(results)
		return true, nil
	}
	var later []*runGroup // groups another process was training
	err = f.each(ctx, execs, todoGroups, func(ctx context.Context, exec executor, g *runGroup) error {
		f.mu.Lock()
		idle := pendingRuns(g, done) == nil
		f.mu.Unlock()
		if idle {
			return nil
		}
		took, err := fit(ctx, exec, g, false)
		if err == nil && !took {
			f.mu.Lock()
			later = append(later, g)
			f.mu.Unlock()
		}
		return err
	})
	if err == nil { // the other process may have died: wait, then train what it left
		err = f.each(ctx, execs, later, func(ctx context.Context, exec executor, g *runGroup) error {
			_, err := fit(ctx, exec, g, true)
			return err
		})
	}
	if err == nil {
		err = q.close(false)
	}
	if err != nil {
		return nil, err
	}
	if q != nil {
		s.sayReleases(made.add(q.n), fmt.Sprintf(" (%d of them made while groups trained)", q.n.wrote+q.n.reused))
	}
	if wall := time.Since(started).Seconds(); f.examples > 0 {
		s.ev.Info("fit", fmt.Sprintf("%s in %s trained in %.1f s, %d at a time: %.0f examples/s in all (evaluation and writing included)",
			english.Count(trained, "model"), english.Count(f.groups, "group"), wall, len(execs), float64(f.examples)/wall))
		if f.probeS > 0 && s.modelProbe() != nil {
			s.ev.Info("fit", s.modelProbeCost(f.probeS, wall))
		}
	}
	if skipped := len(mineRuns) - len(missing); skipped > 0 || failed > 0 || byOthers > 0 {
		msg := fmt.Sprintf("%s trained, %d already done (skipped), %d failed", english.Count(trained, "run"), skipped, failed)
		if byOthers > 0 {
			msg += fmt.Sprintf(", %d finished meanwhile by another process", byOthers)
		}
		s.ev.Info("fit", msg)
	}
	var out []report.Run
	for _, r := range mineRuns {
		if res := done[r.ID]; res != nil {
			out = append(out, *res)
		}
	}
	for _, n := range s.trainingNotes(out) {
		s.ev.Warn("fit", n)
	}
	if failed > 0 {
		return out, fmt.Errorf("%w: %d of %s (see %s/*.failed.json)", ErrFailedRuns, failed, english.Count(len(mineRuns), "run"), st.RunsDir())
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
