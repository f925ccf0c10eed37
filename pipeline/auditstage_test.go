package pipeline

import (
	"context"
	"encoding/csv"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// recorder keeps the events of a session.
// recorder records the events a stage sends.
type recorder struct {
	mu                  sync.Mutex
	info, warns, errors []string
}

func (r *recorder) Info(stage, msg string) {
	r.mu.Lock()
	r.info = append(r.info, stage+": "+msg)
	r.mu.Unlock()
}
func (r *recorder) Warn(stage, msg string) {
	r.mu.Lock()
	r.warns = append(r.warns, stage+": "+msg)
	r.mu.Unlock()
}
func (r *recorder) Error(stage, msg string) {
	r.mu.Lock()
	r.errors = append(r.errors, stage+": "+msg)
	r.mu.Unlock()
}
func (r *recorder) Progress(Progress) {}

// auditConfig is a small synthetic (uniform η) audit with the true η: no
// model needs training.
func auditConfig(t *testing.T) *config.Config {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.Kind = data.SynthUniform
	c.Data.Synth.Rows, c.Data.Synth.TestRows = 300, 7000
	c.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{8}},
		{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}}, {Mechanism: pets.Bot}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = config.EtaTrue, 5000, 10, 3000
	return c
}

func openRec(t *testing.T, c *config.Config) (*Session, *recorder) {
	t.Helper()
	rec := &recorder{}
	s, err := Open(context.Background(), c, Exclusive, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rec
}

// TestAuditSelfChecks: the audit stage attacks releases made by the
// production code (release.Apply) and writes the self-check columns; the
// test rows after the audit set calibrate η; report.md and the two new
// figures show them.
func TestAuditSelfChecks(t *testing.T) {
	c := auditConfig(t)
	s, rec := openRec(t, c)
	audited, err := Audit(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	audits := audited.Audits
	if len(audits) != 4 {
		t.Fatalf("%d audits", len(audits))
	}
	for _, a := range audits {
		if a.RealizedDraws != 10 || math.IsNaN(a.RealizedGain) || math.IsNaN(a.EpsLower) || a.Canaries == 0 {
			t.Errorf("%s: realized %v over %d draws, eps_lower %v from %d canaries", a.Setting, a.RealizedGain, a.RealizedDraws, a.EpsLower, a.Canaries)
		}
		if z := (a.RealizedGain - a.EAdv) / math.Hypot(a.RealizedGainSE, a.EAdvSE); a.Pet != pets.Bot && !(math.Abs(z) < 4) {
			t.Errorf("%s: realized %v vs EAdv %v (z %v)", a.Setting, a.RealizedGain, a.EAdv, z)
		}
		if a.CalibrationRows != 2000 || !(a.EtaECE >= 0 && a.EtaECE < 0.05) || !(a.EtaBrier > 0.1 && a.EtaBrier < 0.25) {
			t.Errorf("%s: calibration rows %d, ECE %v, Brier %v", a.Setting, a.CalibrationRows, a.EtaECE, a.EtaBrier)
		}
		// The true η needs no recalibration and is its own truth.
		if !math.IsNaN(a.EAdvCalibrated) || !math.IsNaN(a.EAdvTrue) || a.EtaTrials != 0 {
			t.Errorf("%s: calibrated %v, true %v, trials %d", a.Setting, a.EAdvCalibrated, a.EAdvTrue, a.EtaTrials)
		}
		// eps_lower, the controlled canary game's 95% bound, comes near ε
		// for rr and llp_geom (at 3000 canaries its sd is about 0.04·ε:
		// 0.8·ε and 1.15·ε are 3–5 sd away); the real-bags game is the
		// LLP family's only.
		if a.Pet.NeedsEpsilon() && !(a.EAdvBound >= a.EAdv && a.EpsLower >= 0.8*a.Epsilon && a.EpsLower <= 1.15*a.Epsilon) {
			t.Errorf("%s: bound %v EAdv %v, eps_lower %v", a.Setting, a.EAdvBound, a.EAdv, a.EpsLower)
		}
		if a.Pet.IsLLP() == math.IsNaN(a.EpsLowerRealBags) {
			t.Errorf("%s: eps_lower_real_bags %v", a.Setting, a.EpsLowerRealBags)
		}
	}
	tab, err := data.ReadTable(s.Out("audit.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadAudits(tab)
	if err != nil || back[0].RealizedGain != audits[0].RealizedGain || back[0].EtaECE != audits[0].EtaECE {
		t.Fatalf("audit.parquet: %v %+v", err, back)
	}
	ct, err := data.ReadTable(s.Out("calibration.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	cals, err := report.ReadCalibration(ct)
	if err != nil || len(cals) != 1 || len(cals[0].Bins) != 10 || cals[0].N != 2000 {
		t.Fatalf("calibration.parquet: %v %+v", err, cals)
	}
	if !strings.Contains(strings.Join(rec.info, "\n"), "realized") {
		t.Errorf("no realized figures in the events: %q", rec.info)
	}
	if _, err := Report(s, nil, audited); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(s.Out("report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Audit checks", "## The attacker's η", "Reliability of η", "realized_vs_predicted.png", "calibration.png", "`true`"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range []string{"realized_vs_predicted.png", "calibration.png"} {
		if _, err := os.Stat(s.Out("figures", f)); err != nil {
			t.Error(err)
		}
	}
}

// TestAuditFailsFourEpsilonSampler: the session's test-only newSampler
// makes the production sampler release at 4ε while the audit is told ε;
// the audit fails, naming the setting and saying that the mechanism's
// releases disagree with its stated likelihood.
func TestAuditFailsFourEpsilonSampler(t *testing.T) {
	c := auditConfig(t)
	c.Pets = []config.PetConfig{{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}}}
	s, _ := openRec(t, c)
	s.newSampler = func(part llp.Partitioner, prior []float64) audit.Sampler {
		return scaledSampler{releaseSampler{keepRemainder: s.cfg.Privacy.KeepRemainder, partition: part, prior: prior}, 4}
	}
	_, err := Audit(context.Background(), s, nil)
	if !errors.Is(err, audit.ErrReleaseMismatch) || !strings.Contains(err.Error(), "audit llp_geom_k8_eps1: ") ||
		!strings.Contains(err.Error(), "disagree with its stated likelihood") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(s.Out("audit.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed audit wrote audit.csv (%v)", err)
	}
	t.Log(err)
}

// scaledSampler releases through inner at f·ε.
type scaledSampler struct {
	inner audit.Sampler
	f     float64
}

func (s scaledSampler) Release(labels []uint8, m *pets.Mechanism, seed uint64) (*audit.Released, error) {
	p := m.Params()
	p.Epsilon *= s.f
	return s.inner.Release(labels, testutil.MustNew(p), seed)
}

// TestAuditWithoutCalibrationRows: when the audit set takes the whole test
// set, η's calibration is not measured: a note says so and how to fix
// it, the figures are NaN, calibration.csv has no rows and report.md says
// so; audit.realized_draws 0 turns the realized attack off.
func TestAuditWithoutCalibrationRows(t *testing.T) {
	c := auditConfig(t)
	c.Data.Synth.TestRows, c.Audit.RealizedDraws = 800, 0
	c.Audit.Examples = 800
	s, rec := openRec(t, c)
	audited, err := Audit(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	audits := audited.Audits
	a := audits[0]
	if a.CalibrationRows != 0 || !math.IsNaN(a.EtaECE) || !math.IsNaN(a.RealizedGain) || !math.IsNaN(a.EpsLower) {
		t.Fatalf("%+v", a)
	}
	// With the true η that is a note (the truth needs no check); with an
	// estimate it is a warning (TestAuditCleanTrials' config has rows).
	if w := strings.Join(rec.info, "\n"); !strings.Contains(w, "calibration not measured") || !strings.Contains(w, "test_rows") {
		t.Fatalf("info %q", rec.info)
	}
	if len(rec.warns) != 0 {
		t.Fatalf("warnings %q", rec.warns)
	}
	if _, err := Report(s, nil, audited); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(s.Out("report.md"))
	if !strings.Contains(string(md), "calibration was not measured") {
		t.Error("report.md does not say that η's calibration was not measured")
	}
}

// TestAuditCleanTrials: with the clean model's η̂ (two trials) on
// synthetic data, the audit reports EAdv recalibrated on the calibration
// rows, under the true η, and its range over the two trials' η̂.
func TestAuditCleanTrials(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 4 models")
	}
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.Rows, c.Data.Synth.TestRows = 1500, 1200
	c.Train.LearningRates = []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}}}
	c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = 800, 4, 500
	runs := fitReal(t, c)
	s, _ := openRec(t, c)
	audited, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	audits := audited.Audits
	for _, a := range audits {
		if !strings.HasPrefix(a.EtaSource, "clean_model") || a.EtaTrials != 2 || a.CalibrationRows != 400 {
			t.Fatalf("%s: source %s, %d trials, %d calibration rows", a.Setting, a.EtaSource, a.EtaTrials, a.CalibrationRows)
		}
		for name, v := range map[string]float64{"calibrated": a.EAdvCalibrated, "true": a.EAdvTrue, "ece": a.EtaECE,
			"trial min": a.EAdvTrialMin, "trial max": a.EAdvTrialMax} {
			if math.IsNaN(v) || v < 0 {
				t.Errorf("%s: %s = %v", a.Setting, name, v)
			}
		}
		// The headline η̂ is trial 0's, one of the two the range covers.
		if !(a.EAdvTrialMin <= a.EAdv && a.EAdv <= a.EAdvTrialMax) {
			t.Errorf("%s: EAdv %v outside the trials' range [%v, %v]", a.Setting, a.EAdv, a.EAdvTrialMin, a.EAdvTrialMax)
		}
	}
}

// The audit's self-check keys are validated, each error naming its key.
func TestValidateAuditKeys(t *testing.T) {
	for key, edit := range map[string]func(*config.Config){
		"audit.realized_draws":   func(c *config.Config) { c.Audit.RealizedDraws = -1 },
		"audit.canaries":         func(c *config.Config) { c.Audit.Canaries = -5 },
		"audit.calibration_rows": func(c *config.Config) { c.Audit.CalibrationRows = -1 },
	} {
		c := testConfig("o")
		edit(c)
		var fe *config.FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Key != key {
			t.Errorf("%s: err %v", key, err)
		}
	}
	c := testConfig("o")
	c.Audit.RealizedDraws, c.Audit.Canaries, c.Audit.CalibrationRows = 0, 0, 0 // all off
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if d := config.Defaults().Audit; d.RealizedDraws != 20 || d.Canaries != 10000 || d.CalibrationRows != 10000 {
		t.Fatalf("defaults %+v", d)
	}
}

// posteriors.csv is posteriors.parquet for readers without pyarrow: the
// same columns and rows, every float to the bit. Above its bound it is not
// written, a stale one goes, and a warning says why.
func TestPosteriorsCSV(t *testing.T) {
	c := auditConfig(t)
	c.Data.Synth.TestRows, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Samples = 800, 800, 0, 300
	s, rec := openRec(t, c)
	if _, err := Audit(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
	pq, err := data.ReadTable(s.Out("posteriors.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(s.Out("posteriors.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != pq.Rows()+1 || pq.Rows() != 4*300 {
		t.Fatalf("posteriors.csv has %d rows, posteriors.parquet %d (want 4 settings × 300)", len(recs)-1, pq.Rows())
	}
	for j, col := range pq.Columns {
		if recs[0][j] != col.Name {
			t.Fatalf("column %d: csv %q, parquet %q", j, recs[0][j], col.Name)
		}
		for i := range pq.Rows() {
			got := recs[i+1][j]
			switch v := col.Values.(type) {
			case []float64:
				if x, err := strconv.ParseFloat(got, 64); err != nil || math.Float64bits(x) != math.Float64bits(v[i]) {
					t.Fatalf("%s row %d: csv %q, parquet %v", col.Name, i, got, v[i])
				}
			case []string:
				if got != v[i] {
					t.Fatalf("%s row %d: csv %q, parquet %q", col.Name, i, got, v[i])
				}
			}
		}
	}
	if !strings.Contains(strings.Join(rec.info, "\n"), "posteriors.csv") {
		t.Errorf("the audit does not say it wrote posteriors.csv: %q", rec.info)
	}

	if err := s.writePosteriorsCSV(make([]report.Posterior, maxPosteriorCSVRows+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Out("posteriors.csv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("posteriors.csv above its bound: %v, want it removed", err)
	}
	if w := strings.Join(rec.warns, "\n"); !strings.Contains(w, "posteriors.csv not written") || !strings.Contains(w, "audit.samples") {
		t.Errorf("warnings %q", rec.warns)
	}
}
