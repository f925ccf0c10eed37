package report

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/pets"

	"labelprivacy/report/internal/display"
)

// ErrMixed is returned (wrapped, naming the datasets and/or configs) by
// Summarize when runs of several datasets or model configs would be
// averaged and Options.AllowMixed is false, and, whatever the options,
// when runs of different class counts (binary and C classes, or two
// values of C) would share a summary, or two such summaries be compared.
var ErrMixed = errors.New("report: results of several datasets or model configs")

// ErrUnsupported is returned (wrapped) for what the report does not do
// yet: comparing results of conversion values.
var ErrUnsupported = errors.New("report: not supported")

// ErrInconsistent is returned (wrapped, naming two run ids) when runs of one
// setting disagree on its mechanism, k, ε or label-DP ε.
var ErrInconsistent = errors.New("report: inconsistent runs")

// SettingKey identifies a setting within one dataset and model config.
type SettingKey struct{ Dataset, ConfigID, Setting string }

// Best is a setting's result under the paper's reporting rule (Appendix C,
// "AUC vs Advantage Experimental Setup"): the learning rate with the highest
// mean of the rule's metric over trials (ties: the smaller LR) — test AUC
// for binary labels, test accuracy for C ≥ 3 classes (MetricFor) — and, at
// that learning rate, the mean and standard error (sample sd/√N; NaN with
// fewer than 2 trials) of both test metrics over its N trials. The other
// metric's mean is NaN when one of those trials did not measure it (a
// record written before test accuracy existed). With no finite value of
// the rule's metric, every float is NaN and N is 0.
type Best struct {
	LR                   float64
	N                    int
	Classes              int     // C: 2 for binary labels; valuesKey (−1) for conversion values
	AUC, AUCSE           float64 // test AUC (macro one-vs-rest for C ≥ 3)
	Accuracy, AccuracySE float64 // test accuracy
	// MSE, R2 (conversion values): the test MSE (the rule's metric,
	// minimised) and R², NaN for classes.
	MSE, MSESE, R2, R2SE float64
}

// Metric returns the mean and standard error of the metric the rule
// optimised.
func (b Best) Metric() (mean, se float64) {
	switch MetricFor(b.Classes) {
	case MetricAccuracy:
		return b.Accuracy, b.AccuracySE
	case MetricMSE:
		return b.MSE, b.MSESE
	}
	return b.AUC, b.AUCSE
}

// BestLR applies the reporting rule to every setting of runs. Runs are
// merged as in Summarize (a repeated (setting, lr, trial, run_id) counts
// once, runs whose metric is NaN are left out); the result does not depend
// on run order.
// It is the rule's only implementation: Summarize uses it, and the
// pipeline uses it to pick the clean model whose η̂ feeds the audit.
func BestLR(runs []Run) map[SettingKey]Best {
	m := mergeRuns(runs, nil)
	out := make(map[SettingKey]Best, len(m.settings))
	for k, s := range m.settings {
		out[k] = s.best()
	}
	return out
}

