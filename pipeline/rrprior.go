package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
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
	plan, err := planFor(c, set, 0, u.seed, stage1.Rows, stagePrior)
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	train := stage1
	if plan.Target == data.TargetSoft {
		if train, err = softTargets(stage1, set, plan.PriorTargets); err != nil {
			return nil, nil, fmt.Errorf("prior model: %w", err)
		}
	}
	run := &runSpec{Setting: set, LR: lr, Plan: plan, Seed: u.seed, Index: -1,
		ID: priorModelIDPrefix + shortHash(struct{ Dataset, Setting, Recipe, Seed string }{s.datasetID, set.ID, recipe, strconv.FormatUint(u.seed, 10)})}
	mc, err := s.modelConfig()
	if err != nil {
		return nil, nil, err
	}
	feats := s.train.FeaturesOnly()
	bs, err := data.NewBatchSource(train, plan.BatchOptions(feats, s.dataset.Meta.MaxIndices))
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	predict, err := predictionFrame(s.train, s.test, rows2)
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	name := set.ID + " prior model (stage 1, " + strconv.Itoa(stage1.Rows) + " rows)"
	st := store.Store{Dir: c.Output}
	job := &groupJob{runs: []*runSpec{run}, Test: predict, Group: model.GroupConfig{
		Name: name, Model: mc, Loss: plan.Loss, Epochs: c.Train.Epochs, Features: feats,
		CheckpointDir: st.CheckpointDir(run.ID), CheckpointEvery: c.Train.CheckpointEvery,
		SparseEmbedding: c.Train.SparseEmbedding,
		Notices:         func(msg string) { s.ev.Warn("release", msg) },
		Progress: func(mp model.Progress) {
			s.releaseProgress(Progress{Stage: "release", What: name, Epoch: mp.Epoch, Epochs: mp.Epochs, Step: mp.Step,
				Steps: mp.Steps, ExamplesPerS: mp.ExamplesPerS, ETA: mp.ETA})
		},
		Replicas: []model.Replica{{Name: name, Seed: plan.InitSeed, LR: lr, Params: plan.LossParams(nil), Source: bs}}}}
	outs, _, err := exec.Execute(ctx, job)
	if err != nil {
		return nil, nil, fmt.Errorf("prior model: %w", err)
	}
	os.RemoveAll(job.Group.CheckpointDir)
	w := heads(plan.Classes) // predicted values per row
	if len(outs) != 1 || len(outs[0].Probs) != (len(rows2)+s.test.Rows)*w {
		return nil, nil, fmt.Errorf("prior model: the executor returned %d outcomes (want 1 with %d predictions)", len(outs), (len(rows2)+s.test.Rows)*w)
	}
	probs := priorsOf(outs[0].Probs, w)
	rel, err := ts.Finish(probs[:len(rows2)*w])
	if err != nil {
		return nil, nil, err
	}
	test := &data.Frame{Rows: s.test.Rows}
	if w > 1 {
		test.Classes, test.PriorC = w, probs[len(rows2)*w:]
	} else {
		test.Prior = probs[len(rows2):]
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
	md[metaPriorModel] = fmt.Sprintf("%s trained on stage 1's label_rr (%d rows) with %s, lr=%g, %s",
		c.Model.Kind, stage1.Rows, plan.Loss, lr, english.Count(c.Train.Epochs, "epoch"))
	md[metaTestPriorSHA] = sum
	md[metaTestPriorRows] = strconv.Itoa(test.Rows)
	md[metaTestPriorFile] = filepath.Base(tp)
	s.ev.Info("release", fmt.Sprintf("%s: stage 1 %d rows (RR), stage 2 %d rows: %s of them released the prior's argmax label",
		set.ID, stage1.Rows, len(rows2), md["argmax_rows"]))
	return rel, md, nil
}

// priorsOf turns a model's predictions into public priors: for binary
// labels P(y = 1 | x) as it is (w = 1); for w = C ≥ 3 classes each row's
// softmax in float64, renormalized to sum to 1 (float32 outputs sum to 1
// within ~1e-6 only).
func priorsOf(probs []float32, w int) []float64 {
	out := make([]float64, len(probs))
	for i, p := range probs {
		out[i] = float64(p)
	}
	if w > 1 {
		normalizeRows(out, w)
	}
	return out
}

// predictionFrame is the features of train's rows, then all of test's:
// what the prior model predicts.
func predictionFrame(train, test *data.Frame, rows []int) (*data.Features, error) {
	return data.Concat(train.FeaturesOnly().Take(rows), test.FeaturesOnly())
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
	if c := set.Mech.Classes(); c >= 3 {
		if f.Rows != s.test.Rows || f.PriorC == nil || f.NumClasses() != c {
			return nil, fmt.Errorf("%s has %d priors of %d classes for %d test rows of %d classes", tp, f.Rows, f.NumClasses(), s.test.Rows, c)
		}
		return f.PriorC, nil
	}
	if f.Rows != s.test.Rows || f.Prior == nil {
		return nil, fmt.Errorf("%s has %d priors for %d test rows", tp, f.Rows, s.test.Rows)
	}
	return f.Prior, nil
}

