package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"time"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/llp"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/release"
	"labelprivacy/report"
)

// Audit computes, per PET setting, the exact advantage of the Bayes-optimal
// label-inference attacker (Section 3) on the audit set — the first
// audit.examples test rows, which no model trained on — with η from the
// source audit.eta names; runs are the fit stage's results (for η̂). With
// audit.realized_draws > 0 it also attacks that many releases of the audit
// labels drawn through the production release code (release.Apply, as
// `privatize` and simulation releases use it) and audit.canaries canary
// trials, and fails when those releases disagree with the mechanism's
// stated likelihood (audit.SamplerError). The next audit.calibration_rows
// test rows measure η's calibration and recalibrate it. It writes
// audit.csv, audit.parquet, posteriors.parquet (and posteriors.csv, up to
// maxPosteriorCSVRows rows) and calibration.csv/.parquet,
// and returns them for Report.
func Audit(ctx context.Context, s *Session, runs []report.Run) (*Audited, error) {
	if s.values() {
		return s.auditValues(ctx, runs)
	}
	cfg := s.cfg.Audit
	n := min(cfg.Examples, s.test.Rows)
	calN := min(cfg.CalibrationRows, s.test.Rows-n)
	m := s.startMeter(Progress{Stage: "audit", What: fmt.Sprintf("η (%s) of %d rows", cfg.Eta, n+calN), Units: len(s.settings)})
	defer m.Stop()
	etaAll, source, err := s.auditEta(runs, n+calN)
	if err != nil {
		return nil, err
	}
	w := heads(s.classes()) // η values per example: 1, or C
	eta := etaAll[:n*w]
	q, err := s.etaQuality(runs, etaAll, n, calN, source)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	models, err := s.newModelAudit(eta, source)
	if err != nil {
		return nil, err
	}
	defer models.Close()
	var audits []report.Audit
	var post []report.Posterior
	for i, set := range s.settings {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.Unit(set.ID, i)
		a, res, err := s.auditSetting(set, eta, n, calN, source, q, m)
		if err != nil {
			return nil, err
		}
		audits = append(audits, a)
		for _, x := range res.Samples {
			post = append(post, report.Posterior{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID, Pet: a.Pet, K: set.K, Epsilon: set.Epsilon, Sample: x})
		}
		sm := res.Summary
		s.ev.Info("audit", auditLine(set.ID, sm, a, source))
		if err := models.setting(ctx, s, set, runs, &audits[len(audits)-1]); err != nil {
			return nil, err
		}
		if sm.EpsLower > sm.Epsilon {
			s.ev.Warn("audit", fmt.Sprintf("%s: the 95%% canary bound ε ≥ %.3g exceeds ε = %g, which a mechanism as tight as rr "+
				"shows in just under 5%% of audits; the bound at confidence 1 − %g (the check that fails an audit) stays below ε",
				set.ID, sm.EpsLower, sm.Epsilon, audit.GuardAlpha))
		}
	}
	var cals []report.Calibration
	if q.cal != nil {
		cals = append(cals, report.Calibration{Dataset: s.datasetID, ConfigID: s.configID, EtaSource: source, Calibration: *q.cal})
	}
	if err := s.writeAudited(audits, post, cals); err != nil {
		return nil, err
	}
	if err := models.finish(s, time.Since(started)); err != nil {
		return nil, err
	}
	return &Audited{Audits: audits, Posteriors: post, Calibration: cals}, nil
}

