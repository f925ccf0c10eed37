package report

import (
	"labelprivacy/data"
	"labelprivacy/pets"
)

// ModelAttack is the model attack on one trained run (model_attack.csv;
// audit.ModelAttack): the model guesses the labels of its probed training
// rows (members) and of the audit rows (non-members) by its argmax, scored
// against the true labels.
type ModelAttack struct {
	Dataset, ConfigID, Setting string
	Pet                        pets.Kind
	K                          int
	Epsilon                    float64
	RunID                      string
	LR                         float64
	Trial                      int
	// Prior names the prior-only attacker's η: "true" (the synthetic
	// data's), or the audit's η source, whose accuracy on the audit rows
	// then stands for the prior's on the members.
	Prior string
	// Rows members attacked: ModelAcc and PriorAcc the accuracies of the
	// model's and the prior's guesses; Adv = ModelAcc − PriorAcc ± AdvSE.
	Rows               int
	ModelAcc, PriorAcc float64
	Adv, AdvSE         float64
	// With the true η (else NaN): ReleaseAdv, the exact expected advantage
	// of the Bayes attacker who sees the release this model trained on, on
	// the same rows; Expected, that of the model's own guesses given the
	// release; Excess = Adv − Expected; Slack, the most Excess an honest
	// model shows at false-failure rate audit.GuardAlpha (the bracket:
	// Excess above it fails the audit); Z, Excess over its sd bound.
	ReleaseAdv, Expected float64
	Excess, Slack, Z     float64
	// The same attacker on NonmemberRows audit rows no model trained on.
	NonmemberRows                int
	NonmemberAcc                 float64
	NonmemberAdv, NonmemberAdvSE float64
}

var modelAttackSchema = schema[ModelAttack]{name: "model_attack", cols: []column[ModelAttack]{
	strCol("dataset", func(a *ModelAttack) *string { return &a.Dataset }),
	strCol("config_id", func(a *ModelAttack) *string { return &a.ConfigID }),
	strCol("setting", func(a *ModelAttack) *string { return &a.Setting }),
	kindCol("pet", func(a *ModelAttack) *pets.Kind { return &a.Pet }),
	nullIntCol("k", func(a *ModelAttack) *int { return &a.K }),
	nullF64Col("epsilon", func(a *ModelAttack) *float64 { return &a.Epsilon }),
	strCol("run_id", func(a *ModelAttack) *string { return &a.RunID }),
	f64Col("lr", func(a *ModelAttack) *float64 { return &a.LR }),
	intCol("trial", func(a *ModelAttack) *int { return &a.Trial }),
	strCol("prior", func(a *ModelAttack) *string { return &a.Prior }),
	intCol("rows", func(a *ModelAttack) *int { return &a.Rows }),
	f64Col("model_acc", func(a *ModelAttack) *float64 { return &a.ModelAcc }),
	f64Col("prior_acc", func(a *ModelAttack) *float64 { return &a.PriorAcc }),
	f64Col("model_adv", func(a *ModelAttack) *float64 { return &a.Adv }),
	f64Col("model_adv_se", func(a *ModelAttack) *float64 { return &a.AdvSE }),
	f64Col("release_adv", func(a *ModelAttack) *float64 { return &a.ReleaseAdv }),
	f64Col("expected", func(a *ModelAttack) *float64 { return &a.Expected }),
	f64Col("excess", func(a *ModelAttack) *float64 { return &a.Excess }),
	f64Col("slack", func(a *ModelAttack) *float64 { return &a.Slack }),
	f64Col("z", func(a *ModelAttack) *float64 { return &a.Z }),
	intCol("nonmember_rows", func(a *ModelAttack) *int { return &a.NonmemberRows }),
	f64Col("nonmember_acc", func(a *ModelAttack) *float64 { return &a.NonmemberAcc }),
	f64Col("model_adv_nonmember", func(a *ModelAttack) *float64 { return &a.NonmemberAdv }),
	f64Col("model_adv_nonmember_se", func(a *ModelAttack) *float64 { return &a.NonmemberAdvSE }),
}}

// ModelAttackTable converts per-run model attacks into model_attack.csv /
// .parquet, one row per run in the given order (columns in README's
// "The model attack").
func ModelAttackTable(as []ModelAttack) *data.Table {
	return modelAttackSchema.toTable(as, map[string]string{})
}

// ReadModelAttacks reads ModelAttackTable's output back.
func ReadModelAttacks(t *data.Table) ([]ModelAttack, error) {
	return modelAttackSchema.fromTable(t)
}
