package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/mix"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// setting is one point of the PET grid: its config (parameters, bag
// rule, rr_prior's stage fraction and prior learning rate) and the
// mechanism built from it once.
type setting struct {
	config.Setting
	Mech *pets.Mechanism
	// ValuePrior is rr_bins's public prior over the grid (publicPrior),
	// nil for a private one and the other kinds.
	ValuePrior []float64
	// ID names the setting in paths and tables: none, rr_eps1, llp_k8,
	// llp_geom_k8_eps0.5, llp_k8_sorted-x3, rr_prior_eps1
	// (config.Setting.ID).
	ID string
}

// expandSettings expands `pets:` into settings (k × epsilon × bags per
// entry), in config order, without duplicates, each mechanism made for
// labels of the dataset's classes (2: binary, exactly as without classes;
// C ≥ 3: the mechanism's C-class law, or an error naming the entry for a
// kind that releases binary labels only).
func expandSettings(cfg []config.PetConfig, classes int) ([]*setting, error) {
	return expandSettingsIn(cfg, labelSpace{classes: classes})
}

// expandSettingsIn is expandSettings for labels of any kind: on
// conversion values each mechanism is made on the grid (a kind of classes
// refused naming the entry), rr_bins with its public prior resolved
// (publicPrior).
func expandSettingsIn(cfg []config.PetConfig, sp labelSpace) ([]*setting, error) {
	var out []*setting
	seen := map[config.Setting]bool{}
	for i, p := range cfg {
		for _, st := range p.Settings() {
			if seen[st] {
				continue
			}
			seen[st] = true
			switch {
			case !sp.grid.IsZero():
				st.Values = sp.grid
			case sp.classes >= 3:
				st.Classes = sp.classes
			}
			m, err := pets.New(st.Params)
			var pe *pets.ParamError
			switch {
			case errors.As(err, &pe) && (pe.Param == "trigger_data" || pe.Param == "windows"):
				// ara_event's source against the dataset's classes (the
				// config checked the rest at load).
				return nil, &config.FieldError{Key: fmt.Sprintf("pets[%d].%s", i, pe.Param), Msg: pe.Msg}
			case errors.As(err, &pe) && pe.Param == "budget_share":
				// ara_summary's split against the dataset's labels (a value
				// share on binary conversions, a count share on values).
				return nil, &config.FieldError{Key: fmt.Sprintf("pets[%d].budget_share[%d]", i,
					slices.Index(p.BudgetShare, config.BudgetShare{Count: st.CountShare, Value: st.ValueShare})), Msg: pe.Msg}
			case err != nil:
				return nil, fmt.Errorf("%w: pets[%d]: %w", config.ErrConfig, i, err)
			}
			prior, err := publicPrior(i, st, sp)
			if err != nil {
				return nil, err
			}
			out = append(out, &setting{Setting: st, Mech: m, ID: st.ID(), ValuePrior: prior})
		}
	}
	return out, nil
}

// Releases reports whether the setting's models train on a release (every
// mechanism except none, which trains on the clean labels, and bot, which
// releases nothing and trains nothing: pets.Release.Written).
func (s *setting) Releases() bool { return s.Kind.Spec().Release.Written() }

// Trains reports whether the setting's runs train a model (bot's best
// model is a constant score).
func (s *setting) Trains() bool { return s.Kind.Spec().Train.Loss != pets.LossNone }

// runSpec is one model of the grid: a setting × learning rate × trial, with
// its identity, seeds and training plan computed once, here.
type runSpec struct {
	Setting *setting
	LR      float64
	Trial   int
	// Plan is how the run trains: groups, the executor's job and the
	// start-up notices read it; nothing re-derives it.
	Plan trainPlan
	// Seed is the run's seed: derived from (config seed, setting, trial)
	// only, so a trial's models at every learning rate share their
	// initialization, data order and release, and so do a run's copies on
	// another backend or in another group.
	Seed uint64
	// ID is the run_id: a hash of the dataset's content identity, the
	// config fingerprint (which includes the backend), the setting, the
	// learning rate, the trial and the config seed.
	ID string
	// Index is the run's position in the grid.
	Index int
}