// auditSetting audits setting set on the audit rows' η (η from source,
// of the first n test rows; calN calibration rows after them): the exact
// advantage and, with audit.realized_draws > 0, the realized releases and
// canaries; the setting's accuracies (summaryAccuracy); and EAdv under
// the other η of q (otherEtaAdv). res holds the summary and samples.
func (s *Session) auditSetting(set *setting, eta []float64, n, calN int, source string, q etaQuality, m *meter) (report.Audit, *audit.Result, error) {
	cfg := s.cfg.Audit
	seed := deriveSeed(s.cfg.Seed, "audit", set.ID)
	opts := audit.Options{Seed: seed, LabelDraws: cfg.LabelDraws, MaxSamples: cfg.Samples, Progress: m}
	part, err := s.mechanismAuditOptions(set, n, &opts)
	if err != nil {
		return report.Audit{}, nil, fmt.Errorf("audit %s: %w", set.ID, err)
	}
	if cfg.RealizedDraws > 0 {
		opts.Sampler, opts.Draws, opts.Canaries = s.auditSampler(part, opts.Prior), cfg.RealizedDraws, cfg.Canaries
	}
	res, err := runAudit(eta, set.Mech, opts)
	if err != nil {
		return report.Audit{}, nil, fmt.Errorf("audit %s: %w", set.ID, err)
	}
	a := report.Audit{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID, Pet: set.Kind, K: set.K, Epsilon: set.Epsilon,
		EtaSource: source, Summary: res.Summary, CalibrationRows: calN, EtaECE: math.NaN(), EtaBrier: math.NaN(),
		EtaTrials: len(q.trials)}
	if q.cal != nil {
		a.EtaECE, a.EtaBrier = q.cal.ECE, q.cal.Brier
	}
	if err := s.summaryAccuracy(set, &a); err != nil {
		return report.Audit{}, nil, err
	}
	if err := otherEtaAdv(set, audit.Options{Seed: seed, LabelDraws: 1, Bags: opts.Bags, Prior: opts.Prior}, q, m, &a); err != nil {
		return report.Audit{}, nil, err
	}
	return a, res, nil
}

// otherEtaAdv sets a's EAdv of the same partition (the same bags;
// rr_prior's same priors, in exact) under q's other η, exact, no sampler:
// the calibrated η, the true η (NaN without one) and the min and max over
// the trials' η̂ (NaN with one trial).
func otherEtaAdv(set *setting, exact audit.Options, q etaQuality, m *meter, a *report.Audit) error {
	other := func(e []float64, which string) (float64, error) {
		if e == nil {
			return math.NaN(), nil
		}
		exact.Progress = taggedPasses{m, which}
		r, err := runAudit(e, set.Mech, exact)
		if err != nil {
			return 0, fmt.Errorf("audit %s: %w", set.ID, err)
		}
		return r.EAdv, nil
	}
	var err error
	if a.EAdvCalibrated, err = other(q.calibrated, "calibrated η"); err != nil {
		return err
	}
	if a.EAdvTrue, err = other(q.truth, "true η"); err != nil {
		return err
	}
	a.EAdvTrialMin, a.EAdvTrialMax = math.NaN(), math.NaN()
	if len(q.trials) > 1 {
		a.EAdvTrialMin, a.EAdvTrialMax = math.Inf(1), math.Inf(-1)
		for t, e := range q.trials {
			v, err := other(e, fmt.Sprintf("trial %d's η̂", t))
			if err != nil {
				return err
			}
			a.EAdvTrialMin, a.EAdvTrialMax = math.Min(a.EAdvTrialMin, v), math.Max(a.EAdvTrialMax, v)
		}
	}
	return nil
}

