package report

import (
	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// Audit is one PET setting's audit result: the exact advantage of the
// Bayes-optimal label-inference attacker (paper Section 3) on a dataset's
// audit rows.
//
// Pet and K equal Summary.Kind and Summary.K (AuditTable writes the outer
// fields; ReadAudits sets both). Epsilon is the setting's ε parameter (0
// when the mechanism has none), as in Run; Summary.Epsilon is the label-DP ε
// of one release (+Inf for none and llp, 0 for bot).
type Audit struct {
	Dataset   string // dataset identity, as Run.Dataset
	ConfigID  string // config fingerprint, as Run.ConfigID: η̂ and so the audit depend on it
	Setting   string
	Pet       pets.Kind
	K         int
	Epsilon   float64
	EtaSource string // the attacker's prior: "clean_model(lr=0.001)", "true", "knn(k=100 rows=100000)"
	// Summary.Classes is the number of label classes C of the audited
	// labels: 2 for binary (0 in a Go value means binary too; files hold
	// 2), 3..pets.MaxClasses otherwise, as in Run.
	audit.Summary

	// The quality of the attacker's η, measured on CalibrationRows test rows
	// that are neither trained on nor audited (0 rows: the η figures are
	// NaN): EtaECE and EtaBrier of η against their labels; EAdvCalibrated
	// the EAdv with η Platt-recalibrated on those rows (NaN for the true η).
	CalibrationRows  int
	EtaECE, EtaBrier float64
	EAdvCalibrated   float64
	// EAdvTrue is the EAdv with the synthetic data's true η when the audit
	// used an estimate (NaN otherwise). EtaTrials counts the clean model's
	// trials at the best learning rate; EAdvTrialMin and EAdvTrialMax are
	// the extremes of EAdv over their η̂ (NaN with fewer than 2).
	EAdvTrue                   float64
	EtaTrials                  int
	EAdvTrialMin, EAdvTrialMax float64

	// The model attack (audit.model_attack; NaN when no run stored its
	// predictions; model_attack.csv has every run): the trained models of
	// the best learning rate guess their training labels by argmax.
	// ModelAdv ± ModelAdvSE is their accuracy over the prior-only
	// attacker's on ModelRows probed training rows, the mean over
	// ModelRuns trials (ModelPrior names the prior's η); ModelReleaseAdv
	// the exact advantage the Bayes attacker would get from the same
	// releases on the same rows (NaN without the true η): the bracket
	// ModelAdv ≤ ModelReleaseAdv. ModelAdvNonmember ± SE is the same
	// attack on the audit rows, which no model trained on.
	ModelRuns                              int
	ModelRows                              int
	ModelPrior                             string
	ModelAdv, ModelAdvSE                   float64
	ModelReleaseAdv                        float64
	ModelAdvNonmember, ModelAdvNonmemberSE float64
	// Canaries through training (audit.model_canaries): EpsLowerModel is
	// the one-run bound at 95% certified by ModelCanaries canaries scored
	// by a model trained on a release that holds them (NaN: not played);
	// ModelCanaryAUC that model's test AUC (macro AUC for C ≥ 3), to set
	// beside its twin run's in runs.csv.
	ModelCanaries  int
	EpsLowerModel  float64
	ModelCanaryAUC float64
	// A summary report's accuracy (ara_summary: one noisy count per key):
	// RMSRE is Noise Lab's RMSRE_t at t = 5 conversions
	// (ara.RMSRE) of the training releases' keys, the mean over the
	// setting's trials, and RMSREExpected its analytic root mean square,
	// √E[RMSRE_t²] under the release's Laplace noise
	// (ara.ExpectedRMSRESquared); RMSREKeys the keys of one release. NaN
	// (0 keys) for the other kinds.
	RMSRE, RMSREExpected float64
	RMSREKeys            int
}

// Calibration is the reliability table of an audit's η on its calibration
// rows (figures/calibration.png, report.md).
type Calibration struct {
	Dataset   string
	ConfigID  string // η̂ and so its calibration depend on the config
	EtaSource string
	audit.Calibration
}

// ClassesOf is the class count C of calibration table c: that of the
// audits of its dataset and config (an audit of an earlier format, 0,
// reads as 2). For C ≥ 3 the table is top-label: each row's η is the
// probability of its most likely class, and a row counts as 1 when that
// class is the label.
func (c Calibration) ClassesOf(audits []Audit) int {
	for _, a := range audits {
		if (a.Dataset == c.Dataset || c.Dataset == "") && (a.ConfigID == c.ConfigID || c.ConfigID == "") {
			return max(a.Classes, 2)
		}
	}
	return 2
}

// Posterior is one audited example of a setting, kept for the scatter and
// CDF figures (paper Figures 1 and 2). Sample.Label is the label the audit
// drew from the prior η, never a dataset's raw label.
type Posterior struct {
	Dataset  string
	ConfigID string
	Setting  string
	Pet      pets.Kind
	K        int
	Epsilon  float64
	audit.Sample
}

// auditSchema: audit.csv's columns of the first format (required when
// reading), then those added since (optional).
var auditSchema = schema[Audit]{name: "audit", cols: []column[Audit]{
	strCol("setting", func(a *Audit) *string { return &a.Setting }),
	kindCol("pet", func(a *Audit) *pets.Kind { return &a.Pet }),
	nullIntCol("k", func(a *Audit) *int { return &a.K }),
	nullF64Col("epsilon", func(a *Audit) *float64 { return &a.Epsilon }),
	strCol("eta_source", func(a *Audit) *string { return &a.EtaSource }),
	intCol("n_examples", func(a *Audit) *int { return &a.NExamples }),
	intCol("n_dropped", func(a *Audit) *int { return &a.NDropped }),
	f64Col("eadv", func(a *Audit) *float64 { return &a.EAdv }),
	f64Col("eadv_se", func(a *Audit) *float64 { return &a.EAdvSE }),
	f64Col("ma_p50", func(a *Audit) *float64 { return &a.MAP50 }),
	f64Col("ma_p90", func(a *Audit) *float64 { return &a.MAP90 }),
	f64Col("ma_p98", func(a *Audit) *float64 { return &a.MAP98 }),
	f64Col("ma_p99", func(a *Audit) *float64 { return &a.MAP99 }),
	f64Col("ma_max", func(a *Audit) *float64 { return &a.MAMax }),
	f64Col("ma_inf_frac", func(a *Audit) *float64 { return &a.MAInfFrac }),
	opt(strCol("dataset", func(a *Audit) *string { return &a.Dataset })),
	opt(f64Col("label_dp_epsilon", func(a *Audit) *float64 { return &a.Summary.Epsilon })),
	opt(strCol("mechanism", func(a *Audit) *string { return &a.Mechanism })),
	opt(intCol("n_bags", func(a *Audit) *int { return &a.NBags })),
	opt(intCol("label_draws", func(a *Audit) *int { return &a.LabelDraws })),
	opt(strCol("se_unit", func(a *Audit) *string { return &a.SEUnit })),
	opt(intCol("ma_count", func(a *Audit) *int64 { return &a.MACount })),
	opt(f64Col("eadv_bound", func(a *Audit) *float64 { return &a.EAdvBound })),
	opt(intCol("realized_draws", func(a *Audit) *int { return &a.RealizedDraws })),
	opt(f64Col("realized_gain", func(a *Audit) *float64 { return &a.RealizedGain })),
	opt(f64Col("realized_gain_se", func(a *Audit) *float64 { return &a.RealizedGainSE })),
	opt(f64Col("realized_z", func(a *Audit) *float64 { return &a.RealizedZ })),
	opt(intCol("canaries", func(a *Audit) *int { return &a.Canaries })),
	opt(f64Col("eps_lower", func(a *Audit) *float64 { return &a.EpsLower })),
	opt(intCol("calibration_rows", func(a *Audit) *int { return &a.CalibrationRows })),
	opt(f64Col("eta_ece", func(a *Audit) *float64 { return &a.EtaECE })),
	opt(f64Col("eta_brier", func(a *Audit) *float64 { return &a.EtaBrier })),
	opt(f64Col("eadv_calibrated", func(a *Audit) *float64 { return &a.EAdvCalibrated })),
	opt(f64Col("eadv_true", func(a *Audit) *float64 { return &a.EAdvTrue })),
	opt(intCol("eta_trials", func(a *Audit) *int { return &a.EtaTrials })),
	opt(f64Col("eadv_trial_min", func(a *Audit) *float64 { return &a.EAdvTrialMin })),
	opt(f64Col("eadv_trial_max", func(a *Audit) *float64 { return &a.EAdvTrialMax })),
	opt(strCol("config_id", func(a *Audit) *string { return &a.ConfigID })),
	opt(f64Col("ma_mean", func(a *Audit) *float64 { return &a.MAMean })),
	opt(f64Col("eps_lower_real_bags", func(a *Audit) *float64 { return &a.EpsLowerRealBags })),
	opt(classesCol("classes", func(a *Audit) *int { return &a.Summary.Classes })),
	opt(boolCol("eadv_estimated", func(a *Audit) *bool { return &a.EAdvEstimated })),
	opt(intCol("bag_draws", func(a *Audit) *int { return &a.BagDraws })),
	opt(intCol("model_runs", func(a *Audit) *int { return &a.ModelRuns })),
	opt(intCol("model_rows", func(a *Audit) *int { return &a.ModelRows })),
	opt(strCol("model_prior", func(a *Audit) *string { return &a.ModelPrior })),
	opt(f64Col("model_adv", func(a *Audit) *float64 { return &a.ModelAdv })),
	opt(f64Col("model_adv_se", func(a *Audit) *float64 { return &a.ModelAdvSE })),
	opt(f64Col("model_release_adv", func(a *Audit) *float64 { return &a.ModelReleaseAdv })),
	opt(f64Col("model_adv_nonmember", func(a *Audit) *float64 { return &a.ModelAdvNonmember })),
	opt(f64Col("model_adv_nonmember_se", func(a *Audit) *float64 { return &a.ModelAdvNonmemberSE })),
	opt(intCol("model_canaries", func(a *Audit) *int { return &a.ModelCanaries })),
	opt(f64Col("eps_lower_model", func(a *Audit) *float64 { return &a.EpsLowerModel })),
	opt(f64Col("model_canary_auc", func(a *Audit) *float64 { return &a.ModelCanaryAUC })),
	opt(f64Col("rmsre", func(a *Audit) *float64 { return &a.RMSRE })),
	opt(f64Col("rmsre_expected", func(a *Audit) *float64 { return &a.RMSREExpected })),
	opt(intCol("rmsre_keys", func(a *Audit) *int { return &a.RMSREKeys })),
	opt(nullF64Col("value_max", func(a *Audit) *float64 { return &a.ValueMax })),
	opt(nullF64Col("value_step", func(a *Audit) *float64 { return &a.ValueStep })),
	opt(f64Col("tau", func(a *Audit) *float64 { return &a.Tau })),
	opt(f64Col("r2_adv", func(a *Audit) *float64 { return &a.R2Adv })),
	opt(f64Col("r2_adv_se", func(a *Audit) *float64 { return &a.R2AdvSE })),
	opt(f64Col("r2_adv_ratio", func(a *Audit) *float64 { return &a.R2AdvRatio })),
	opt(f64Col("tau_adv", func(a *Audit) *float64 { return &a.TauAdv })),
	opt(f64Col("tau_adv_se", func(a *Audit) *float64 { return &a.TauAdvSE })),
	opt(f64Col("tau_adv_bound", func(a *Audit) *float64 { return &a.TauAdvBound })),
	opt(f64Col("tau_blind", func(a *Audit) *float64 { return &a.TauBlind })),
	opt(f64Col("realized_r2", func(a *Audit) *float64 { return &a.RealizedR2 })),
	opt(f64Col("realized_r2_se", func(a *Audit) *float64 { return &a.RealizedR2SE })),
}}

// AuditTable converts audit results into audit.csv / audit.parquet, one row
// per result in the given order, with auditSchema's columns (listed in
// README's "Audit"): the first format's first, then dataset,
// label_dp_epsilon and the audit's details, the self-checks (eadv_bound:
// the ε-DP worst case; realized_*: the attack through the production
// sampler; canaries, eps_lower: the empirical ε lower bound of the
// controlled canary game), the quality of η (calibration_rows, eta_*,
// eadv_calibrated, eadv_true, eadv_trial_*), config_id, ma_mean,
// eps_lower_real_bags (the canaries among real bag-mates, LLP family),
// classes (2 for binary labels), eadv_estimated (some bags' IEAdv
// estimated from bag_draws releases each instead of computed exactly; C ≥ 3
// only) and bag_draws (0 when exact).
// ma_* may be +Inf; eadv_se and every figure that does not apply NaN.
func AuditTable(audits []Audit) *data.Table {
	return auditSchema.toTable(audits, map[string]string{})
}

// ReadAudits reads AuditTable's output back (or an audit table of an
// earlier format, whose missing columns read as NaN, zero or false,
// classes as 2).
func ReadAudits(t *data.Table) ([]Audit, error) {
	as, err := auditSchema.fromTable(t)
	if err != nil {
		return nil, err
	}
	for i := range as {
		as[i].Summary.Kind, as[i].Summary.K = as[i].Pet, as[i].K
	}
	return as, nil
}

var posteriorSchema = schema[Posterior]{name: "posteriors", cols: []column[Posterior]{
	strCol("setting", func(p *Posterior) *string { return &p.Setting }),
	kindCol("pet", func(p *Posterior) *pets.Kind { return &p.Pet }),
	nullIntCol("k", func(p *Posterior) *int { return &p.K }),
	nullF64Col("epsilon", func(p *Posterior) *float64 { return &p.Epsilon }),
	f64Col("prior", func(p *Posterior) *float64 { return &p.Prior }),
	f64Col("posterior", func(p *Posterior) *float64 { return &p.Sample.Posterior }),
	f64Col("ieadv", func(p *Posterior) *float64 { return &p.IEAdv }),
	f64Col("abs_ma", func(p *Posterior) *float64 { return &p.AbsMA }),
	opt(strCol("dataset", func(p *Posterior) *string { return &p.Dataset })),
	opt(intCol("index", func(p *Posterior) *int { return &p.Index })),
	opt(intCol("label", func(p *Posterior) *uint8 { return &p.Label })),
	opt(f64Col("release", func(p *Posterior) *float64 { return &p.Release })),
	opt(strCol("config_id", func(p *Posterior) *string { return &p.ConfigID })),
}}

// PosteriorTable converts samples into posteriors.parquet (and .csv), with
// posteriorSchema's columns (the first format's first). abs_ma may be +Inf.
func PosteriorTable(post []Posterior) *data.Table {
	return posteriorSchema.toTable(post, map[string]string{})
}

// ReadPosteriors reads PosteriorTable's output back (or a table of the first
// format).
func ReadPosteriors(t *data.Table) ([]Posterior, error) {
	return posteriorSchema.fromTable(t)
}

// calRow is one bin of calibration.csv.
type calRow struct {
	Dataset, EtaSource, ConfigID string
	Rows                         int
	ECE, Brier                   float64
	Bin                          int
	audit.CalBin
}

var calibrationSchema = schema[calRow]{name: "calibration", cols: []column[calRow]{
	strCol("dataset", func(r *calRow) *string { return &r.Dataset }),
	strCol("eta_source", func(r *calRow) *string { return &r.EtaSource }),
	intCol("rows", func(r *calRow) *int { return &r.Rows }),
	f64Col("ece", func(r *calRow) *float64 { return &r.ECE }),
	f64Col("brier", func(r *calRow) *float64 { return &r.Brier }),
	intCol("bin", func(r *calRow) *int { return &r.Bin }),
	f64Col("lo", func(r *calRow) *float64 { return &r.Lo }),
	f64Col("hi", func(r *calRow) *float64 { return &r.Hi }),
	intCol("n", func(r *calRow) *int { return &r.N }),
	f64Col("mean_eta", func(r *calRow) *float64 { return &r.MeanEta }),
	f64Col("rate", func(r *calRow) *float64 { return &r.Rate }),
	opt(strCol("config_id", func(r *calRow) *string { return &r.ConfigID })),
}}

// CalibrationTable converts reliability tables into calibration.csv /
// calibration.parquet with calibrationSchema's columns: one row per bin,
// the table's rows, ece and brier repeated on each (mean_eta and rate NaN
// for an empty bin).
func CalibrationTable(cs []Calibration) *data.Table {
	var rows []calRow
	for _, c := range cs {
		for b, cb := range c.Bins {
			rows = append(rows, calRow{Dataset: c.Dataset, ConfigID: c.ConfigID, EtaSource: c.EtaSource, Rows: c.N, ECE: c.ECE, Brier: c.Brier, Bin: b, CalBin: cb})
		}
	}
	return calibrationSchema.toTable(rows, map[string]string{})
}

// ReadCalibration reads CalibrationTable's output back: consecutive rows of
// one (dataset, config_id, eta_source) form one table, bins in file order.
func ReadCalibration(t *data.Table) ([]Calibration, error) {
	rows, err := calibrationSchema.fromTable(t)
	if err != nil {
		return nil, err
	}
	var out []Calibration
	for _, r := range rows {
		if n := len(out); n == 0 || out[n-1].Dataset != r.Dataset || out[n-1].ConfigID != r.ConfigID || out[n-1].EtaSource != r.EtaSource || r.Bin == 0 {
			out = append(out, Calibration{Dataset: r.Dataset, ConfigID: r.ConfigID, EtaSource: r.EtaSource,
				Calibration: audit.Calibration{N: r.Rows, ECE: r.ECE, Brier: r.Brier}})
		}
		c := &out[len(out)-1]
		c.Bins = append(c.Bins, r.CalBin)
	}
	return out, nil
}

// ValuePosterior is one sampled audit example of conversion values (the
// posterior scatter of values): its drawn value, its release, the
// attacker's prior and posterior mean and spread, and its exact
// advantages.
type ValuePosterior struct {
	Dataset  string
	ConfigID string
	Setting  string
	Pet      pets.Kind
	K        int
	Epsilon  float64
	audit.ValueSample
}

var valuePosteriorSchema = schema[ValuePosterior]{name: "value_posteriors", cols: []column[ValuePosterior]{
	strCol("setting", func(p *ValuePosterior) *string { return &p.Setting }),
	kindCol("pet", func(p *ValuePosterior) *pets.Kind { return &p.Pet }),
	nullIntCol("k", func(p *ValuePosterior) *int { return &p.K }),
	nullF64Col("epsilon", func(p *ValuePosterior) *float64 { return &p.Epsilon }),
	strCol("dataset", func(p *ValuePosterior) *string { return &p.Dataset }),
	strCol("config_id", func(p *ValuePosterior) *string { return &p.ConfigID }),
	intCol("index", func(p *ValuePosterior) *int { return &p.Index }),
	intCol("bag", func(p *ValuePosterior) *int { return &p.Bag }),
	f64Col("value", func(p *ValuePosterior) *float64 { return &p.Value }),
	f64Col("release", func(p *ValuePosterior) *float64 { return &p.Release }),
	f64Col("prior_mean", func(p *ValuePosterior) *float64 { return &p.PriorMean }),
	f64Col("prior_sd", func(p *ValuePosterior) *float64 { return &p.PriorSD }),
	f64Col("post_mean", func(p *ValuePosterior) *float64 { return &p.PostMean }),
	f64Col("post_sd", func(p *ValuePosterior) *float64 { return &p.PostSD }),
	f64Col("r2_adv", func(p *ValuePosterior) *float64 { return &p.R2Adv }),
	f64Col("tau_adv", func(p *ValuePosterior) *float64 { return &p.TauAdv }),
}}

// ValuePosteriorTable converts samples of conversion values into
// value_posteriors.parquet (and .csv), with valuePosteriorSchema's columns.
func ValuePosteriorTable(post []ValuePosterior) *data.Table {
	return valuePosteriorSchema.toTable(post, map[string]string{})
}

// ReadValuePosteriors reads ValuePosteriorTable's output back.
func ReadValuePosteriors(t *data.Table) ([]ValuePosterior, error) {
	return valuePosteriorSchema.fromTable(t)
}
