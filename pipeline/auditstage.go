package pipeline

import (
	"context"
	"fmt"
	"math/rand/v2"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// Audit computes, per PET setting, the exact advantage of the Bayes-optimal
// label-inference attacker (Section 3) on the audit set — the first
// audit.examples test rows, which no model trained on — with η from the
// source audit.eta names; runs are the fit stage's results (for η̂). It
// writes audit.csv, audit.parquet and posteriors.parquet.
func Audit(ctx context.Context, s *Session, runs []report.Run) ([]report.Audit, []report.Posterior, error) {
	eta, source, err := s.auditEta(runs)
	if err != nil {
		return nil, nil, err
	}
	var audits []report.Audit
	var post []report.Posterior
	for i, set := range s.Settings {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s.ev.Progress(Progress{Stage: "audit", What: set.ID, UnitsDone: i, Units: len(s.Settings)})
		opts := audit.Options{Seed: DeriveSeed(s.Cfg.Seed, "audit", set.ID),
			LabelDraws: s.Cfg.Audit.LabelDraws, MaxSamples: s.Cfg.Audit.Samples}
		if err := s.mechanismAuditOptions(set, len(eta), &opts); err != nil {
			return nil, nil, fmt.Errorf("audit %s: %w", set.ID, err)
		}
		res, err := audit.Run(eta, set.Mech, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("audit %s: %w", set.ID, err)
		}
		a := report.Audit{Dataset: s.DatasetID, ConfigID: s.ConfigID, Setting: set.ID, Pet: set.Kind, K: set.K, Epsilon: set.Epsilon,
			EtaSource: source, Summary: res.Summary}
		audits = append(audits, a)
		for _, x := range res.Samples {
			post = append(post, report.Posterior{Dataset: s.DatasetID, ConfigID: s.ConfigID, Setting: set.ID, Pet: a.Pet, K: set.K, Epsilon: set.Epsilon, Sample: x})
		}
		sm := res.Summary
		s.ev.Info("audit", fmt.Sprintf("%-22s EAdv %.5f ± %.5f  |MA| p98 %.3g  ∞ %.1f%%  (%d examples, η: %s)",
			set.ID, sm.EAdv, sm.EAdvSE, sm.MAP98, 100*sm.MAInfFrac, sm.NExamples, source))
	}
	at := report.AuditTable(audits)
	for _, w := range []func() error{
		func() error { return at.WriteCSV(s.Out("audit.csv")) },
		func() error { return at.WriteParquet(s.Out("audit.parquet")) },
		func() error { return report.PosteriorTable(post).WriteParquet(s.Out("posteriors.parquet")) },
	} {
		if err := w(); err != nil {
			return nil, nil, err
		}
	}
	s.ev.Info("audit", fmt.Sprintf("wrote %s, %s, %s", s.Out("audit.csv"), s.Out("audit.parquet"), s.Out("posteriors.parquet")))
	return audits, post, nil
}

// auditEta returns the attacker's η on the audit set and its source: the
// true synthetic η, a kNN estimate, or the test predictions of the clean
// model with the best mean test AUC (its first trial), chosen from the
// runs by the paper's reporting rule (report.BestLR).
func (s *Session) auditEta(runs []report.Run) ([]float64, string, error) {
	n := min(s.Cfg.Audit.Examples, s.Test.Rows)
	switch s.Cfg.Audit.Eta {
	case EtaKNN:
		return s.knnEta(n)
	case EtaTrue:
		if s.Test.Eta == nil {
			return nil, "", fmt.Errorf("audit.eta: true needs a synthetic dataset with an %q column; %s has none (use clean_model)", data.ColEta, s.Dataset.Dir)
		}
		return s.Test.Eta[:n], "true", nil
	}
	hasClean := false
	for _, set := range s.Settings {
		hasClean = hasClean || set.Kind == pets.None
	}
	if !hasClean {
		return nil, "", fmt.Errorf("audit.eta: clean_model needs a clean model: add {mechanism: none} to pets (or use audit.eta: true or knn)")
	}
	best, ok := report.BestLR(runs)[report.SettingKey{Dataset: s.DatasetID, ConfigID: s.ConfigID, Setting: "none"}]
	if !ok {
		return nil, "", fmt.Errorf("audit.eta: clean_model: no finished clean run yet; run `train fit -c CONFIG` (or `train sweep`) before `train audit`")
	}
	var pick *report.Run
	for i := range runs {
		r := &runs[i]
		if r.Dataset == s.DatasetID && r.ConfigID == s.ConfigID && r.Setting == "none" && r.LR == best.LR &&
			(pick == nil || r.Trial < pick.Trial) {
			pick = r
		}
	}
	if pick == nil {
		return nil, "", fmt.Errorf("audit.eta: clean_model: no finished clean run at lr=%g", best.LR)
	}
	eta, err := Store{Dir: s.Cfg.Output}.etaHat(pick.RunID)
	if err != nil {
		return nil, "", fmt.Errorf("audit: η̂ of clean run %s: %w", pick.RunID, err)
	}
	if len(eta) != s.Test.Rows {
		return nil, "", fmt.Errorf("audit: η̂ of clean run %s has %d rows, the test set %d", pick.RunID, len(eta), s.Test.Rows)
	}
	return eta[:n], fmt.Sprintf("clean_model(lr=%g)", best.LR), nil
}

// knnEta estimates η on the audit rows as the mean clean training label of
// their audit.knn_k nearest training rows (a seeded subsample of
// audit.knn_rows rows when the training set is larger), on the features
// the models see (standardized when data.standardize is on).
func (s *Session) knnEta(n int) ([]float64, string, error) {
	tr := s.Train
	d := tr.Dim()
	if d == 0 || s.Test.Dim() != d {
		return nil, "", fmt.Errorf("audit.eta: knn needs dense features in train and test (this dataset has %d)", d)
	}
	ref, labels := tr.X, tr.Label
	if tr.Rows > s.Cfg.Audit.KNNRows {
		perm := rand.New(rand.NewPCG(DeriveSeed(s.Cfg.Seed, "knn"), 0)).Perm(tr.Rows)[:s.Cfg.Audit.KNNRows]
		sub := tr.Take(perm)
		ref, labels = sub.X, sub.Label
	}
	k := min(s.Cfg.Audit.KNNK, len(labels))
	eta, err := audit.KNNEta(ref, labels, s.Test.X[:n*d], d, k, 0)
	if err != nil {
		return nil, "", fmt.Errorf("audit: knn: %w", err)
	}
	return eta, fmt.Sprintf("knn(k=%d rows=%d)", k, len(labels)), nil
}