// auditLine is a setting's audit line: EAdv ± SE, |MA|'s p98 and share
// ∞ (%), and where measured the realized gain, the ε-DP worst case,
// RMSRE and the canaries' ε lower bound.
func auditLine(id string, sm audit.Summary, a report.Audit, source string) string {
	line := fmt.Sprintf("%-22s EAdv %.5f ± %.5f  |MA| p98 %.3g  ∞ %.1f%%  (%d examples, η: %s)",
		id, sm.EAdv, sm.EAdvSE, sm.MAP98, 100*sm.MAInfFrac, sm.NExamples, source)
	if !math.IsNaN(sm.RealizedGain) {
		line += fmt.Sprintf("; realized %.5f ± %.5f over %s", sm.RealizedGain, sm.RealizedGainSE, english.Count(sm.RealizedDraws, "release"))
	}
	if !math.IsNaN(sm.EAdvBound) {
		line += fmt.Sprintf("; ε-DP worst case %.5f", sm.EAdvBound)
	}
	if !math.IsNaN(a.RMSRE) {
		line += fmt.Sprintf("; RMSRE_5 %.4g over %d keys (expected %.4g)", a.RMSRE, a.RMSREKeys, a.RMSREExpected)
	}
	if !math.IsNaN(sm.EpsLower) {
		line += fmt.Sprintf("; ε ≥ %.3g (95%%, %d canaries", sm.EpsLower, sm.Canaries)
		if !math.IsNaN(sm.EpsLowerRealBags) {
			line += fmt.Sprintf("; among real bag-mates ε ≥ %.3g", sm.EpsLowerRealBags)
		}
		line += ")"
	}
	return line
}

// writeAudited writes audit.csv/.parquet, posteriors.parquet (and .csv,
// up to maxPosteriorCSVRows rows) and calibration.csv/.parquet, and says so.
func (s *Session) writeAudited(audits []report.Audit, post []report.Posterior, cals []report.Calibration) error {
	at, ct := report.AuditTable(audits), report.CalibrationTable(cals)
	for _, w := range []func() error{
		func() error { return at.WriteCSV(s.Out("audit.csv")) },
		func() error { return at.WriteParquet(s.Out("audit.parquet")) },
		func() error { return report.PosteriorTable(post).WriteParquet(s.Out("posteriors.parquet")) },
		func() error { return s.writePosteriorsCSV(post) },
		func() error { return ct.WriteCSV(s.Out("calibration.csv")) },
		func() error { return ct.WriteParquet(s.Out("calibration.parquet")) },
	} {
		if err := w(); err != nil {
			return err
		}
	}
	posts := s.Out("posteriors.parquet")
	if len(post) <= maxPosteriorCSVRows {
		posts += ", " + s.Out("posteriors.csv")
	}
	s.ev.Info("audit", fmt.Sprintf("wrote %s, %s, %s, %s", s.Out("audit.csv"), s.Out("audit.parquet"), posts, s.Out("calibration.csv")))
	return nil
}

// Audited is the audit stage's result and the report stage's input: per
// setting the exact advantage (with the realized attack and the canaries'
// bound when drawn), the (prior, posterior) samples for the figures, and
// the reliability of the attacker's η on the calibration rows (empty when
// none were measured).
type Audited struct {
	Audits      []report.Audit
	Posteriors  []report.Posterior
	Calibration []report.Calibration
	// ValuePosteriors are the samples of an audit of conversion values.
	ValuePosteriors []report.ValuePosterior
}

// checkAuditable refuses a grid with a setting the exact audit cannot take:
// on c ≥ 3 classes, bags of k whose count-vector program exceeds
// audit.MaxBagWork (C = 10: k ≤ 13), naming the setting and the largest k
// it takes. It needs the settings and c only: open calls it before the
// output is locked or anything written.
func checkAuditable(settings []*setting, c int) error {
	if c < 3 {
		return nil
	}
	for _, set := range settings {
		if !set.Kind.IsLLP() || audit.BagWorkC(c, set.K) <= audit.MaxBagWork {
			continue
		}
		kMax := set.K
		for kMax > 1 && audit.BagWorkC(c, kMax) > audit.MaxBagWork {
			kMax--
		}
		return &config.FieldError{Key: "pets", Msg: fmt.Sprintf("%s: the exact audit of bags of k = %d on %d classes is beyond its "+
			"bound (its count-vector program would take %.3g operations per bag, more than %d); on %d classes it takes k ≤ %d "+
			"(train fit trains any k)", set.ID, set.K, c, audit.BagWorkC(c, set.K), audit.MaxBagWork, c, kMax)}
	}
	return nil
}