// Row is one setting of a summary.
type Row struct {
	Dataset, ConfigID, Setting string
	Pet                        pets.Kind
	K                          int
	Epsilon, LabelDPEpsilon    float64
	// Classes is the label's class count C (2: binary; −1, valuesKey, for
	// conversion values); it decides the reporting rule's metric
	// (MetricFor): the best LR has the highest mean test AUC for binary
	// labels, the highest mean test accuracy for C ≥ 3, the lowest mean
	// test MSE for values.
	Classes int
	BestLR  float64
	// AUCMean is the mean test AUC at the best LR (macro one-vs-rest AUC
	// for C ≥ 3), AUCSE its standard error (NaN with a single trial);
	// AccuracyMean and AccuracySE the same for test accuracy (NaN when a
	// trial did not measure it).
	AUCMean, AUCSE           float64
	AccuracyMean, AccuracySE float64
	NTrials                  int
	Audited                  bool
	EtaSource                string  // the audit's prior ("" when not audited)
	EAdv, EAdvSE, MAP98      float64 // NaN when not audited
	MAInfFrac                float64 // NaN when not audited
	EAdvBound                float64 // the ε-DP worst case (audit.Summary.EAdvBound); NaN when not audited or not DP
	// Bags is the LLP family's bag rule (BagsOf); "" for other mechanisms.
	Bags string
	// MAP50 and MAP90 are the median and 90th percentile of |MA| (NaN when
	// not audited): with MAP98 they show where a mechanism's |MA| falls
	// (rr_prior's are 0 or ε per example, so its p98 alone may equal rr's).
	MAP50, MAP90 float64
	// MAMean is the mean |MA| (NaN when not audited or not recorded).
	MAMean float64
	// RMSRE is a summary report's Noise Lab RMSRE₅ (Audit.RMSRE), beside
	// the model's utility; NaN for the other kinds and when not audited.
	RMSRE float64
	// LearningRates are the learning rates at which the setting has runs
	// with a metric (not NaN), in increasing order: the choice set of the
	// best-LR rule (a config's train.learning_rates when every run
	// finished and none diverged).
	LearningRates []float64
	// ConfigName is the name of the config(s) whose runs the row holds
	// (several, comma-separated, when differently named configs share a
	// config_id); Config the keys config_id fingerprints (Run.Config);
	// ConfigDiff, in a summary of several configs, the keys whose values
	// differ between them with this row's values ("" with one config).
	ConfigName, Config, ConfigDiff string
	// Conversion values (NaN for classes): the grid's B (0 for classes),
	// the mean test MSE and R² at the best LR, and the audit's R²- and
	// τ-advantages (NaN when not audited).
	ValueMax                        float64
	MSEMean, MSESE, R2Mean, R2SE    float64
	Tau, R2Adv, R2AdvSE, R2AdvRatio float64
	TauAdv, TauAdvSE, TauAdvBound   float64
}

// labelKey is the row's label space (Run.labelKey).
func (r Row) labelKey() int {
	if r.ValueMax > 0 {
		return valuesKey
	}
	return binaryIs2(r.Classes)
}

// Summary is Summarize's result.
type Summary struct {
	Rows []Row // ordered by dataset, config, then canonically (mechanism, k, ε)
	// Classes is the class count C of every row (a summary never holds
	// two): 2 for binary labels; 0 when there are no rows.
	Classes int
	// RunsRead counts every run given; OutOfGrid those left out by
	// Options.InGrid; Duplicates the repeated (setting, lr, trial, run_id)
	// runs dropped (the first kept), Conflicts those among them whose test
	// AUC differed from the kept one (two result sets disagree about one
	// run); NaNAUC the runs left out for a NaN value of the rule's metric
	// (test AUC; test accuracy for C ≥ 3); AuditConflicts the
	// audit rows of an already-seen (dataset, setting) whose results differed
	// (one is kept, the same whatever the input order).
	RunsRead, Duplicates, Conflicts, NaNAUC, OutOfGrid, AuditConflicts int
	Datasets, Configs                                                  []string // distinct, sorted
}

// Options configures Summarize.
type Options struct {
	// AllowMixed keeps runs of several datasets or configs as separate rows
	// instead of failing with ErrMixed.
	AllowMixed bool
	// InGrid, if set, says whether a run belongs to the current grid; runs
	// outside are left out and counted in Summary.OutOfGrid. Nil: all count.
	InGrid func(runID string) bool
}

