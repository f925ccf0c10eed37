package main

import (
	"fmt"
	"io"
	"path/filepath"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/report"
)

// auditEta returns the attacker's η on the audit set (the first
// audit.examples test rows, disjoint from every model's training data) and
// its source: the true `eta` column, or the predictions of the clean model
// with the best mean test AUC (its trial 0).
func auditEta(cfg *Config, ds *data.Dataset, results []*runResult) ([]float64, string, error) {
	n := min(cfg.Audit.Examples, ds.Test.Rows)
	switch cfg.Audit.Eta {
	case "knn":
		return knnEta(cfg, ds, n)
	case "true":
		if ds.Test.Eta == nil {
			return nil, "", fmt.Errorf("audit.eta: true needs a synthetic dataset with an %q column; %s has none (use clean_model)", data.ColEta, ds.Dir)
		}
		return ds.Test.Eta[:n], "true", nil
	}
	runs := runsTable(results)
	summary, err := report.Summarize(runs, nil)
	if err != nil {
		return nil, "", err
	}
	var bestLR float64
	found := false
	for i, s := range summary.Columns[0].Values.([]string) {
		if s == "none" {
			bestLR = columnF(summary, "best_lr")[i]
			found = true
		}
	}
	if !found {
		return nil, "", fmt.Errorf("audit.eta: clean_model needs a clean model: add {mechanism: none} to pets")
	}
	for _, r := range results {
		if r.Pet == "none" && float64(r.LR) == bestLR && r.Trial == 0 {
			t, err := data.ReadTable(etaHatFile(cfg, r.RunID))
			if err != nil {
				return nil, "", fmt.Errorf("audit: η̂ of clean run %s: %w", r.RunID, err)
			}
			eta := columnF(t, "eta_hat")
			if len(eta) != ds.Test.Rows {
				return nil, "", fmt.Errorf("audit: %s has %d rows, the test set %d", etaHatFile(cfg, r.RunID), len(eta), ds.Test.Rows)
			}
			return eta[:n], fmt.Sprintf("clean_model(lr=%g)", bestLR), nil
		}
	}
	return nil, "", fmt.Errorf("audit: no trial-0 clean run at lr %g", bestLR)
}

// knnEta estimates η on the audit rows as the mean clean training label of
// their audit.knn_k nearest training rows (a seeded subsample of
// audit.knn_rows rows when the training set is larger).
func knnEta(cfg *Config, ds *data.Dataset, n int) ([]float64, string, error) {
	tr := ds.Train
	d := tr.Dim()
	if d == 0 || ds.Test.Dim() != d {
		return nil, "", fmt.Errorf("audit.eta: knn needs dense features in train and test (this dataset has %d)", d)
	}
	ref, labels := tr.X, tr.Label
	if tr.Rows > cfg.Audit.KNNRows {
		perm := pcg(deriveSeed(cfg.Seed, "knn"), 0).Perm(tr.Rows)[:cfg.Audit.KNNRows]
		sub := tr.Take(perm)
		ref, labels = sub.X, sub.Label
	}
	k := min(cfg.Audit.KNNK, len(labels))
	eta, err := audit.KNNEta(ref, labels, ds.Test.X[:n*d], d, k, 0)
	if err != nil {
		return nil, "", fmt.Errorf("audit: knn: %w", err)
	}
	return eta, fmt.Sprintf("knn(k=%d rows=%d)", k, len(labels)), nil
}

// columnF returns a float64 column by name (nil if absent).
func columnF(t *data.Table, name string) []float64 {
	for _, c := range t.Columns {
		if c.Name == name {
			v, _ := c.Values.([]float64)
			return v
		}
	}
	return nil
}

