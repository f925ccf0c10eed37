package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/release"
)

// rr_prior in the pipeline (LP-2ST of Ghazi et al. 2021, two classes).
//
// Each (setting, trial) release splits the training rows into two stages
// (release.StageSplit, stage_fraction in stage 1). Stage 1 is released by
// RR(ε). A prior model — the configured model, trained through the
// executor on stage 1's released labels only, with train.rr_loss, for
// train.epochs at the setting's prior learning rate — predicts the prior
// P(y=1|x) of every stage-2 row and of every test row. Stage 2 is released
// by RRWithPrior(ε) with those priors. Every row is released once, so the
// ledger charges ε per row. The prior model is part of the release: it is
// trained inside release making, under the release lock, once per
// (setting, trial), and its test-row predictions are stored beside the
// release (<release>.prior.arrow, column prior) for the audit, which
// needs the public prior of each audit example. The release's metadata
// records the file's SHA-256 and a fingerprint of the prior model's recipe;
// a release whose prior file or recipe does not match is made again.

// priorLR is the prior model's learning rate of an rr_prior setting: its
// prior_lr, or the middle of train.learning_rates (sorted; the lower of
// the two middle ones for an even count).
func priorLR(c *config.Config, s *setting) float64 {
	if s.PriorLR > 0 {
		return s.PriorLR
	}
	lrs := slices.Sorted(slices.Values(c.Train.LearningRates))
	return lrs[(len(lrs)-1)/2]
}

// priorRecipe fingerprints everything that makes an rr_prior release's
// prior model besides its seeds and rows: model, init, standardization,
// epochs, batch size, loss, backend, learning rate and stage fraction.
func priorRecipe(c *config.Config, s *setting) string {
	return "prior:" + shortHash(struct {
		Model, Init, Loss, Backend string
		Hidden                     []int
		Standardize, Sparse        bool
		Epochs, BatchSize          int
		LR, Fraction               float64
	}{c.Model.Kind.String(), c.Model.Init.String(), c.Train.RRLoss.String(), c.Backend.String(), c.Model.Hidden,
		c.Data.Standardize, c.Train.SparseEmbedding, c.Train.Epochs, c.Train.BatchSize, priorLR(c, s), s.StageFraction})
}

// testPriorPath is where the prior model's test-row predictions of an
// rr_prior release live.
func testPriorPath(releasePath string) string {
	return strings.TrimSuffix(releasePath, ".arrow") + ".prior.arrow"
}

// Metadata keys of an rr_prior release (besides release.Meta's).
const (
	metaPriorRecipe    = "prior_recipe"
	metaPriorModel     = "prior_model"
	metaTestPriorSHA   = "test_prior_sha256"
	metaTestPriorRows  = "test_prior_rows"
	metaTestPriorFile  = "test_prior_file"
	priorModelIDPrefix = "prior-"
)

