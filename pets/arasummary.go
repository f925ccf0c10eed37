package pets

import (
	"fmt"

	"labelprivacy/ara"
)

// ara_summary is Chrome's Attribution Reporting summary reports on binary
// conversions: the rows are grouped by a key column (an aggregation key:
// campaign × geography, …; bags: key:<column> in a config, one group per
// key value, whatever its size, formed by the caller: Takes.KeyGroups),
// each source contributes its conversion count scaled into its share s of
// the contribution budget L1 = ara.ContributionBudget (Params.CountShare;
// the value's share, Params.ValueShare, is reserved for value labels), and
// the aggregation service adds Laplace noise of scale L1/ε to every key's
// sum. Divided by the scale s·L1 the released count of a key of n rows
// with m conversions is m + Lap(1/(s·ε)), its proportion
// α = (m + Lap(1/(s·ε)))/n unclipped — llp_lap's law at rate s·ε on
// bags that are whole key groups — and the model trains on the key
// aggregates with train.llp_loss (PropMatch over bags of every size).
//
// Privacy. A source's whole contribution vector, at most L1 in L1 norm,
// is one query of sensitivity L1 under Laplace noise of scale L1/ε: one
// summary release is ε-DP for each source, and the ledger charges ε once
// per release (every source is in one key group), composed as Laplace
// noise (DPLaplace). The count alone, one label's share s·L1 of it, is
// (s·ε)-label-DP: the audit's law (NoiseRate s·ε) and what its canaries
// can certify; the rest of the budget is what is left for other
// measurement goals.
type araSummaryScheme struct{}

// ARASummary is Attribution Reporting's summary reports.
const ARASummary Kind = 8

var _ = builtin(ARASummary, araSummaryScheme{})

func (araSummaryScheme) Spec() Spec {
	return Spec{Name: "ara_summary", Takes: Takes{Epsilon: true, Shares: true, KeyGroups: true}, Privacy: DPLaplace, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlpha},
		Look:  Look{Name: "ARA summary", Color: RGB{0x17, 0xbe, 0xcf}, Marker: MarkerRing}} // cyan
}

func (araSummaryScheme) Law(p Params) (Law, error) {
	if err := checkBudgetShares(p); err != nil {
		return nil, err
	}
	rate := p.Epsilon * p.CountShare // per count: Laplace scale L1/ε over a count scaled by s·L1
	if g := LaplaceGranularity(1 / rate); p.Secure && g > 1 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("ε·budget_share.count = %v is too small for the grid Laplace sampler (spacing %v > 1)", rate, g)}
	}
	return laplaceBags{eps: rate, secure: p.Secure, c: 2, delta: 1}, nil
}

// checkBudgetShares validates ara_summary's ε (at most the aggregation
// service's 64) and its budget split: a count share in (0, 1], a value
// share of 0 (binary conversions have no value to sum: the value share
// serves value labels, the label kind values), their sum at most 1.
func checkBudgetShares(p Params) error {
	switch cs, vs := p.CountShare, p.ValueShare; {
	case p.Epsilon > ara.MaxSummaryEpsilon:
		return &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is above the aggregation service's largest ε, %v", p.Epsilon, ara.MaxSummaryEpsilon)}
	case !(cs > 0 && cs <= 1):
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the count's share of the contribution budget must be in (0, 1], got %v", cs)}
	case !(vs >= 0 && vs <= 1):
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the value's share of the contribution budget must be in [0, 1], got %v", vs)}
	case cs+vs > 1:
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the shares of the contribution budget sum to %v (count %v + value %v), more than 1", cs+vs, cs, vs)}
	case vs > 0:
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("a value share (%v) is not built yet: ara_summary sums the conversion count of "+
			"binary conversions only (on conversion values it is refused too; docs/attribution-reporting.md)", vs)}
	}
	return nil
}