// runAudit is audit.Run on binary labels (eta: P(y = 1 | x) per example)
// and audit.RunC on C ≥ 3 classes (eta: C values per example, row-major;
// the sampler, the releaseSampler, serves both), with the same options.
func runAudit(eta []float64, m *pets.Mechanism, o audit.Options) (*audit.Result, error) {
	if m.Classes() < 3 {
		return audit.Run(eta, m, o)
	}
	oc := audit.OptionsC{Seed: o.Seed, LabelDraws: o.LabelDraws, MaxSamples: o.MaxSamples, Workers: o.Workers,
		Draws: o.Draws, Canaries: o.Canaries, Bags: o.Bags, Prior: o.Prior, Progress: o.Progress}
	if o.Sampler != nil {
		sc, ok := o.Sampler.(audit.SamplerC)
		if !ok {
			return nil, fmt.Errorf("audit: the sampler %T releases binary labels only", o.Sampler)
		}
		oc.Sampler = sc
	}
	return audit.RunC(eta, m, oc)
}

// auditSampler returns the sampler the audit attacks for one setting: the
// production release path, with the setting's bag rule on the audit rows
// (part; nil: random bags) and, for rr_prior, the audit rows' public
// priors; or what the session's newSampler makes (a test's sampler at 4ε
// must fail the audit; no config option sets it).
func (s *Session) auditSampler(part llp.Partitioner, prior []float64) audit.Sampler {
	if s.newSampler != nil {
		return s.newSampler(part, prior)
	}
	return releaseSampler{keepRemainder: s.cfg.Privacy.KeepRemainder, partition: part, prior: prior}
}

// releaseSampler releases through the code `privatize` and the training
// releases run: release.Apply with simulation noise, privacy.keep_remainder
// and the setting's bag rule, or, for rr_prior, release.ApplyRRPrior (the
// per-row law of its second stage) with the given priors.
type releaseSampler struct {
	keepRemainder bool
	partition     llp.Partitioner
	prior         []float64
}

func (p releaseSampler) Release(labels []uint8, m *pets.Mechanism, seed uint64) (*audit.Released, error) {
	f, rows, err := p.release(labels, m, seed)
	if err != nil {
		return nil, err
	}
	return &audit.Released{Row: rows, Label: f.LabelRR, Bag: f.BagID, Alpha: f.Alpha}, nil
}

// ReleaseC is Release on labels of C classes: the same production code
// (release.Apply, or release.ApplyRRPrior with the audit rows' priors over
// the classes) through the mechanism m is the law of, its C-class columns
// read back (alpha_1 … alpha_{C−1} of the LLP family, not their targets).
func (p releaseSampler) ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*audit.ReleasedC, error) {
	f, rows, err := p.release(labels, m, seed)
	if err != nil {
		return nil, err
	}
	return &audit.ReleasedC{Row: rows, Label: f.LabelRR, Bag: f.BagID, Alpha: f.AlphaC}, nil
}

// release makes the simulation release of labels and returns its frame
// and each release row's audit example.
func (p releaseSampler) release(labels []uint8, m *pets.Mechanism, seed uint64) (*data.Frame, []int, error) {
	o := release.Options{Noise: pets.NoiseSimulation, Seed: seed, KeepRemainder: p.keepRemainder, Partition: p.partition}
	var rel *release.Release
	var err error
	if m.Spec().Release.WithPrior() {
		rel, err = release.ApplyRRPrior(labels, p.prior, m, o)
	} else {
		rel, err = release.Apply(labels, m, o)
	}
	if err != nil {
		return nil, nil, err
	}
	f := rel.Simulation()
	rows := make([]int, len(f.Row))
	for i, r := range f.Row {
		rows[i] = int(r)
	}
	return f, rows, nil
}

// etaQuality is what the audit learns about its η besides the audit set.
type etaQuality struct {
	cal        *audit.Calibration // reliability on the calibration rows (nil: none)
	calibrated []float64          // η on the audit set, Platt-recalibrated (nil: not applicable)
	truth      []float64          // the true η on the audit set when the audit used an estimate (nil otherwise)
	trials     [][]float64        // clean_model: each best-LR clean trial's η̂ on the audit set
}

