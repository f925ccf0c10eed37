package pipeline

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/llp"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/release"
	"labelprivacy/report"
)

// Canaries through training (audit.model_canaries, issue 39). Per setting
// one more model is trained, in the audit, on a release of the training
// rows in which audit.model_canaries rows (a seeded choice that reads no
// label) carry fair coins — between classes 0 and 1, or 1 and 2 on C ≥ 3
// classes as the canary audit plays them — and every other row a label
// drawn afresh from the data's true η (synthetic data only): the training
// set is distributed as the real one, and no real label enters a model the
// audit alone trains, so the privacy ledger has nothing to charge. The
// release is made by the production code (release.Apply, the setting's bag
// rule on the training rows, simulation noise), the model with the recipe
// of the setting's best learning rate and trial 0 (its plan: loss, batch,
// seeds). It scores each canary by its log-odds for the coin minus η's, and
// the one-run bound (audit.CanaryBound, the canary audit's) certifies
// eps_lower_model at 95%; at confidence 1 − audit.GuardAlpha it must not
// exceed ε, or the audit fails. The real runs never see a canary, so their
// test AUCs are untouched; the canary model's own test AUC (model_canary_auc)
// says what riding along would have cost. rr_prior is not played: its
// release trains a prior model of its own, which a canary release would
// need again.

// canaryResult is one setting's canaries through training.
type canaryResult struct {
	played int
	eps    float64
	auc    float64
	twin   float64 // the twin run's test AUC
	wall   time.Duration
}

// canaryModels trains the canary models of the audit stage on one executor,
// made on first use.
type canaryModels struct {
	s        *Session
	trainEta []float64
	exec     executor
	close    func()
}

func (c *canaryModels) Close() {
	if c.close != nil {
		c.close()
	}
}

// newCanaryModels returns the stage's canary trainer, or nil with the
// reason it is off ("" when audit.model_canaries is 0).
func (s *Session) newCanaryModels(trainEta []float64) (*canaryModels, string) {
	switch {
	case s.cfg.Audit.ModelCanaries == 0:
		return nil, ""
	case s.light:
		return nil, "the session has no training features"
	case trainEta == nil:
		return nil, "the dataset has no true η (synthetic data only: the canaries' bag-mates are drawn from it)"
	}
	return &canaryModels{s: s, trainEta: trainEta}, ""
}

// executor returns the canary models' executor (a test's, or a model
// executor for the configured backend).
func (c *canaryModels) executor() (executor, error) {
	if c.exec != nil {
		return c.exec, nil
	}
	if c.s.canaryExec != nil {
		c.exec = c.s.canaryExec
		return c.exec, nil
	}
	me, err := newModelExecutor(c.s.cfg.Backend)
	if err != nil {
		return nil, err
	}
	c.exec, c.close = me, me.Close
	return me, nil
}

// play trains set's canary model and certifies eps_lower_model; played 0
// (and a reason) when the setting takes none.
func (c *canaryModels) play(ctx context.Context, s *Session, set *setting, runs []report.Run) (*canaryResult, string, error) {
	switch {
	case !set.Trains():
		return nil, "nothing is trained", nil
	case set.Kind.Spec().Release.WithPrior():
		return nil, "its release trains a prior model of its own", nil
	}
	best, ok := report.BestLR(runs)[report.SettingKey{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID}]
	if !ok {
		return nil, "no finished run", nil
	}
	var spec *runSpec
	for _, r := range s.runs {
		if r.Setting.ID == set.ID && r.LR == best.LR && r.Trial == 0 {
			spec = r
		}
	}
	if spec == nil {
		return nil, "no trial 0 at the best learning rate", nil
	}
	start := time.Now()
	cls := s.classes()
	n := s.train.Rows
	k := min(s.cfg.Audit.ModelCanaries, n/2)
	rows := sampleRows(n, k, deriveSeed(s.cfg.Seed, "model-canary-rows", set.ID))
	labels, coins := c.labels(set, rows)
	frame, err := c.release(set, labels)
	if err != nil {
		return nil, "", fmt.Errorf("audit %s: canary release: %w", set.ID, err)
	}
	probe := s.train.Take(rows)
	out, err := c.train(ctx, set, spec, frame, probe.FeaturesOnly())
	if err != nil {
		return nil, "", fmt.Errorf("audit %s: canary model: %w", set.ID, err)
	}
	scores := make([]float64, k)
	w := heads(cls)
	for j, i := range rows {
		pr := make([]float64, w)
		for y := range w {
			pr[y] = float64(out.ProbeProbs[j*w+y])
		}
		scores[j] = canaryScore(pr, c.trainEta[i*w:(i+1)*w])
	}
	res := &canaryResult{played: k, auc: s.scoreTest(out.Probs).auc, twin: math.NaN()}
	for _, r := range runs {
		if r.RunID == spec.ID {
			res.twin = r.TestAUC
		}
	}
	if res.eps, _, _, err = audit.CanaryBound(coins, scores, 1-audit.EpsConfidence); err != nil {
		return nil, "", err
	}
	guard, g, right, err := audit.CanaryBound(coins, scores, audit.GuardAlpha)
	if err != nil {
		return nil, "", err
	}
	if eps := set.Mech.Epsilon(); guard > eps {
		return nil, "", &audit.SamplerError{Mechanism: set.Mech.String(), Check: "epsilon", Msg: fmt.Sprintf(
			"%s: %d canaries scored by a model trained on a release holding them show ε ≥ %.3f at confidence 1 − %g "+
				"(%d of %d guesses right; stated ε = %g): the model cannot know more of a coin than its release shows, so "+
				"the release or its trainer breaks ε", set.ID, k, guard, audit.GuardAlpha, right, g, eps)}
	}
	res.wall = time.Since(start)
	return res, "", nil
}

