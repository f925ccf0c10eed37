package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/llp"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// Config is the typed run configuration. Its keys (the yaml tags, one per
// field) are the user-facing contract documented in README.md ("Config
// reference"); Load decodes a file, TRAIN_* variables and --set overrides
// into it. Enum fields use the owning packages' types, so a bad value is
// rejected when decoded, by the package that defines it.
type Config struct {
	Name    string            `yaml:"name"`
	Seed    uint64            `yaml:"seed"`
	Backend model.BackendName `yaml:"backend"`
	Output  string            `yaml:"output"`
	Data    DataConfig        `yaml:"data"`
	Model   ModelConfig       `yaml:"model"`
	Train   TrainConfig       `yaml:"train"`
	Pets    []PetConfig       `yaml:"pets"`
	Audit   AuditConfig       `yaml:"audit"`
	Privacy PrivacyConfig     `yaml:"privacy"`
	Cluster ClusterConfig     `yaml:"cluster"`
	// Invocation is how this config was given (not a key: set by Load
	// and the command line, recorded in every result's provenance).
	Invocation Invocation `yaml:"-"`
}

// DataConfig chooses the dataset.
type DataConfig struct {
	// Path is a dataset directory (train data import|synth); empty:
	// synthesize Synth into <output>/data.
	Path  string      `yaml:"path"`
	Synth SynthConfig `yaml:"synth"`
	// Standardize rescales every dense feature to mean 0 and standard
	// deviation 1, with the mean and sd of the training rows (features only,
	// never labels), for training, test and audit alike. Default true; false
	// replicates the paper exactly (it does not say whether it standardized).
	Standardize bool `yaml:"standardize"`
	// IDColumn names the dataset files' column identifying people (read as
	// identifiers, not a feature): the privacy ledger composes releases per
	// id. Empty: a person is known by its feature values.
	IDColumn string `yaml:"id_column"`
}

// SynthConfig describes a synthetic dataset (data.Synth).
type SynthConfig struct {
	Kind     data.SynthKind `yaml:"kind"`
	Rows     int            `yaml:"rows"`
	TestRows int            `yaml:"test_rows"`
	Features int            `yaml:"features"`
	// Classes is the number of label classes of kind multiclass, in
	// [2, 64]; the binary kinds take 0 (or 2).
	Classes int `yaml:"classes"`
	// Groups > 0 adds an integer key column `group` (x0 in Groups
	// equiprobable bins) for bags: key:group.
	Groups int `yaml:"groups"`
	// Kind values (conversion values): the grid's B (ValueMax, 0: 400) and
	// step (ValueStep, 0: 1), and the share of zeros ZeroRate in (0, 1)
	// (0: 0.9).
	ValueMax  float64 `yaml:"value_max"`
	ValueStep float64 `yaml:"value_step"`
	ZeroRate  float64 `yaml:"zero_rate"`
}

// ModelConfig is the architecture (Appendix C).
type ModelConfig struct {
	Kind   model.Kind `yaml:"kind"`
	Hidden []int      `yaml:"hidden"`
	Init   model.Init `yaml:"init"`
}