// trainPlan is the training recipe of one run, decided by planFor from the
// config, the setting's pets.Train, the dataset's classes and the training
// rows (Section 4, Appendix C). By loss family:
//
//	LossBCE         BCE on the target (none: the clean label; a kind trained
//	                on soft targets, rr_prior: soft_target, built from the
//	                release through the kind's law by softTargets, with
//	                train.rr_prior_targets, see config.PriorTargets)
//	LossFlipped     train.rr_loss on label_rr (rr); debiased_bce with π
//	LossProportion  train.llp_loss per bag of k, on alpha (llp, llp_lap:
//	                Laplace noise is mean-zero) or alpha_debiased (llp_geom:
//	                E[noisy sum | clipped])
//	LossNone        nothing (bot: a constant predictor)
//
// On C ≥ 3 classes each loss is its C-class counterpart
// (model.Loss.ForClasses: bce → ce on one-hot labels or soft target
// vectors, debiased_bce → forward_ce, the RR correction through k-ary RR's
// transition matrix with FlipProb (C−1)/(e^ε+C−1), propmatch →
// propmatch_ce on the bag's proportion vector; easyllp has none and is
// refused naming train.llp_loss), and the targets are vectors of C
// (data.BatchOptions.Classes).
//
// Curated bags (sorted, key) train like random ones: the release's bag_id
// says which rows share a proportion.
type trainPlan struct {
	// Loss trains the run; zero for bot (nothing is trained).
	Loss model.Loss
	// Target is the column the targets come from: the clean label (none)
	// or a release column; TargetNone for bot.
	Target data.Target
	// Release is the (setting, trial) simulation release the targets are
	// read from ("" for none and bot), and ReleaseSeed the seed it is made
	// with (fresh bags and noise per trial, as in the paper).
	Release     string
	ReleaseSeed uint64
	// FlipProb is RR's flip probability π = 1/(1+e^ε) for debiased_bce, and
	// k-ary RR's (C−1)/(e^ε+C−1) for forward_ce and backward_ce (0
	// otherwise): the mechanism's pets.Mechanism.FlipProb.
	FlipProb float64
	// Classes is the number of label classes C of the dataset: 2 (binary
	// targets, a one-logit model) or C ≥ 3 (class-vector targets of
	// TargetWidth C, a softmax head of C logits, the C-class losses).
	Classes int
	// PriorTargets is how the release of a kind released with a prior
	// (rr_prior) becomes per-row BCE targets (Target is then
	// data.TargetSoft); "" otherwise.
	PriorTargets config.PriorTargets
	// PriorFromRelease: easyllp's label prior is the mean released target,
	// estimated from the release only (Plan.LossParams).
	PriorFromRelease bool
	// BagSize k: rows come in whole bags with one target per bag (per-bag
	// losses); 0 for one target per row. With SizedBags (a kind whose bags
	// are whole key groups: ara_summary) bags have any size up to the batch
	// size, packed whole into batches of at most BagSize = sizedSlots of
	// them (data.BatchOptions.SizedBags), and the loss is propmatch on
	// bags of any size.
	BagSize   int
	SizedBags bool
	// BatchSize is rows per step and model: train.batch_size, for per-bag
	// losses rounded down to whole bags (at least one), and capped at the
	// rows the run trains on (whole bags, for per-bag losses).
	BatchSize int
	// InitSeed and ShuffleSeed derive from the run's seed: the initial
	// weights and the per-epoch data order.
	InitSeed, ShuffleSeed uint64
	// ValueScale is 1/B for a regression of conversion values (targets in
	// units of the grid's B), 0 otherwise.
	ValueScale float64
}

// LossParams are the loss's program inputs; rel is the run's release (nil
// for the clean model), from which easyllp's prior is estimated.
func (p trainPlan) LossParams(rel *data.Frame) model.LossParams {
	lp := model.LossParams{FlipProb: p.FlipProb}
	if p.PriorFromRelease && rel != nil {
		lp.Prior = meanTarget(rel, p.Target)
	}
	return lp
}