// labels draws the canary release's labels: a fair coin at each canary row
// (classes 0/1, or 1/2 on C ≥ 3 classes; coins[j] = 1 for the upper one),
// a label from the true η elsewhere.
func (c *canaryModels) labels(set *setting, rows []int) (labels, coins []uint8) {
	s := c.s
	cls, w := s.classes(), heads(s.classes())
	r := rand.New(rand.NewPCG(deriveSeed(s.cfg.Seed, "model-canary-labels", set.ID), 0))
	labels = make([]uint8, s.train.Rows)
	for i := range labels {
		e := c.trainEta[i*w : (i+1)*w]
		if cls < 3 {
			labels[i] = b2u8(r.Float64() < e[0])
			continue
		}
		u, acc := r.Float64(), 0.0
		labels[i] = uint8(cls - 1)
		for y, p := range e {
			if acc += p; u < acc {
				labels[i] = uint8(y)
				break
			}
		}
	}
	coins = make([]uint8, len(rows))
	lo := uint8(0)
	if cls >= 3 {
		lo = 1
	}
	for j, i := range rows {
		coins[j] = b2u8(r.Float64() < 0.5)
		labels[i] = lo + coins[j]
	}
	return labels, coins
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// release makes the canary release of labels, as a training frame.
func (c *canaryModels) release(set *setting, labels []uint8) (*data.Frame, error) {
	s := c.s
	if set.Kind.Spec().Release == pets.ReleaseRaw {
		return &data.Frame{Rows: len(labels), Classes: s.train.Classes, Label: labels}, nil
	}
	o := release.Options{Noise: pets.NoiseSimulation, Seed: deriveSeed(s.cfg.Seed, "model-canary-release", set.ID),
		KeepRemainder: s.cfg.Privacy.KeepRemainder}
	if set.Kind.IsLLP() {
		var part llp.Partitioner
		var err error
		if part, err = partitioner(set, s.train, s.train.Rows); err != nil {
			return nil, err
		}
		o.Partition = part
	}
	rel, err := release.Apply(labels, set.Mech, o)
	if err != nil {
		return nil, err
	}
	if spec := set.Kind.Spec(); spec.Train.Target == pets.TargetLabelRR {
		return trainedRows(rel.Simulation(), set)
	}
	return rel.Simulation(), nil
}

// train trains one model by spec's recipe on the release frame and
// predicts the test set and probe.
func (c *canaryModels) train(ctx context.Context, set *setting, spec *runSpec, frame *data.Frame, probe *data.Features) (outcome, error) {
	s := c.s
	exec, err := c.executor()
	if err != nil {
		return outcome{}, err
	}
	mc, err := s.modelConfig()
	if err != nil {
		return outcome{}, err
	}
	feats := s.train.FeaturesOnly()
	p := spec.Plan
	src, err := data.NewBatchSource(frame, p.BatchOptions(feats, s.dataset.Meta.MaxIndices))
	if err != nil {
		return outcome{}, err
	}
	src.SeekEpoch(0)
	job := &groupJob{runs: []*runSpec{spec}, Test: s.test.FeaturesOnly(), Probe: probe, Group: model.GroupConfig{
		Name: "canaries " + set.ID, Model: mc, Loss: p.Loss, Epochs: s.cfg.Train.Epochs, Features: feats,
		SparseEmbedding: s.cfg.Train.SparseEmbedding, Notices: func(msg string) { s.ev.Warn("audit", msg) },
		Replicas: []model.Replica{{Name: "canaries " + spec.Name(), Seed: p.InitSeed, LR: spec.LR, Params: p.LossParams(frame), Source: src}}}}
	outs, _, err := exec.Execute(ctx, job)
	if err != nil {
		return outcome{}, err
	}
	if len(outs) != 1 || len(outs[0].ProbeProbs) != probe.Rows*heads(s.classes()) {
		return outcome{}, fmt.Errorf("the executor returned %d outcomes without the canaries' predictions", len(outs))
	}
	return outs[0], nil
}

// canaryScore is a canary's score: the model's log-odds for the coin's
// upper class over its lower one (binary: 1 over 0; C ≥ 3: 2 over 1),
// less η's, which the attacker knows (the coin does not depend on x).
// Probabilities are kept within [1e-7, 1 − 1e-7] (float32 softmax).
func canaryScore(p, eta []float64) float64 {
	clip := func(v float64) float64 { return min(max(v, 1e-7), 1-1e-7) }
	if len(p) == 1 {
		return logitOf(clip(p[0])) - logitOf(clip(eta[0]))
	}
	return math.Log(clip(p[2])) - math.Log(clip(p[1])) - (math.Log(clip(eta[2])) - math.Log(clip(eta[1])))
}

func logitOf(p float64) float64 { return math.Log(p) - math.Log1p(-p) }