// auditPriors is rr_prior's public prior of each of the n audit examples,
// as the mechanism would see them: the audit examples are split into
// stages by the release's rule (StageSplit at the setting's fraction,
// seeded per setting); stage-1 examples have the uninformative prior (½;
// on C ≥ 3 classes 1/C each: RR over every class), stage-2 examples trial
// 0's prior model's prediction (C values a row, row-major, on C ≥ 3
// classes).
func (s *Session) auditPriors(set *setting, n int) ([]float64, error) {
	test, err := s.testPriors(set, 0)
	if err != nil {
		return nil, err
	}
	stage, err := release.StageSplit(n, set.StageFraction, mrand.NewPCG(deriveSeed(s.cfg.Seed, "audit-stages", set.ID), 0))
	if err != nil {
		return nil, err
	}
	c := set.Mech.Classes()
	w, flat := heads(c), 0.5
	if c >= 3 {
		flat = 1 / float64(c)
	}
	prior := make([]float64, n*w)
	for i, st := range stage {
		for j := i * w; j < (i+1)*w; j++ {
			prior[j] = flat
			if st == 2 {
				prior[j] = test[j]
			}
		}
	}
	return prior, nil
}

// softTargets builds the training frame of a kind trained on soft targets
// (pets.TargetSoft) from its release, through the kind's law: one row per
// trained row (`row`, and `soft_target`, or soft_target_0 …
// soft_target_{C−1} on C ≥ 3 classes, for BCE or the softmax
// cross-entropy ce, which are linear in their target):
//
//   - released as proportions, each row a bag of one (ReleaseCounts): the
//     BagLaw's Target of the row's alpha (classes 1..C−1; class 0's is
//     1 − their sum), e.g. an ALIBI posterior;
//   - one label per row (rr_prior): channelTarget of the released label z
//     through the row's channel, which its public prior chooses (the
//     release's prior column), with mode (train.rr_prior_targets) for the
//     rows whose channel shows nothing and for noisy.
func softTargets(rel *data.Frame, set *setting, mode config.PriorTargets) (*data.Frame, error) {
	m := set.Mech
	c := m.Classes()
	if rel.Row == nil || rel.NumClasses() != c {
		return nil, fmt.Errorf("%s: the release lacks %s or is not of %d classes", set.ID, data.ColRow, c)
	}
	f := &data.Frame{}
	if c >= 3 {
		f.Classes = c
	}
	t := make([]float64, c)
	add := func(i int) {
		f.Row = append(f.Row, rel.Row[i])
		if c >= 3 {
			f.SoftTargetC = append(f.SoftTargetC, t...)
		} else {
			f.SoftTarget = append(f.SoftTarget, t[1])
		}
	}
	if law := m.BagLaw(); law != nil {
		alpha := rel.AlphaC
		if c < 3 {
			alpha = rel.Alpha
		}
		if len(alpha) != rel.Rows*(c-1) {
			return nil, fmt.Errorf("%s: the release lacks its proportions (%s…)", set.ID, data.ColAlpha)
		}
		for i := range rel.Rows {
			law.Target(t[1:], alpha[i*(c-1):(i+1)*(c-1)], 1)
			t[0] = 1
			for _, v := range t[1:] {
				t[0] -= v
			}
			add(i)
		}
		f.Rows = len(f.Row)
		return f, nil
	}
	ct, err := newChannelTargets(rel, set)
	if err != nil {
		return nil, err
	}
	for i, z := range rel.LabelRR {
		if ct.target(t, i, z, mode) {
			add(i)
		}
	}
	f.Rows = len(f.Row)
	if f.Rows == 0 {
		return nil, fmt.Errorf("%s: no row to train on (every row's channel shows nothing and train.rr_prior_targets is drop)", set.ID)
	}
	return f, nil
}

// channelTargets turns the released labels of a kind released one label
// per row into targets, row by row, from each row's channel.
type channelTargets struct {
	ex    pets.ExampleLaw
	c     int
	prior []float64 // each row's prior, C values a row (nil: a kind without one)
	chans map[uint64]*pets.Channel
}