// etaQuality measures η (the first n+calN test rows of it in etaAll) on
// the calibration rows n..n+calN against the test labels, fits Platt
// there, and gathers the true η and the clean trials' η̂.
func (s *Session) etaQuality(runs []report.Run, etaAll []float64, n, calN int, source string) (etaQuality, error) {
	var q etaQuality
	isTrue := s.cfg.Audit.Eta == config.EtaTrue
	c := s.classes()
	w := heads(c)
	if s.test.Eta != nil && !isTrue {
		q.truth = s.test.Eta[:n]
	}
	if s.test.EtaC != nil && !isTrue {
		q.truth = s.test.EtaC[:n*c]
	}
	switch {
	case calN > 0 && c >= 3:
		// Top-label calibration: the probability η gives its most likely
		// class against whether that class is the label. There is no
		// C-class Platt scaling here: η stays as it is.
		conf, hits := make([]float64, calN), make([]uint8, calN)
		for i := range calN {
			row := etaAll[(n+i)*c : (n+i+1)*c]
			best := 0
			for y, p := range row {
				if p > row[best] {
					best = y
				}
			}
			conf[i] = row[best]
			if int(s.test.Label[n+i]) == best {
				hits[i] = 1
			}
		}
		cal, err := audit.Reliability(conf, hits, 10)
		if err != nil {
			return q, fmt.Errorf("audit: calibration rows: %w", err)
		}
		q.cal = cal
		s.ev.Info("audit", fmt.Sprintf("η (%s) on %d calibration rows (test rows %d–%d), top-label (its most likely class's "+
			"probability against a hit): ECE %.4f, Brier %.4f; not recalibrated (Platt scaling is binary)",
			source, calN, n, n+calN-1, cal.ECE, cal.Brier))
	case calN > 0:
		rows, labels := etaAll[n:n+calN], s.test.Label[n:n+calN]
		cal, err := audit.Reliability(rows, labels, 10)
		if err != nil {
			return q, fmt.Errorf("audit: calibration rows: %w", err)
		}
		q.cal = cal
		if !isTrue {
			pl, err := audit.FitPlatt(rows, labels)
			if err != nil {
				s.ev.Warn("audit", fmt.Sprintf("η not recalibrated on %d calibration rows: %v", calN, err))
			} else {
				q.calibrated = pl.Apply(etaAll[:n])
			}
		}
		s.ev.Info("audit", fmt.Sprintf("η (%s) on %d calibration rows (test rows %d–%d): ECE %.4f, Brier %.4f",
			source, calN, n, n+calN-1, cal.ECE, cal.Brier))
	case s.cfg.Audit.CalibrationRows > 0:
		say := s.ev.Warn
		if isTrue { // the truth needs no check; say it, but it is no problem
			say = s.ev.Info
		}
		say("audit", fmt.Sprintf("η calibration not measured: the test set has %d rows and the audit set takes %d "+
			"(audit.examples); calibration uses the test rows after it (add test rows, e.g. data.synth.test_rows)",
			s.test.Rows, n))
	}
	if s.cfg.Audit.Eta == config.EtaCleanModel {
		trials, err := s.cleanTrials(runs)
		if err != nil {
			return q, err
		}
		for _, e := range trials {
			q.trials = append(q.trials, e[:n*w])
		}
	}
	return q, nil
}

