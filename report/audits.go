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
	audit.Summary
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

// auditColumns: audit.csv's columns of the first format (required when
// reading), then those added since (optional).
var auditColumns = []column[Audit]{
	strCol("setting", func(a *Audit) *string { return &a.Setting }),
	kindCol("pet", func(a *Audit) *pets.Kind { return &a.Pet }),
	intCol("k", func(a *Audit) *int { return &a.K }),
	f64Col("epsilon", func(a *Audit) *float64 { return &a.Epsilon }),
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
	opt(strCol("config_id", func(a *Audit) *string { return &a.ConfigID })),
	opt(f64Col("ma_mean", func(a *Audit) *float64 { return &a.MAMean })),
}

// AuditTable converts audit results into audit.csv / audit.parquet, one row
// per result in the given order: the first format's columns (setting, pet,
// k, epsilon, eta_source, n_examples, n_dropped, eadv, eadv_se, ma_p50,
// ma_p90, ma_p98, ma_p99, ma_max, ma_inf_frac), then dataset,
// label_dp_epsilon, mechanism, n_bags, label_draws, se_unit, ma_count,
// config_id.
// ma_* may be +Inf, eadv_se NaN.
func AuditTable(audits []Audit) *data.Table {
	return toTable(audits, auditColumns, map[string]string{})
}

// ReadAudits reads AuditTable's output back (or an audit table of the first
// format, whose missing columns read as NaN or zero).
func ReadAudits(t *data.Table) ([]Audit, error) {
	as, err := fromTable(t, "audit", auditColumns)
	if err != nil {
		return nil, err
	}
	for i := range as {
		as[i].Summary.Kind, as[i].Summary.K = as[i].Pet, as[i].K
	}
	return as, nil
}

var posteriorColumns = []column[Posterior]{
	strCol("setting", func(p *Posterior) *string { return &p.Setting }),
	kindCol("pet", func(p *Posterior) *pets.Kind { return &p.Pet }),
	intCol("k", func(p *Posterior) *int { return &p.K }),
	f64Col("epsilon", func(p *Posterior) *float64 { return &p.Epsilon }),
	f64Col("prior", func(p *Posterior) *float64 { return &p.Prior }),
	f64Col("posterior", func(p *Posterior) *float64 { return &p.Sample.Posterior }),
	f64Col("ieadv", func(p *Posterior) *float64 { return &p.IEAdv }),
	f64Col("abs_ma", func(p *Posterior) *float64 { return &p.AbsMA }),
	opt(strCol("dataset", func(p *Posterior) *string { return &p.Dataset })),
	opt(intCol("index", func(p *Posterior) *int { return &p.Index })),
	opt(intCol("label", func(p *Posterior) *uint8 { return &p.Label })),
	opt(f64Col("release", func(p *Posterior) *float64 { return &p.Release })),
	opt(strCol("config_id", func(p *Posterior) *string { return &p.ConfigID })),
}

// PosteriorTable converts samples into posteriors.parquet: setting, pet, k,
// epsilon, prior, posterior, ieadv, abs_ma (the first format), then
// dataset, index, label, release, config_id. abs_ma may be +Inf.
func PosteriorTable(post []Posterior) *data.Table {
	return toTable(post, posteriorColumns, map[string]string{})
}

// ReadPosteriors reads PosteriorTable's output back (or a table of the first
// format).
func ReadPosteriors(t *data.Table) ([]Posterior, error) {
	return fromTable(t, "posteriors", posteriorColumns)
}