// newChannelTargets reads the rows' priors of rel (binary: (1 − p, p) from
// the prior column; C ≥ 3: prior_0 …) for a kind released with a prior.
func newChannelTargets(rel *data.Frame, set *setting) (*channelTargets, error) {
	m := set.Mech
	ct := &channelTargets{ex: m.ExampleLaw(), c: m.Classes(), chans: map[uint64]*pets.Channel{}}
	if rel.LabelRR == nil {
		return nil, fmt.Errorf("%s: the release lacks %s", set.ID, data.ColLabelRR)
	}
	if !m.Spec().Release.WithPrior() {
		return ct, nil
	}
	switch {
	case ct.c >= 3 && len(rel.PriorC) == rel.Rows*ct.c:
		ct.prior = rel.PriorC
	case ct.c < 3 && len(rel.Prior) == rel.Rows:
		ct.prior = make([]float64, 2*rel.Rows)
		for i, p := range rel.Prior {
			ct.prior[2*i], ct.prior[2*i+1] = 1-p, p
		}
	default:
		return nil, fmt.Errorf("%s: the release lacks its rows' priors (%s or %s…)", set.ID, data.ColPrior, data.ColPriorPrefix)
	}
	return ct, nil
}

// channel returns row i's channel.
func (ct *channelTargets) channel(i int) *pets.Channel {
	var prior []float64
	if ct.prior != nil {
		prior = ct.prior[i*ct.c : (i+1)*ct.c]
	}
	key := ct.ex.ChannelOf(prior)
	ch := ct.chans[key]
	if ch == nil {
		x := ct.ex.Channel(key)
		ch = &x
		ct.chans[key] = ch
	}
	return ch
}

// target writes row i's target for its released label z into t (C values)
// and reports whether the row is trained on:
//
//	noisy                  one-hot(z) on every row, not debiased (label-dp's
//	                       recipe; on k-ary RR the noisy label's most likely
//	                       class is the label's)
//	a channel that shows nothing (rr_prior's argmax branch: a label released
//	whatever the label): argmax: one-hot(z); drop: not trained on; prior:
//	the row's prior
//	randomized response (Flip > 0 on two classes): the debiased target
//	                       (z − π)/(1 − 2π), π = Flip: BCE on it is the
//	                       debiased BCE ((1−π)ℓ(ỹ) − πℓ(1−ỹ))/(1−2π)
//	randomized response within the support S (pets.FormRR, FormSetRR):
//	                       the unbiased estimate of the label's one-hot
//	                       vector given y ∈ S, t_c = (1{z = c} − b)/(q − b)
//	                       for c ∈ S, 0 outside, q = P(y | y) and b =
//	                       P(z | y) for z ≠ y in S: E[t | y] = one-hot(y),
//	                       Σ_c t_c = 1, negative entries included
//	randomized response erased with a probability that does not depend on
//	                       the label (pets.FormRRErased): an erased row is
//	                       not trained on; the others get the estimate
//	                       above of the randomized response they went
//	                       through given that they were not erased
//	another channel (pets.FormTable): the Bayes posterior of the label given
//	                       z under the row's prior (uniform without one),
//	                       label-dp's label_mapping
func (ct *channelTargets) target(t []float64, i int, z uint8, mode config.PriorTargets) bool {
	clear(t)
	ch := ct.channel(i)
	c := ct.c
	erased, erases := ch.Erased()
	switch {
	case erases && z == erased:
		return false // shows no class, and which rows do depends on no label
	case erases:
		// Given a release that is not erased: randomized response over every
		// class, q and b its probabilities divided by 1 − P(erased).
		kept := 1 - ch.Prob(erased, 0)
		q, b := ch.Prob(0, 0)/kept, ch.Prob(1, 0)/kept
		for y := range c {
			t[y] = -b / (q - b)
		}
		t[z] = (1 - b) / (q - b)
	case mode == config.PriorTargetsNoisy:
		t[z] = 1
	case !ch.Informative():
		switch mode {
		case config.PriorTargetsDrop:
			return false
		case config.PriorTargetsPrior:
			copy(t, ct.prior[i*c:(i+1)*c])
		default: // argmax
			t[z] = 1
		}
	case c == 2 && ch.Flip > 0:
		pi := ch.Flip
		t[1] = (float64(z) - pi) / (1 - 2*pi)
		t[0] = 1 - t[1]
	case ch.Form == pets.FormRR || ch.Form == pets.FormSetRR:
		m := setBits(ch.Support())
		q, b := ch.Prob(m[0], m[0]), ch.Prob(m[1], m[0])
		for _, y := range m {
			t[y] = -b / (q - b)
		}
		t[z] = (1 - b) / (q - b)
	default:
		s := 0.0
		for y := range c {
			w := 1 / float64(c)
			if ct.prior != nil {
				w = ct.prior[i*c+y]
			}
			t[y] = w * ch.Prob(z, uint8(y))
			s += t[y]
		}
		for y := range t {
			t[y] /= s
		}
	}
	return true
}

// setBits returns the classes of a bit mask in increasing order.
func setBits(mask uint64) []uint8 {
	var out []uint8
	for ; mask != 0; mask &= mask - 1 {
		out = append(out, uint8(bits.TrailingZeros64(mask)))
	}
	return out
}