// Summarize reduces runs (one per trained model) to one row per (dataset,
// config, setting) with the paper's reporting rule (see Best and BestLR)
// and joins each with the audit of its (dataset, config, setting). It never averages
// runs of different datasets or configs: with several it fails with ErrMixed
// unless o.AllowMixed, which keeps them as separate rows. Runs of
// different class counts fail with ErrMixed whatever o says: a summary
// has one metric (AUC for binary labels, accuracy for C classes), one
// scale in its figures and one C in its headings.
//
// Result sets merge by concatenating their runs: a run whose (dataset,
// config, setting, lr, trial, run_id) was already seen is a duplicate,
// dropped and counted (Summary.Duplicates, Conflicts). An audit with an
// empty Dataset or ConfigID (a file of an earlier format) joins by setting
// when the runs have a single dataset or config. The result does not depend on the order of runs or
// audits. Runs of one setting that disagree on mechanism, k, ε or label-DP
// ε are an error wrapping ErrInconsistent.
func Summarize(runs []Run, audits []Audit, o Options) (*Summary, error) {
	m := mergeRuns(runs, o.InGrid)
	if len(m.grids) > 1 {
		return nil, fmt.Errorf("%w: runs of conversion values on %d grids (value_max %v) would share one summary; report each result set on its own",
			ErrMixed, len(m.grids), sortedKeys(m.grids))
	}
	if len(m.classes) > 1 {
		var parts []string
		for _, c := range sortedKeys(m.classes) {
			parts = append(parts, fmt.Sprintf("%s: %s", classesText(c), english.Count(m.classes[c], "run")))
		}
		return nil, fmt.Errorf("%w: runs of %d label class counts (%s) would share one summary: a summary has one metric "+
			"(test AUC for binary labels, test accuracy for C ≥ 3 classes); report each result set on its own "+
			"(--allow-mixed does not apply)", ErrMixed, len(m.classes), strings.Join(parts, ", "))
	}
	if m.inconsistent != nil {
		return nil, m.inconsistent
	}
	s := &Summary{RunsRead: len(runs), Duplicates: m.dups, Conflicts: m.conflicts, NaNAUC: m.nanAUC, OutOfGrid: m.outOfGrid}
	for c := range m.classes {
		s.Classes = c
	}
	perDataset, perConfig := map[string]int{}, map[string]int{}
	type group struct{ dataset, config string }
	groups := map[group]bool{}
	for k, sr := range m.settings {
		perDataset[k.Dataset] += sr.runs
		perConfig[k.ConfigID] += sr.runs
		groups[group{k.Dataset, k.ConfigID}] = true
	}
	s.Datasets, s.Configs = sortedKeys(perDataset), sortedKeys(perConfig)
	if len(groups) > 1 && !o.AllowMixed {
		var parts []string
		if len(perDataset) > 1 {
			parts = append(parts, fmt.Sprintf("%d datasets (%s)", len(perDataset), countList(perDataset)))
		}
		if len(perConfig) > 1 {
			parts = append(parts, fmt.Sprintf("%d model configs (%s)", len(perConfig), countList(perConfig)))
		}
		return nil, fmt.Errorf("%w: runs of %s would be averaged together; keep them apart with "+
			"AllowMixed (train report --allow-mixed) or report each result set on its own", ErrMixed, strings.Join(parts, " and "))
	}

	aud := map[SettingKey]Audit{}
	for _, a := range sortedAudits(audits) {
		k := SettingKey{a.Dataset, a.ConfigID, a.Setting}
		if k.Dataset == "" && len(s.Datasets) == 1 {
			k.Dataset = s.Datasets[0]
		}
		if k.ConfigID == "" && len(s.Configs) == 1 {
			k.ConfigID = s.Configs[0]
		}
		if old, ok := aud[k]; ok {
			if !sameFloat(old.EAdv, a.EAdv) || !sameFloat(old.EAdvSE, a.EAdvSE) ||
				!sameFloat(old.MAP98, a.MAP98) || !sameFloat(old.MAInfFrac, a.MAInfFrac) {
				s.AuditConflicts++
			}
			continue
		}
		aud[k] = a
	}

	nan := math.NaN()
	for k, sr := range m.settings {
		b := sr.best()
		r := Row{Dataset: k.Dataset, ConfigID: k.ConfigID, Setting: k.Setting, Pet: sr.params.Pet, K: sr.params.K,
			Epsilon: sr.params.Epsilon, LabelDPEpsilon: sr.params.LabelDPEpsilon, Classes: b.Classes,
			BestLR: b.LR, AUCMean: b.AUC, AUCSE: b.AUCSE, AccuracyMean: b.Accuracy, AccuracySE: b.AccuracySE, NTrials: b.N,
			EAdv: nan, EAdvSE: nan, MAP98: nan, MAInfFrac: nan, Bags: BagsOf(sr.params), MAP50: nan, MAP90: nan, MAMean: nan, EAdvBound: nan, RMSRE: nan,
			ValueMax: sr.params.ValueMax, MSEMean: b.MSE, MSESE: b.MSESE, R2Mean: b.R2, R2SE: b.R2SE,
			Tau: nan, R2Adv: nan, R2AdvSE: nan, R2AdvRatio: nan, TauAdv: nan, TauAdvSE: nan, TauAdvBound: nan}
		if b.Classes == valuesKey {
			r.Classes = 0
		}
		if a, ok := aud[k]; ok {
			r.Audited, r.EtaSource = true, a.EtaSource
			r.EAdv, r.EAdvSE, r.MAP98, r.MAInfFrac = a.EAdv, a.EAdvSE, a.MAP98, a.MAInfFrac
			r.MAP50, r.MAP90, r.MAMean = a.MAP50, a.MAP90, a.MAMean
			r.EAdvBound, r.RMSRE = a.EAdvBound, a.RMSRE
			r.Tau, r.R2Adv, r.R2AdvSE, r.R2AdvRatio = a.Tau, a.R2Adv, a.R2AdvSE, a.R2AdvRatio
			r.TauAdv, r.TauAdvSE, r.TauAdvBound = a.TauAdv, a.TauAdvSE, a.TauAdvBound
		}
		r.ConfigName, r.Config = joinNames(sr.names), sr.params.Config
		if len(sr.byLR) > 0 {
			r.LearningRates = sortedKeys(sr.byLR)
		}
		s.Rows = append(s.Rows, r)
	}
	configs := map[string]bool{}
	for _, r := range s.Rows {
		configs[r.Config] = true
	}
	if diff := differingKeys(sortedKeys(configs)); len(diff) > 0 {
		for i := range s.Rows {
			s.Rows[i].ConfigDiff = only(s.Rows[i].Config, diff)
		}
	}
	slices.SortFunc(s.Rows, compareRows)
	return s, nil
}

