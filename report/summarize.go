package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"labelprivacy/data"
)

// Meta keys Summarize sets on the summary table (they survive WriteParquet
// and data.ReadTable). Values are decimal integers.
const (
	// MetaRunsRead is the number of runs rows read (duplicates included).
	MetaRunsRead = "report.runs_read"
	// MetaDuplicates is the number of runs rows dropped because their
	// (setting, lr, trial, run_id) had already been seen.
	MetaDuplicates = "report.duplicate_runs"
	// MetaConflicts counts the dropped duplicates whose test_auc differed
	// from the row kept (the first seen): a sign that two result sets
	// disagree about the same run.
	MetaConflicts = "report.conflicting_duplicates"
	// MetaNaNAUC is the number of rows ignored because test_auc was NaN.
	MetaNaNAUC = "report.nan_auc_runs"
	// MetaAuditConflicts counts audit rows for an already-seen setting whose
	// eadv, eadv_se, ma_p98 or ma_inf_frac differed (the first is kept).
	MetaAuditConflicts = "report.conflicting_audit_rows"
)

// Summary column names, in order.
var SummaryColumns = []string{
	"setting", "pet", "k", "epsilon", "label_dp_epsilon",
	"best_lr", "auc_mean", "auc_se", "n_trials",
	"eadv", "eadv_se", "ma_p98", "ma_inf_frac",
}