// TrainConfig is the optimisation protocol, shared by every run of the grid.
type TrainConfig struct {
	Epochs int `yaml:"epochs"`
	// BatchSize is examples per step and per model; for the LLP family the
	// largest multiple of k not above it (at least one bag), noted at start.
	BatchSize     int       `yaml:"batch_size"`
	LearningRates []float64 `yaml:"learning_rates"`
	Trials        int       `yaml:"trials"`
	// RRLoss trains RR models: debiased_bce (unbiased, Appendix C) or bce
	// (plain BCE on the noisy labels, a baseline). On labels of C ≥ 3
	// classes each is its C-class counterpart (debiased_bce → forward_ce,
	// bce → ce), and forward_ce or backward_ce (C ≥ 3 only) pick the
	// correction of k-ary RR themselves.
	RRLoss model.Loss `yaml:"rr_loss"`
	// LLPLoss trains the LLP family: propmatch (the paper) or easyllp
	// (binary only); on C ≥ 3 classes propmatch is propmatch_ce.
	LLPLoss model.Loss `yaml:"llp_loss"`
	// CheckpointEvery is a wall-clock interval ("10m", the default) or a
	// step count ("500"): how often a group's state is saved so a killed
	// group resumes (also at the end and on interruption).
	CheckpointEvery model.Interval `yaml:"checkpoint_every"`
	// Replicas is how many models one compiled program trains together:
	// "auto" (1 on backend go; on XLA the largest group, at most 256, whose
	// state and step activations fit 8 GiB: pipeline's Replicas) or a
	// number ≥ 1. It never changes a run's identity, nor its
	// result on backend go; on XLA the exact result moves like a seed's
	// (rounding of other program shapes, amplified by training).
	Replicas Replicas `yaml:"replicas"`
	// ConcurrentGroups is how many groups one process trains at once, each
	// on its share of the cores (model.CoreShare): "auto" (backend go: as
	// many as GOMAXPROCS, the groups to train and the memory allow; 1 on
	// XLA) or a number ≥ 1. It never changes a run's result or identity.
	// (Groups at once run on backend go, where each is bit-identical.)
	ConcurrentGroups Replicas `yaml:"concurrent_groups"`
	// SparseEmbedding updates only the embedding rows a step touches (lazy
	// Adam) for kdd_embed; false: dense Adam over the whole table.
	SparseEmbedding bool `yaml:"sparse_embedding"`
	// RRPriorTargets is how rr_prior's released labels become BCE targets
	// (PriorTargets).
	RRPriorTargets PriorTargets `yaml:"rr_prior_targets"`
}

// PetConfig is one entry of `pets:`; K and Epsilon lists expand to a grid.
type PetConfig struct {
	Mechanism pets.Kind `yaml:"mechanism"`
	K         []int     `yaml:"k,omitempty"`
	Epsilon   []float64 `yaml:"epsilon,omitempty"`
	// Bags (llp, llp_lap, llp_geom): bag rules, random (the default),
	// sorted:<feature> or key:<column>; a list expands the grid.
	Bags []llp.Rule `yaml:"bags,omitempty"`
	// StageFraction (rr_prior): the share of training rows released in
	// stage 1, in (0, 1); nil (the key left out) means defaultStageFraction.
	// A pointer, so that an explicit 0 is refused rather than read as unset.
	StageFraction *float64 `yaml:"stage_fraction,omitempty"`
	// PriorLR (rr_prior): the stage-1 prior model's learning rate, > 0; nil
	// (the key left out) means the middle of train.learning_rates.
	PriorLR *float64 `yaml:"prior_lr,omitempty"`
	// rr_bins's prior over the grid of values, one of: PriorEpsilon, the ε₁
	// of a private prior (a noisy histogram of the training values spends
	// it, the bins the rest of each ε; in (0, ε)); Prior, a public one by
	// name (population: a synthetic dataset's population marginal,
	// meta.json's value_prior; uniform); PriorWeights, a public one as
	// one weight per grid point (normalized).
	PriorEpsilon *float64  `yaml:"prior_epsilon,omitempty"`
	Prior        string    `yaml:"prior,omitempty"`
	PriorWeights []float64 `yaml:"prior_weights,omitempty"`
	// TriggerData and Windows (ara_event): the attribution source's
	// trigger-data values T and reporting windows W, with 1 + T·W the
	// labels' classes (data synth --kind conversions --trigger-data T
	// --windows W); Reports: its most reports R, a list expanding the grid.
	TriggerData int   `yaml:"trigger_data,omitempty"`
	Windows     int   `yaml:"windows,omitempty"`
	Reports     []int `yaml:"reports,omitempty"`
	// BudgetShare (ara_summary): splits of the contribution budget between
	// the measurement goals, a list expanding the grid.
	BudgetShare []BudgetShare `yaml:"budget_share,omitempty"`
	// Key (ara_summary): the integer key column whose groups are the
	// summary's keys (one aggregate per key value).
	Key string `yaml:"key,omitempty"`
}

