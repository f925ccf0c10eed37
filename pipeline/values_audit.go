package pipeline

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/english"
	"labelprivacy/llp"
	"labelprivacy/pets"
	"labelprivacy/release"
	"labelprivacy/report"
)

// auditValues is Audit on conversion values: per setting RunValues on the
// audit rows (the first audit.examples test rows) with η from audit.eta
// (true: the synthetic law p0, mu, sigma; clean_model: the best clean
// model's classes spread over the grid), τ = audit.tau (B/40 when left
// out), rr_bins's bins (of its public prior; of a private one drawn here
// from the training values as a release would, the audit's own draw, never
// released), curated bags formed on the audit rows, and with
// audit.realized_draws the realized attack and the canaries through the
// production release code (release.ApplyValues). It writes audit.csv,
// audit.parquet and value_posteriors.parquet/.csv.
func (s *Session) auditValues(ctx context.Context, runs []report.Run) (*Audited, error) {
	cfg := s.cfg.Audit
	n := min(cfg.Examples, s.test.Rows)
	m := s.startMeter(Progress{Stage: "audit", What: fmt.Sprintf("η (%s) of %d rows", cfg.Eta, n), Units: len(s.settings)})
	defer m.Stop()
	eta, source, err := s.valueEta(runs, n)
	if err != nil {
		return nil, err
	}
	tau := s.grid.Max / 40
	if cfg.Tau != nil {
		tau = *cfg.Tau
	}
	if cfg.ModelAttack || cfg.ModelCanaries > 0 {
		s.ev.Info("audit", "the model attack (audit.model_attack, audit.model_canaries) serves classes; conversion values are audited on their releases")
	}
	var audits []report.Audit
	var post []report.ValuePosterior
	nan := math.NaN()
	for i, set := range s.settings {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m.Unit(set.ID, i)
		seed := deriveSeed(s.cfg.Seed, "audit", set.ID)
		o := audit.ValueOptions{Seed: seed, Tau: tau, MaxSamples: cfg.Samples, Progress: m}
		if _, err := s.valueAuditOptions(set, n, seed, &o); err != nil {
			return nil, fmt.Errorf("audit %s: %w", set.ID, err)
		}
		if cfg.RealizedDraws > 0 {
			o.Sampler, o.Draws, o.Canaries = valueSampler{keepRemainder: s.cfg.Privacy.KeepRemainder}, cfg.RealizedDraws, cfg.Canaries
		}
		res, err := audit.RunValues(eta, set.Mech, o)
		if err != nil {
			return nil, fmt.Errorf("audit %s: %w", set.ID, err)
		}
		a := report.Audit{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID, Pet: set.Kind, K: set.K, Epsilon: set.Epsilon,
			EtaSource: source, Summary: res.Summary, EtaECE: nan, EtaBrier: nan, EAdvCalibrated: nan, EAdvTrue: nan,
			EAdvTrialMin: nan, EAdvTrialMax: nan, ModelAdv: nan, ModelAdvSE: nan, ModelReleaseAdv: nan, ModelAdvNonmember: nan,
			ModelAdvNonmemberSE: nan, EpsLowerModel: nan, ModelCanaryAUC: nan}
		if err := s.summaryAccuracy(set, &a); err != nil {
			return nil, err
		}
		audits = append(audits, a)
		for _, x := range res.Samples {
			post = append(post, report.ValuePosterior{Dataset: s.datasetID, ConfigID: s.configID, Setting: set.ID, Pet: set.Kind, K: set.K,
				Epsilon: set.Epsilon, ValueSample: x})
		}
		sm := res.Summary
		line := fmt.Sprintf("%-24s R²-adv %.5f ± %.5f (ratio %.5f)  τ-adv %.5f ± %.5f (τ = %g)", set.ID, sm.R2Adv, sm.R2AdvSE,
			sm.R2AdvRatio, sm.TauAdv, sm.TauAdvSE, sm.Tau)
		if !math.IsNaN(sm.TauAdvBound) {
			line += fmt.Sprintf(", ε-DP worst case %.5f", sm.TauAdvBound)
		}
		if !math.IsNaN(a.RMSRE) {
			line += fmt.Sprintf("; RMSRE_5 %.4g over %d keys (expected %.4g)", a.RMSRE, a.RMSREKeys, a.RMSREExpected)
		}
		if !math.IsNaN(sm.RealizedR2) {
			line += fmt.Sprintf("; realized R² %.5f ± %.5f, τ %.5f ± %.5f over %s (z %.2f)", sm.RealizedR2, sm.RealizedR2SE,
				sm.RealizedGain, sm.RealizedGainSE, english.Count(sm.RealizedDraws, "release"), sm.RealizedZ)
		}
		if !math.IsNaN(sm.EpsLower) {
			line += fmt.Sprintf("; ε ≥ %.3g (95%%, %d canaries)", sm.EpsLower, sm.Canaries)
		}
		s.ev.Info("audit", line+fmt.Sprintf(" (%d examples, η: %s)", sm.NExamples, source))
	}
	at, pt := report.AuditTable(audits), report.ValuePosteriorTable(post)
	for _, w := range []func() error{
		func() error { return at.WriteCSV(s.Out("audit.csv")) },
		func() error { return at.WriteParquet(s.Out("audit.parquet")) },
		func() error { return pt.WriteParquet(s.Out("value_posteriors.parquet")) },
		func() error { return pt.WriteCSV(s.Out("value_posteriors.csv")) },
	} {
		if err := w(); err != nil {
			return nil, err
		}
	}
	s.ev.Info("audit", fmt.Sprintf("wrote %s, %s, %s", s.Out("audit.csv"), s.Out("audit.parquet"), s.Out("value_posteriors.parquet")))
	return &Audited{Audits: audits, ValuePosteriors: post}, nil
}