// makeRRPriorRelease makes the two-stage release of unit u, training its
// prior model through exec, and writes the test priors beside it. It
// returns the release and its metadata.
func (s *Session) makeRRPriorRelease(ctx context.Context, exec executor, u releaseUnit) (*release.Release, map[string]string, error) {
	c, set := s.cfg, u.s
	ts, err := release.StartRRPrior(s.train.Label, set.Mech, set.StageFraction,
		release.Options{Noise: pets.NoiseSimulation, Seed: u.seed})
	if err != nil {
		return nil, nil, err
	}
	stage1 := ts.Stage1()
	rows2 := ts.Stage2Rows()
	lr := priorLR(c, set)
	recipe := priorRecipe(c, set)
	plan := trainPlan{Loss: c.Train.RRLoss, Target: data.TargetLabelRR, BatchSize: min(c.Train.BatchSize, stage1.Rows),
		InitSeed: deriveSeed(u.seed, "prior-init"), ShuffleSeed: deriveSeed(u.seed, "prior-shuffle")}
	if plan.Loss == model.LossDebiasedBCE {
		plan.FlipProb = set.Mech.FlipProb()
	}
	run := &runSpec{Setting: set, LR: lr, Plan: plan, Seed: u.seed, Index: -1,
		ID: priorModelIDPrefix + shortHash(struct{ Dataset, Setting, Recipe, Seed string }{s.datasetID, set.ID, recipe, strconv.FormatUint(u.seed, 10)})}
	mc, err := s.modelConfig()
	if err != nil {
		return nil, nil, err
	}
	feats := s.train.FeaturesOnly()
	bs, err := data.NewBatchSource(stage1, data.BatchOptions{BatchSize: plan.BatchSize, Target: plan.Target, Shuffle: true,
		Seed: plan.ShuffleSeed, DropLast: true, Features: feats, IndexOnly: true, Width: s.dataset.Meta.MaxIndices})
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	name := set.ID + " prior model (stage 1, " + strconv.Itoa(stage1.Rows) + " rows)"
	st := store.Store{Dir: c.Output}
	job := &groupJob{runs: []*runSpec{run}, Test: predictionFrame(s.train, s.test, rows2), Group: model.GroupConfig{
		Name: name, Model: mc, Loss: plan.Loss, Epochs: c.Train.Epochs, Features: feats,
		CheckpointDir: st.CheckpointDir(run.ID), CheckpointEvery: c.Train.CheckpointEvery,
		SparseEmbedding: c.Train.SparseEmbedding,
		Notices:         func(msg string) { s.ev.Warn("release", msg) },
		Progress: func(mp model.Progress) {
			s.ev.Progress(Progress{Stage: "release", What: name, Epoch: mp.Epoch, Epochs: mp.Epochs, Step: mp.Step,
				Steps: mp.Steps, ExamplesPerS: mp.ExamplesPerS, ETA: mp.ETA})
		},
		Replicas: []model.Replica{{Name: name, Seed: plan.InitSeed, LR: lr, Params: plan.LossParams(nil), Source: bs}}}}
	outs, _, err := exec.Execute(ctx, job)
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	os.RemoveAll(job.Group.CheckpointDir)
	if len(outs) != 1 || len(outs[0].Probs) != len(rows2)+s.test.Rows {
		return nil, nil, fmt.Errorf("prior model: the executor returned %d outcomes (want 1 with %d predictions)", len(outs), len(rows2)+s.test.Rows)
	}
	probs := outs[0].Probs
	prior := make([]float64, len(rows2))
	for i := range prior {
		prior[i] = float64(probs[i])
	}
	rel, err := ts.Finish(prior)
	if err != nil {
		return nil, nil, err
	}
	test := &data.Frame{Rows: s.test.Rows, Prior: make([]float64, s.test.Rows)}
	for i := range test.Prior {
		test.Prior[i] = float64(probs[len(rows2)+i])
	}
	tp := testPriorPath(u.path)
	if err := data.WriteFrame(tp, test, map[string]string{"setting": set.ID, metaPriorRecipe: recipe, "tool": release.Tool}); err != nil {
		return nil, nil, err
	}
	sum, err := data.FileSHA256(tp)
	if err != nil {
		return nil, nil, err
	}
	md := rel.Meta()
	md[metaPriorRecipe] = recipe
	md[metaPriorModel] = fmt.Sprintf("%s trained on stage 1's label_rr (%d rows) with %s, lr=%g, %d epochs",
		c.Model.Kind, stage1.Rows, plan.Loss, lr, c.Train.Epochs)
	md[metaTestPriorSHA] = sum
	md[metaTestPriorRows] = strconv.Itoa(test.Rows)
	md[metaTestPriorFile] = filepath.Base(tp)
	s.ev.Info("release", fmt.Sprintf("%s: stage 1 %d rows (RR), stage 2 %d rows: %s of them released the prior's argmax label",
		set.ID, stage1.Rows, len(rows2), md["argmax_rows"]))
	return rel, md, nil
}

// predictionFrame is the features of train's rows, then all of test's:
// what the prior model predicts.
func predictionFrame(train, test *data.Frame, rows []int) *data.Features {
	a, b := train.FeaturesOnly().Take(rows), test.FeaturesOnly()
	f := &data.Features{Rows: a.Rows + b.Rows, Names: a.Names, X: append(a.X, b.X...)}
	if a.Offsets != nil {
		f.Indices = append(a.Indices, b.Indices...)
		f.Offsets = append(slices.Clone(a.Offsets), make([]int64, b.Rows)...)
		base := a.Offsets[a.Rows]
		for i := 1; i <= b.Rows; i++ {
			f.Offsets[a.Rows+i] = base + b.Offsets[i]
		}
	}
	return f
}