// BudgetShare is a split of a source's contribution budget (L1 = 65,536)
// between measurement goals: the conversion count's share (binary
// conversions) or the conversion value's (value labels: {value: v}, the
// count left 0), each in [0, 1], their sum at most 1 (the rest spent on
// nothing, e.g. kept for other keys).
type BudgetShare struct {
	Count float64 `yaml:"count"`
	Value float64 `yaml:"value,omitempty"`
}

// EtaSource is where the attacker's η comes from (Section 3).
type EtaSource string

const (
	EtaCleanModel EtaSource = "clean_model" // η̂ of the best-LR clean model
	EtaTrue       EtaSource = "true"        // the synthetic data's true η
	EtaKNN        EtaSource = "knn"         // mean clean label of the nearest training rows
)

// UnmarshalText accepts clean_model, true and knn.
func (e *EtaSource) UnmarshalText(b []byte) error {
	switch s := EtaSource(strings.TrimSpace(string(b))); s {
	case EtaCleanModel, EtaTrue, EtaKNN:
		*e = s
		return nil
	}
	return fmt.Errorf("%q is not one of clean_model, true, knn", b)
}

// AuditConfig configures the audit stage.
type AuditConfig struct {
	Eta        EtaSource `yaml:"eta"`
	Examples   int       `yaml:"examples"`
	LabelDraws int       `yaml:"label_draws"`
	// Samples caps the (prior, posterior) pairs kept per setting for the
	// figures (posteriors.parquet).
	Samples int `yaml:"samples"`
	// KNNK and KNNRows configure eta: knn: the neighbours averaged and the
	// training rows searched (a seeded subsample when the set is larger).
	KNNK    int `yaml:"knn_k"`
	KNNRows int `yaml:"knn_rows"`
	// RealizedDraws M: releases of the audit labels drawn through the
	// production release code and attacked (realized_gain ± SE, and the
	// checks that fail an audit whose releases disagree with the stated
	// likelihood); 0 turns them and the canaries off.
	RealizedDraws int `yaml:"realized_draws"`
	// Canaries: canary trials for the empirical ε lower bound eps_lower
	// (0: none).
	Canaries int `yaml:"canaries"`
	// CalibrationRows: test rows after the audit set on which the
	// attacker's η is checked against the labels (reliability table, ECE,
	// Brier) and Platt-recalibrated (eadv_calibrated); fewer when the test
	// set ends sooner, 0 for none.
	CalibrationRows int `yaml:"calibration_rows"`
	// ModelAttack: every trained model also predicts ModelRows of its
	// training rows (a seeded choice that reads no label) and the audit
	// rows; the audit scores its guesses of their labels against the true
	// ones (model_adv, model_adv_nonmember) and, where the data's true η
	// is known, fails a model that beats the release it trained on.
	ModelAttack bool `yaml:"model_attack"`
	ModelRows   int  `yaml:"model_rows"`
	// ModelCanaries: canaries through training (eps_lower_model): per
	// setting, one more model trained in the audit on a release of the
	// training rows in which this many rows carry fair coins; 0: none.
	// Synthetic data only (the other labels are drawn from the true η).
	ModelCanaries int `yaml:"model_canaries"`
	// Tau is τ ≥ 0 of the τ-advantage of conversion values (the attacker
	// guesses the value within ±τ), in value units; nil: B/40.
	Tau *float64 `yaml:"tau"`
}