// checkValueEta refuses an audit.eta that conversion values cannot take:
// knn (it serves classes), true on a dataset without the synthetic law's
// columns.
func (s *Session) checkValueEta() error {
	switch s.cfg.Audit.Eta {
	case config.EtaKNN:
		return &config.FieldError{Key: "audit.eta", Msg: "knn serves classes; audit conversion values with clean_model or true"}
	case config.EtaTrue:
		if s.test.P0 == nil || s.test.Mu == nil || s.test.Sigma == nil {
			return &config.FieldError{Key: "audit.eta", Msg: fmt.Sprintf("true needs a synthetic dataset of values with %s, %s and %s columns; %s has none (use clean_model)",
				data.ColP0, data.ColMu, data.ColSigma, s.dataset.Dir)}
		}
	}
	return nil
}

// valueEta is the attacker's prior over the grid of the first n test rows
// (n rows of the grid's points, row-major) and its source.
func (s *Session) valueEta(runs []report.Run, n int) ([]float64, string, error) {
	g := s.grid
	switch s.cfg.Audit.Eta {
	case config.EtaKNN:
		return nil, "", fmt.Errorf("audit.eta: knn serves classes; audit conversion values with clean_model or true")
	case config.EtaTrue:
		if s.test.P0 == nil || s.test.Mu == nil || s.test.Sigma == nil {
			return nil, "", fmt.Errorf("audit.eta: true needs a synthetic dataset of values with %s, %s and %s columns; %s has none (use clean_model)",
				data.ColP0, data.ColMu, data.ColSigma, s.dataset.Dir)
		}
		eta := make([]float64, 0, n*g.Points())
		for i := range n {
			eta = append(eta, pets.ZeroInflatedLogNormal(g, s.test.P0[i], s.test.Mu[i], s.test.Sigma[i])...)
		}
		return eta, "true", nil
	}
	trials, err := s.cleanTrials(runs)
	if err != nil {
		return nil, "", err
	}
	c := s.etaClasses()
	w := heads(c)
	return s.gridLaw(trials[0][:n*w], n), fmt.Sprintf("clean_model(lr=%g)", s.cleanLR(runs)), nil
}

// valueAuditOptions completes the audit options of set on the first n test
// rows: rr_bins's bins, curated bags' actual bags. It returns the curated
// bag rule (nil otherwise).
func (s *Session) valueAuditOptions(set *setting, n int, seed uint64, o *audit.ValueOptions) (llp.Partitioner, error) {
	switch {
	case set.Kind.Spec().Takes.ValuePrior:
		prior := set.ValuePrior
		if prior == nil { // private: the audit's own draw of the histogram
			prior = set.Mech.PriorStage().Histogram(s.train.Value, mrand.New(mrand.NewPCG(deriveSeed(seed, "prior"), 0)))
		}
		b, err := set.Mech.Bins(prior)
		if err != nil {
			return nil, err
		}
		o.Bins = b
	case set.Kind.IsLLP() && set.Bags.Kind != llp.RuleRandom:
		part, bags, err := s.auditBags(set, n)
		if err != nil {
			return nil, err
		}
		o.Bags = bags
		return part, nil
	}
	return nil, nil
}

// valueSampler releases values through the code `privatize` and the
// training releases run (release.ApplyValues with simulation noise), with
// the audit's bins and bags.
type valueSampler struct{ keepRemainder bool }

func (p valueSampler) ReleaseValues(values []float64, m *pets.Mechanism, bins *pets.Bins, bags llp.Partitioner, seed uint64) (*audit.ValuesReleased, error) {
	o := release.Options{Noise: pets.NoiseSimulation, Seed: seed, KeepRemainder: p.keepRemainder, Partition: bags}
	rel, err := release.ApplyValues(values, m, o, release.ValueOptions{Bins: bins})
	if err != nil {
		return nil, err
	}
	f := rel.Simulation()
	out := &audit.ValuesReleased{Row: make([]int, len(f.Row)), Value: f.ValueRR, Bag: f.BagID, Mean: f.BagMean}
	for i, r := range f.Row {
		out.Row[i] = int(r)
	}
	if out.Value == nil && out.Mean == nil { // bot: nothing released
		out.Value = make([]float64, len(out.Row))
	}
	return out, nil
}