// BatchOptions are the options of the run's batch source over its frame
// (the release, the soft targets or the clean training rows), reading
// feats.
func (p trainPlan) BatchOptions(feats *data.Features, width int) data.BatchOptions {
	o := data.BatchOptions{BatchSize: p.BatchSize, BagSize: p.BagSize, SizedBags: p.SizedBags, Target: p.Target, Shuffle: true,
		Seed: p.ShuffleSeed, DropLast: true, Features: feats, IndexOnly: true, Width: width, ValueScale: p.ValueScale}
	if p.Classes >= 3 {
		o.Classes = p.Classes
	}
	return o
}

// meanTarget is the mean of a release's per-row target column, clipped to
// [0, 1]: easyllp's label prior, estimated from the release only.
func meanTarget(f *data.Frame, t data.Target) float64 {
	col := f.Alpha
	if t == data.TargetAlphaDebiased {
		col = f.AlphaDebiased
	}
	var sum float64
	for _, a := range col {
		sum += a
	}
	return min(max(sum/float64(len(col)), 0), 1)
}

// Name is how progress and errors name the run.
func (r *runSpec) Name() string {
	return fmt.Sprintf("%s lr=%g trial=%d", r.Setting.ID, r.LR, r.Trial)
}

// deriveSeed derives an independent sub-seed of base for one purpose (e.g.
// "release", a setting id, a trial): FNV-1a of the labels, mixed with base
// through SplitMix64. Every random choice of a run flows from the config
// seed through here into explicit math/rand/v2 sources.
func deriveSeed(base uint64, labels ...string) uint64 {
	h := fnv.New64a()
	for _, l := range labels {
		h.Write([]byte(l))
		h.Write([]byte{0})
	}
	return mix.SplitMix64(base ^ h.Sum64())
}

// runSeed is the seed of trial t of setting s.
func runSeed(cfgSeed uint64, s *setting, trial int) uint64 {
	return deriveSeed(cfgSeed, "run", s.ID, strconv.Itoa(trial)) >> 1 // < 2^63: int64-safe in tables
}

// releaseSeed is the seed of trial t's simulation release of setting s:
// fresh bags and noise per trial, as in the paper.
func releaseSeed(cfgSeed uint64, s *setting, trial int) uint64 {
	return deriveSeed(cfgSeed, "release", s.ID, strconv.Itoa(trial))
}

// releasePath is where trial t's simulation release of setting s lives.
func releasePath(output string, s *setting, trial int) string {
	return filepath.Join(output, "releases", s.ID, "trial-"+strconv.Itoa(trial)+".arrow")
}

// errTooFewRows is wrapped when a setting cannot fill one batch.
var errTooFewRows = errors.New("pipeline: too few training rows")

// dataTargets maps each pets.Target to the column data reads it from.
var dataTargets = [...]data.Target{
	pets.TargetNone:          data.TargetNone,
	pets.TargetLabel:         data.TargetLabel,
	pets.TargetLabelRR:       data.TargetLabelRR,
	pets.TargetAlpha:         data.TargetAlpha,
	pets.TargetAlphaDebiased: data.TargetAlphaDebiased,
	pets.TargetSoft:          data.TargetSoft,
	pets.TargetValueRR:       data.TargetValueRR,
	pets.TargetBagMean:       data.TargetBagMean,
}

// planStage is what a plan trains: a run of the grid, or the prior model
// of a release with a prior, trained on its first stage.
type planStage uint8

const (
	stageRun   planStage = iota
	stagePrior           // seeds from the release seed; no release file (the first stage is in memory)
)

