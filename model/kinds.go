package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"labelprivacy/internal/enum"
)

// Kind names a model architecture (Appendix C of the paper).
type Kind int

const (
	// KindMLP is a fully connected ReLU network with ModelConfig.Hidden layer
	// sizes (none: logistic regression) and one logit output.
	KindMLP Kind = iota + 1
	// KindHiggsMLP is the paper's Higgs model: 4 hidden layers of 300 ReLU
	// units and one sigmoid output.
	KindHiggsMLP
	// KindKDDEmbed is the paper's KDD Cup 2012 model: a Buckets×50 embedding
	// summed over an example's hashed feature indices, dense layers of 100 and
	// 50 ReLU units, one sigmoid output.
	KindKDDEmbed
)

var kinds = enum.New("model kind", ErrInvalidConfig, []string{"mlp", "higgs_mlp", "kdd_embed"},
	[]Kind{KindMLP, KindHiggsMLP, KindKDDEmbed})

func (k Kind) String() string { return kinds.String(k, "Kind") }

// ParseKind parses "mlp", "higgs_mlp" or "kdd_embed" (case-insensitive).
func ParseKind(s string) (Kind, error) { return kinds.Parse(s) }

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) { return kinds.Marshal(k) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error { return kinds.Unmarshal(k, b) }

// Loss names a training objective, matched to what each PET releases.
type Loss int

const (
	// LossBCE is binary cross-entropy on clean 0/1 labels (one per row).
	LossBCE Loss = iota + 1
	// LossDebiasedBCE is the unbiased BCE for randomized response (one 0/1
	// released label per row; flip probability LossParams.FlipProb).
	LossDebiasedBCE
	// LossPropMatch is proportion matching: BCE between a bag's mean predicted
	// probability and its released proportion (one target per bag).
	LossPropMatch
	// LossEasyLLP is the EasyLLP per-example surrogate (one target per bag;
	// label prior LossParams.Prior).
	LossEasyLLP

	// The losses of C ≥ 3 classes (ModelConfig.Classes), on a softmax head
	// p = softmax(z) and targets of C values per row or bag (row-major,
	// data.Batch.TargetWidth = C). Each is linear in its target vector, so
	// a soft or noisy target gives the expected loss of its law.

	// LossCE is softmax cross-entropy −Σ_c t_c log p_c per row: one-hot
	// clean labels, or rr_prior's soft target vectors.
	LossCE
	// LossForwardCE is k-ary randomized response's forward-corrected loss
	// −log (Tᵀp)_z for a released label z (one-hot target), T the RR
	// transition matrix (Patrini et al., CVPR 2017); flip probability
	// LossParams.FlipProb. DefaultRRCorrection.
	LossForwardCE
	// LossBackwardCE is k-ary randomized response's unbiased
	// backward-corrected loss Σ_c (T⁻¹)_{z,c}·(−log p_c) (Patrini et al.;
	// at C = 2 it is debiased_bce); flip probability LossParams.FlipProb.
	LossBackwardCE
	// LossPropMatchCE is proportion matching over C classes: the
	// cross-entropy −Σ_c α_c log p̄_c between a bag's released proportion
	// vector α and its mean predicted distribution p̄ (one vector per bag).
	LossPropMatchCE

	// The losses of regression (ModelConfig.Regression: one output with
	// the identity head), on released conversion values in units of the
	// grid's B (data.BatchOptions.ValueScale).

	// LossMSE is the squared loss (f(x) − t)² per row on a released value
	// (laplace's unbiased y + noise; rr_bins's bin value, as the paper
	// trains on it).
	LossMSE
	// LossBagMSE is the bag-level squared loss (f̄ − t)² per bag, f̄ the mean
	// prediction over the bag's rows and t its released mean (value_bags:
	// the aggregate-response analogue of PropMatch; a mean-zero noise on t
	// adds a constant to its expectation, so the minimiser is unchanged).
	LossBagMSE
)

// DefaultRRCorrection is the loss for k-ary randomized response on C ≥ 3
// classes: the forward correction. Both corrections are consistent: their
// expected loss under the RR law is minimized by the true class
// probabilities (TestRRCorrectionsConsistent). With the keep probability
// q = 1 − FlipProb, b = FlipProb/(C−1) (each other class's probability)
// and a = q − b, the forward loss −log(b + a·p_z) is a proper log loss of
// the noisy-label distribution Tᵀp and bounded: between −log q and −log b
// (1.46 and 2.46 nats at ε = 1, C = 10). The backward loss is
// (−log p_z + b·Σ_c log p_c)/a: unbiased, but its weights are 1/a times
// larger and negative off the diagonal (at ε = 1, C = 10: 6.24 on the
// released class, −0.58 on each other), so it is unbounded below
// (−b/a·log p_c → −∞ as p_c → 0: a flexible model can drive it down by
// making classes it was not shown improbable) and its variance grows as
// 1/a². Patrini et al. (CVPR 2017, "Making Deep Neural Networks Robust to
// Label Noise: a Loss Correction Approach", Theorems 1 and 2) prove both
// consistent and report the backward correction training worse with deep
// networks, the forward one close to clean training.
const DefaultRRCorrection = LossForwardCE

var losses = enum.New("loss", ErrInvalidConfig,
	[]string{"bce", "debiased_bce", "propmatch", "easyllp", "ce", "forward_ce", "backward_ce", "propmatch_ce", "mse", "bag_mse"},
	[]Loss{LossBCE, LossDebiasedBCE, LossPropMatch, LossEasyLLP, LossCE, LossForwardCE, LossBackwardCE, LossPropMatchCE, LossMSE, LossBagMSE})

func (l Loss) String() string { return losses.String(l, "Loss") }

// ParseLoss parses "bce", "debiased_bce", "propmatch", "easyllp" (binary),
// "ce", "forward_ce", "backward_ce" or "propmatch_ce" (C ≥ 3 classes)
// (case-insensitive).
func ParseLoss(s string) (Loss, error) { return losses.Parse(s) }

// PerBag reports whether the loss takes one target per bag (data.Batch.BagSize
// rows) rather than one per row.
func (l Loss) PerBag() bool {
	return l == LossPropMatch || l == LossEasyLLP || l == LossPropMatchCE || l == LossBagMSE
}

// Regression reports whether the loss trains a regression head (one
// output, the identity) on real-valued targets.
func (l Loss) Regression() bool { return l == LossMSE || l == LossBagMSE }

// Multiclass reports whether the loss trains a softmax head of C ≥ 3
// classes (targets of C values per row or bag) rather than a binary one.
func (l Loss) Multiclass() bool {
	return l == LossCE || l == LossForwardCE || l == LossBackwardCE || l == LossPropMatchCE
}

// ForClasses returns the loss that plays l's part on a model of classes
// classes: l itself when it fits (binary losses for 0 or 2 classes, C-class
// losses for C ≥ 3); for C ≥ 3, bce → ce, debiased_bce →
// DefaultRRCorrection, propmatch → propmatch_ce. easyllp has no C-class
// form here, and a C-class loss has no binary one: an error naming the loss.
func (l Loss) ForClasses(classes int) (Loss, error) {
	if _, ok := losses.Name(l); !ok {
		return 0, fmt.Errorf("%w: invalid loss %d", ErrInvalidConfig, int(l))
	}
	if l.Regression() {
		if classes >= 3 {
			return 0, fmt.Errorf("%w: loss %s trains a regression head, not %d classes", ErrInvalidConfig, l, classes)
		}
		return l, nil
	}
	if l.Multiclass() == (classes >= 3) {
		return l, nil
	}
	if classes >= 3 {
		switch l {
		case LossBCE:
			return LossCE, nil
		case LossDebiasedBCE:
			return DefaultRRCorrection, nil
		case LossPropMatch:
			return LossPropMatchCE, nil
		}
		return 0, fmt.Errorf("%w: loss %s is binary only; %d classes train with ce, forward_ce, backward_ce or propmatch_ce",
			ErrInvalidConfig, l, classes)
	}
	return 0, fmt.Errorf("%w: loss %s needs a model of 3 or more classes, model.classes is %d (binary: bce, debiased_bce, propmatch, easyllp)",
		ErrInvalidConfig, l, classes)
}

// MarshalText implements encoding.TextMarshaler.
func (l Loss) MarshalText() ([]byte, error) { return losses.Marshal(l) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Loss) UnmarshalText(b []byte) error { return losses.Unmarshal(l, b) }

// Init names a weight initialization (config key model.init). The zero value
// means DefaultInit.
type Init int

const (
	// InitUniformFanIn is PyTorch's nn.Linear default: weights and biases
	// drawn from U(−1/√fan_in, 1/√fan_in) (kaiming_uniform with a=√5).
	InitUniformFanIn Init = iota + 1
	// InitGlorotUniform is Keras' Dense default (the paper's TensorFlow code):
	// weights from U(±√(6/(fan_in+fan_out))), zero biases.
	InitGlorotUniform
	// InitHeNormal is GoMLX's default: weights from N(0, 2/fan_in), zero
	// biases.
	InitHeNormal
)

// DefaultInit is the initialization with the best test AUC when PyTorch
// trained higgs_mlp on 6,500 real Higgs rows (Adam 1e-3, batch 128, 8
// epochs, 1,000 test rows): 0.681, against 0.675 for Glorot and 0.658 for
// He.
const DefaultInit = InitUniformFanIn

var inits = enum.New("model.init", ErrInvalidConfig, []string{"uniform_fan_in", "glorot_uniform", "he_normal"},
	[]Init{InitUniformFanIn, InitGlorotUniform, InitHeNormal})

func (i Init) String() string { return inits.String(i, "Init") }

// MarshalText implements encoding.TextMarshaler.
func (i Init) MarshalText() ([]byte, error) { return inits.Marshal(i) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (i *Init) UnmarshalText(b []byte) error { return inits.Unmarshal(i, b) }

// ResidentMode says whether a group's dense training features are uploaded to
// the backend once (resident) or sent as host batches every step, and where
// kdd_embed's tables live with lazy Adam (GroupConfig.Resident).
type ResidentMode int

const (
	// ResidentAuto keeps the features resident when they fit in
	// GroupConfig.ResidentMaxBytes (see DefaultResidentMaxBytes), on XLA
	// backends; backend "go" uses host batches (measured as fast; no second
	// copy of the features in memory).
	ResidentAuto ResidentMode = iota
	// ResidentAlways uploads the features once and gathers each step's rows on
	// the device from an int32 index tensor [R, B].
	ResidentAlways
	// ResidentNever gathers each step's rows on the host and sends them.
	ResidentNever
)

var residentModes = enum.New("resident mode", ErrInvalidConfig, []string{"auto", "always", "never"},
	[]ResidentMode{ResidentAuto, ResidentAlways, ResidentNever})

func (m ResidentMode) String() string { return residentModes.String(m, "ResidentMode") }

// MarshalText implements encoding.TextMarshaler.
func (m ResidentMode) MarshalText() ([]byte, error) { return residentModes.Marshal(m) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *ResidentMode) UnmarshalText(b []byte) error { return residentModes.Unmarshal(m, b) }

// Interval is how often a group checkpoints: every Every of wall-clock time,
// or every Steps training steps. The zero value means
// DefaultCheckpointInterval.
type Interval struct {
	Every time.Duration
	Steps int64
}

// DefaultCheckpointInterval is ten minutes of wall-clock time: a kdd_embed
// checkpoint (25M parameters and their Adam moments, ~300 MB) takes ~3.6 s
// on 2 cores, so about 1% of a KDD12 epoch's time goes to checkpoints (every
// 500 steps instead, it was about an hour per epoch).
var DefaultCheckpointInterval = Interval{Every: 10 * time.Minute}

// ParseInterval parses a Go duration ("10m", "90s") or a step count ("500",
// "500steps").
func ParseInterval(s string) (Interval, error) {
	t := strings.TrimSpace(strings.ToLower(s))
	if n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(t, "steps")), 10, 64); err == nil {
		if n <= 0 {
			return Interval{}, fmt.Errorf("%w: checkpoint interval %q must be > 0 steps", ErrInvalidConfig, s)
		}
		return Interval{Steps: n}, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil || d <= 0 {
		return Interval{}, fmt.Errorf("%w: checkpoint interval %q: want a duration such as 10m or a step count such as 500", ErrInvalidConfig, s)
	}
	return Interval{Every: d}, nil
}

func (i Interval) String() string {
	if i.Steps > 0 {
		return fmt.Sprintf("%dsteps", i.Steps)
	}
	return i.Every.String()
}

// MarshalText implements encoding.TextMarshaler.
func (i Interval) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (i *Interval) UnmarshalText(b []byte) error {
	v, err := ParseInterval(string(b))
	if err == nil {
		*i = v
	}
	return err
}
