package config

import (
	"errors"
	"fmt"
	"slices"

	"labelprivacy/pets"
)

// checkARAPet validates pets[i]'s Attribution Reporting keys — ara_event's
// trigger_data, windows and reports, ara_summary's budget_share and key —
// refusing them for the kinds that take none, and checks every setting of
// the entry with pets.New on labels of 1 + T·W classes for ara_event
// (Chromium's limits, the ranges of ε and of the budget split): the error
// names the key (pets[0].epsilon[2], pets[1].budget_share[0]). That the
// dataset's labels have 1 + T·W classes is checked when it is loaded.
func checkARAPet(i int, p PetConfig) error {
	key := fmt.Sprintf("pets[%d]", i)
	k := p.Mechanism
	t := k.Spec().Takes
	switch {
	case !t.Source && p.TriggerData != 0:
		return bad(key+".trigger_data", "%s takes no attribution source (only ara_event does)", k)
	case !t.Source && p.Windows != 0:
		return bad(key+".windows", "%s takes no attribution source (only ara_event does)", k)
	case !t.Source && len(p.Reports) > 0:
		return bad(key+".reports", "%s takes no attribution source (only ara_event does)", k)
	case !t.Shares && len(p.BudgetShare) > 0:
		return bad(key+".budget_share", "%s takes no contribution budget (only ara_summary does)", k)
	case !t.KeyGroups && p.Key != "":
		return bad(key+".key", "%s takes no key (only ara_summary does; the LLP family's bags name one as bags: key:<column>)", k)
	case t.KeyGroups && p.Key == "":
		return bad(key+".key", "%s needs the integer key column whose groups it sums (key: campaign, say)", k)
	case t.KeyGroups && len(p.Bags) > 0:
		return bad(key+".bags", "%s takes no bag rule: its bags are the groups of its key (key: <column>)", k)
	case t.Source && p.TriggerData < 1:
		return bad(key+".trigger_data", "%s needs trigger_data ≥ 1 (the source's trigger-data values; 1 + trigger_data × windows is the labels' classes), got %d", k, p.TriggerData)
	case t.Source && p.Windows < 1:
		return bad(key+".windows", "%s needs windows ≥ 1 (the source's reporting windows), got %d", k, p.Windows)
	case t.Source && len(p.Reports) == 0:
		return bad(key+".reports", "%s needs at least one reports (the source's most reports; Chromium's navigation default is 3)", k)
	case t.Shares && len(p.BudgetShare) == 0:
		return bad(key+".budget_share", "%s needs at least one split of the contribution budget (budget_share: {count: 1})", k)
	}
	if !t.Source && !t.Shares {
		return nil
	}
	for _, st := range p.Settings() {
		par := st.Params
		if c := 1 + int64(par.TriggerData)*int64(par.Windows); t.Source && c >= 3 && c <= pets.MaxClasses {
			par.Classes = int(c)
		}
		if t.Shares && par.ValueShare > 0 {
			par.Values = pets.UnitGrid // a value share is for conversion values (the dataset's grid is checked when it is loaded)
		}
		if _, err := pets.New(par); err != nil {
			return bad(araKey(key, p, st, err), "%s", paramMsg(err))
		}
	}
	return nil
}

// araKey names the key of pets[i] that a pets.ParamError on setting st
// names: the list entry for ε, reports and budget_share.
func araKey(key string, p PetConfig, st Setting, err error) string {
	var pe *pets.ParamError
	if !errors.As(err, &pe) {
		return key
	}
	switch pe.Param {
	case "epsilon":
		return fmt.Sprintf("%s.epsilon[%d]", key, slices.Index(p.Epsilon, st.Epsilon))
	case "reports":
		return fmt.Sprintf("%s.reports[%d]", key, slices.Index(p.Reports, st.Reports))
	case "budget_share":
		return fmt.Sprintf("%s.budget_share[%d]", key, slices.Index(p.BudgetShare, BudgetShare{st.CountShare, st.ValueShare}))
	case "classes":
		return key + ".trigger_data"
	case "trigger_data", "windows":
		return key + "." + pe.Param
	}
	return key
}

// paramMsg is a pets.ParamError's sentence without its prefix.
func paramMsg(err error) string {
	var pe *pets.ParamError
	if errors.As(err, &pe) {
		return pe.Msg
	}
	return err.Error()
}