func compareRows(a, b Row) int {
	return cmp.Or(cmp.Compare(a.Dataset, b.Dataset), cmp.Compare(a.ConfigID, b.ConfigID),
		display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting))
}

// sortedAudits returns audits in a canonical order, so that which of two
// conflicting rows is kept does not depend on input order.
func sortedAudits(audits []Audit) []Audit {
	out := slices.Clone(audits)
	slices.SortStableFunc(out, func(a, b Audit) int {
		return cmp.Or(cmp.Compare(a.Dataset, b.Dataset), cmp.Compare(a.ConfigID, b.ConfigID), cmp.Compare(a.Setting, b.Setting),
			cmp.Compare(a.EtaSource, b.EtaSource), cmp.Compare(a.EAdv, b.EAdv), cmp.Compare(a.EAdvSE, b.EAdvSE),
			cmp.Compare(a.MAP98, b.MAP98), cmp.Compare(a.MAInfFrac, b.MAInfFrac))
	})
	return out
}

// countList formats "a (3 runs), b (1 run)" in key order.
func countList(m map[string]int) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		name := k
		if name == "" {
			name = `""`
		}
		unit := "runs"
		if m[k] == 1 {
			unit = "run"
		}
		parts = append(parts, fmt.Sprintf("%s: %d %s", name, m[k], unit))
	}
	return strings.Join(parts, ", ")
}