// checkSideFiles verifies what lives beside u's release (whose ledger row
// and bytes already matched): rr_prior's release must have been made with
// this config's prior recipe and still have its test priors beside it,
// byte for byte; the other kinds have nothing beside their release.
func (s *Session) checkSideFiles(u releaseUnit) releaseCheck {
	if !u.s.Kind.Spec().Release.WithPrior() {
		return releaseCheck{current: true}
	}
	md, err := data.ReadMetadata(u.path)
	if err != nil {
		return releaseCheck{why: fmt.Sprintf("release %s: its metadata cannot be read (%v)", u.path, err), damaged: true}
	}
	if md[metaPriorRecipe] != priorRecipe(s.cfg, u.s) {
		return releaseCheck{why: fmt.Sprintf("release %s: its prior model was made with another recipe (model, epochs, batch size, loss, backend, prior learning rate or stage fraction)", u.path)}
	}
	tp := testPriorPath(u.path)
	sum, err := data.FileSHA256(tp)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return releaseCheck{why: fmt.Sprintf("the test priors %s of release %s are missing", tp, u.path), damaged: true}
	case err != nil:
		return releaseCheck{why: fmt.Sprintf("the test priors %s of release %s cannot be read (%v)", tp, u.path, err), damaged: true}
	case sum != md[metaTestPriorSHA]:
		return releaseCheck{why: fmt.Sprintf("the test priors %s are damaged: their SHA-256 %.12s… differs from the %.12s… release %s records", tp, sum, md[metaTestPriorSHA], u.path), damaged: true}
	}
	return releaseCheck{current: true}
}

// testPriors reads the prior model's test-row predictions of trial t's
// release of an rr_prior setting, checked against the release's record.
func (s *Session) testPriors(set *setting, trial int) ([]float64, error) {
	path := releasePath(s.cfg.Output, set, trial)
	md, err := data.ReadMetadata(path)
	if err != nil {
		return nil, fmt.Errorf("rr_prior needs its trial-%d release (train fit first): %w", trial, err)
	}
	tp := testPriorPath(path)
	if sum, err := data.FileSHA256(tp); err != nil || sum != md[metaTestPriorSHA] {
		return nil, fmt.Errorf("the test priors %s do not match their release %s (run train fit again to remake it)", tp, path)
	}
	f, err := data.ReadFrame(tp)
	if err != nil {
		return nil, err
	}
	if f.Rows != s.test.Rows || f.Prior == nil {
		return nil, fmt.Errorf("%s has %d priors for %d test rows", tp, f.Rows, s.test.Rows)
	}
	return f.Prior, nil
}

// auditPriors is rr_prior's public prior of each of the n audit examples,
// as the mechanism would see them: the audit examples are split into
// stages by the release's rule (StageSplit at the setting's fraction,
// seeded per setting); stage-1 examples have the uninformative prior ½
// (RR), stage-2 examples trial 0's prior model's prediction.
func (s *Session) auditPriors(set *setting, n int) ([]float64, error) {
	test, err := s.testPriors(set, 0)
	if err != nil {
		return nil, err
	}
	stage, err := release.StageSplit(n, set.StageFraction, mrand.NewPCG(deriveSeed(s.cfg.Seed, "audit-stages", set.ID), 0))
	if err != nil {
		return nil, err
	}
	prior := make([]float64, n)
	for i, st := range stage {
		prior[i] = 0.5
		if st == 2 {
			prior[i] = test[i]
		}
	}
	return prior, nil
}

// softTargets builds rr_prior's training frame from its release: one row
// per trained row (`row`, `soft_target`), by the plan's config.PriorTargets.
func softTargets(rel *data.Frame, set *setting, mode config.PriorTargets) (*data.Frame, error) {
	if rel.LabelRR == nil || rel.Branch == nil || rel.Prior == nil || rel.Row == nil {
		return nil, fmt.Errorf("%s: the release lacks %s, %s, %s or %s", set.ID, data.ColLabelRR, data.ColBranch, data.ColPrior, data.ColRow)
	}
	pi := set.Mech.FlipProb()
	f := &data.Frame{}
	for i, y := range rel.LabelRR {
		t := float64(y)
		switch {
		case mode == config.PriorTargetsNoisy:
		case rel.Branch[i] == 0:
			t = (t - pi) / (1 - 2*pi)
		case mode == config.PriorTargetsDrop:
			continue
		case mode == config.PriorTargetsPrior:
			t = rel.Prior[i]
		}
		f.Row = append(f.Row, rel.Row[i])
		f.SoftTarget = append(f.SoftTarget, t)
	}
	f.Rows = len(f.Row)
	if f.Rows == 0 {
		return nil, fmt.Errorf("%s: no row to train on (every row took the argmax branch and train.rr_prior_targets is drop)", set.ID)
	}
	return f, nil
}