// auditEta returns the attacker's η on the first rows test rows (the audit
// set, then the calibration rows) and its source: the true synthetic η, a
// kNN estimate, or the test predictions of the clean model with the best
// mean test AUC (its first trial), chosen from the runs by the paper's
// reporting rule (report.BestLR).
func (s *Session) auditEta(runs []report.Run, rows int) ([]float64, string, error) {
	switch s.cfg.Audit.Eta {
	case config.EtaKNN:
		return s.knnEta(rows)
	case config.EtaTrue:
		if c := s.classes(); c >= 3 {
			if s.test.EtaC == nil {
				return nil, "", fmt.Errorf("audit.eta: true needs a synthetic dataset with %s0 … %s%d columns; %s has none (use clean_model)",
					data.ColEtaPrefix, data.ColEtaPrefix, c-1, s.dataset.Dir)
			}
			return s.test.EtaC[:rows*c], "true", nil
		}
		if s.test.Eta == nil {
			return nil, "", fmt.Errorf("audit.eta: true needs a synthetic dataset with an %q column; %s has none (use clean_model)", data.ColEta, s.dataset.Dir)
		}
		return s.test.Eta[:rows], "true", nil
	}
	trials, err := s.cleanTrials(runs)
	if err != nil {
		return nil, "", err
	}
	return trials[0][:rows*heads(s.classes())], fmt.Sprintf("clean_model(lr=%g)", s.cleanLR(runs)), nil
}

// cleanLR is the best learning rate of the clean setting.
func (s *Session) cleanLR(runs []report.Run) float64 {
	return report.BestLR(runs)[report.SettingKey{Dataset: s.datasetID, ConfigID: s.configID, Setting: "none"}].LR
}

// cleanTrials returns the test-set η̂ of every trial of the clean model at
// its best learning rate, in trial order.
func (s *Session) cleanTrials(runs []report.Run) ([][]float64, error) {
	hasClean := false
	for _, set := range s.settings {
		hasClean = hasClean || set.Kind.Spec().Release == pets.ReleaseRaw
	}
	if !hasClean {
		return nil, fmt.Errorf("audit.eta: clean_model needs a clean model: add {mechanism: none} to pets (or use audit.eta: true or knn)")
	}
	best, ok := report.BestLR(runs)[report.SettingKey{Dataset: s.datasetID, ConfigID: s.configID, Setting: "none"}]
	if !ok {
		return nil, fmt.Errorf("audit.eta: clean_model: no finished clean run yet; run `train fit -c CONFIG` (or `train sweep`) before `train audit`")
	}
	var picks []*report.Run
	for i := range runs {
		r := &runs[i]
		if r.Dataset == s.datasetID && r.ConfigID == s.configID && r.Setting == "none" && r.LR == best.LR {
			picks = append(picks, r)
		}
	}
	slices.SortFunc(picks, func(a, b *report.Run) int {
		return cmp.Or(cmp.Compare(a.Trial, b.Trial), cmp.Compare(a.RunID, b.RunID))
	})
	var out [][]float64
	for _, r := range picks {
		eta, err := store.Store{Dir: s.cfg.Output}.EtaHat(r.RunID, s.etaClasses())
		if err != nil {
			return nil, fmt.Errorf("audit: η̂ of clean run %s: %w", r.RunID, err)
		}
		w := heads(s.etaClasses())
		if len(eta) != s.test.Rows*w {
			return nil, fmt.Errorf("audit: η̂ of clean run %s has %d rows, the test set %d", r.RunID, len(eta)/w, s.test.Rows)
		}
		if w > 1 {
			// A softmax in float32 sums to 1 within ~1e-7 only; the
			// attacker's η is each row as a probability vector. RunC
			// audits rows divided by their sums anyway (the same
			// arithmetic, so its figures are the same either way); this
			// puts the top-label calibration (etaQuality) on those
			// vectors too.
			normalizeRows(eta, w)
		}
		out = append(out, eta)
	}
	return out, nil
}

