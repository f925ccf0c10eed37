package pipeline

import (
	"context"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// memorizer is a trainer that memorizes its targets: each training row's
// prediction is the target its batches gave it (a row of a bag gets the
// bag's), which is a function of the release alone, and the test rows get
// σ of their first feature. With peek > 0 it is the trainer the bracket
// exists for: it was handed the raw labels (test-only) and predicts the
// true label on a fraction peek of its rows.
type memorizer struct {
	labels []uint8 // the raw training labels a peeking trainer reads
	peek   float64
	mu     sync.Mutex
	probes int
}

func (m *memorizer) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	g := job.Group
	byKey := map[[2]float32]int{} // the training rows by their first two features
	d := g.Features.Dim()
	for i := range g.Features.Rows {
		byKey[[2]float32{g.Features.X[i*d], g.Features.X[i*d+1]}] = i
	}
	var outs []outcome
	for ri, rep := range g.Replicas {
		target := map[int]float32{}
		for {
			b, err := rep.Source.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, jobStats{}, err
			}
			for j, r := range b.RowIDs {
				t := j
				if b.BagSize > 0 {
					t = j / b.BagSize
				}
				target[int(r)] = min(max(b.Target[t], 0.02), 0.98)
			}
		}
		test := make([]float32, job.Test.Rows)
		for i := range test {
			test[i] = float32(1 / (1 + math.Exp(-float64(job.Test.X[i*job.Test.Dim()]))))
		}
		o := outcome{Probs: test, FinalLoss: 0.5, Steps: 1}
		if p := job.Probe; p != nil {
			r := rand.New(rand.NewPCG(uint64(ri), 9))
			o.ProbeProbs = make([]float32, p.Rows)
			for j := range p.Rows {
				i, ok := byKey[[2]float32{p.X[j*d], p.X[j*d+1]}]
				v, seen := target[i]
				switch {
				case !ok:
					return nil, jobStats{}, errors.New("a probe row that is no training row")
				case m.peek > 0 && r.Float64() < m.peek:
					v = 0.1 + 0.8*float32(m.labels[i])
				case !seen:
					v = 0.5
				}
				o.ProbeProbs[j] = v
			}
			m.mu.Lock()
			m.probes++
			m.mu.Unlock()
		}
		outs = append(outs, o)
	}
	return outs, jobStats{WallS: 1, ExamplesPerS: 100}, nil
}

// modelAttackConfig is a small synthetic grid with the true η in the
// data (audited with it), the model attack on every training row.
func modelAttackConfig(t *testing.T) *config.Config {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.Kind = data.SynthUniform
	c.Data.Synth.Rows, c.Data.Synth.TestRows = 3000, 1000
	c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}}, {Mechanism: pets.Bot}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.CalibrationRows = config.EtaTrue, 1000, 0, 0
	c.Audit.ModelRows = 1500 // half: bags hold rows the probe does not
	return c
}

// fitAudit fits c's grid on exec and audits it.
func fitAudit(t *testing.T, c *config.Config, exec executor) (*Session, *Audited, error) {
	t.Helper()
	s, _ := openRec(t, c)
	runs, err := Fit(context.Background(), s, FitOptions{executor: exec})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := exec.(*memorizer); ok && m.labels == nil && m.peek > 0 {
		t.Fatal("a peeking trainer without labels")
	}
	a, err := Audit(context.Background(), s, runs)
	return s, a, err
}

