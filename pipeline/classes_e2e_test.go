package pipeline

import (
	"context"
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/ledger"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// timingColumns are the columns of a table that measure the machine, not
// the result.
var timingColumns = []string{"wall_s", "examples_per_s", "group_examples_per_s", "compile_s", "checkpoint_s"}

// resultTable reads a CSV the pipeline wrote, without its timing columns.
func resultTable(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var keep []int
	for j, name := range rows[0] {
		if !slices.Contains(timingColumns, name) {
			keep = append(keep, j)
		}
	}
	out := make([][]string, len(rows))
	for i, r := range rows {
		for _, j := range keep {
			out[i] = append(out[i], r[j])
		}
	}
	return out
}

// TestBinaryDatasetWithClassesTwo: a dataset whose meta.json says
// classes: 2 is a binary dataset: trained, audited and reported from the
// same bytes and seed, its runs.csv, audit.csv and summary.csv hold the
// values of the same dataset without the key (timing columns aside).
func TestBinaryDatasetWithClassesTwo(t *testing.T) {
	if testing.Short() {
		t.Skip("trains and audits twice")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "binary")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 600, TestRows: 400,
		Features: 4, Seed: 9, Out: bin}); err != nil {
		t.Fatal(err)
	}
	two := filepath.Join(dir, "two")
	if err := os.CopyFS(two, os.DirFS(bin)); err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadMeta(two)
	if err != nil {
		t.Fatal(err)
	}
	m.Classes = 2
	if err := data.WriteMeta(two, m); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(two, data.MetaFile)); !strings.Contains(string(b), `"classes": 2`) {
		t.Fatalf("meta.json without classes: 2:\n%s", b)
	}
	run := func(ds string) string {
		c := testConfig(filepath.Join(dir, "out-"+filepath.Base(ds)))
		c.Data.Path = ds
		c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
		c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.Bot}, {Mechanism: pets.RR, Epsilon: []float64{1}},
			{Mechanism: pets.RRPrior, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{4}},
			{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}}
		c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = 200, 3, 200
		if err := Run(context.Background(), c, nil, StageAll); err != nil {
			t.Fatal(err)
		}
		return c.Output
	}
	a, b := run(bin), run(two)
	for _, f := range []string{"runs.csv", "audit.csv", "summary.csv"} {
		ta, tb := resultTable(t, filepath.Join(a, f)), resultTable(t, filepath.Join(b, f))
		if len(ta) < 2 || !slices.EqualFunc(ta, tb, slices.Equal) {
			t.Errorf("%s differs with classes: 2 in meta.json:\n%v\n%v", f, ta, tb)
		}
	}
}

// TestAuditClassesClosedFormAndGuard: on 4 classes with the true η
// (eta_c), the audit stage's EAdv for k-ary rr is the closed form
// Σ_z max_y η_y P(z|y) − max_y η_y averaged over the audit examples,
// P(z|y) = e^ε/(e^ε+3) on the label and 1/(e^ε+3) elsewhere; every
// setting is audited as 4 classes, its releases attacked through the
// production release code without a false failure; and a sampler releasing
// at 4ε fails the audit, naming the setting, for rr and for llp_geom.
func TestAuditClassesClosedFormAndGuard(t *testing.T) {
	const c = 4
	cfg := classesConfig(filepath.Join(t.TempDir(), "out"), c)
	cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows = 300, 2500
	cfg.Pets = []config.PetConfig{{Mechanism: pets.Bot}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLP, K: []int{4}}, {Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}}
	cfg.Audit.Examples, cfg.Audit.CalibrationRows, cfg.Audit.RealizedDraws, cfg.Audit.Canaries = 2000, 500, 6, 1000
	s, _ := openRec(t, cfg)
	audited, err := Audit(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := math.E
	keep, other := e/(e+c-1), 1/(e+c-1)
	var want float64
	for i := range 2000 {
		eta := s.test.EtaC[i*c : (i+1)*c]
		var top, sum float64
		for z := range c {
			var best float64
			for y := range c {
				p := other
				if y == z {
					p = keep
				}
				best = max(best, eta[y]*p)
			}
			sum += best
			top = max(top, eta[z])
		}
		want += (sum - top) / 2000
	}
	for _, a := range audited.Audits {
		if a.Classes != c || a.Summary.Classes != c || a.NExamples != 2000 {
			t.Fatalf("%s: classes %d/%d, %d examples", a.Setting, a.Classes, a.Summary.Classes, a.NExamples)
		}
		if a.Setting != "llp_k4" && !(math.Abs(a.RealizedZ) < 6.1) {
			t.Errorf("%s: realized z %v", a.Setting, a.RealizedZ)
		}
		if a.Setting == "rr_eps1" && math.Abs(a.EAdv-want) > 1e-12 {
			t.Errorf("rr EAdv %v, closed form %v", a.EAdv, want)
		}
	}
	b, err := os.ReadFile(s.Out("audit.csv"))
	if err != nil || !strings.Contains(string(b), ",classes") {
		t.Fatalf("audit.csv: %v", err)
	}
	for _, set := range []string{"rr_eps1", "llp_geom_k4_eps2"} {
		cfg := classesConfig(filepath.Join(t.TempDir(), "out"), c)
		cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows = 300, 2500
		cfg.Audit.Examples, cfg.Audit.CalibrationRows, cfg.Audit.RealizedDraws, cfg.Audit.Canaries = 2000, 0, 10, 2000
		if set == "rr_eps1" {
			cfg.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}}
		} else {
			cfg.Pets = []config.PetConfig{{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}}
		}
		s, _ := openRec(t, cfg)
		s.newSampler = func(part llp.Partitioner, prior []float64) audit.Sampler {
			return scaledSamplerC{releaseSampler{keepRemainder: s.cfg.Privacy.KeepRemainder, partition: part, prior: prior}, 4}
		}
		_, err := Audit(context.Background(), s, nil)
		if !errors.Is(err, audit.ErrReleaseMismatch) || !strings.Contains(err.Error(), "audit "+set+": ") {
			t.Fatalf("%s at 4ε: err %v", set, err)
		}
	}
}