// ---- merging runs ---------------------------------------------------------

type obs struct {
	trial    int
	runID    string
	auc, acc float64
	mse, r2  float64
}

// settingRuns are the merged runs of one setting.
type settingRuns struct {
	params Run // the first run seen: mechanism, k, ε, label-DP ε
	runs   int // runs kept (duplicates dropped), NaN AUC included
	byLR   map[float64][]obs
	names  map[string]bool // the runs' config names
}

// best applies the reporting rule with the setting's metric (MetricFor).
// Learning rates are visited in ascending order and trials in (trial,
// run_id) order, so the floating-point sums do not depend on input order.
func (s *settingRuns) best() Best {
	nan := math.NaN()
	c := s.params.labelKey()
	b := Best{LR: nan, Classes: c, AUC: nan, AUCSE: nan, Accuracy: nan, AccuracySE: nan, MSE: nan, MSESE: nan, R2: nan, R2SE: nan}
	bestMean := math.Inf(-1)
	for _, lr := range sortedKeys(s.byLR) {
		o := slices.Clone(s.byLR[lr])
		slices.SortFunc(o, func(a, b obs) int { return cmp.Or(cmp.Compare(a.trial, b.trial), cmp.Compare(a.runID, b.runID)) })
		auc, acc, mse, r2 := make([]float64, len(o)), make([]float64, len(o)), make([]float64, len(o)), make([]float64, len(o))
		for i := range o {
			auc[i], acc[i], mse[i], r2[i] = o[i].auc, o[i].acc, o[i].mse, o[i].r2
		}
		ma, sa := meanSE(auc)
		mc, sc := meanSE(acc)
		me, se := meanSE(mse)
		mr, sr := meanSE(r2)
		m := ma
		switch MetricFor(c) {
		case MetricAccuracy:
			m = mc
		case MetricMSE:
			m = -me
		}
		if m > bestMean { // strict: a tie keeps the smaller LR
			bestMean = m
			b = Best{LR: lr, N: len(o), Classes: c, AUC: ma, AUCSE: sa, Accuracy: mc, AccuracySE: sc, MSE: me, MSESE: se, R2: mr, R2SE: sr}
		}
	}
	return b
}

type mergedRuns struct {
	settings                           map[SettingKey]*settingRuns
	outOfGrid, dups, conflicts, nanAUC int
	inconsistent                       error
	classes                            map[int]int     // runs kept per class count C (valuesKey: values)
	grids                              map[float64]int // runs of values kept per grid B
}

