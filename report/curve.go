package report

import (
	"encoding/json"
	"math"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// EpochPoint is one point of a run's learning curve: the mean training
// loss over epoch Epoch (1-based) and the test metrics of the model at its
// end, as in Run (TestAUC the macro one-vs-rest AUC for C ≥ 3); NaN where
// not measured (kdd_embed with host embedding tables; TestAccuracy in
// records written before it existed).
type EpochPoint struct {
	Epoch                           int
	TrainLoss, TestAUC, TestLogLoss float64
	TestAccuracy                    float64
}

type epochPointJSON struct {
	Epoch        int    `json:"epoch"`
	TrainLoss    jfloat `json:"train_loss"`
	TestAUC      jfloat `json:"test_auc"`
	TestLogLoss  jfloat `json:"test_logloss"`
	TestAccuracy jfloat `json:"test_accuracy"`
}

// MarshalJSON writes the point with runs.csv's column names, non-finite
// numbers as "nan", "inf", "-inf".
func (p EpochPoint) MarshalJSON() ([]byte, error) {
	return json.Marshal(epochPointJSON{p.Epoch, jfloat(p.TrainLoss), jfloat(p.TestAUC), jfloat(p.TestLogLoss), jfloat(p.TestAccuracy)})
}

// UnmarshalJSON reads MarshalJSON's form; a missing test_accuracy (a
// record written before it existed) reads as NaN.
func (p *EpochPoint) UnmarshalJSON(b []byte) error {
	j := epochPointJSON{TestAccuracy: jfloat(math.NaN())}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = EpochPoint{j.Epoch, float64(j.TrainLoss), float64(j.TestAUC), float64(j.TestLogLoss), float64(j.TestAccuracy)}
	return nil
}

// curveRow is one row of learning_curves.csv: a run's identity and one
// epoch of its curve.
type curveRow struct {
	RunID, Setting string
	Pet            pets.Kind
	K              int
	Epsilon, LR    float64
	Trial          int
	EpochPoint
}

var curveSchema = schema[curveRow]{name: "learning_curves", cols: []column[curveRow]{
	strCol("run_id", func(r *curveRow) *string { return &r.RunID }),
	strCol("setting", func(r *curveRow) *string { return &r.Setting }),
	kindCol("pet", func(r *curveRow) *pets.Kind { return &r.Pet }),
	nullIntCol("k", func(r *curveRow) *int { return &r.K }),
	nullF64Col("epsilon", func(r *curveRow) *float64 { return &r.Epsilon }),
	f64Col("lr", func(r *curveRow) *float64 { return &r.LR }),
	intCol("trial", func(r *curveRow) *int { return &r.Trial }),
	intCol("epoch", func(r *curveRow) *int { return &r.Epoch }),
	f64Col("train_loss", func(r *curveRow) *float64 { return &r.TrainLoss }),
	f64Col("test_auc", func(r *curveRow) *float64 { return &r.TestAUC }),
	f64Col("test_logloss", func(r *curveRow) *float64 { return &r.TestLogLoss }),
	opt(f64Col("test_accuracy", func(r *curveRow) *float64 { return &r.TestAccuracy })),
}}

// CurveTable converts the runs' learning curves (Run.Curve) into
// learning_curves.csv / learning_curves.parquet, one row per run and epoch
// in the given order, with curveSchema's columns (listed in README's
// "Training"). Runs without a curve (bot, results written before curves
// were recorded) have no rows.
func CurveTable(runs []Run) *data.Table {
	var rows []curveRow
	for _, r := range runs {
		for _, p := range r.Curve {
			rows = append(rows, curveRow{RunID: r.RunID, Setting: r.Setting, Pet: r.Pet, K: r.K, Epsilon: r.Epsilon, LR: r.LR, Trial: r.Trial, EpochPoint: p})
		}
	}
	return curveSchema.toTable(rows, map[string]string{})
}
