package audit

import (
	"errors"
	"fmt"

	"labelprivacy/pets"
)

// Supports says whether the audit serves a kind with the spec sp
// (pets.Serve, asked by pets.Register): nil, or a sentence saying what it
// cannot audit. It audits every release shape from the kind's law (a
// channel per example, chosen by its prior for a kind with one; the noise
// law of a bag's counts, bags of one for ReleaseCounts), and checks every
// DP kind against its ε: a kind that claims ε = 0 (Silent) must release
// nothing, since any release that shows something breaks that bound.
func Supports(sp pets.Spec) error {
	switch {
	case sp.Release > pets.ReleaseHistogram:
		return fmt.Errorf("it audits no release of shape %d", sp.Release)
	case sp.Privacy == pets.Silent && sp.Release != pets.ReleaseNothing:
		return errors.New("a kind of privacy Silent (ε = 0) releases nothing; one that releases something is audited against ε = 0 and fails")
	}
	return nil
}

var _ = pets.Serve("audit", Supports)