// mergeRuns drops runs outside the grid (inGrid nil: none), then repeated
// (key, lr, trial, run_id) runs, and groups the rest by setting; runs whose
// metric (MetricFor) is NaN are counted but not observed. A repeated run
// conflicts when its test AUC or test accuracy differs from the first's.
func mergeRuns(runs []Run, inGrid func(string) bool) *mergedRuns {
	type dupKey struct {
		SettingKey
		lr    uint64
		trial int
		runID string
	}
	m := &mergedRuns{settings: map[SettingKey]*settingRuns{}, classes: map[int]int{}, grids: map[float64]int{}}
	seen := map[dupKey][2]float64{}
	for _, r := range runs {
		if inGrid != nil && !inGrid(r.RunID) {
			m.outOfGrid++
			continue
		}
		key := SettingKey{r.Dataset, r.ConfigID, r.Setting}
		lr := r.LR + 0 // folds -0 into 0
		dk := dupKey{key, math.Float64bits(lr), r.Trial, r.RunID}
		if first, ok := seen[dk]; ok {
			m.dups++
			if !sameFloat(first[0], r.TestAUC) || !sameFloat(first[1], r.TestAccuracy) {
				m.conflicts++
			}
			continue
		}
		seen[dk] = [2]float64{r.TestAUC, r.TestAccuracy}
		m.classes[r.labelKey()]++
		if r.OfValues() {
			m.grids[r.ValueMax]++
		}
		s := m.settings[key]
		if s == nil {
			s = &settingRuns{params: r, byLR: map[float64][]obs{}, names: map[string]bool{}}
			m.settings[key] = s
		} else if p := s.params; m.inconsistent == nil && (p.Pet != r.Pet || p.K != r.K || p.labelKey() != r.labelKey() ||
			!sameFloat(p.Epsilon, r.Epsilon) || !sameFloat(p.LabelDPEpsilon, r.LabelDPEpsilon)) {
			m.inconsistent = fmt.Errorf("%w: setting %q: run %s has mechanism/k/ε/label-DP ε %s/%d/%s/%s, run %s %s/%d/%s/%s",
				ErrInconsistent, r.Setting, p.RunID, p.Pet, p.K, data.FormatFloat(p.Epsilon), data.FormatFloat(p.LabelDPEpsilon),
				r.RunID, r.Pet, r.K, data.FormatFloat(r.Epsilon), data.FormatFloat(r.LabelDPEpsilon))
		}
		s.runs++
		s.names[r.ConfigName] = true
		if s.params.Config == "" {
			s.params.Config = r.Config
		}
		metric := r.TestAUC
		switch MetricFor(r.labelKey()) {
		case MetricAccuracy:
			metric = r.TestAccuracy
		case MetricMSE:
			metric = r.TestMSE
		}
		if math.IsNaN(metric) {
			m.nanAUC++
			continue
		}
		s.byLR[lr] = append(s.byLR[lr], obs{r.Trial, r.RunID, r.TestAUC, r.TestAccuracy, r.TestMSE, r.TestR2})
	}
	return m
}

// meanSE returns the mean and its standard error (sample sd/√n; NaN for
// n < 2: one trial says nothing about the spread).
func meanSE(v []float64) (mean, se float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) == 1 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
}

// ---- summary table ----------------------------------------------------------

// Metadata keys of the summary table (decimal integers; see Summary).
const (
	metaRunsRead       = "report.runs_read"
	metaDuplicates     = "report.duplicate_runs"
	metaConflicts      = "report.conflicting_duplicates"
	metaNaNAUC         = "report.nan_auc_runs"
	metaOutOfGrid      = "report.out_of_grid_runs"
	metaAuditConflicts = "report.conflicting_audit_rows"
)

