package pets

import (
	"fmt"

	"labelprivacy/ara"
)

// ara_summary is Chrome's Attribution Reporting summary reports: the rows
// are grouped by a key column (an aggregation key: campaign × geography,
// …; bags: key:<column> in a config, one group per key value, whatever
// its size, formed by the caller: Takes.KeyGroups), each source
// contributes to its key scaled into its share of the contribution budget
// L1 = ara.ContributionBudget, and the aggregation service adds Laplace
// noise of scale L1/ε to every key's sum. It serves two label kinds:
//
//   - Binary conversions (Spec): the conversion count in the share s of
//     the budget (Params.CountShare, budget_share: {count: s}). Divided by
//     the scale s·L1 the released count of a key of n rows with m
//     conversions is m + Lap(1/(s·ε)), its proportion
//     α = (m + Lap(1/(s·ε)))/n unclipped — llp_lap's law at rate s·ε on
//     bags that are whole key groups — and the model trains on the key
//     aggregates with train.llp_loss (PropMatch over bags of every size).
//     A value share is refused: binary labels have no value to sum.
//   - Conversion values (ValuesSpec, on a grid [0, B]): each source's
//     clipped value y ∈ [0, B] in the share v of the budget
//     (Params.ValueShare, budget_share: {value: v}), scaled by v·L1/B.
//     Divided back, the released value sum of a key is Σy + Lap(B/(v·ε))
//     in value units, and its mean (Σy + Lap(B/(v·ε)))/n — value_bags's
//     law at ε·v on bags that are whole key groups — is the training
//     target (bag_mse on the key's mean). A count share on values is
//     refused: releasing the key's count of converting sources too would
//     need the joint audit of (sum, count) given one source's value, a
//     two-dimensional convolution of its bag-mates' laws, which is not
//     built (docs/attribution-reporting.md); and a count alone is the
//     binary case, on binary conversions.
//
// Privacy. A source's whole contribution vector, at most L1 in L1 norm,
// is one query of sensitivity L1 under Laplace noise of scale L1/ε: one
// summary release is ε-DP for each source, and the ledger charges ε once
// per release (every source is in one key group), composed as Laplace
// noise (DPLaplace). The count alone (binary), one label's share s·L1 of
// it, is (s·ε)-label-DP, and the value alone (v·ε)-label-DP
// (Mechanism.ValueEpsilon): the audits' laws and what their canaries can
// certify; the rest of the budget is what is left for other measurement
// goals.
type araSummaryScheme struct{}

// ARASummary is Attribution Reporting's summary reports.
const ARASummary Kind = 8

var _ = builtin(ARASummary, araSummaryScheme{})

var araSummaryLook = Look{Name: "ARA summary", Color: RGB{0x17, 0xbe, 0xcf}, Marker: MarkerRing} // cyan

func (araSummaryScheme) Spec() Spec {
	return Spec{Name: "ara_summary", Takes: Takes{Epsilon: true, Shares: true, KeyGroups: true}, Privacy: DPLaplace, Release: ReleaseBags,
		Train: Train{Loss: LossProportion, Target: TargetAlpha}, Look: araSummaryLook}
}

// ValuesSpec is ara_summary on conversion values: one mean value per key
// group (bag_id, bag_mean), trained with the bag-level squared loss.
func (araSummaryScheme) ValuesSpec() Spec {
	return Spec{Name: "ara_summary", Takes: Takes{Epsilon: true, Shares: true, KeyGroups: true, Values: true}, Privacy: DPLaplace,
		Release: ReleaseValueBags, Train: Train{Loss: LossBagSquared, Target: TargetBagMean}, Look: araSummaryLook}
}

func (araSummaryScheme) Law(p Params) (Law, error) {
	if err := checkBudgetShares(p); err != nil {
		return nil, err
	}
	if !p.Values.IsZero() {
		g := p.Values
		b := g.Max / (p.Epsilon * p.ValueShare) // the value sum's Laplace scale in value units: L1/ε over values scaled by v·L1/B
		if gr := LaplaceGranularity(b); p.Secure && gr > g.Step {
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("ε·budget_share.value = %v is too small for the grid Laplace sampler on %s", p.Epsilon*p.ValueShare, g)}
		}
		return &bagValues{valueBase: valueBase{g}, b: b, secure: p.Secure}, nil
	}
	rate := p.Epsilon * p.CountShare // per count: Laplace scale L1/ε over a count scaled by s·L1
	if g := LaplaceGranularity(1 / rate); p.Secure && g > 1 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("ε·budget_share.count = %v is too small for the grid Laplace sampler (spacing %v > 1)", rate, g)}
	}
	return laplaceBags{eps: rate, secure: p.Secure, c: 2, delta: 1}, nil
}

// checkBudgetShares validates ara_summary's ε (at most the aggregation
// service's 64) and its budget split: each share in [0, 1], their sum at
// most 1; on binary conversions a count share in (0, 1] and no value
// share, on values a value share in (0, 1] and no count share.
func checkBudgetShares(p Params) error {
	cs, vs := p.CountShare, p.ValueShare
	switch {
	case p.Epsilon > ara.MaxSummaryEpsilon:
		return &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is above the aggregation service's largest ε, %v", p.Epsilon, ara.MaxSummaryEpsilon)}
	case !(cs >= 0 && cs <= 1):
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the count's share of the contribution budget must be in [0, 1], got %v", cs)}
	case !(vs >= 0 && vs <= 1):
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the value's share of the contribution budget must be in [0, 1], got %v", vs)}
	case cs+vs > 1:
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("the shares of the contribution budget sum to %v (count %v + value %v), more than 1", cs+vs, cs, vs)}
	}
	switch values := !p.Values.IsZero(); {
	case !values && vs > 0:
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("a value share (%v) needs conversion values; the labels are binary conversions, "+
			"whose summary sums their count only (budget_share: {count: s})", vs)}
	case !values && cs == 0:
		return &ParamError{Param: "budget_share", Msg: "the count's share of the contribution budget must be in (0, 1] on binary conversions, got 0"}
	case values && cs > 0:
		return &ParamError{Param: "budget_share", Msg: fmt.Sprintf("a count share (%v) on conversion values is not built: the joint audit of a key's value sum "+
			"and count is not (docs/attribution-reporting.md); give the values their share alone (budget_share: {value: v})", cs)}
	case values && vs == 0:
		return &ParamError{Param: "budget_share", Msg: "the value's share of the contribution budget must be in (0, 1] on conversion values, got 0"}
	}
	return nil
}
