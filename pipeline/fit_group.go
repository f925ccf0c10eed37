package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/par"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

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
	if f.board == nil { // until its first step: compiling, or resuming from a checkpoint
		f.mu.Lock()
		done := f.groups
		f.mu.Unlock()
		f.progress(Progress{Stage: "fit", What: g.Name() + ": preparing", UnitsDone: done, Units: todo})
	}
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
	// Score every run and write the clean models' η̂ at once, then store
	// the group's results together (store.PutAll: their syncs overlap), then
	// say what each run did, in order.
	results, errs := make([]*report.Run, len(pending)), make([]error, len(pending))
	par.Each(len(pending), 0, func(_, i int) {
		r, o := pending[i], outs[i]
		res := f.result(r, len(pending))
		res.Steps = o.Steps
		res.TrainLoss = o.FinalLoss
		s.score(res, o.Probs, r.Plan)
		res.WallS = gs.WallS / float64(len(pending))
		res.CompileS, res.CheckpointS = gs.CompileS, gs.CheckpointS
		res.GroupExamplesPerS = gs.ExamplesPerS
		res.ExamplesPerS = gs.ExamplesPerS / float64(len(pending))
		res.Curve = w.curves[i]
		results[i] = res
		if r.Setting.Kind.Spec().Release == pets.ReleaseRaw { // before its result: the audit reads it
			errs[i] = f.st.PutEtaHat(r.ID, o.Probs, s.etaClasses())
		}
		if o.ProbeProbs != nil && errs[i] == nil {
			errs[i] = s.putModelHat(f.st, r.ID, o)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := f.st.PutAll(results); err != nil {
		return nil, err
	}
	for i, r := range pending {
		if msg := w.diverged(i, results[i]); msg != "" {
			f.ev.Warn("fit", fmt.Sprintf("%s lr=%g trial %d: %s", r.Setting.ID, r.LR, r.Trial, msg))
		}
		f.report(r, results[i])
	}
	os.RemoveAll(job.Group.CheckpointDir)
	f.mu.Lock()
	for i, r := range pending {
		f.examples += (outs[i].Steps - gs.ResumedFrom) * int64(r.Plan.BatchSize)
	}
	f.groups++
	f.spent += time.Since(start)
	f.probeS += gs.ProbeS
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

// watch hooks a watcher into job's epoch ends (groupJob.EpochEnd: the
// executor's test-set predictions of each epoch).
func (f *fitter) watch(job *groupJob) *watcher {
	n := len(job.runs)
	w := &watcher{curves: make([][]report.EpochPoint, n), limit: make([]float64, n)}
	for i := range w.limit {
		w.limit[i] = divergeLimit
		if rho := job.Group.Replicas[i].Params.FlipProb; rho > 0 && rho < 0.5 {
			w.limit[i] /= 1 - 2*rho // debiased BCE weighs examples by up to 1/(1−2ρ)
		}
	}
	job.EpochEnd = func(epoch int, losses []float64, probs [][]float32) error {
		for i := range min(n, len(losses)) {
			p := report.EpochPoint{Epoch: epoch, TrainLoss: losses[i], TestAUC: math.NaN(), TestLogLoss: math.NaN(), TestAccuracy: math.NaN()}
			if probs != nil && !f.s.values() {
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

// job builds the executor's job for the pending runs of g from their
// plans: each run's batch source over its release (or the clean labels) and
// loss parameters.
func (f *fitter) job(g *runGroup, pending []*runSpec, todo int) (*groupJob, error) {
	s := f.s
	mc, err := s.modelConfigFor(g.Runs[0].Plan)
	if err != nil {
		return nil, err
	}
	feats := s.train.FeaturesOnly()
	job := &groupJob{runs: pending, Test: s.test.FeaturesOnly(), Probe: s.modelProbe().features(), Group: model.GroupConfig{
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
		f.progress(p)
	}
	// Each release, and rr_prior's soft targets made from it, is read once
	// for the group. Then every run's batch source is made and positioned at
	// epoch 0 at once, on every core: a source's first order shuffles all
	// its rows (0.2 s at 10M rows), and a group has up to 64 sources, which
	// the trainer would otherwise order one after another before its first
	// step.
	releases, softs := map[string]*data.Frame{}, map[string]*data.Frame{}
	srcs, rels := make([]*data.Frame, len(pending)), make([]*data.Frame, len(pending))
	for i, r := range pending {
		p := r.Plan
		srcs[i] = s.train
		if s.values() && p.Target == data.TargetLabel {
			srcs[i] = s.classFrame() // the clean model: the bins of the values
		}
		if p.Release != "" {
			if rels[i] = releases[p.Release]; rels[i] == nil {
				if rels[i], err = readRelease(p.Release); err != nil {
					return nil, err
				}
				releases[p.Release] = rels[i]
			}
			srcs[i] = rels[i]
		}
		if p.Target == data.TargetLabelRR && rels[i] != nil { // rows whose release is erased are not trained on
			if srcs[i] = softs[p.Release]; srcs[i] == nil {
				if srcs[i], err = trainedRows(rels[i], r.Setting); err != nil {
					return nil, err
				}
				softs[p.Release] = srcs[i]
			}
		}
		if p.Target == data.TargetSoft { // the same for every learning rate and trial of the release
			if srcs[i] = softs[p.Release]; srcs[i] == nil {
				if srcs[i], err = softTargets(rels[i], r.Setting, p.PriorTargets); err != nil {
					return nil, err
				}
				softs[p.Release] = srcs[i]
			}
		}
	}
	sources, errs := make([]*data.BatchSource, len(pending)), make([]error, len(pending))
	par.Each(len(pending), 0, func(_, i int) {
		sources[i], errs[i] = data.NewBatchSource(srcs[i], pending[i].Plan.BatchOptions(feats, s.dataset.Meta.MaxIndices))
		if errs[i] == nil {
			sources[i].SeekEpoch(0)
		}
	})
	for i, r := range pending {
		if errs[i] != nil {
			return nil, fmt.Errorf("run %s (%s): %w", r.ID, r.Name(), errs[i])
		}
		job.Group.Replicas = append(job.Group.Replicas, model.Replica{Name: r.Name(), Seed: r.Plan.InitSeed, LR: r.LR,
			Params: r.Plan.LossParams(rels[i]), Source: sources[i]})
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

// modelConfigFor is modelConfig for the runs of plan p: on conversion
// values a regression (the identity head) for a regression loss, and for
// the clean model a classifier of the grid's bins (p.Classes).
func (s *Session) modelConfigFor(p trainPlan) (model.ModelConfig, error) {
	mc, err := s.modelConfig()
	if err != nil || !s.values() {
		return mc, err
	}
	mc.Classes, mc.Regression = 0, p.Loss.Regression()
	if p.Classes >= 3 {
		mc.Classes = p.Classes
		if mc.Kind == model.KindKDDEmbed {
			return mc, &config.FieldError{Key: "model.kind", Msg: fmt.Sprintf("kdd_embed is binary only, and the clean model of conversion "+
				"values classifies %d bins of the grid: use mlp or higgs_mlp", mc.Classes)}
		}
	}
	return mc, nil
}
