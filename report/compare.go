package report

import (
	"fmt"
	"math"
	"slices"

	"labelprivacy/data"
)

// ComparisonColumns are the columns of Compare's result, in order.
var ComparisonColumns = []string{
	"setting", "pet", "k", "epsilon",
	"auc_a", "auc_b", "d_auc", "d_auc_se",
	"eadv_a", "eadv_b", "d_eadv", "d_eadv_se",
	"significant", "only_in",
}

// Compare compares two summaries (Summarize's output, e.g. a baseline a and a
// new result set b), setting by setting. For a setting present in both:
// d_auc = auc_mean(b) − auc_mean(a) with d_auc_se = √(auc_se(a)² +
// auc_se(b)²), and d_eadv, d_eadv_se likewise from eadv and eadv_se;
// significant is true when |d_auc| > 2·d_auc_se or |d_eadv| > 2·d_eadv_se
// (a NaN difference is never significant; with SE 0, e.g. single trials or
// exact audits, any nonzero difference is). only_in is "".
//
// A setting present in only one summary gets a row with only_in "a" or "b",
// its own auc/eadv in the matching columns, NaN elsewhere and significant
// false. Differences are information, not failure: Compare only errors on a
// malformed summary (missing column, a setting listed twice). Rows are in
// the canonical order (PetOrder, k, ε).
func Compare(a, b *data.Table) (*data.Table, error) {
	type side struct {
		key                   settingKey
		auc, aucSE, eadv, eSE float64
	}
	read := func(t *data.Table, name string) (map[string]side, error) {
		if t == nil {
			return nil, fmt.Errorf("report: Compare: summary %s is nil", name)
		}
		if err := checkTable(t); err != nil {
			return nil, fmt.Errorf("report: Compare: summary %s: %w", name, err)
		}
		c := &cols{t: t, what: "summary " + name}
		setting, pet, k, eps := c.str("setting"), c.str("pet"), c.i64("k"), c.f64("epsilon")
		auc, aucSE, eadv, eSE := c.f64("auc_mean"), c.f64("auc_se"), c.f64("eadv"), c.f64("eadv_se")
		if c.err != nil {
			return nil, c.err
		}
		m := map[string]side{}
		for i := range t.Rows() {
			if _, dup := m[setting[i]]; dup {
				return nil, fmt.Errorf("report: Compare: summary %s lists setting %q twice", name, setting[i])
			}
			m[setting[i]] = side{settingKey{setting[i], pet[i], k[i], eps[i]}, auc[i], aucSE[i], eadv[i], eSE[i]}
		}
		return m, nil
	}
	ma, err := read(a, "a")
	if err != nil {
		return nil, err
	}
	mb, err := read(b, "b")
	if err != nil {
		return nil, err
	}
	var keys []settingKey
	for _, v := range ma {
		keys = append(keys, v.key)
	}
	for s, v := range mb {
		if _, ok := ma[s]; !ok {
			keys = append(keys, v.key)
		}
	}
	slices.SortFunc(keys, compareKeys)

	nan := math.NaN()
	var (
		setting, pet, onlyIn                                        []string
		k                                                           []int64
		eps, aucA, aucB, dAUC, dAUCse, eadvA, eadvB, dEadv, dEadvSE []float64
		sig                                                         []bool
	)
	for _, key := range keys {
		va, inA := ma[key.setting]
		vb, inB := mb[key.setting]
		setting, pet, k, eps = append(setting, key.setting), append(pet, key.pet), append(k, key.k), append(eps, key.eps)
		switch {
		case inA && inB:
			da, dase := vb.auc-va.auc, math.Hypot(va.aucSE, vb.aucSE)
			de, dese := vb.eadv-va.eadv, math.Hypot(va.eSE, vb.eSE)
			aucA, aucB, dAUC, dAUCse = append(aucA, va.auc), append(aucB, vb.auc), append(dAUC, da), append(dAUCse, dase)
			eadvA, eadvB, dEadv, dEadvSE = append(eadvA, va.eadv), append(eadvB, vb.eadv), append(dEadv, de), append(dEadvSE, dese)
			sig = append(sig, math.Abs(da) > 2*dase || math.Abs(de) > 2*dese)
			onlyIn = append(onlyIn, "")
		case inA:
			aucA, aucB, dAUC, dAUCse = append(aucA, va.auc), append(aucB, nan), append(dAUC, nan), append(dAUCse, nan)
			eadvA, eadvB, dEadv, dEadvSE = append(eadvA, va.eadv), append(eadvB, nan), append(dEadv, nan), append(dEadvSE, nan)
			sig, onlyIn = append(sig, false), append(onlyIn, "a")
		default:
			aucA, aucB, dAUC, dAUCse = append(aucA, nan), append(aucB, vb.auc), append(dAUC, nan), append(dAUCse, nan)
			eadvA, eadvB, dEadv, dEadvSE = append(eadvA, nan), append(eadvB, vb.eadv), append(dEadv, nan), append(dEadvSE, nan)
			sig, onlyIn = append(sig, false), append(onlyIn, "b")
		}
	}
	vals := []any{setting, pet, k, eps, aucA, aucB, dAUC, dAUCse, eadvA, eadvB, dEadv, dEadvSE, sig, onlyIn}
	t := &data.Table{Meta: map[string]string{}}
	for j, name := range ComparisonColumns {
		t.Columns = append(t.Columns, data.Column{Name: name, Values: nonNil(vals[j])})
	}
	return t, nil
}

// nonNil turns a nil typed slice into an empty one, so empty tables keep
// their column types.
func nonNil(v any) any {
	switch s := v.(type) {
	case []string:
		if s == nil {
			return []string{}
		}
	case []float64:
		if s == nil {
			return []float64{}
		}
	case []int64:
		if s == nil {
			return []int64{}
		}
	case []bool:
		if s == nil {
			return []bool{}
		}
	}
	return v
}