// auditStage computes the exact attack advantage of every PET setting on
// the audit set and writes audit.csv, audit.parquet and posteriors.parquet.
func auditStage(cfg *Config, ds *data.Dataset, settings []petSetting, results []*runResult, stdout io.Writer) (auditT, postT *data.Table, err error) {
	eta, source, err := auditEta(cfg, ds, results)
	if err != nil {
		return nil, nil, err
	}
	var (
		setting, pet, etaSrc, pset, ppet                        []string
		k, nEx, nDrop, pk                                       []int64
		eps, eadv, eadvSE, p50, p90, p98, p99, pmax, pinf, peps []float64
		prior, posterior, ieadv, absMA                          []float64
	)
	for _, s := range settings {
		m, err := s.mechanism(false)
		if err != nil {
			return nil, nil, err
		}
		res, err := audit.Run(eta, m, audit.Options{Seed: deriveSeed(cfg.Seed, "audit", s.ID()), LabelDraws: cfg.Audit.LabelDraws, MaxSamples: cfg.Audit.Samples})
		if err != nil {
			return nil, nil, fmt.Errorf("audit %s: %w", s.ID(), err)
		}
		sm := res.Summary
		setting, pet, etaSrc = append(setting, s.ID()), append(pet, s.Kind.String()), append(etaSrc, source)
		k, eps = append(k, int64(s.K)), append(eps, s.Epsilon)
		nEx, nDrop = append(nEx, int64(sm.NExamples)), append(nDrop, int64(sm.NDropped))
		eadv, eadvSE = append(eadv, sm.EAdv), append(eadvSE, sm.EAdvSE)
		p50, p90, p98, p99 = append(p50, sm.MAP50), append(p90, sm.MAP90), append(p98, sm.MAP98), append(p99, sm.MAP99)
		pmax, pinf = append(pmax, sm.MAMax), append(pinf, sm.MAInfFrac)
		for _, x := range res.Samples {
			pset, ppet, pk, peps = append(pset, s.ID()), append(ppet, s.Kind.String()), append(pk, int64(s.K)), append(peps, s.Epsilon)
			prior, posterior, ieadv, absMA = append(prior, x.Prior), append(posterior, x.Posterior), append(ieadv, x.IEAdv), append(absMA, x.AbsMA)
		}
		fmt.Fprintf(stdout, "audit: %-22s EAdv %.5f ± %.5f  |MA| p98 %.3g  ∞ %.1f%%  (%d examples, η: %s)\n",
			s.ID(), sm.EAdv, sm.EAdvSE, sm.MAP98, 100*sm.MAInfFrac, sm.NExamples, source)
	}
	md := map[string]string{"tool": version, "eta_source": source}
	auditT = &data.Table{Meta: md, Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "pet", Values: pet}, {Name: "k", Values: k}, {Name: "epsilon", Values: eps},
		{Name: "eta_source", Values: etaSrc}, {Name: "n_examples", Values: nEx}, {Name: "n_dropped", Values: nDrop},
		{Name: "eadv", Values: eadv}, {Name: "eadv_se", Values: eadvSE},
		{Name: "ma_p50", Values: p50}, {Name: "ma_p90", Values: p90}, {Name: "ma_p98", Values: p98}, {Name: "ma_p99", Values: p99},
		{Name: "ma_max", Values: pmax}, {Name: "ma_inf_frac", Values: pinf},
	}}
	postT = &data.Table{Meta: md, Columns: []data.Column{
		{Name: "setting", Values: pset}, {Name: "pet", Values: ppet}, {Name: "k", Values: pk}, {Name: "epsilon", Values: peps},
		{Name: "prior", Values: prior}, {Name: "posterior", Values: posterior}, {Name: "ieadv", Values: ieadv}, {Name: "abs_ma", Values: absMA},
	}}
	if err := auditT.WriteCSV(filepath.Join(cfg.Output, "audit.csv")); err != nil {
		return nil, nil, err
	}
	if err := auditT.WriteParquet(filepath.Join(cfg.Output, "audit.parquet")); err != nil {
		return nil, nil, err
	}
	if err := postT.WriteParquet(filepath.Join(cfg.Output, "posteriors.parquet")); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(stdout, "audit: wrote %s, %s, %s\n", filepath.Join(cfg.Output, "audit.csv"),
		filepath.Join(cfg.Output, "audit.parquet"), filepath.Join(cfg.Output, "posteriors.parquet"))
	return auditT, postT, nil
}

// reportStage writes summary.csv/.parquet, the plots and report.md.
func reportStage(cfg *Config, runs, auditT, postT *data.Table, stdout io.Writer) error {
	var audits []*data.Table
	if auditT != nil {
		audits = append(audits, auditT)
	}
	summary, err := report.Summarize(runs, audits)
	if err != nil {
		return err
	}
	if err := summary.WriteCSV(filepath.Join(cfg.Output, "summary.csv")); err != nil {
		return err
	}
	if err := summary.WriteParquet(filepath.Join(cfg.Output, "summary.parquet")); err != nil {
		return err
	}
	figDir := filepath.Join(cfg.Output, "figures")
	figs, err := report.WritePlots(figDir, summary, postT)
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.Output, "report.md")
	if err := report.WriteMarkdown(path, report.Markdown{Title: "labelprivacy report: " + cfg.Name, Summary: summary, Figures: figs}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: wrote %s, %s, %d figures under %s\n", filepath.Join(cfg.Output, "summary.csv"), path, len(figs), figDir)
	return nil
}