// PrivacyConfig holds release-wide settings.
type PrivacyConfig struct {
	// DeltaPrime is δ' of the ledger's (ε, δ') totals, in (0, 1e-3]; it must
	// be the ledger's own (fixed by its first release).
	DeltaPrime float64 `yaml:"delta_prime"`
	// KeepRemainder keeps the n mod k leftover rows of an LLP partition as a
	// smaller last bag instead of dropping them.
	KeepRemainder bool `yaml:"keep_remainder"`
	// Ledger is the privacy ledger of the run's simulation releases; empty:
	// privacy_ledger.csv in the output directory.
	Ledger string `yaml:"ledger"`
	// Budget refuses a simulation release that would take any training row
	// above this ε (at DeltaPrime); 0: no budget.
	Budget float64 `yaml:"budget"`
}

// ClusterConfig holds the resources of emitted batch jobs.
type ClusterConfig struct {
	CPUsPerTask int    `yaml:"cpus_per_task"` // Slurm --cpus-per-task, Kubernetes cpu request
	Mem         string `yaml:"mem"`           // e.g. 8G (Slurm --mem; Kubernetes 8Gi)
	Time        string `yaml:"time"`          // Slurm --time, e.g. 04:00:00
	Partition   string `yaml:"partition"`     // Slurm --partition (empty: the default)
	GPUs        int    `yaml:"gpus"`          // GPUs per task (Slurm --gres=gpu:N; nvidia.com/gpu)
	Image       string `yaml:"image"`         // Kubernetes container image holding the train binary
	Binary      string `yaml:"binary"`        // train binary path on the nodes; empty: this executable (Slurm), "train" (Kubernetes)
	Workdir     string `yaml:"workdir"`       // working directory of the tasks; empty: the current directory (Slurm), /work (Kubernetes)
}

// Defaults returns the value of every key a config file may omit.
func Defaults() Config {
	return Config{
		Name: "run", Seed: 1, Backend: mustBackend(model.DefaultBackend), Output: "results/run",
		Data:  DataConfig{Standardize: true, Synth: SynthConfig{Kind: data.SynthLogistic, Rows: 60000, TestRows: 20000, Features: 28}},
		Model: ModelConfig{Kind: model.KindMLP, Hidden: []int{64, 64}, Init: model.DefaultInit},
		Train: TrainConfig{Epochs: 2, BatchSize: 1024, LearningRates: []float64{0.001}, Trials: 1,
			RRLoss: model.LossDebiasedBCE, LLPLoss: model.LossPropMatch, RRPriorTargets: defaultPriorTargets,
			CheckpointEvery: model.DefaultCheckpointInterval, Replicas: Replicas{}, SparseEmbedding: true},
		Pets: []PetConfig{{Mechanism: pets.None}},
		Audit: AuditConfig{Eta: EtaCleanModel, Examples: 10000, LabelDraws: 10, Samples: 2000, KNNK: 100, KNNRows: 100000, RealizedDraws: 20, Canaries: 10000, CalibrationRows: 10000,
			ModelAttack: true, ModelRows: 10000},
		Privacy: PrivacyConfig{DeltaPrime: 1e-6},
		Cluster: ClusterConfig{CPUsPerTask: 2, Mem: "8G", Time: "04:00:00"},
	}
}

// Replicas is train.replicas: N ≥ 1, or 0 for "auto".
type Replicas struct{ N int }

// Auto reports whether the group size is chosen per backend.
func (r Replicas) Auto() bool { return r.N == 0 }

func (r Replicas) String() string {
	if r.Auto() {
		return "auto"
	}
	return strconv.Itoa(r.N)
}

// MarshalText writes "auto" or the number.
func (r Replicas) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads "auto" or a whole number ≥ 1.
func (r *Replicas) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "auto" {
		*r = Replicas{}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("%q is neither auto nor a whole number ≥ 1", s)
	}
	*r = Replicas{N: n}
	return nil
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("config")

// FieldError is a bad value of one key: of a config (dotted, with list
// indices: "pets[1].epsilon[0]"), or of an option of a library call
// (pipeline's "out", "shard", "hash_buckets"), which a command line names
// by its flag. Msg may name other options as `key`.
type FieldError struct{ Key, Msg string }

