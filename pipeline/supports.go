package pipeline

import (
	"errors"

	"labelprivacy/pets"
)

// Supports says whether the pipeline trains on and releases a kind with
// the spec sp (pets.Serve, asked by pets.Register): nil, or a sentence
// saying what it cannot do. planFor maps a kind's pets.Train to the
// trainer's loss and target column (it maps each loss family and target,
// these pairings only), the release stage makes a release with a prior in
// two stages with a prior model, and softTargets builds soft targets from
// a release of labels with a prior or of counts.
func Supports(sp pets.Spec) error {
	tr, rel := sp.Train, sp.Release
	switch {
	case (tr.Loss == pets.LossNone) != (tr.Target == pets.TargetNone):
		return errors.New("it trains nothing exactly when a kind has no target (Train.Loss none ⇔ Train.Target none)")
	case (rel == pets.ReleaseRaw) != (tr.Target == pets.TargetLabel):
		return errors.New("only the raw labels (ReleaseRaw) train on the dataset's label column, and they train on nothing else")
	case rel == pets.ReleaseNothing && tr.Loss != pets.LossNone:
		return errors.New("a kind that releases nothing has nothing to train on")
	case tr.Loss.PerBag() != rel.PerBag():
		return errors.New("a per-bag loss (LossProportion) trains on bags, which only a release per bag (ReleaseBags) forms")
	case rel.PerBag() != (tr.Target == pets.TargetAlpha || tr.Target == pets.TargetAlphaDebiased):
		return errors.New("a release per bag trains on the bag's proportion (TargetAlpha, TargetAlphaDebiased), and only it does")
	case tr.Target == pets.TargetLabelRR && rel != pets.ReleaseLabels:
		return errors.New("label_rr is trained on as it is only for a release of labels without a prior (ReleaseLabels)")
	case tr.Target == pets.TargetSoft && !rel.WithPrior() && rel != pets.ReleaseCounts:
		return errors.New("soft targets are built from a release of labels with a prior or of counts (ReleaseLabelsWithPrior, ReleaseCounts)")
	case rel == pets.ReleaseCounts && tr.Target != pets.TargetSoft && tr.Loss != pets.LossNone:
		return errors.New("a release of counts trains on the soft targets its BagLaw's Target gives (TargetSoft)")
	case tr.Loss == pets.LossFlipped && tr.Target != pets.TargetLabelRR:
		return errors.New("train.rr_loss corrects flipped labels, label_rr (TargetLabelRR)")
	}
	return nil
}

var _ = pets.Serve("pipeline", Supports)
