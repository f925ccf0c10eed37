package pipeline

import (
	"fmt"
	"math"

	"labelprivacy/internal/stats"
	"labelprivacy/model"
	"labelprivacy/report"
)

// result fills the identity fields of r's result.
func (f *fitter) result(r *runSpec, groupSize int) *report.Run {
	s := f.s
	res := &report.Run{RunID: r.ID, Dataset: s.datasetID, ConfigID: s.configID, Model: s.cfg.Model.Kind.String(),
		Setting: r.Setting.ID, Pet: r.Setting.Kind, K: r.Setting.K, Epsilon: r.Setting.Epsilon, Bags: bagsName(r.Setting),
		LabelDPEpsilon: r.Setting.Mech.Epsilon(), LR: r.LR, Trial: r.Trial, Seed: r.Seed, Epochs: s.cfg.Train.Epochs,
		Backend: s.cfg.Backend.String(), Replicas: groupSize, TrainLoss: math.NaN(), Matmul: s.cfg.Backend.Matmul(),
		Classes: s.classes(), TestAccuracy: math.NaN(),
		ConfigName: s.cfg.Name, Config: configKeys(s.cfg)}
	prov := s.provenance()
	res.Provenance = &prov
	if r.Plan.Loss != 0 {
		res.Loss = r.Plan.Loss.String()
	} else {
		res.Loss = "constant"
	}
	if s.std != nil {
		res.Standardization = &report.Standardization{Mean: s.std.Mean, Std: s.std.Std}
	}
	return res
}

// constantRuns stores bot's results: ⊥ releases nothing, so the best model
// is a constant score (AUC ½; on C classes the uniform distribution, whose
// argmax is class 0); nothing is trained.
func (f *fitter) constantRuns(runs []*runSpec) ([]*report.Run, error) {
	c := f.s.classes()
	probs := make([]float32, len(f.s.test.Label)*heads(c))
	for i := range probs {
		probs[i] = 1 / float32(max(c, 2))
	}
	if f.s.values() {
		probs = nil // scoreValues: the training mean
	}
	var out []*report.Run
	for _, r := range runs {
		res := f.result(r, 1)
		f.s.score(res, probs, r.Plan)
		out = append(out, res)
	}
	if err := f.st.PutAll(out); err != nil {
		return nil, err
	}
	for i, r := range runs {
		f.report(r, out[i])
	}
	return out, nil
}

func (f *fitter) report(spec *runSpec, r *report.Run) {
	loss := fmt.Sprintf("%.4f", r.TrainLoss)
	if math.Abs(r.TrainLoss) >= 1e4 {
		loss = fmt.Sprintf("%.3g", r.TrainLoss)
	}
	score := fmt.Sprintf("test AUC %.4f", r.TestAUC)
	if r.OfValues() {
		score = fmt.Sprintf("test MSE %.2f  R² %.4f", r.TestMSE, r.TestR2)
	} else if r.NumClasses() >= 3 {
		score = fmt.Sprintf("test accuracy %.4f  macro AUC %.4f", r.TestAccuracy, r.TestAUC)
	}
	what := fmt.Sprintf("%s  loss %s  %.0f ex/s", score, loss, r.ExamplesPerS)
	if r.Loss == "constant" {
		what = score + "  constant predictor (⊥ releases nothing; no training)"
	}
	f.ev.Info("fit", fmt.Sprintf("[%d/%d] %-22s lr=%-8g trial=%d  %s", spec.Index+1, len(f.s.runs), r.Setting, r.LR, r.Trial, what))
}

// heads is the number of predicted values per test row of a model on c
// classes: P(y = 1) for binary labels, C probabilities otherwise.
func heads(c int) int {
	if c >= 3 {
		return c
	}
	return 1
}

// testScore is a model's test metrics.
type testScore struct{ auc, logLoss, accuracy float64 }

// scoreTest scores test-set predictions (Group.Predict's layout) against
// the test labels: for binary labels the AUC, the log-loss and the
// accuracy of predicting 1 where P(y = 1 | x) > ½; on C ≥ 3 classes the
// macro one-vs-rest AUC, the cross-entropy −log p_y and the accuracy of the
// most probable class (model.MacroAUC, CrossEntropy, Accuracy).
func (s *Session) scoreTest(probs []float32) testScore {
	labels := s.test.Label
	if c := s.classes(); c >= 3 {
		return testScore{model.MacroAUC(probs, c, labels), model.CrossEntropy(probs, c, labels), model.Accuracy(probs, c, labels)}
	}
	hits := 0
	for i, p := range probs {
		if (p > 0.5) == (labels[i] == 1) {
			hits++
		}
	}
	acc := math.NaN()
	if len(labels) > 0 {
		acc = float64(hits) / float64(len(labels))
	}
	return testScore{stats.AUC(probs, labels), model.LogLoss(probs, labels), acc}
}

// score fills a result's test metrics from its test-set predictions (of
// values: scoreValues, by the run's plan).
func (s *Session) score(res *report.Run, probs []float32, plan trainPlan) {
	if s.values() {
		s.scoreValues(res, probs, plan)
		return
	}
	res.TestMSE, res.TestR2, res.TestMAE = math.NaN(), math.NaN(), math.NaN()
	t := s.scoreTest(probs)
	res.TestAUC, res.TestLogLoss, res.TestAccuracy = t.auc, t.logLoss, t.accuracy
}

// writeRunTables writes runs.csv and runs.parquet.
func writeRunTables(s *Session, runs []report.Run) error {
	if len(runs) == 0 {
		return fmt.Errorf("fit: no finished runs")
	}
	t := report.RunsTable(runs)
	if err := t.WriteCSV(s.Out("runs.csv")); err != nil {
		return err
	}
	if err := t.WriteParquet(s.Out("runs.parquet")); err != nil {
		return err
	}
	c := report.CurveTable(runs)
	if err := c.WriteCSV(s.Out("learning_curves.csv")); err != nil {
		return err
	}
	if err := c.WriteParquet(s.Out("learning_curves.parquet")); err != nil {
		return err
	}
	s.ev.Info("fit", fmt.Sprintf("wrote %s, %s, %s", s.Out("runs.csv"), s.Out("runs.parquet"), s.Out("learning_curves.csv")))
	return nil
}