func (e *FieldError) Error() string { return e.Key + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *FieldError) Unwrap() error { return ErrConfig }

func bad(key, format string, args ...any) error {
	return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// MinEpsilon is the smallest ε accepted in a grid and by privatize: below
// it randomized response flips with probability 1/2 − ε/4 + O(ε³), its
// debiased loss weights grow like 2/ε, and float64 arithmetic of the losses
// and the noise loses the signal (at ε = 1e-300, π rounds to exactly 1/2).
// The largest is MaxEpsilon.
const MinEpsilon = 1e-6

// MaxRuns is the largest grid accepted (settings × learning rates ×
// trials): the paper's Higgs grid is about 17,600 runs; a typo such as
// train.trials: 100000000 is refused with its size before anything is
// expanded.
const MaxRuns = 1_000_000

// Validate checks ranges and combinations once; the error is a *FieldError
// naming the key. The checks run in the order of the file's keys (name …
// cluster, privacy), so a config with two faults names the first.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.checkTop, c.checkSynth, c.checkValueGrid, c.checkModel, c.checkTrain,
		c.checkPets, c.checkAudit, c.checkClusterPrivacy,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkTop checks the top-level keys: name, seed, backend, output.
func (c *Config) checkTop() error {
	if strings.TrimSpace(c.Name) == "" {
		return bad("name", "must not be empty")
	}
	if c.Seed > math.MaxInt64 {
		return bad("seed", "must be in [0, 2^63), got %d", c.Seed)
	}
	if c.Backend.String() == "" {
		return bad("backend", "must name a backend: go, go:<options>, xla:cpu, xla:cuda or xla:<plugin>")
	}
	if strings.TrimSpace(c.Output) == "" {
		return bad("output", "must not be empty")
	}
	return nil
}

// checkSynth checks data.synth's sizes and its kind's keys (classes,
// value_max, value_step, zero_rate) when the data is synthesized (no
// data.path).
func (c *Config) checkSynth() error {
	if c.Data.Path != "" {
		return nil
	}
	s := c.Data.Synth
	switch {
	case s.Rows < 1:
		return bad("data.synth.rows", "must be ≥ 1, got %d", s.Rows)
	case s.TestRows < 1:
		return bad("data.synth.test_rows", "must be ≥ 1, got %d", s.TestRows)
	case s.Features < 1:
		return bad("data.synth.features", "must be ≥ 1, got %d", s.Features)
	case s.Groups < 0:
		return bad("data.synth.groups", "must be ≥ 0, got %d", s.Groups)
	case s.Kind == data.SynthConversions:
		return bad("data.synth.kind", "conversions is made by `train data synth --kind conversions --trigger-data T --windows W`; give its directory as data.path (data.synth has no trigger_data and windows keys yet)")
	case s.Kind != data.SynthValues && (s.ValueMax != 0 || s.ValueStep != 0 || s.ZeroRate != 0):
		return bad("data.synth.value_max", "kind %s takes no value_max, value_step or zero_rate (kind values does)", s.Kind)
	case s.Kind == data.SynthValues && s.Classes != 0:
		return bad("data.synth.classes", "kind values has conversion values, not classes")
	case s.Kind == data.SynthValues && !(s.ZeroRate >= 0 && s.ZeroRate < 1):
		return bad("data.synth.zero_rate", "must be in (0, 1) (0: the default %v), got %v", data.DefaultZeroRate, s.ZeroRate)
	case s.Kind == data.SynthMulticlass && (s.Classes < 2 || s.Classes > data.MaxClasses):
		return bad("data.synth.classes", "must be in [2, %d] for kind multiclass, got %d", data.MaxClasses, s.Classes)
	case s.Kind != data.SynthMulticlass && s.Classes != 0 && s.Classes != 2:
		return bad("data.synth.classes", "%d: kind %s has binary labels; use kind multiclass for %d classes", s.Classes, s.Kind, s.Classes)
	}
	return nil
}

// checkValueGrid checks synthesized values' grid (value_max B, default
// 400; value_step, default 1), naming value_max when B itself is bad.
func (c *Config) checkValueGrid() error {
	s := c.Data.Synth
	if c.Data.Path != "" || s.Kind != data.SynthValues {
		return nil
	}
	g := data.ValueGrid{Max: s.ValueMax, Step: s.ValueStep}
	if g.Max == 0 {
		g.Max = data.DefaultValueMax
	}
	if g.Step == 0 {
		g.Step = data.DefaultValueStep
	}
	if err := g.Check(); err != nil {
		key := "data.synth.value_step"
		if !(g.Max > 0) || math.IsInf(g.Max, 0) {
			key = "data.synth.value_max"
		}
		return bad(key, "%s", strings.TrimPrefix(err.Error(), data.ErrInvalid.Error()+": "))
	}
	return nil
}

// checkModel checks model.hidden's widths (each ≥ 1).
func (c *Config) checkModel() error {
	for i, h := range c.Model.Hidden {
		if h < 1 {
			return bad(fmt.Sprintf("model.hidden[%d]", i), "must be ≥ 1, got %d", h)
		}
	}
	return nil
}

// checkTrain checks train's sizes and losses, then each learning rate
// (finite, > 0, no repeat).
func (c *Config) checkTrain() error {
	t := c.Train
	switch {
	case t.Epochs < 1:
		return bad("train.epochs", "must be ≥ 1, got %d", t.Epochs)
	case t.BatchSize < 1:
		return bad("train.batch_size", "must be ≥ 1, got %d", t.BatchSize)
	case len(t.LearningRates) == 0:
		return bad("train.learning_rates", "must list at least one learning rate")
	case t.Trials < 1:
		return bad("train.trials", "must be ≥ 1, got %d", t.Trials)
	case t.RRLoss != model.LossDebiasedBCE && t.RRLoss != model.LossBCE && t.RRLoss != model.LossForwardCE && t.RRLoss != model.LossBackwardCE:
		return bad("train.rr_loss", "%s is not one of debiased_bce, bce, forward_ce, backward_ce", t.RRLoss)
	case t.LLPLoss != model.LossPropMatch && t.LLPLoss != model.LossEasyLLP:
		return bad("train.llp_loss", "%s is not one of propmatch, easyllp", t.LLPLoss)
	case !t.RRPriorTargets.valid():
		return bad("train.rr_prior_targets", "missing (one of %s)", priorTargetNames())
	}
	seenLR := make(map[float64]int, len(t.LearningRates))
	for i, lr := range t.LearningRates {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return bad(fmt.Sprintf("train.learning_rates[%d]", i), "must be finite and > 0, got %v", lr)
		}
		if j, ok := seenLR[lr]; ok { // a repeat would train (and count) the same runs twice
			return bad(fmt.Sprintf("train.learning_rates[%d]", i), "repeats %v (train.learning_rates[%d])", lr, j)
		}
		seenLR[lr] = i
	}
	return nil
}

