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
		return errors.New("a per-bag loss (LossProportion, LossBagSquared) trains on bags, which only a release per bag (ReleaseBags, ReleaseValueBags) forms")
	case (rel == pets.ReleaseBags) != (tr.Target == pets.TargetAlpha || tr.Target == pets.TargetAlphaDebiased):
		return errors.New("a release of class bags trains on the bag's proportion (TargetAlpha, TargetAlphaDebiased), and only it does")
	case (rel == pets.ReleaseValueBags) != (tr.Target == pets.TargetBagMean),
		(tr.Loss == pets.LossBagSquared) != (tr.Target == pets.TargetBagMean):
		return errors.New("a release of value bags trains on the bag's mean (TargetBagMean) with the bag-level squared loss (LossBagSquared), and only it does")
	case (tr.Loss == pets.LossSquared) != (tr.Target == pets.TargetValueRR),
		tr.Target == pets.TargetValueRR && rel != pets.ReleaseValues:
		return errors.New("value_rr, a released value per row (ReleaseValues), trains with the squared loss (LossSquared), and only it does")
	case rel == pets.ReleaseValues && tr.Target != pets.TargetValueRR:
		return errors.New("a release of values trains on value_rr (TargetValueRR)")
	case rel == pets.ReleaseHistogram && tr.Loss != pets.LossNone:
		return errors.New("a histogram (rr_bins's private prior) has no rows to train on")
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
