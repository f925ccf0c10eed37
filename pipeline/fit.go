package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/flock"
	"labelprivacy/internal/stats"
	"labelprivacy/model"
	"labelprivacy/pets"
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
	// executor trains the groups; nil: NewModelExecutor(cfg.Backend).
	executor executor
}

// ErrFailedRuns is returned (wrapped) when a KeepGoing fit had failures.
var ErrFailedRuns = errors.New("fit: some runs failed")

// Fit makes the releases and trains every run of the shard's groups whose
// result is missing (finished runs are never retrained), storing each
// result under runs/. Every release a stage will read (releaseReaders) is
// verified against its ledger row first, and one that is damaged or missing
// is made again, with a warning naming the file. It returns the finished
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
			o.Shard, len(mine), count(len(groups), "group"), len(mineRuns), count(len(s.runs), "run"), count(replicas, "model")))
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
	if err := s.makeReleases(ctx, releaseReaders(missing, mineRuns, done), exec); err != nil {
		return nil, err
	}
	var todoGroups []*runGroup
	for _, g := range mine {
		if pendingRuns(g, done) != nil {
			todoGroups = append(todoGroups, g)
		}
	}
	todo := len(todoGroups)
	f := &fitter{s: s, st: st, ev: s.ev}
	if n := s.cfg.Train.ConcurrentGroups.N; n > 1 && !s.cfg.Backend.IsGo() {
		s.ev.Warn("fit", fmt.Sprintf("train.concurrent_groups: %d is for backend go; %s trains one group at a time "+
			"(a device trains more models per group instead: train.replicas)", n, s.cfg.Backend))
	}
	execs, err := f.executors(exec, s.concurrentGroups(todo, o.executor != nil))
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
		finished := false
		defer func() { f.unlockGroup(g, lock, finished) }()
		f.mu.Lock()
		pending, others, err := f.refresh(g, done) // results another process stored meanwhile
		byOthers += others
		f.mu.Unlock()
		if err != nil || pending == nil {
			finished = err == nil
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
		finished = true
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
	if err != nil {
		return nil, err
	}
	if wall := time.Since(started).Seconds(); f.examples > 0 {
		s.ev.Info("fit", fmt.Sprintf("%s in %s trained in %.1f s, %d at a time: %.0f examples/s in all (evaluation and writing included)",
			count(trained, "model"), count(f.groups, "group"), wall, len(execs), float64(f.examples)/wall))
	}
	if skipped := len(mineRuns) - len(missing); skipped > 0 || failed > 0 || byOthers > 0 {
		msg := fmt.Sprintf("%s trained, %d already done (skipped), %d failed", count(trained, "run"), skipped, failed)
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
	if failed > 0 {
		return out, fmt.Errorf("%w: %d of %d runs (see %s/*.failed.json)", ErrFailedRuns, failed, len(mineRuns), st.RunsDir())
	}
	return out, nil
}

// idleShards says that n shards are more than the grid's groups (a shard
// owns whole groups): n − groups of them have nothing to do.
func idleShards(n, groups int, exact bool) string {
	of := count(groups, "group")
	if !exact {
		of = "at most " + of
	}
	return fmt.Sprintf("%d shards for a grid of %s: %d of them will have nothing to do (%d shards are enough)", n, of, n-groups, groups)
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

// autoStateBudget is what train.replicas: auto lets a group's parameters
// and Adam moments take on an XLA device: GoMLX v0.26 exposes no
// device-memory query, so it is an assumption, sized for a 16 GB GPU that
// also holds up to model.DefaultResidentMaxBytes (4 GiB) of features and
// the activations. Set train.replicas to use a larger device fully.
const autoStateBudget = 8 << 30

// Replicas resolves train.replicas: a number as given; auto is 1 on the go
// backend (the pure-Go matmul does the same work per example whatever the
// group size, so stacking gains nothing on a CPU) and, on XLA backends, as
// many models as fit AutoStateBudget, at most 64 (Higgs MLP: 3.2 MiB each,
// 64; kdd_embed: 286 MiB each, 28).
func (s *Session) Replicas() (int, error) {
	c := s.cfg
	if !c.Train.Replicas.Auto() {
		return c.Train.Replicas.N, nil
	}
	if c.Backend.IsGo() {
		return 1, nil
	}
	mc, err := s.modelConfig()
	if err != nil {
		return 0, err
	}
	if mc, err = mc.WithDefaults(); err != nil {
		return 0, err
	}
	return int(min(64, max(1, autoStateBudget/mc.StateBytes(1)))), nil
}

// fitter trains groups of one session, one or several at once (each on
// its own executor).
type fitter struct {
	s  *Session
	st store.Store
	// ev is the session's events; serialized (and progress merged into one
	// line by board) when groups train at once.
	ev    Events
	board *progressBoard
	// mu guards what groups trained at once share: Fit's done map and
	// counts, and groups and spent.
	mu       sync.Mutex
	groups   int // groups trained so far
	spent    time.Duration
	examples int64 // training examples of the groups trained (steps run in this call × rows per step, every model)
}

// executors returns the n executors groups train on at once: exec alone
// (n ≤ 1), or exec and n−1 more of the same backend sharing the cores
// through a model.CoreShare (the caller closes the others). An injected
// executor (tests) serves every slot itself. With several, the fitter's
// events are serialized and its progress merged.
func (f *fitter) executors(exec executor, n int) ([]executor, error) {
	execs := []executor{exec}
	if n <= 1 {
		return execs, nil
	}
	f.ev = &syncEvents{ev: f.ev}
	f.board = &progressBoard{ev: f.ev, slots: n}
	me, ok := exec.(*modelExecutor)
	if !ok {
		for len(execs) < n {
			execs = append(execs, exec)
		}
		return execs, nil
	}
	share := model.NewCoreShare(0)
	me.share = share
	for len(execs) < n {
		more, err := newModelExecutor(f.s.cfg.Backend)
		if err != nil {
			for _, e := range execs[1:] {
				e.(*modelExecutor).Close()
			}
			return nil, err
		}
		more.share = share
		execs = append(execs, more)
	}
	f.ev.Info("fit", fmt.Sprintf("training %d groups at once, each on its share of the %d cores (train.concurrent_groups)",
		n, runtime.GOMAXPROCS(0)))
	return execs, nil
}

// each calls fn for the groups in order, one at a time with one executor;
// with several, each executor's goroutine takes the next group when it is
// free. The first error stops the others (their groups checkpoint, as on
// an interruption) and is returned.
func (f *fitter) each(ctx context.Context, execs []executor, gs []*runGroup, fn func(context.Context, executor, *runGroup) error) error {
	if len(execs) == 1 {
		for _, g := range gs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, execs[0], g); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *runGroup)
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for _, exec := range execs {
		wg.Go(func() {
			for g := range next {
				if err := fn(ctx, exec, g); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for _, g := range gs {
		select {
		case next <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// groupLockPoll is how often a process waiting for another's group checks
// the lock (flock's blocking wait cannot be interrupted).
var groupLockPoll = 2 * time.Second

// lockGroup takes g's group lock. Held by another process, it returns nil
// (saying so) when wait is false, else polls until the lock is free or ctx
// is done.
func (f *fitter) lockGroup(ctx context.Context, g *runGroup, wait bool) (*flock.Lock, error) {
	path := f.st.GroupLockPath(groupID(g.Runs))
	said := false
	for {
		l, err := flock.Acquire(path, flock.Exclusive, false, "train fit: "+g.Name())
		var held *flock.HeldError
		if !errors.As(err, &held) {
			return l, err
		}
		who := strings.Join(held.Holders, "; ")
		if who == "" {
			who = "another process"
		}
		if !wait {
			f.s.ev.Info("fit", fmt.Sprintf("%s is being trained by %s: coming back to it after the others", g.Name(), who))
			return nil, nil
		}
		if !said {
			f.s.ev.Info("fit", fmt.Sprintf("waiting for %s to finish %s", who, g.Name()))
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(groupLockPoll):
		}
	}
}

// unlockGroup releases g's group lock; once the group is finished its lock
// file goes too (a process that still opens it re-reads the results before
// training, so it finds nothing to do).
func (f *fitter) unlockGroup(g *runGroup, l *flock.Lock, finished bool) {
	path := f.st.GroupLockPath(groupID(g.Runs))
	if finished {
		os.Remove(path)
	}
	l.Release()
	if finished {
		os.Remove(path + ".holders") // only when empty
	}
}

// refresh re-reads the results of g's runs not yet done (another process
// may have stored them since Fit looked) and returns the runs still
// pending (nil: none) and how many were found finished.
func (f *fitter) refresh(g *runGroup, done map[string]*report.Run) ([]*runSpec, int, error) {
	var pending []*runSpec
	found := 0
	for _, r := range g.Runs {
		if done[r.ID] != nil {
			continue
		}
		res, err := f.st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			res, err = nil, nil // trained again; Put replaces the record
		}
		if err != nil {
			return nil, found, err
		}
		if res != nil {
			done[r.ID] = res
			found++
			continue
		}
		pending = append(pending, r)
	}
	return pending, found, nil
}

// fitGroup trains the pending runs of g on exec and stores their results.
func (f *fitter) fitGroup(ctx context.Context, exec executor, g *runGroup, pending []*runSpec, todo int) ([]*report.Run, error) {
	s := f.s
	start := time.Now()
	if !g.Runs[0].Setting.Trains() {
		return f.constantRuns(pending)
	}
	job, err := f.job(g, pending, todo)
	if err != nil {
		return nil, fmt.Errorf("fit: %s: %w", g.Name(), err)
	}
	w := f.watch(job)
	outs, gs, err := exec.Execute(ctx, job)
	f.board.done(g)
	if err != nil {
		return nil, fmt.Errorf("fit: %s: %w", g.Name(), err)
	}
	if len(outs) != len(pending) {
		return nil, fmt.Errorf("fit: %s: executor returned %d outcomes for %d runs", g.Name(), len(outs), len(pending))
	}
	if gs.ResumedFrom > 0 {
		f.ev.Warn("fit", fmt.Sprintf("%s resumed from its checkpoint at step %d", g.Name(), gs.ResumedFrom))
	}
	var results []*report.Run
	for i, r := range pending {
		res := f.result(r, len(pending))
		o := outs[i]
		res.Steps = o.Steps
		res.TrainLoss = o.FinalLoss
		s.score(res, o.Probs)
		res.WallS = gs.WallS / float64(len(pending))
		res.CompileS, res.CheckpointS = gs.CompileS, gs.CheckpointS
		res.GroupExamplesPerS = gs.ExamplesPerS
		res.ExamplesPerS = gs.ExamplesPerS / float64(len(pending))
		res.Curve = w.curves[i]
		if msg := w.diverged(i, res); msg != "" {
			f.ev.Warn("fit", fmt.Sprintf("%s lr=%g trial %d: %s", r.Setting.ID, r.LR, r.Trial, msg))
		}
		if r.Setting.Kind.Spec().Release == pets.ReleaseRaw {
			if err := f.st.PutEtaHat(r.ID, o.Probs, s.classes()); err != nil {
				return nil, err
			}
		}
		if err := f.st.Put(res); err != nil {
			return nil, err
		}
		f.report(r, res)
		results = append(results, res)
	}
	os.RemoveAll(job.Group.CheckpointDir)
	f.mu.Lock()
	for i, r := range pending {
		f.examples += (outs[i].Steps - gs.ResumedFrom) * int64(r.Plan.BatchSize)
	}
	f.groups++
	f.spent += time.Since(start)
	f.mu.Unlock()
	return results, nil
}

// watcher records each run's learning curve (per epoch: training loss,
// test AUC and log-loss) while its group trains, and the largest loss a
// trained model could have, against which divergence is judged.
type watcher struct {
	curves [][]report.EpochPoint
	limit  []float64
}

// watch hooks a watcher into job's epoch ends.
func (f *fitter) watch(job *groupJob) *watcher {
	n := len(job.runs)
	w := &watcher{curves: make([][]report.EpochPoint, n), limit: make([]float64, n)}
	for i := range w.limit {
		w.limit[i] = divergeLimit
		if rho := job.Group.Replicas[i].Params.FlipProb; rho > 0 && rho < 0.5 {
			w.limit[i] /= 1 - 2*rho // debiased BCE weighs examples by up to 1/(1−2ρ)
		}
	}
	job.Group.EpochEnd = func(e model.EpochEnd) error {
		var probs [][]float32
		if e.Predict != nil {
			var err error
			if probs, err = e.Predict(job.Test); err != nil {
				return fmt.Errorf("learning curve, epoch %d: %w", e.Epoch, err)
			}
		}
		for i := range min(n, len(e.Losses)) {
			p := report.EpochPoint{Epoch: e.Epoch, TrainLoss: e.Losses[i], TestAUC: math.NaN(), TestLogLoss: math.NaN(), TestAccuracy: math.NaN()}
			if probs != nil {
				t := f.s.scoreTest(probs[i])
				p.TestAUC, p.TestLogLoss, p.TestAccuracy = t.auc, t.logLoss, t.accuracy
			}
			w.curves[i] = append(w.curves[i], p)
		}
		return nil
	}
	return w
}

// divergeLimit is the largest mean training loss over an epoch, in
// magnitude, of a model that has not diverged (times 1/(1−2ρ) for debiased
// BCE). Every loss trained here (BCE, debiased BCE, PropMatch, EasyLLP) is
// ln 2 ≈ 0.69 for a model that predicts ½ and falls when training works;
// the shipped configs' runs stay within −15…0.7 (debiased BCE at ε = 0.5
// and rr_prior's noisy targets overfit below 0), while a learning rate of
// 1e9 drives the loss to 1e18–1e28 within the first epoch.
const divergeLimit = 1e4

// diverged says, in words, that run i's training loss diverged ("" when
// it did not).
func (w *watcher) diverged(i int, res *report.Run) string {
	worst, at := res.TrainLoss, 0
	for _, p := range w.curves[i] {
		if math.Abs(p.TrainLoss) > math.Abs(worst) || math.IsNaN(worst) {
			worst, at = p.TrainLoss, p.Epoch
		}
	}
	if !(math.Abs(worst) > w.limit[i]) {
		return ""
	}
	where := "in its last epoch"
	if at > 0 {
		where = fmt.Sprintf("in epoch %d", at)
	}
	return fmt.Sprintf("the training loss diverged (%.3g %s; a model predicting ½ has %.2f): the learning rate is "+
		"probably too high, and this run's test AUC %.4f is not that of a trained model (learning_curves.csv has its curve)",
		worst, where, math.Ln2, res.TestAUC)
}

// result fills the identity fields of r's result.
func (f *fitter) result(r *runSpec, groupSize int) *report.Run {
	s := f.s
	res := &report.Run{RunID: r.ID, Dataset: s.datasetID, ConfigID: s.configID, Model: s.cfg.Model.Kind.String(),
		Setting: r.Setting.ID, Pet: r.Setting.Kind, K: r.Setting.K, Epsilon: r.Setting.Epsilon, Bags: bagsName(r.Setting),
		LabelDPEpsilon: r.Setting.Mech.Epsilon(), LR: r.LR, Trial: r.Trial, Seed: r.Seed, Epochs: s.cfg.Train.Epochs,
		Backend: s.cfg.Backend.String(), Replicas: groupSize, TrainLoss: math.NaN(), Matmul: s.cfg.Backend.Matmul(),
		Classes: s.classes(), TestAccuracy: math.NaN(),
		ConfigName: s.cfg.Name, Config: configKeys(s.cfg)}
	prov := s.provenance()
	res.Provenance = &prov
	if r.Plan.Loss != 0 {
		res.Loss = r.Plan.Loss.String()
	} else {
		res.Loss = "constant"
	}
	if s.std != nil {
		res.Standardization = &report.Standardization{Mean: s.std.Mean, Std: s.std.Std}
	}
	return res
}

// constantRuns stores bot's results: ⊥ releases nothing, so the best model
// is a constant score (AUC ½; on C classes the uniform distribution, whose
// argmax is class 0); nothing is trained.
func (f *fitter) constantRuns(runs []*runSpec) ([]*report.Run, error) {
	c := f.s.classes()
	probs := make([]float32, len(f.s.test.Label)*heads(c))
	for i := range probs {
		probs[i] = 1 / float32(max(c, 2))
	}
	var out []*report.Run
	for _, r := range runs {
		res := f.result(r, 1)
		f.s.score(res, probs)
		if err := f.st.Put(res); err != nil {
			return nil, err
		}
		f.report(r, res)
		out = append(out, res)
	}
	return out, nil
}

func (f *fitter) report(spec *runSpec, r *report.Run) {
	loss := fmt.Sprintf("%.4f", r.TrainLoss)
	if math.Abs(r.TrainLoss) >= 1e4 {
		loss = fmt.Sprintf("%.3g", r.TrainLoss)
	}
	score := fmt.Sprintf("test AUC %.4f", r.TestAUC)
	if r.NumClasses() >= 3 {
		score = fmt.Sprintf("test accuracy %.4f  macro AUC %.4f", r.TestAccuracy, r.TestAUC)
	}
	what := fmt.Sprintf("%s  loss %s  %.0f ex/s", score, loss, r.ExamplesPerS)
	if r.Loss == "constant" {
		what = score + "  constant predictor (⊥ releases nothing; no training)"
	}
	f.ev.Info("fit", fmt.Sprintf("[%d/%d] %-22s lr=%-8g trial=%d  %s", spec.Index+1, len(f.s.runs), r.Setting, r.LR, r.Trial, what))
}

// heads is the number of predicted values per test row of a model on c
// classes: P(y = 1) for binary labels, C probabilities otherwise.
func heads(c int) int {
	if c >= 3 {
		return c
	}
	return 1
}

// testScore is a model's test metrics.
type testScore struct{ auc, logLoss, accuracy float64 }

// scoreTest scores test-set predictions (Group.Predict's layout) against
// the test labels: for binary labels the AUC, the log-loss and the
// accuracy of predicting 1 where P(y = 1 | x) > ½; on C ≥ 3 classes the
// macro one-vs-rest AUC, the cross-entropy −log p_y and the accuracy of the
// most probable class (model.MacroAUC, CrossEntropy, Accuracy).
func (s *Session) scoreTest(probs []float32) testScore {
	labels := s.test.Label
	if c := s.classes(); c >= 3 {
		return testScore{model.MacroAUC(probs, c, labels), model.CrossEntropy(probs, c, labels), model.Accuracy(probs, c, labels)}
	}
	hits := 0
	for i, p := range probs {
		if (p > 0.5) == (labels[i] == 1) {
			hits++
		}
	}
	acc := math.NaN()
	if len(labels) > 0 {
		acc = float64(hits) / float64(len(labels))
	}
	return testScore{stats.AUC(probs, labels), model.LogLoss(probs, labels), acc}
}

// score fills a result's test metrics from its test-set predictions.
func (s *Session) score(res *report.Run, probs []float32) {
	t := s.scoreTest(probs)
	res.TestAUC, res.TestLogLoss, res.TestAccuracy = t.auc, t.logLoss, t.accuracy
}

// job builds the executor's job for the pending runs of g from their
// plans: each run's batch source over its release (or the clean labels) and
// loss parameters.
func (f *fitter) job(g *runGroup, pending []*runSpec, todo int) (*groupJob, error) {
	s := f.s
	mc, err := s.modelConfig()
	if err != nil {
		return nil, err
	}
	feats := s.train.FeaturesOnly()
	job := &groupJob{runs: pending, Test: s.test.FeaturesOnly(), Group: model.GroupConfig{
		Name: g.Name(), Model: mc, Loss: g.Loss, Epochs: s.cfg.Train.Epochs, Features: feats,
		CheckpointDir: f.st.CheckpointDir(groupID(pending)), CheckpointEvery: s.cfg.Train.CheckpointEvery,
		SparseEmbedding: s.cfg.Train.SparseEmbedding,
		Notices:         func(msg string) { f.ev.Warn("fit", msg) }}}
	job.Group.Progress = func(mp model.Progress) {
		var loss float64
		for _, l := range mp.Losses {
			loss += l / float64(len(mp.Losses))
		}
		f.mu.Lock()
		groupsDone, spent := f.groups, f.spent
		f.mu.Unlock()
		p := Progress{Stage: "fit", What: g.Name(), Epoch: mp.Epoch, Epochs: mp.Epochs, Step: mp.Step, Steps: mp.Steps,
			ExamplesPerS: mp.ExamplesPerS, Loss: loss, ETA: mp.ETA, UnitsDone: groupsDone, Units: todo}
		if groupsDone > 0 {
			per := spent / time.Duration(groupsDone)
			slots := 1
			if f.board != nil {
				slots = f.board.slots
			}
			p.TotalETA = p.ETA + per*time.Duration(max(0, todo-groupsDone-slots)/slots)
		}
		if f.board != nil {
			f.board.show(g, p)
			return
		}
		f.ev.Progress(p)
	}
	releases := map[string]*data.Frame{}
	for _, r := range pending {
		p := r.Plan
		o := p.BatchOptions(feats, s.dataset.Meta.MaxIndices)
		src := s.train
		var rel *data.Frame
		if p.Release != "" {
			if rel = releases[p.Release]; rel == nil {
				if rel, err = readRelease(p.Release); err != nil {
					return nil, err
				}
				releases[p.Release] = rel
			}
			src = rel
		}
		if p.Target == data.TargetSoft {
			if src, err = softTargets(rel, r.Setting, p.PriorTargets); err != nil {
				return nil, err
			}
		}
		bs, err := data.NewBatchSource(src, o)
		if err != nil {
			return nil, fmt.Errorf("run %s (%s): %w", r.ID, r.Name(), err)
		}
		job.Group.Replicas = append(job.Group.Replicas, model.Replica{Name: r.Name(), Seed: p.InitSeed, LR: r.LR,
			Params: p.LossParams(rel), Source: bs})
	}
	return job, nil
}

// modelConfig is the configured architecture for the session's dataset:
// a softmax head of C logits when the dataset's labels have C ≥ 3 classes
// (meta.json decides; there is no config key for it).
func (s *Session) modelConfig() (model.ModelConfig, error) {
	mc := model.ModelConfig{Kind: s.cfg.Model.Kind, InputDim: s.train.Dim(), Init: s.cfg.Model.Init}
	if c := s.classes(); c >= 3 {
		mc.Classes = c
	}
	switch mc.Kind {
	case model.KindMLP:
		mc.Hidden = s.cfg.Model.Hidden
	case model.KindKDDEmbed:
		if !s.train.HasSparse() {
			return mc, fmt.Errorf("model.kind: kdd_embed needs a dataset with a sparse %q column (train data import libsvm)", data.ColIndices)
		}
		if mc.Classes >= 3 {
			return mc, &config.FieldError{Key: "model.kind", Msg: fmt.Sprintf("kdd_embed is binary only, and the labels of %s have %d classes "+
				"(its %s): use mlp or higgs_mlp", s.dataset.Dir, mc.Classes, data.MetaFile)}
		}
		mc.Buckets = int(s.dataset.Meta.HashBuckets)
	}
	if mc.Kind != model.KindKDDEmbed && s.train.Dim() == 0 {
		return mc, fmt.Errorf("model.kind: %s needs dense features; this dataset has only sparse ones (use kdd_embed)", mc.Kind)
	}
	return mc, nil
}

// writeRunTables writes runs.csv and runs.parquet.
func writeRunTables(s *Session, runs []report.Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("fit: no finished runs")
	}
	t := report.RunsTable(runs)
	if err := t.WriteCSV(s.Out("runs.csv")); err != nil {
		return err
	}
	if err := t.WriteParquet(s.Out("runs.parquet")); err != nil {
		return err
	}
	c := report.CurveTable(runs)
	if err := c.WriteCSV(s.Out("learning_curves.csv")); err != nil {
		return err
	}
	if err := c.WriteParquet(s.Out("learning_curves.parquet")); err != nil {
		return err
	}
	s.ev.Info("fit", fmt.Sprintf("wrote %s, %s, %s", s.Out("runs.csv"), s.Out("runs.parquet"), s.Out("learning_curves.csv")))
	return nil
}