// checkPets checks that pets lists an entry, each entry in turn
// (checkPet), no setting twice, and the grid's size (at most MaxRuns runs).
func (c *Config) checkPets() error {
	if len(c.Pets) == 0 {
		return bad("pets", "must list at least one mechanism (e.g. {mechanism: none})")
	}
	for i, p := range c.Pets {
		if err := c.checkPet(i, p); err != nil {
			return err
		}
	}
	if err := c.checkDuplicatePets(); err != nil {
		return err
	}
	if n := c.gridSize(); n > MaxRuns {
		return bad("train.trials", "the grid would hold %.4g runs (%d settings at most × %d learning rates × %d trials), more than %d",
			n, c.maxSettings(), len(c.Train.LearningRates), c.Train.Trials, MaxRuns)
	}
	return nil
}

// checkPet checks entry pets[i]: its mechanism and the k and ε it takes,
// each k ≥ 1 and ε in range, then the curated (bags, rr_prior, rr_bins)
// and ARA keys.
func (c *Config) checkPet(i int, p PetConfig) error {
	key := fmt.Sprintf("pets[%d]", i)
	k := p.Mechanism
	switch {
	case !k.Valid():
		return bad(key+".mechanism", "missing (one of %s)", strings.Join(kindNames(), ", "))
	case k.NeedsK() && len(p.K) == 0:
		return bad(key+".k", "%s needs at least one bag size k", k)
	case !k.NeedsK() && len(p.K) > 0:
		return bad(key+".k", "%s takes no bag size", k)
	case k.Spec().Release == pets.ReleaseHistogram: // value_prior: a stage of its family's kind
		fam := k.Spec().Look.Family
		return bad(key+".mechanism", "%s is %s's private prior (pets[i].prior_epsilon of an %s entry), not a mechanism of its own", k, fam, fam)
	case k.NeedsEpsilon() && len(p.Epsilon) == 0 && !k.OptionalEpsilon():
		return bad(key+".epsilon", "%s needs at least one epsilon", k)
	case !k.NeedsEpsilon() && len(p.Epsilon) > 0:
		return bad(key+".epsilon", "%s takes no epsilon", k)
	}
	for j, v := range p.K {
		if v < 1 {
			return bad(fmt.Sprintf("%s.k[%d]", key, j), "must be ≥ 1, got %d", v)
		}
	}
	for j, e := range p.Epsilon {
		if CheckEpsilon(e) != nil {
			return bad(fmt.Sprintf("%s.epsilon[%d]", key, j), "%s", epsilonRange(e))
		}
	}
	if err := c.checkCuratedPet(i, p); err != nil {
		return err
	}
	return checkARAPet(i, p)
}

