package report

import (
	"strconv"
	"strings"

	"labelprivacy/pets"
)

// PriorParams are the parameters of a mechanism with a public prior
// (rr_prior) that its setting id records beyond ε (config.Setting.ID):
// the share of rows released in stage 1 and the stage-1 prior model's
// learning rate (0: the middle of train.learning_rates).
type PriorParams struct {
	StageFraction, PriorLR float64
}

// DefaultStageFraction is rr_prior's stage fraction when its setting id
// names none (config.DefaultStageFraction; pipeline's tests pin the two
// together).
const DefaultStageFraction = 0.5

// PriorParamsOf reads a setting id's prior parameters: its "_s<f>" part
// (else DefaultStageFraction) and its "_plr<lr>" part (else 0). ok is false
// for a mechanism whose release takes no prior.
func PriorParamsOf(setting string, pet pets.Kind) (p PriorParams, ok bool) {
	if !pet.Spec().Release.WithPrior() {
		return PriorParams{}, false
	}
	p.StageFraction = DefaultStageFraction
	for _, part := range strings.Split(strings.TrimPrefix(setting, pet.String()), "_") {
		if v, found := strings.CutPrefix(part, "plr"); found {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				p.PriorLR = x
			}
		} else if v, found := strings.CutPrefix(part, "s"); found {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				p.StageFraction = x
			}
		}
	}
	return p, true
}