// scaledSamplerC releases C classes through inner at f·ε.
type scaledSamplerC struct {
	inner releaseSampler
	f     float64
}

func (s scaledSamplerC) Release(labels []uint8, m *pets.Mechanism, seed uint64) (*audit.Released, error) {
	panic("binary release from a C-class audit")
}

func (s scaledSamplerC) ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*audit.ReleasedC, error) {
	p := m.Params()
	p.Epsilon *= s.f
	return s.inner.ReleaseC(labels, testutil.MustNew(p), seed)
}

// TestClassesEndToEnd trains, audits and reports labels of C = 4 classes
// (train run on a multiclass synthetic dataset, every mechanism, the clean
// model's η̂): runs, learning curves, summary and audit carry classes 4 and
// test accuracy; the clean model beats the constant predictor by far and
// the mechanisms' accuracies sit between; the audit's advantages are
// ordered as the mechanisms' privacy (none > llp > rr > bot = 0) with
// every DP setting under its ε-DP worst case; report.md reports accuracy.
func TestClassesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 14 models and audits them")
	}
	const c = 4
	cfg := classesConfig(filepath.Join(t.TempDir(), "out"), c)
	cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows, cfg.Data.Synth.Features = 3000, 1600, 6
	cfg.Train.Epochs, cfg.Train.BatchSize, cfg.Train.Trials, cfg.Train.LearningRates = 4, 128, 2, []float64{0.01}
	cfg.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.Bot}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.RRPrior, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{4}},
		{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}, {Mechanism: pets.LLPLap, K: []int{4}, Epsilon: []float64{2}}}
	cfg.Audit.Eta, cfg.Audit.Examples, cfg.Audit.CalibrationRows = config.EtaCleanModel, 800, 800
	cfg.Audit.RealizedDraws, cfg.Audit.Canaries = 4, 500
	if err := Run(context.Background(), cfg, nil, StageAll); err != nil {
		t.Fatal(err)
	}
	runs := csvRows(t, filepath.Join(cfg.Output, "runs.csv"))
	if len(runs) != 14 {
		t.Fatalf("%d runs", len(runs))
	}
	acc := map[string]float64{}
	for _, r := range runs {
		a := num(t, r["test_accuracy"])
		if r["classes"] != "4" || !(a >= 0 && a <= 1) || !(num(t, r["test_auc"]) >= 0.5) {
			t.Fatalf("run %s: classes %s accuracy %s AUC %s", r["setting"], r["classes"], r["test_accuracy"], r["test_auc"])
		}
		acc[r["setting"]] += a / 2
	}
	if acc["none"] < acc["bot"]+0.3 {
		t.Fatalf("clean accuracy %v against the constant predictor's %v", acc["none"], acc["bot"])
	}
	for set, a := range acc {
		if set != "none" && set != "bot" && !(a > acc["bot"]+0.1 && a <= acc["none"]+0.03) {
			t.Errorf("%s: accuracy %v outside (%v, %v]", set, a, acc["bot"]+0.1, acc["none"]+0.03)
		}
	}
	for _, r := range csvRows(t, filepath.Join(cfg.Output, "learning_curves.csv")) {
		if a := num(t, r["test_accuracy"]); !(a >= 0 && a <= 1) {
			t.Fatalf("learning curve point %v: accuracy %s", r, r["test_accuracy"])
		}
	}
	for _, r := range csvRows(t, filepath.Join(cfg.Output, "summary.csv")) {
		if r["classes"] != "4" || !(num(t, r["test_accuracy_mean"]) > 0) {
			t.Fatalf("summary row %s: classes %s accuracy %s", r["setting"], r["classes"], r["test_accuracy_mean"])
		}
	}
	eadv := map[string]float64{}
	for _, r := range csvRows(t, filepath.Join(cfg.Output, "audit.csv")) {
		eadv[r["setting"]] = num(t, r["eadv"])
		if r["classes"] != "4" {
			t.Fatalf("audit row %s: classes %s", r["setting"], r["classes"])
		}
		if b := num(t, r["eadv_bound"]); !math.IsNaN(b) && eadv[r["setting"]] > b+1e-9 {
			t.Errorf("%s: EAdv %v above the ε-DP worst case %v", r["setting"], eadv[r["setting"]], b)
		}
	}
	if !(eadv["none"] > eadv["llp_k4"] && eadv["llp_k4"] > eadv["rr_eps1"] && eadv["rr_eps1"] > 0 && eadv["bot"] == 0) {
		t.Errorf("EAdv out of order: %v", eadv)
	}
	md, err := os.ReadFile(filepath.Join(cfg.Output, "report.md"))
	if err != nil || !strings.Contains(strings.ToLower(string(md)), "accuracy") {
		t.Fatalf("report.md: %v", err)
	}
}