// Summarize reduces a runs table (one row per trained model) to one row per
// privacy setting with the paper's reporting rule (Appendix C, "AUC vs
// Advantage Experimental Setup"): for each setting, best_lr is the learning
// rate with the highest mean test_auc over its trials (ties: the smaller
// learning rate); auc_mean and auc_se are that learning rate's mean and
// standard error (sample standard deviation/√n; 0 with one trial) and
// n_trials its number of trials. eadv, eadv_se, ma_p98 and ma_inf_frac come
// from the audit row of the same setting (audits are concatenated first;
// NaN where no audit row exists).
//
// Several result sets merge by concatenating their runs tables (Concat)
// before calling Summarize: a row whose (setting, lr, trial, run_id) was
// already seen is a duplicate; it is dropped (the first row is kept) and
// counted in the summary's Meta (MetaDuplicates, MetaConflicts). Rows with a
// NaN test_auc are ignored and counted (MetaNaNAUC). The result is
// independent of row order: settings are sorted by pet (PetOrder), k, ε,
// and trials are averaged in (trial, run_id) order.
//
// Required runs columns: setting, pet, k, epsilon, label_dp_epsilon, lr,
// trial, run_id, test_auc (other columns are ignored). Required audit
// columns: setting, eadv, eadv_se, ma_p98, ma_inf_frac. A setting whose
// rows disagree on pet, k, epsilon or label_dp_epsilon is an error.
func Summarize(runs *data.Table, audits []*data.Table) (*data.Table, error) {
	if runs == nil {
		return nil, fmt.Errorf("report: Summarize: nil runs table")
	}
	if err := checkTable(runs); err != nil {
		return nil, fmt.Errorf("report: Summarize: runs: %w", err)
	}
	c := &cols{t: runs, what: "runs"}
	setting, pet, runID := c.str("setting"), c.str("pet"), c.str("run_id")
	k, trial := c.i64("k"), c.i64("trial")
	eps, ldp, lr, auc := c.f64("epsilon"), c.f64("label_dp_epsilon"), c.f64("lr"), c.f64("test_auc")
	if c.err != nil {
		return nil, c.err
	}

	type obs struct {
		trial int64
		runID string
		auc   float64
	}
	type group struct {
		key  settingKey
		ldp  float64
		byLR map[float64][]obs
	}
	type dupKey struct {
		setting string
		lr      uint64
		trial   int64
		runID   string
	}
	seen := map[dupKey]float64{}
	groups := map[string]*group{}
	var dups, conflicts, nanAUC int
	for i := range runs.Rows() {
		dk := dupKey{setting[i], math.Float64bits(lr[i] + 0), trial[i], runID[i]} // +0 folds -0 into 0
		if first, ok := seen[dk]; ok {
			dups++
			if !sameFloat(first, auc[i]) {
				conflicts++
			}
			continue
		}
		seen[dk] = auc[i]
		g := groups[setting[i]]
		if g == nil {
			g = &group{key: settingKey{setting[i], pet[i], k[i], eps[i]}, ldp: ldp[i], byLR: map[float64][]obs{}}
			groups[setting[i]] = g
		} else if g.key.pet != pet[i] || g.key.k != k[i] || !sameFloat(g.key.eps, eps[i]) || !sameFloat(g.ldp, ldp[i]) {
			return nil, fmt.Errorf("report: Summarize: setting %q has inconsistent rows: pet/k/epsilon/label_dp_epsilon %s/%d/%s/%s vs %s/%d/%s/%s",
				setting[i], g.key.pet, g.key.k, data.FormatFloat(g.key.eps), data.FormatFloat(g.ldp),
				pet[i], k[i], data.FormatFloat(eps[i]), data.FormatFloat(ldp[i]))
		}
		if math.IsNaN(auc[i]) {
			nanAUC++
			continue
		}
		g.byLR[lr[i]+0] = append(g.byLR[lr[i]+0], obs{trial[i], runID[i], auc[i]})
	}

	aud, auditConflicts, err := indexAudits(audits)
	if err != nil {
		return nil, err
	}

	keys := make([]settingKey, 0, len(groups))
	for _, g := range groups {
		keys = append(keys, g.key)
	}
	slices.SortFunc(keys, compareKeys)

	out := struct {
		setting, pet                                           []string
		k, nTrials                                             []int64
		eps, ldp, bestLR, mean, se, eadv, eadvSE, p98, infFrac []float64
	}{}
	for _, key := range keys {
		g := groups[key.setting]
		lrs := make([]float64, 0, len(g.byLR))
		for l := range g.byLR {
			lrs = append(lrs, l)
		}
		slices.Sort(lrs)
		best, bestMean, bestSE, bestN := math.NaN(), math.Inf(-1), math.NaN(), 0
		for _, l := range lrs {
			o := g.byLR[l]
			slices.SortFunc(o, func(a, b obs) int { return cmp.Or(cmp.Compare(a.trial, b.trial), cmp.Compare(a.runID, b.runID)) })
			v := make([]float64, len(o))
			for i := range o {
				v[i] = o[i].auc
			}
			m, s := meanSE(v)
			if m > bestMean { // strict: ties keep the smaller lr (lrs ascending)
				best, bestMean, bestSE, bestN = l, m, s, len(v)
			}
		}
		if bestN == 0 {
			bestMean = math.NaN()
		}
		a, ok := aud[key.setting]
		if !ok {
			a = auditRow{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
		}
		out.setting = append(out.setting, key.setting)
		out.pet = append(out.pet, key.pet)
		out.k = append(out.k, key.k)
		out.eps = append(out.eps, key.eps)
		out.ldp = append(out.ldp, g.ldp)
		out.bestLR = append(out.bestLR, best)
		out.mean = append(out.mean, bestMean)
		out.se = append(out.se, bestSE)
		out.nTrials = append(out.nTrials, int64(bestN))
		out.eadv = append(out.eadv, a.eadv)
		out.eadvSE = append(out.eadvSE, a.eadvSE)
		out.p98 = append(out.p98, a.p98)
		out.infFrac = append(out.infFrac, a.infFrac)
	}
	vals := []any{out.setting, out.pet, out.k, out.eps, out.ldp, out.bestLR, out.mean, out.se, out.nTrials,
		out.eadv, out.eadvSE, out.p98, out.infFrac}
	t := &data.Table{Meta: map[string]string{
		MetaRunsRead:       strconv.Itoa(runs.Rows()),
		MetaDuplicates:     strconv.Itoa(dups),
		MetaConflicts:      strconv.Itoa(conflicts),
		MetaNaNAUC:         strconv.Itoa(nanAUC),
		MetaAuditConflicts: strconv.Itoa(auditConflicts),
	}}
	for j, name := range SummaryColumns {
		t.Columns = append(t.Columns, data.Column{Name: name, Values: nonNil(vals[j])})
	}
	return t, nil
}

// meanSE returns the mean and its standard error (sample sd/√n, 0 for n=1).
func meanSE(v []float64) (mean, se float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) == 1 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

type auditRow struct{ eadv, eadvSE, p98, infFrac float64 }

func indexAudits(audits []*data.Table) (map[string]auditRow, int, error) {
	out := map[string]auditRow{}
	conflicts := 0
	for ai, t := range audits {
		if t == nil {
			continue
		}
		if err := checkTable(t); err != nil {
			return nil, 0, fmt.Errorf("report: Summarize: audit table %d: %w", ai, err)
		}
		c := &cols{t: t, what: fmt.Sprintf("audit[%d]", ai)}
		setting := c.str("setting")
		eadv, se, p98, inf := c.f64("eadv"), c.f64("eadv_se"), c.f64("ma_p98"), c.f64("ma_inf_frac")
		if c.err != nil {
			return nil, 0, c.err
		}
		for i := range t.Rows() {
			r := auditRow{eadv[i], se[i], p98[i], inf[i]}
			if old, ok := out[setting[i]]; ok {
				if !sameFloat(old.eadv, r.eadv) || !sameFloat(old.eadvSE, r.eadvSE) ||
					!sameFloat(old.p98, r.p98) || !sameFloat(old.infFrac, r.infFrac) {
					conflicts++
				}
				continue
			}
			out[setting[i]] = r
		}
	}
	return out, conflicts, nil
}