// stage1Train is the training recipe of the prior model of a kind released
// with a prior, trained on its first stage, which went through the
// uniform prior's channel (pets.Mechanism.FirstChannel): train.rr_loss on
// the released labels where that channel is randomized response over
// every class (pets.Mechanism.FlipProb > 0; rr_prior: its π corrects
// them), else BCE (ce) on the soft targets the channel gives them
// (softTargets).
func stage1Train(m *pets.Mechanism) pets.Train {
	if m.FlipProb() > 0 {
		return pets.Train{Loss: pets.LossFlipped, Target: pets.TargetLabelRR}
	}
	return pets.Train{Loss: pets.LossBCE, Target: pets.TargetSoft}
}

// planFor is the training plan of trial t of setting s with run seed seed
// on trainRows training rows (stageRun), or of the prior model of s's
// release of seed seed on its trainRows first-stage rows (stagePrior). It
// is the one place that maps a mechanism's training answer (pets.Train:
// loss family and target; stage1Train for a prior model) to the trainer's
// loss, target column, loss parameters and batch shape, with the config's
// choice within the family (train.rr_loss, train.llp_loss,
// train.rr_prior_targets).
func planFor(c *config.Config, s *setting, trial int, seed uint64, trainRows int, stage planStage) (trainPlan, error) {
	p := trainPlan{InitSeed: deriveSeed(seed, "init"), ShuffleSeed: deriveSeed(seed, "shuffle"), Classes: s.Mech.Classes()}
	if g := s.Mech.Grid(); !g.IsZero() {
		// Values: the clean model classifies the grid's bins; the others
		// regress on values in units of B.
		p.Classes = 2
		if c := len(valueBins(g.Points())) - 1; s.Kind.Spec().Release == pets.ReleaseRaw && c >= 3 {
			p.Classes = c
		}
		p.ValueScale = 1 / g.Max
	}
	tr := s.Mech.Spec().Train // on values a kind may train as another release (ara_summary: bag_mse on key means)
	if stage == stagePrior {
		p.InitSeed, p.ShuffleSeed = deriveSeed(seed, "prior-init"), deriveSeed(seed, "prior-shuffle")
		tr = stage1Train(s.Mech)
	}
	p.Target = dataTargets[tr.Target]
	key := ""
	switch tr.Loss {
	case pets.LossNone:
		return p, nil
	case pets.LossBCE:
		// rr_prior: the debiased BCE is plain BCE with the float target
		// (ỹ − π)/(1 − 2π) (it is linear in the target): one loss serves
		// every choice of targets (and ce every choice of target vectors).
		p.Loss = model.LossBCE
	case pets.LossFlipped:
		p.Loss, key = c.Train.RRLoss, "train.rr_loss"
	case pets.LossProportion:
		p.Loss, key = c.Train.LLPLoss, "train.llp_loss"
	case pets.LossSquared:
		p.Loss = model.LossMSE
	case pets.LossBagSquared:
		p.Loss = model.LossBagMSE
	}
	loss, err := p.Loss.ForClasses(p.Classes)
	switch {
	case err != nil && p.Classes >= 3:
		return p, &config.FieldError{Key: key, Msg: fmt.Sprintf("%s is binary only, and %s trains on labels of %d classes (the dataset's): "+
			"use %s", p.Loss, s.ID, p.Classes, map[string]string{"train.llp_loss": "propmatch (propmatch_ce on C classes)",
			"train.rr_loss": "debiased_bce (forward_ce on C classes), forward_ce, backward_ce or bce"}[key])}
	case err != nil:
		return p, &config.FieldError{Key: key, Msg: fmt.Sprintf("%s trains a softmax head of 3 or more classes, and the dataset's labels "+
			"are binary (%s): use debiased_bce or bce", p.Loss, s.ID)}
	}
	p.Loss = loss
	if usesFlipProb(p.Loss) {
		p.FlipProb = s.Mech.FlipProb()
	}
	if tr.Target == pets.TargetSoft {
		p.PriorTargets = c.Train.RRPriorTargets
	}
	if s.Releases() && stage == stageRun {
		p.Release, p.ReleaseSeed = releasePath(c.Output, s, trial), releaseSeed(c.Seed, s, trial)
	}
	p.BatchSize = c.Train.BatchSize
	rows := trainRows
	if p.Loss.PerBag() && s.Kind.Spec().Takes.KeyGroups {
		if p.Loss != model.LossPropMatch && p.Loss != model.LossBagMSE {
			return p, &config.FieldError{Key: key, Msg: fmt.Sprintf("%s trains on key groups of every size with propmatch only (bag_mse on values), not %s", s.ID, p.Loss)}
		}
		p.SizedBags, p.BagSize = true, min(sizedSlots, p.BatchSize)
		return p, nil // a key group larger than a batch is refused when its source is made
	}
	if p.Loss.PerBag() {
		p.BagSize = s.K
		p.PriorFromRelease = p.Loss == model.LossEasyLLP
		p.BatchSize = max(1, p.BatchSize/s.K) * s.K
		rows -= rows % s.K // a partial bag (dropped or kept) never trains
	}
	if rows < 1 {
		return p, fmt.Errorf("%w: %s: %d training rows do not fill one bag of k = %d", errTooFewRows, s.ID, trainRows, s.K)
	}
	p.BatchSize = min(p.BatchSize, rows)
	return p, nil
}