// checkAudit checks audit's counts (examples, draws, neighbours, rows,
// canaries) and τ (finite, ≥ 0, in value units; nil: B/40).
func (c *Config) checkAudit() error {
	a := c.Audit
	switch {
	case a.Examples < 1:
		return bad("audit.examples", "must be ≥ 1, got %d", a.Examples)
	case a.LabelDraws < 1:
		return bad("audit.label_draws", "must be ≥ 1, got %d", a.LabelDraws)
	case a.KNNK < 1:
		return bad("audit.knn_k", "must be ≥ 1, got %d", a.KNNK)
	case a.KNNRows < a.KNNK:
		return bad("audit.knn_rows", "must be ≥ audit.knn_k (%d), got %d", a.KNNK, a.KNNRows)
	case a.Samples < 0:
		return bad("audit.samples", "must be ≥ 0, got %d", a.Samples)
	case a.RealizedDraws < 0:
		return bad("audit.realized_draws", "must be ≥ 0, got %d", a.RealizedDraws)
	case a.Canaries < 0:
		return bad("audit.canaries", "must be ≥ 0, got %d", a.Canaries)
	case a.CalibrationRows < 0:
		return bad("audit.calibration_rows", "must be ≥ 0, got %d", a.CalibrationRows)
	case a.ModelRows < 1:
		return bad("audit.model_rows", "must be ≥ 1, got %d", a.ModelRows)
	case a.ModelCanaries < 0:
		return bad("audit.model_canaries", "must be ≥ 0, got %d", a.ModelCanaries)
	case a.Tau != nil && (!(*a.Tau >= 0) || math.IsInf(*a.Tau, 0)):
		return bad("audit.tau", "must be finite and ≥ 0 (leave the key out for B/40), got %v", *a.Tau)
	}
	return nil
}

