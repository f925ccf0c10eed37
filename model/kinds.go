package model

import (
	"fmt"
	"strings"
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

var kindNames = map[Kind]string{KindMLP: "mlp", KindHiggsMLP: "higgs_mlp", KindKDDEmbed: "kdd_embed"}

// Kinds lists the valid model kinds.
func Kinds() []Kind { return []Kind{KindMLP, KindHiggsMLP, KindKDDEmbed} }

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ParseKind parses "mlp", "higgs_mlp" or "kdd_embed" (case-insensitive).
func ParseKind(s string) (Kind, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for k, name := range kindNames {
		if name == t {
			return k, nil
		}
	}
	return 0, fmt.Errorf("model: unknown model kind %q (want mlp, higgs_mlp or kdd_embed)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (k Kind) MarshalText() ([]byte, error) {
	if _, ok := kindNames[k]; !ok {
		return nil, fmt.Errorf("model: invalid Kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// Loss names a training objective, matched to what each PET releases.
type Loss int

const (
	// LossBCE is binary cross-entropy on clean 0/1 labels (one per row).
	LossBCE Loss = iota + 1
	// LossDebiasedBCE is the unbiased BCE for randomized response (one 0/1
	// released label per row; flip probability TrainConfig.FlipProb).
	LossDebiasedBCE
	// LossPropMatch is proportion matching: BCE between a bag's mean predicted
	// probability and its released proportion (one target per bag).
	LossPropMatch
	// LossEasyLLP is the EasyLLP per-example surrogate (one target per bag;
	// label prior TrainConfig.Prior).
	LossEasyLLP
)

var lossNames = map[Loss]string{LossBCE: "bce", LossDebiasedBCE: "debiased_bce", LossPropMatch: "propmatch", LossEasyLLP: "easyllp"}

// Losses lists the valid losses.
func Losses() []Loss { return []Loss{LossBCE, LossDebiasedBCE, LossPropMatch, LossEasyLLP} }

func (l Loss) String() string {
	if s, ok := lossNames[l]; ok {
		return s
	}
	return fmt.Sprintf("Loss(%d)", int(l))
}

// ParseLoss parses "bce", "debiased_bce", "propmatch" or "easyllp"
// (case-insensitive).
func ParseLoss(s string) (Loss, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for l, name := range lossNames {
		if name == t {
			return l, nil
		}
	}
	return 0, fmt.Errorf("model: unknown loss %q (want bce, debiased_bce, propmatch or easyllp)", s)
}

// PerBag reports whether the loss takes one target per bag (Batch.BagSize
// rows) rather than one per row.
func (l Loss) PerBag() bool { return l == LossPropMatch || l == LossEasyLLP }

// MarshalText implements encoding.TextMarshaler.
func (l Loss) MarshalText() ([]byte, error) {
	if _, ok := lossNames[l]; !ok {
		return nil, fmt.Errorf("model: invalid Loss %d", int(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Loss) UnmarshalText(b []byte) error {
	v, err := ParseLoss(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
