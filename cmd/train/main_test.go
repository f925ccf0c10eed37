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

	"labelprivacy/data"
)

// cli runs the command line in-process with a controlled environment.
func cli(t *testing.T, envm map[string]string, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb, mapEnv(envm))
	root.SetArgs(args)
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
}

// `train` with no arguments runs the embedded quickstart; here shrunk through
// the environment so the test stays fast.
func TestCLIDefaultRun(t *testing.T) {
	outDir := filepath.Join(t.TempDir(), "qs")
	envm := map[string]string{"TRAIN_OUTPUT": outDir, "TRAIN_DATA_SYNTH_ROWS": "2000", "TRAIN_DATA_SYNTH_TEST_ROWS": "500"}
	out, err := cli(t, envm)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"config.resolved.yaml", "data: wrote", "privatize: 4 releases written", "privacy_ledger.csv"} {
		if !strings.Contains(out, want) {
			t.Fatalf("output %q lacks %q", out, want)
		}
	}
	if _, err := os.Stat(filepath.Join(outDir, "config.resolved.yaml")); err != nil {
		t.Fatal(err)
	}
	// A second run reuses the synthetic dataset.
	out, err = cli(t, envm, "run")
	if err != nil || !strings.Contains(out, "data: reusing") || !strings.Contains(out, "0 releases written, 4 reused") {
		t.Fatalf("second run: %v, %q", err, out)
	}
}