// checkClusterPrivacy checks cluster's resources (cpus_per_task ≥ 1,
// gpus ≥ 0), then privacy's δ' (in (0, 1e-3]) and budget (finite ε ≥ 0).
func (c *Config) checkClusterPrivacy() error {
	if c.Cluster.CPUsPerTask < 1 {
		return bad("cluster.cpus_per_task", "must be ≥ 1, got %d", c.Cluster.CPUsPerTask)
	}
	if c.Cluster.GPUs < 0 {
		return bad("cluster.gpus", "must be ≥ 0, got %d", c.Cluster.GPUs)
	}
	if !(c.Privacy.DeltaPrime > 0 && c.Privacy.DeltaPrime <= ledger.MaxDeltaPrime) {
		return bad("privacy.delta_prime", "must be in (0, %g] (a larger δ' buys small totals with a real chance that they fail), got %v",
			ledger.MaxDeltaPrime, c.Privacy.DeltaPrime)
	}
	if b := c.Privacy.Budget; !(b >= 0) || math.IsInf(b, 0) {
		return bad("privacy.budget", "must be finite and ≥ 0 (0: no budget), got %v", b)
	}
	return nil
}

// checkDuplicatePets refuses a setting listed twice (in one entry's k or
// epsilon list, or by two entries): strict decoding promises that nothing
// in the file is silently dropped. The grid size is bounded first.
func (c *Config) checkDuplicatePets() error {
	if c.gridSize() > MaxRuns {
		return nil // reported by the size check, without expanding anything
	}
	first := map[Setting]int{}
	for i, p := range c.Pets {
		key := fmt.Sprintf("pets[%d]", i)
		if j := firstRepeat(p.K); j >= 0 {
			return bad(fmt.Sprintf("%s.k[%d]", key, j), "repeats %d", p.K[j])
		}
		if j := firstRepeat(p.Epsilon); j >= 0 {
			return bad(fmt.Sprintf("%s.epsilon[%d]", key, j), "repeats %v", p.Epsilon[j])
		}
		if j := firstRepeat(p.Bags); j >= 0 {
			return bad(fmt.Sprintf("%s.bags[%d]", key, j), "repeats %s", p.Bags[j])
		}
		if j := firstRepeat(p.Reports); j >= 0 {
			return bad(fmt.Sprintf("%s.reports[%d]", key, j), "repeats %d", p.Reports[j])
		}
		if j := firstRepeat(p.BudgetShare); j >= 0 {
			return bad(fmt.Sprintf("%s.budget_share[%d]", key, j), "repeats %+v", p.BudgetShare[j])
		}
		for _, st := range p.Settings() {
			if j, ok := first[st]; ok && j != i {
				return bad(key, "repeats setting %s of pets[%d]", st.ID(), j)
			}
			first[st] = i
		}
	}
	return nil
}

// firstRepeat is the index of the first element of s equal to an earlier
// one (-1: none), in linear time (a list may be long).
func firstRepeat[T comparable](s []T) int {
	seen := make(map[T]bool, len(s))
	for i, v := range s {
		if seen[v] {
			return i
		}
		seen[v] = true
	}
	return -1
}

// maxSettings is the number of PET settings before duplicates are removed
// (an upper bound, computed without expanding anything).
func (c *Config) maxSettings() int {
	n := 0
	for _, p := range c.Pets {
		n += max(1, len(p.K)) * max(1, len(p.Epsilon)) * max(1, len(p.Bags)) * max(1, len(p.Reports)) * max(1, len(p.BudgetShare))
	}
	return n
}

// gridSize is the number of runs the grid would hold at most, in float64 so
// that no product overflows.
func (c *Config) gridSize() float64 {
	return float64(c.maxSettings()) * float64(len(c.Train.LearningRates)) * float64(c.Train.Trials)
}

// mustBackend parses a backend name this package spells itself.
func mustBackend(name string) model.BackendName {
	b, err := model.ParseBackend(name)
	if err != nil {
		panic(err) // programmer bug
	}
	return b
}

func kindNames() []string {
	var s []string
	for _, k := range pets.Kinds() {
		s = append(s, k.String())
	}
	return s
}