var summarySchema = schema[Row]{name: "summary", cols: []column[Row]{
	strCol("setting", func(r *Row) *string { return &r.Setting }),
	kindCol("pet", func(r *Row) *pets.Kind { return &r.Pet }),
	nullIntCol("k", func(r *Row) *int { return &r.K }),
	nullF64Col("epsilon", func(r *Row) *float64 { return &r.Epsilon }),
	f64Col("label_dp_epsilon", func(r *Row) *float64 { return &r.LabelDPEpsilon }),
	f64Col("best_lr", func(r *Row) *float64 { return &r.BestLR }),
	f64Col("auc_mean", func(r *Row) *float64 { return &r.AUCMean }),
	f64Col("auc_se", func(r *Row) *float64 { return &r.AUCSE }),
	intCol("n_trials", func(r *Row) *int { return &r.NTrials }),
	f64Col("eadv", func(r *Row) *float64 { return &r.EAdv }),
	f64Col("eadv_se", func(r *Row) *float64 { return &r.EAdvSE }),
	f64Col("ma_p98", func(r *Row) *float64 { return &r.MAP98 }),
	f64Col("ma_inf_frac", func(r *Row) *float64 { return &r.MAInfFrac }),
	opt(strCol("dataset", func(r *Row) *string { return &r.Dataset })),
	opt(strCol("config_id", func(r *Row) *string { return &r.ConfigID })),
	opt(boolCol("audited", func(r *Row) *bool { return &r.Audited })),
	opt(strCol("eta_source", func(r *Row) *string { return &r.EtaSource })),
	opt(f64Col("eadv_bound", func(r *Row) *float64 { return &r.EAdvBound })),
	opt(strCol("bags", func(r *Row) *string { return &r.Bags })),
	opt(f64Col("ma_p50", func(r *Row) *float64 { return &r.MAP50 })),
	opt(f64Col("ma_p90", func(r *Row) *float64 { return &r.MAP90 })),
	opt(f64Col("ma_mean", func(r *Row) *float64 { return &r.MAMean })),
	opt(strCol("config_name", func(r *Row) *string { return &r.ConfigName })),
	opt(strCol("config", func(r *Row) *string { return &r.Config })),
	opt(strCol("config_diff", func(r *Row) *string { return &r.ConfigDiff })),
	opt(classesCol("classes", func(r *Row) *int { return &r.Classes })),
	opt(f64Col("test_accuracy_mean", func(r *Row) *float64 { return &r.AccuracyMean })),
	opt(f64Col("test_accuracy_se", func(r *Row) *float64 { return &r.AccuracySE })),
	opt(mapCol("learning_rates", func(r *Row) *[]float64 { return &r.LearningRates }, formatFloats, parseFloats, nil)),
	opt(f64Col("rmsre", func(r *Row) *float64 { return &r.RMSRE })),
	opt(nullF64Col("value_max", func(r *Row) *float64 { return &r.ValueMax })),
	opt(f64Col("test_mse", func(r *Row) *float64 { return &r.MSEMean })),
	opt(f64Col("test_mse_se", func(r *Row) *float64 { return &r.MSESE })),
	opt(f64Col("test_r2", func(r *Row) *float64 { return &r.R2Mean })),
	opt(f64Col("test_r2_se", func(r *Row) *float64 { return &r.R2SE })),
	opt(f64Col("tau", func(r *Row) *float64 { return &r.Tau })),
	opt(f64Col("r2_adv", func(r *Row) *float64 { return &r.R2Adv })),
	opt(f64Col("r2_adv_se", func(r *Row) *float64 { return &r.R2AdvSE })),
	opt(f64Col("r2_adv_ratio", func(r *Row) *float64 { return &r.R2AdvRatio })),
	opt(f64Col("tau_adv", func(r *Row) *float64 { return &r.TauAdv })),
	opt(f64Col("tau_adv_se", func(r *Row) *float64 { return &r.TauAdvSE })),
	opt(f64Col("tau_adv_bound", func(r *Row) *float64 { return &r.TauAdvBound })),
}}

// SummaryTable converts a summary into summary.csv / summary.parquet: one
// row per Row, with summarySchema's columns (listed in README's "Reports";
// the first format's first): auc_se NaN with one trial, the audit's
// columns NaN when not audited, ma_* may be +Inf; classes, then
// test_accuracy_mean and test_accuracy_se at the best LR (NaN with one
// trial, or when a trial did not measure accuracy). best_lr is chosen by
// auc_mean for binary labels, by test_accuracy_mean for C ≥ 3 classes,
// whose auc_mean is the macro one-vs-rest AUC. The metadata holds the merge counts as
// decimal strings: report.runs_read, report.duplicate_runs,
// report.conflicting_duplicates, report.nan_auc_runs,
// report.out_of_grid_runs, report.conflicting_audit_rows.
func SummaryTable(s *Summary) *data.Table {
	return summarySchema.toTable(s.Rows, map[string]string{
		metaRunsRead:       strconv.Itoa(s.RunsRead),
		metaDuplicates:     strconv.Itoa(s.Duplicates),
		metaConflicts:      strconv.Itoa(s.Conflicts),
		metaNaNAUC:         strconv.Itoa(s.NaNAUC),
		metaOutOfGrid:      strconv.Itoa(s.OutOfGrid),
		metaAuditConflicts: strconv.Itoa(s.AuditConflicts),
	})
}
