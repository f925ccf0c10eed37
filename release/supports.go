package release

import (
	"errors"
	"fmt"

	"labelprivacy/pets"
)

// Supports says whether this package makes the releases of a kind with the
// spec sp (pets.Serve, asked by pets.Register): nil, or a sentence saying
// what it cannot write. It makes every release shape of pets (Apply: the
// labels, bags and counts; StartRRPrior: two stages with a prior;
// ApplyValues: values per row, bag means, and rr_bins's histogram), and
// writes alpha_debiased, a bag's target, for bags only.
func Supports(sp pets.Spec) error {
	switch {
	case sp.Release > pets.ReleaseHistogram:
		return fmt.Errorf("it makes no release of shape %d (it makes raw, nothing, labels, labels with a prior, bags, counts, values, value bags and histograms)", sp.Release)
	case sp.Train.Target == pets.TargetAlphaDebiased && sp.Release != pets.ReleaseBags:
		return errors.New("it writes alpha_debiased, a bag's training target, for bags only (a release of counts trains on soft targets)")
	}
	return nil
}

var _ = pets.Serve("release package", Supports)