// knnEta estimates η on the audit rows as the mean clean training label of
// their audit.knn_k nearest training rows (a seeded subsample of
// audit.knn_rows rows when the training set is larger), on the features
// the models see (standardized when data.standardize is on).
func (s *Session) knnEta(n int) ([]float64, string, error) {
	tr, err := s.knnRows()
	if err != nil {
		return nil, "", err
	}
	d := tr.Dim()
	if d == 0 || s.test.Dim() != d {
		return nil, "", fmt.Errorf("audit.eta: knn needs dense features in train and test (this dataset has %d)", d)
	}
	defer runtime.KeepAlive(tr) // ref is its array (the session's training frame, or a copy)
	ref, labels := tr.X, tr.Label
	k := min(s.cfg.Audit.KNNK, len(labels))
	var eta []float64
	if c := s.classes(); c >= 3 {
		eta, err = audit.KNNEtaC(ref, labels, s.test.X[:n*d], d, k, c, 0) // the mean one-hot label
	} else {
		eta, err = audit.KNNEta(ref, labels, s.test.X[:n*d], d, k, 0)
	}
	if err != nil {
		return nil, "", fmt.Errorf("audit: knn: %w", err)
	}
	return eta, fmt.Sprintf("knn(k=%d rows=%d)", k, len(labels)), nil
}

// knnRows are the training rows knnEta searches, as the models see them:
// every row, or a seeded subsample of audit.knn_rows of them (in the
// subsample's order) when there are more. A light session reads them from
// the training file (standardized as the loaded rows would be).
func (s *Session) knnRows() (*data.Frame, error) {
	n := s.train.Rows
	var rows []int
	if n > s.cfg.Audit.KNNRows {
		rows = rand.New(rand.NewPCG(deriveSeed(s.cfg.Seed, "knn"), 0)).Perm(n)[:s.cfg.Audit.KNNRows]
	}
	if !s.light {
		if rows == nil {
			return s.train, nil
		}
		return s.train.Take(rows), nil
	}
	if s.dataset.TrainSchema.Dim() == 0 {
		return s.train, nil // no dense features: knnEta says so
	}
	if rows == nil {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
	}
	f, err := data.ReadRows(data.SplitFile(s.dataset.Dir, "train"), s.cfg.Data.IDColumn, rows)
	if err != nil {
		return nil, fmt.Errorf("audit: knn: %w", err)
	}
	if s.std != nil {
		if err := s.std.ApplyInPlace(f); err != nil {
			return nil, fmt.Errorf("audit: knn: %w", err)
		}
	}
	return f, nil
}

// normalizeRows scales each row of w values to sum to 1.
func normalizeRows(v []float64, w int) {
	for i := 0; i < len(v); i += w {
		var sum float64
		for _, x := range v[i : i+w] {
			sum += x
		}
		for j := i; j < i+w; j++ {
			v[j] /= sum
		}
	}
}

// maxPosteriorCSVRows bounds posteriors.csv, the twin of posteriors.parquet
// for readers without pyarrow. The table holds at most audit.samples rows
// per setting (default 2,000; fewer when audit.examples is smaller) and is
// built in memory before it is written; a row is about 140 bytes of CSV
// (measured: 136 on the quickstart, whose 5 settings give 10,000 rows and
// 1.4 MB, 4.7 times its Parquet file). 500,000 rows, 250 settings at the
// default, are about 70 MB; above that only posteriors.parquet is written.
const maxPosteriorCSVRows = 500_000

// writePosteriorsCSV writes posteriors.csv when post has at most
// maxPosteriorCSVRows rows; otherwise it removes a posteriors.csv an
// earlier audit left (it would not match the Parquet file) and says why
// there is none.
func (s *Session) writePosteriorsCSV(post []report.Posterior) error {
	path := s.Out("posteriors.csv")
	if len(post) <= maxPosteriorCSVRows {
		return report.PosteriorTable(post).WriteCSV(path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	s.ev.Warn("audit", fmt.Sprintf("posteriors.csv not written: %d sampled rows (about %d MB as CSV) are more than its bound of %d; "+
		"posteriors.parquet holds them all (pandas reads it with pyarrow), or lower audit.samples (%d per setting)",
		len(post), len(post)*140/1_000_000, maxPosteriorCSVRows, s.cfg.Audit.Samples))
	return nil
}