// sizedSlots is the most key groups a batch of a kind with bags of every
// size holds (its bags' slots: the loss's mask is batch × slots a
// replica).
const sizedSlots = 64

// usesFlipProb reports whether a loss corrects for randomized response
// with the plan's FlipProb.
func usesFlipProb(l model.Loss) bool {
	return l == model.LossDebiasedBCE || l == model.LossForwardCE || l == model.LossBackwardCE
}

// fingerprint is everything shared by a config's runs that changes their
// results, except the grid axes (setting, learning rate, trial) and the
// dataset: runs with different fingerprints are never averaged together.
// It excludes train.replicas, which never changes a result on backend go
// and on XLA only as a seed does (model's doc), and the output and cluster
// keys.
type fingerprint struct {
	Model       string `json:"model"`
	Hidden      []int  `json:"hidden,omitempty"`
	Init        string `json:"init"`
	Standardize bool   `json:"standardize"`
	Epochs      int    `json:"epochs"`
	BatchSize   int    `json:"batch_size"`
	RRLoss      string `json:"rr_loss"`
	LLPLoss     string `json:"llp_loss"`
	// RRPriorTargets is set only when the grid has a setting trained on
	// soft targets (rr_prior), so that other configs keep their ids.
	PriorTargets  string `json:"rr_prior_targets,omitempty"`
	Sparse        bool   `json:"sparse_embedding,omitempty"`
	KeepRemainder bool   `json:"keep_remainder,omitempty"`
	Backend       string `json:"backend"`
}

// configFingerprint is the short hash of c's fingerprint.
func configFingerprint(c *config.Config) string {
	f := fingerprint{Model: c.Model.Kind.String(), Init: c.Model.Init.String(), Standardize: c.Data.Standardize,
		Epochs: c.Train.Epochs, BatchSize: c.Train.BatchSize, RRLoss: c.Train.RRLoss.String(), LLPLoss: c.Train.LLPLoss.String(),
		KeepRemainder: c.Privacy.KeepRemainder, Backend: c.Backend.String()}
	if c.Model.Kind == model.KindMLP {
		f.Hidden = c.Model.Hidden
	}
	if c.Model.Kind == model.KindKDDEmbed {
		f.Sparse = c.Train.SparseEmbedding
	}
	for _, p := range c.Pets {
		if p.Mechanism.Spec().Train.Target == pets.TargetSoft {
			f.PriorTargets = string(c.Train.RRPriorTargets)
		}
	}
	return "cfg:" + shortHash(f)
}