// csvRows reads a CSV the pipeline wrote as one map per row.
func csvRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	rows := resultTable(t, path)
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for j, name := range rows[0] {
			m[name] = r[j]
		}
		out = append(out, m)
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" || strings.EqualFold(s, "nan") {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// A bag size beyond the exact audit of C classes (k = 32 on 10 classes:
// the count-vector program is past audit.MaxBagWork) is refused by train
// run and train audit before anything is written (no dataset, lock,
// resolved config, release or ledger row: the output folder stays as it
// was), naming the setting and the largest k the audit takes, whether the
// classes come from data.synth.classes or a dataset's meta.json; train fit
// trains it.
func TestClassesBagsBeyondTheAudit(t *testing.T) {
	tmp := t.TempDir()
	imported := filepath.Join(tmp, "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthMulticlass, Classes: 10, Rows: 640, TestRows: 300,
		Features: 4, Seed: 3, Out: imported}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"", imported} {
		cfg := classesConfig(filepath.Join(tmp, "out"+filepath.Base(path)), 10)
		cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows = 640, 300
		if path != "" {
			cfg.Data.Path, cfg.Data.Synth = path, config.SynthConfig{}
		}
		cfg.Pets = []config.PetConfig{{Mechanism: pets.LLP, K: []int{32}}}
		cfg.Privacy.Ledger = filepath.Join(tmp, "ledger"+filepath.Base(path), ledger.File)
		// An output holding an earlier file: nothing may be added to it.
		if err := os.MkdirAll(cfg.Output, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(cfg.Output, "earlier.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, st := range []Stages{StageAll, StageAudit} {
			err := Run(context.Background(), cfg, nil, st)
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Key != "pets" || !strings.Contains(err.Error(), "llp_k32") || !strings.Contains(err.Error(), "k ≤ 13") {
				t.Fatalf("data %q, stages %d: err = %v", path, st, err)
			}
			entries, err := os.ReadDir(cfg.Output)
			if err != nil || len(entries) != 1 || entries[0].Name() != "earlier.txt" {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Fatalf("data %q, stages %d: the refused run left %v in the output (%v), want only earlier.txt", path, st, names, err)
			}
			if _, err := os.Stat(filepath.Dir(cfg.Privacy.Ledger)); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("data %q, stages %d: the refused run made the ledger's folder (%v)", path, st, err)
			}
		}
	}
}
