package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
)

// mapEnv is an environment holding exactly m.
type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// loadConfig is config.Load of a file, --set overrides and an environment.
func loadConfig(file string, sets []string, env config.Env) (*config.Config, error) {
	return config.Load(config.Source{File: file, Sets: sets, Env: env})
}

// cli runs the command line in-process with a controlled environment.
func cli(t *testing.T, envm map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, mapEnv(envm))
	setArgs(root, args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestCLIDataSynthAndImport(t *testing.T) {
	dir := t.TempDir()
	out, err := cli(t, nil, "data", "synth", "--out", filepath.Join(dir, "syn"), "--kind", "uniform", "--rows", "500", "--test-rows", "50", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "Bayes AUC") {
		t.Fatalf("output %q", out)
	}
	ds, err := data.Load(filepath.Join(dir, "syn"))
	if err != nil || ds.Train.Rows != 500 || ds.Test.Rows != 50 || ds.Train.Eta == nil {
		t.Fatalf("synth dataset: %v", err)
	}

	// A generated UCI-format Higgs file.
	r := rand.New(rand.NewPCG(1, 1))
	var csv bytes.Buffer
	for range 300 {
		fmt.Fprintf(&csv, "%.18e", float64(r.IntN(2)))
		for range 28 {
			fmt.Fprintf(&csv, ",%.18e", r.NormFloat64())
		}
		csv.WriteByte('\n')
	}
	in := filepath.Join(dir, "HIGGS.csv")
	os.WriteFile(in, csv.Bytes(), 0o644)
	if _, err := cli(t, nil, "data", "import", "higgs", "--in", in, "--out", filepath.Join(dir, "higgs"), "--test-rows", "100"); err != nil {
		t.Fatal(err)
	}
	m, err := data.ReadMeta(filepath.Join(dir, "higgs"))
	if err != nil || m.TrainRows != 200 || m.TestRows != 100 || m.Features[0] != "lepton_pT" {
		t.Fatalf("higgs meta %+v, %v", m, err)
	}

	// Bad input: the error names the file and line.
	os.WriteFile(in, append(csv.Bytes(), "1,2\n"...), 0o644)
	_, err = cli(t, nil, "data", "import", "higgs", "--in", in, "--out", filepath.Join(dir, "bad"))
	if err == nil || !strings.Contains(err.Error(), in+":301:") {
		t.Fatalf("err = %v, want it to name %s:301", err, in)
	}
	if _, err := cli(t, nil, "data", "synth", "--out", dir, "--kind", "gauss", "--rows", "5"); err == nil || !strings.Contains(err.Error(), "--kind") {
		t.Fatalf("err = %v", err)
	}
	// --hash-buckets 0 is refused (it used to mean the default silently).
	kdd := filepath.Join(dir, "kdd.libsvm")
	os.WriteFile(kdd, []byte("1 3:1\n0 5:1\n1 7:1\n"), 0o644)
	if _, err := cli(t, nil, "data", "import", "libsvm", "--in", kdd, "--out", filepath.Join(dir, "kdd"), "--hash-buckets", "0", "--test-rows", "1"); err == nil ||
		!strings.Contains(err.Error(), "--hash-buckets: must be in [1, 67108864]") {
		t.Fatalf("--hash-buckets 0: err = %v", err)
	}
	// An error about an input says "data:" once and its path once.
	_, err = cli(t, nil, "data", "import", "libsvm", "--in", kdd, "--out", filepath.Join(dir, "kdd"), "--test-rows", "10")
	if err == nil || strings.Count(err.Error(), "data:") != 1 || strings.Count(err.Error(), kdd) != 1 {
		t.Fatalf("err = %v, want one data: prefix and the path once", err)
	}
	if _, err := cli(t, userEnv(t), "privatize", "--in", filepath.Join(dir, "none.arrow"), "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(dir, "outbox", "r.arrow")); err == nil ||
		strings.Count(err.Error(), filepath.Join(dir, "none.arrow")) != 1 {
		t.Fatalf("err = %v, want the path once", err)
	}
}

// The import flags' bounds and hints: --hash-buckets above 2^26 is refused
// with the bound (4294967295 was accepted), and an empty Higgs test set
// suggests --test-rows only (higgs has no --test flag), libsvm's both.
func TestCLIImportBoundsAndHints(t *testing.T) {
	dir := t.TempDir()
	kdd := filepath.Join(dir, "kdd.libsvm")
	os.WriteFile(kdd, []byte("1 3:1\n0 5:1\n1 7:1\n"), 0o644)
	for _, b := range []string{"4294967295", "67108865"} {
		_, err := cli(t, nil, "data", "import", "libsvm", "--in", kdd, "--out", filepath.Join(dir, "kdd"), "--hash-buckets", b, "--test-rows", "1")
		if err == nil || !strings.Contains(err.Error(), "--hash-buckets: must be in [1, 67108864]") || !strings.Contains(err.Error(), "got "+b) {
			t.Fatalf("--hash-buckets %s: err = %v, want the bound named", b, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kdd")); !os.IsNotExist(err) {
		t.Fatal("a refused import wrote its output")
	}
	if _, err := cli(t, nil, "data", "import", "libsvm", "--in", kdd, "--out", filepath.Join(dir, "kdd"), "--hash-buckets", "67108864", "--test-rows", "1"); err != nil {
		t.Fatalf("--hash-buckets 2^26: %v", err)
	}
	csv := filepath.Join(dir, "HIGGS.csv")
	line := "1" + strings.Repeat(",0.5", 28) + "\n"
	os.WriteFile(csv, []byte(line+line), 0o644)
	_, err := cli(t, nil, "data", "import", "higgs", "--in", csv, "--out", filepath.Join(dir, "higgs"), "--test-rows", "0")
	if err == nil || !strings.Contains(err.Error(), "--test-rows") || strings.Contains(err.Error(), "--test ") || strings.Contains(err.Error(), "--test)") {
		t.Fatalf("higgs --test-rows 0: err = %v, want a hint naming --test-rows only", err)
	}
	_, err = cli(t, nil, "data", "import", "libsvm", "--in", kdd, "--out", filepath.Join(dir, "kdd2"), "--test-rows", "0")
	if err == nil || !strings.Contains(err.Error(), "or give --test") {
		t.Fatalf("libsvm --test-rows 0: err = %v, want --test suggested", err)
	}
}

// `train` with no arguments runs the embedded quickstart end to end; here
// shrunk through the environment so the test stays fast.
func TestCLIDefaultRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	outDir := filepath.Join(t.TempDir(), "qs")
	envm := map[string]string{"TRAIN_OUTPUT": outDir, "TRAIN_DATA_SYNTH_ROWS": "4000", "TRAIN_DATA_SYNTH_TEST_ROWS": "1000",
		"TRAIN_AUDIT_EXAMPLES": "800", "TRAIN_TRAIN_BATCH_SIZE": "256", "TRAIN_TRAIN_LEARNING_RATES": "[0.01]"}
	out, err := cli(t, envm)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"config.resolved.yaml", "data: wrote", "privatize: 4 releases written", "privacy_ledger.csv",
		"fit: [5/5]", "runs.parquet", "audit: wrote", "report.md"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"config.resolved.yaml", "runs.csv", "runs.parquet", "summary.csv", "summary.parquet", "audit.csv",
		"audit.parquet", "posteriors.parquet", "report.md", "figures/auc_vs_eadv.png", "privacy_ledger.csv"} {
		if _, err := os.Stat(filepath.Join(outDir, f)); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := data.ReadTable(filepath.Join(outDir, "runs.parquet"))
	if err != nil || runs.Rows() != 5 {
		t.Fatalf("runs.parquet: %v, %d rows", err, runs.Rows())
	}
	for _, c := range runs.Columns {
		if c.Name == "test_auc" {
			for i, auc := range c.Values.([]float64) {
				if !(auc > 0.55 && auc <= 1) {
					t.Fatalf("run %d has test AUC %v: the models did not learn", i, auc)
				}
			}
		}
	}
	// A second run reuses the dataset and the releases and skips every run.
	out, err = cli(t, envm, "run")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"data: reusing", "0 runs trained, 5 already done"} {
		if !strings.Contains(out, want) {
			t.Fatalf("second run lacks %q:\n%s", want, out)
		}
	}
	if entries, err := ledger.Read(filepath.Join(outDir, ledger.File)); err != nil || len(entries) != 4 {
		t.Fatalf("ledger after two runs: %d rows (%v), want the 4 releases once", len(entries), err)
	}
	// --compare takes "A B" as well as "A,B".
	for _, args := range [][]string{{"--compare", outDir, outDir}, {"--compare", outDir + "," + outDir}} {
		o, err := cli(t, nil, append([]string{"report", "--out", filepath.Join(t.TempDir(), "cmp")}, args...)...)
		if err != nil || !strings.Contains(o, "0 of 5 settings differ by more than 2 SE") {
			t.Fatalf("report %v: %v\n%s", args, err, o)
		}
	}
}

// One seed drives everything: the same config in two directories gives the
// same models and the same audit, byte for byte in the tables' numbers.
func TestRunDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	read := func(dir string) (runs, audit string) {
		out := filepath.Join(dir, "o")
		envm := map[string]string{"TRAIN_OUTPUT": out, "TRAIN_DATA_SYNTH_ROWS": "2000", "TRAIN_DATA_SYNTH_TEST_ROWS": "500",
			"TRAIN_AUDIT_EXAMPLES": "400", "TRAIN_TRAIN_BATCH_SIZE": "128", "TRAIN_SEED": "11"}
		if _, err := cli(t, envm); err != nil {
			t.Fatal(err)
		}
		r, err := data.ReadTable(filepath.Join(out, "runs.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := os.ReadFile(filepath.Join(out, "audit.csv"))
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for _, c := range r.Columns {
			switch c.Name {
			case "test_auc", "test_logloss", "train_loss", "steps", "seed", "run_id":
				cols = append(cols, fmt.Sprint(c.Name, c.Values))
			}
		}
		return strings.Join(cols, "\n"), string(a)
	}
	r1, a1 := read(t.TempDir())
	r2, a2 := read(t.TempDir())
	if r1 != r2 {
		t.Fatalf("same seed, different runs:\n%s\n---\n%s", r1, r2)
	}
	if a1 != a2 {
		t.Fatalf("same seed, different audits:\n%s\n---\n%s", a1, a2)
	}
}

// An XLA backend without a plugin fails before any work, saying how to get
// one and that backend go works anywhere.
func TestMissingPluginFailsEarly(t *testing.T) {
	if _, ok := os.LookupEnv("PJRT_PLUGIN_LIBRARY_PATH"); ok {
		t.Skip("a PJRT plugin path is configured")
	}
	out := filepath.Join(t.TempDir(), "o")
	_, err := cli(t, map[string]string{"TRAIN_OUTPUT": out, "TRAIN_DATA_SYNTH_ROWS": "300", "TRAIN_DATA_SYNTH_TEST_ROWS": "50"},
		"run", "--set", "backend=xla:cuda")
	if err == nil || !strings.Contains(err.Error(), "PJRT_PLUGIN_LIBRARY_PATH") || !strings.Contains(err.Error(), `"go"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "releases")); err == nil {
		t.Fatal("releases were written before the backend check")
	}
}

// The audit's η sources: the true synthetic η and the kNN estimate.
func TestAuditEtaSources(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	for _, tc := range []struct{ eta, want string }{{"true", ",true,"}, {"knn", ",knn(k=20 rows=1000),"}} {
		t.Run(tc.eta, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "o")
			envm := map[string]string{"TRAIN_OUTPUT": out, "TRAIN_DATA_SYNTH_ROWS": "1500", "TRAIN_DATA_SYNTH_TEST_ROWS": "300",
				"TRAIN_AUDIT_EXAMPLES": "200", "TRAIN_AUDIT_ETA": tc.eta, "TRAIN_AUDIT_KNN_K": "20", "TRAIN_AUDIT_KNN_ROWS": "1000"}
			if _, err := cli(t, envm, "run", "--set", "pets=[{mechanism: rr, epsilon: 1}]"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(out, "audit.csv"))
			if err != nil || !strings.Contains(string(b), tc.want) {
				t.Fatalf("audit.csv (%v):\n%s", err, b)
			}
		})
	}
}

// Messages a person can act on: an audit before any fit says
// to fit first (not to add a clean model that is there), a config without a
// clean model says to add one, and a bot run says it trains nothing
// instead of printing a NaN loss and 0 ex/s.
func TestActionableMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	out := filepath.Join(t.TempDir(), "o")
	cfg := writeSweepConfig(t, out, "")
	_, err := cli(t, nil, "audit", "-c", cfg, "--set", "audit.eta=clean_model")
	if err == nil || !strings.Contains(err.Error(), "train fit") || strings.Contains(err.Error(), "add {mechanism: none}") {
		t.Fatalf("audit before fit: %v", err)
	}
	_, err = cli(t, nil, "audit", "-c", cfg, "--set", "audit.eta=clean_model", "--set", "pets=[{mechanism: rr, epsilon: 1}]")
	if err == nil || !strings.Contains(err.Error(), "add {mechanism: none}") {
		t.Fatalf("no clean model: %v", err)
	}
	o, err := cli(t, nil, "fit", "-c", cfg, "--set", "pets=[{mechanism: bot}]", "--set", "train.trials=1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(o, "constant predictor") || strings.Contains(o, "NaN") || strings.Contains(o, " 0 ex/s") {
		t.Fatalf("bot run output:\n%s", o)
	}
}