// The model attack end to end: an honest trainer (a memorizer of its
// release) passes the bracket and its figures land in audit.csv and
// model_attack.csv; a trainer that read the raw labels of 30% of its rows
// fails the audit, naming the first setting whose release hides labels;
// against none (the labels are its release) it cannot be caught.
func TestModelAttackBracketInPipeline(t *testing.T) {
	c := modelAttackConfig(t)
	honest := &memorizer{}
	s, a, err := fitAudit(t, c, honest)
	if err != nil {
		t.Fatalf("an honest trainer failed the audit: %v", err)
	}
	if honest.probes != 3 { // none, rr, llp_geom: bot trains nothing
		t.Errorf("%d models predicted the probe, want 3", honest.probes)
	}
	byID := map[string]report.Audit{}
	for _, x := range a.Audits {
		byID[x.Setting] = x
	}
	for _, id := range []string{"none", "rr_eps1", "llp_geom_k8_eps1"} {
		x := byID[id]
		if x.ModelRuns != 1 || x.ModelRows != 1500 || x.ModelPrior != "true" || math.IsNaN(x.ModelAdv) || math.IsNaN(x.ModelReleaseAdv) ||
			math.IsNaN(x.ModelAdvNonmember) {
			t.Errorf("%s: model attack %+v", id, x)
		}
		if x.ModelAdv > x.ModelReleaseAdv+4*x.ModelAdvSE {
			t.Errorf("%s: an honest memorizer's advantage %.4f ± %.4f above its release's %.4f", id, x.ModelAdv, x.ModelAdvSE, x.ModelReleaseAdv)
		}
	}
	// none: the memorized labels are right on every row trained on (a
	// dropped last batch leaves some at ½): adv up to 1 − prior accuracy,
	// which the release's Bayes attacker gets.
	if x := byID["none"]; x.ModelAdv > x.ModelReleaseAdv+1e-12 || x.ModelAdv < 0.2 {
		t.Errorf("none: memorized labels adv %.4f, the release's %.4f (uniform η: about ¼)", x.ModelAdv, x.ModelReleaseAdv)
	}
	if x := byID["bot"]; x.ModelRuns != 0 || !math.IsNaN(x.ModelAdv) {
		t.Errorf("bot trains nothing, yet %+v", x)
	}
	tab, err := data.ReadTable(s.Out("model_attack.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := report.ReadModelAttacks(tab)
	if err != nil || len(rows) != 3 {
		t.Fatalf("model_attack.csv: %d rows, %v", len(rows), err)
	}
	at, err := data.ReadTable(s.Out("audit.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	back, err := report.ReadAudits(at)
	if err != nil || len(back) != 4 || math.IsNaN(back[1].ModelAdv) || back[1].ModelAdv != byID["rr_eps1"].ModelAdv {
		t.Fatalf("audit.csv read back: %v", err)
	}

	c2 := modelAttackConfig(t)
	peek := &memorizer{peek: 0.3}
	s2, _ := openRec(t, c2)
	peek.labels = s2.train.Label
	runs, err := Fit(context.Background(), s2, FitOptions{executor: peek})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Audit(context.Background(), s2, runs)
	var bv *audit.BracketViolation
	if !errors.As(err, &bv) || !errors.Is(err, audit.ErrModelExceedsRelease) || bv.Setting != "rr_eps1" ||
		!strings.Contains(err.Error(), "rr_eps1") || !strings.Contains(err.Error(), "raw labels") {
		t.Fatalf("a peeking trainer: got %v, want a BracketViolation naming rr_eps1", err)
	}
	if _, err := os.Stat(s2.Out("audit.csv")); err == nil {
		t.Error("a failed audit wrote audit.csv")
	}
	// Against none alone the peeking trainer passes: its release is the labels.
	c3 := modelAttackConfig(t)
	c3.Pets = []config.PetConfig{{Mechanism: pets.None}}
	s3, _ := openRec(t, c3)
	peek3 := &memorizer{peek: 0.3, labels: s3.train.Label}
	runs3, err := Fit(context.Background(), s3, FitOptions{executor: peek3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Audit(context.Background(), s3, runs3); err != nil {
		t.Errorf("none cannot be beaten, yet: %v", err)
	}
}

// With audit.model_attack off nothing is probed and the columns are NaN.
func TestModelAttackOff(t *testing.T) {
	c := modelAttackConfig(t)
	c.Audit.ModelAttack = false
	m := &memorizer{}
	_, a, err := fitAudit(t, c, m)
	if err != nil {
		t.Fatal(err)
	}
	if m.probes != 0 {
		t.Errorf("%d probes with the model attack off", m.probes)
	}
	for _, x := range a.Audits {
		if !math.IsNaN(x.ModelAdv) || x.ModelRuns != 0 {
			t.Errorf("%s: %+v with the model attack off", x.Setting, x)
		}
	}
}

// Canaries through training, on a memorizer of its release: one model per
// trained setting, eps_lower_model within [0, ε] for rr at ε = 1 (the
// memorizer sees each canary through RR(1)) and within what llp_geom
// shows, and the real runs' results untouched.
func TestCanariesThroughTraining(t *testing.T) {
	c := modelAttackConfig(t)
	c.Audit.ModelCanaries = 1000
	m := &memorizer{}
	s, _ := openRec(t, c)
	runs, err := Fit(context.Background(), s, FitOptions{executor: m})
	if err != nil {
		t.Fatal(err)
	}
	before := m.probes
	canaries := &memorizer{}
	s.canaryExec = canaries
	a, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	if m.probes != before || canaries.probes != 3 {
		t.Errorf("canary models: %d (want 3: none, rr, llp_geom), the fit's executor %d more", canaries.probes, m.probes-before)
	}
	for _, x := range a.Audits {
		switch x.Setting {
		case "bot":
			if x.ModelCanaries != 0 || !math.IsNaN(x.EpsLowerModel) {
				t.Errorf("bot: %+v", x)
			}
		case "none":
			if x.ModelCanaries != 1000 || !(x.EpsLowerModel > 3) {
				t.Errorf("none: a memorizer of raw labels certifies only ε ≥ %v from %d canaries", x.EpsLowerModel, x.ModelCanaries)
			}
		default:
			if x.ModelCanaries != 1000 || !(x.EpsLowerModel >= 0 && x.EpsLowerModel <= 1) {
				t.Errorf("%s: eps_lower_model %v from %d canaries (ε = 1)", x.Setting, x.EpsLowerModel, x.ModelCanaries)
			}
		}
	}
	if a.Audits[1].EpsLowerModel < 0.3 {
		t.Errorf("rr_eps1: a memorizer of RR(1) labels certifies only %v", a.Audits[1].EpsLowerModel)
	}
}

// sampleRows draws m distinct rows of n, sorted, the same for a seed, every
// row once when m ≥ n.
func TestSampleRows(t *testing.T) {
	a, b := sampleRows(1000, 100, 3), sampleRows(1000, 100, 3)
	seen := map[int]bool{}
	for i, r := range a {
		if r < 0 || r >= 1000 || seen[r] || (i > 0 && r <= a[i-1]) || b[i] != r {
			t.Fatalf("sampleRows: %v", a)
		}
		seen[r] = true
	}
	if c := sampleRows(1000, 100, 4); slicesEqual(a, c) {
		t.Error("another seed gave the same rows")
	}
	if all := sampleRows(5, 9, 1); len(all) != 5 || all[4] != 4 {
		t.Errorf("m ≥ n: %v", all)
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// The model attack and canaries through training on real models (backend
// go): honest trainers pass the bracket on every setting and trial, their
// advantage lies below the release's, and the canary model is trained and
// scored. Skipped by -short.
func TestModelAttackRealModels(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains real models")
	}
	c := modelAttackConfig(t)
	c.Train.Trials, c.Train.Epochs = 2, 3
	c.Audit.ModelCanaries = 300
	s, _ := openRec(t, c)
	runs, err := Fit(context.Background(), s, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatalf("honest models failed the audit: %v", err)
	}
	for _, x := range a.Audits {
		if x.Setting == "bot" {
			continue
		}
		if x.ModelRuns != 2 || math.IsNaN(x.ModelAdv) || x.ModelAdv > x.ModelReleaseAdv+4*x.ModelAdvSE {
			t.Errorf("%s: model attack %d runs, %.4f ± %.4f against the release's %.4f", x.Setting, x.ModelRuns, x.ModelAdv, x.ModelAdvSE,
				x.ModelReleaseAdv)
		}
		if x.ModelCanaries != 300 || !(x.EpsLowerModel >= 0) || math.IsNaN(x.ModelCanaryAUC) {
			t.Errorf("%s: %d canaries through training, ε ≥ %v, AUC %v", x.Setting, x.ModelCanaries, x.EpsLowerModel, x.ModelCanaryAUC)
		}
	}
}

// TestOutsideKindsModelAttack: the model attack serves kinds registered
// from test files (pipeline/outside_kinds_test.go) as it serves the
// built-in ones: real models trained on ALIBI-like soft labels (proportions
// without bags: each row a bag of one of its BagLaw), on RR tempered by a
// public prior and on RR-Top-3, binary and 10 classes, are attacked
// through the exact posteriors given their releases, and stay inside the
// bracket (their advantage at most the release's, within 4 SE).
func TestOutsideKindsModelAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: trains real models")
	}
	for _, classes := range []int{2, 10} {
		t.Run(map[int]string{2: "binary", 10: "10 classes"}[classes], func(t *testing.T) {
			c := modelAttackConfig(t)
			if classes >= 3 {
				c = classesConfig(c.Output, classes)
				c.Data.Synth.Rows, c.Data.Synth.TestRows = 3000, 1000
				c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
				c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.CalibrationRows = config.EtaTrue, 1000, 0, 0
				c.Audit.ModelRows = 1500
			}
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: alibiKind, Epsilon: []float64{1}},
				{Mechanism: temperKind, Epsilon: []float64{1}}}
			if classes >= 3 {
				c.Pets = append(c.Pets, config.PetConfig{Mechanism: topKind, Epsilon: []float64{1}})
			}
			s, _ := openRec(t, c)
			runs, err := Fit(context.Background(), s, FitOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := Audit(context.Background(), s, runs)
			if err != nil {
				t.Fatalf("honest models of outside kinds failed the audit: %v", err)
			}
			if len(a.Audits) != len(c.Pets) {
				t.Fatalf("%d audits for %d settings", len(a.Audits), len(c.Pets))
			}
			for _, x := range a.Audits {
				if x.ModelRuns != 1 || math.IsNaN(x.ModelAdv) || math.IsNaN(x.ModelReleaseAdv) || x.ModelAdv > x.ModelReleaseAdv+4*x.ModelAdvSE {
					t.Errorf("%s: model attack %d runs, %.4f ± %.4f against the release's %.4f", x.Setting, x.ModelRuns, x.ModelAdv, x.ModelAdvSE,
						x.ModelReleaseAdv)
				}
				t.Logf("%s: model attack %.4f ± %.4f, release %.4f, E[adv] %.4f", x.Setting, x.ModelAdv, x.ModelAdvSE, x.ModelReleaseAdv, x.EAdv)
			}
		})
	}
}