// configKeys is what configFingerprint hashes, as the config keys and
// values a person would write ("key=value; …", report.Run.Config): the
// readable form of config_id, from which reports name the keys two configs
// differ in. A key is listed exactly when its fingerprint field is set.
func configKeys(c *config.Config) string {
	m := map[string]string{
		"model.kind": c.Model.Kind.String(), "model.init": c.Model.Init.String(),
		"data.standardize": strconv.FormatBool(c.Data.Standardize), "train.epochs": strconv.Itoa(c.Train.Epochs),
		"train.batch_size": strconv.Itoa(c.Train.BatchSize), "train.rr_loss": c.Train.RRLoss.String(),
		"train.llp_loss": c.Train.LLPLoss.String(), "privacy.keep_remainder": strconv.FormatBool(c.Privacy.KeepRemainder),
		"backend": c.Backend.String(),
	}
	if c.Model.Kind == model.KindMLP {
		m["model.hidden"] = intList(c.Model.Hidden)
	}
	if c.Model.Kind == model.KindKDDEmbed {
		m["train.sparse_embedding"] = strconv.FormatBool(c.Train.SparseEmbedding)
	}
	for _, p := range c.Pets {
		if p.Mechanism.Spec().Train.Target == pets.TargetSoft {
			m["train.rr_prior_targets"] = string(c.Train.RRPriorTargets)
		}
	}
	return report.FormatConfig(m)
}

func shortHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // programmer bug: only plain values are hashed
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// gridData is what a grid needs of its dataset: its content identity and
// its training rows.
type gridData struct {
	ID        string
	TrainRows int
}

// expandRuns expands the grid into runs in a fixed order (settings in config
// order, then trials, then learning rates) so that groups and shards
// partition it deterministically, each with its plan. An error names a
// setting that cannot train on the dataset.
func expandRuns(c *config.Config, settings []*setting, ds gridData) ([]*runSpec, error) {
	cfgID := configFingerprint(c)
	var out []*runSpec
	for _, s := range settings {
		for t := range c.Train.Trials {
			seed := runSeed(c.Seed, s, t)
			plan, err := planFor(c, s, t, seed, ds.TrainRows, stageRun)
			if err != nil {
				return nil, err
			}
			for _, lr := range c.Train.LearningRates {
				r := &runSpec{Setting: s, LR: lr, Trial: t, Plan: plan, Seed: seed, Index: len(out)}
				r.ID = shortHash(struct {
					Dataset, Config, Setting string
					LR                       uint64
					Trial                    int
					Seed                     uint64
				}{ds.ID, cfgID, s.ID, math.Float64bits(lr + 0), t, c.Seed})
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// notices lists what the runs' plans do that a reader of the config might
// not expect (printed at the start of a run): a grid of the clean model
// alone (pets left out: nothing to audit), batch sizes rounded down to
// whole bags, or capped at the rows a run trains on. One line per bag size
// (or per setting, for a cap).
func notices(c *config.Config, runs []*runSpec) []string {
	var out []string
	if !slices.ContainsFunc(c.Pets, func(p config.PetConfig) bool { return p.Mechanism != pets.None }) {
		out = append(out, "pets lists no mechanism, only none (the default when pets is left out or null): "+
			"this trains the clean model alone and the audit measures no mechanism; list mechanisms under pets, "+
			"e.g. pets: [{mechanism: none}, {mechanism: rr, epsilon: [1]}] (configs/quickstart.yaml shows each)")
	}
	seen := map[string]bool{}
	for _, r := range runs {
		p, want := r.Plan, c.Train.BatchSize
		if p.BatchSize == want || p.Loss == 0 {
			continue
		}
		var key, msg string
		if p.BagSize > 0 && p.BatchSize == max(1, want/p.BagSize)*p.BagSize {
			key = fmt.Sprintf("k%d", p.BagSize)
			msg = fmt.Sprintf("train.batch_size %d is not a multiple of k=%d: %s batches hold %d bags (%d rows)",
				want, p.BagSize, r.Setting.Kind, p.BatchSize/p.BagSize, p.BatchSize)
		} else {
			key = r.Setting.ID
			msg = fmt.Sprintf("train.batch_size %d is more than the %d rows %s trains on: its batches hold %d rows",
				want, p.BatchSize, r.Setting.ID, p.BatchSize)
		}
		if !seen[key] {
			seen[key] = true
			out = append(out, msg)
		}
	}
	return out
}
