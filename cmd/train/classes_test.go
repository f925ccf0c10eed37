package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
)

// TestCLIClasses: `train data synth --kind multiclass --classes C` and
// `train data import libsvm --classes C` make datasets of C classes, and
// `train privatize` releases such a dataset's labels through the
// mechanism's C-class form (the file's classes decide); a bad input — C >
// 64, a libsvm label ≥ C, a model that does not take C classes, a
// mechanism privatize cannot run — is one error naming the flag, line or
// key, and nothing is written.
func TestCLIClasses(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "syn")
	if _, err := cli(t, nil, "data", "synth", "--out", syn, "--kind", "multiclass", "--classes", "4", "--features", "6",
		"--rows", "400", "--test-rows", "40", "--seed", "3"); err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(syn)
	if err != nil || ds.Meta.NumClasses() != 4 || ds.Train.Dim() != 6 || ds.Train.EtaC == nil {
		t.Fatalf("multiclass dataset: %v", err)
	}
	env := userEnv(t)
	outbox := filepath.Join(dir, "outbox")
	out, err := cli(t, env, "privatize", "--in", filepath.Join(syn, data.TrainFile), "--pet", "llp_geom", "--k", "4",
		"--epsilon", "2", "--out", filepath.Join(outbox, "g.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "llp_geom(k=4, ε=2, C=4)") || !strings.Contains(out, "100 bags") {
		t.Fatalf("output %q", out)
	}
	g, err := data.ReadFrame(filepath.Join(outbox, "g.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if g.NumClasses() != 4 || g.AlphaC == nil || g.AlphaDebiasedC == nil || g.RawLabelColumns() != nil || g.Meta["classes"] != "4" {
		t.Fatalf("shipped llp_geom: %d classes, raw %v, metadata %v", g.NumClasses(), g.RawLabelColumns(), g.Meta)
	}
	if _, err := cli(t, env, "privatize", "--in", filepath.Join(syn, data.TrainFile), "--pet", "rr", "--epsilon", "1",
		"--out", filepath.Join(outbox, "r.arrow")); err != nil {
		t.Fatal(err)
	}
	r, err := data.ReadFrame(filepath.Join(outbox, "r.arrow"))
	if err != nil || r.NumClasses() != 4 || r.LabelRR == nil || r.Label != nil {
		t.Fatalf("shipped rr: %v", err)
	}

	// Bad inputs.
	if _, err := cli(t, nil, "data", "synth", "--out", filepath.Join(dir, "big"), "--kind", "multiclass", "--classes", "65",
		"--rows", "10"); err == nil || !strings.Contains(err.Error(), "classes must be in [2, 64]") {
		t.Fatalf("--classes 65: %v", err)
	}
	svm := filepath.Join(dir, "c3.libsvm")
	os.WriteFile(svm, []byte("0 3:1\n2 5:1\n1 7:1\n0 2:1\n3 9:1\n"), 0o644)
	_, err = cli(t, nil, "data", "import", "libsvm", "--in", svm, "--out", filepath.Join(dir, "c3"), "--classes", "3", "--test-rows", "2")
	if err == nil || !strings.Contains(err.Error(), "c3.libsvm:5:") || !strings.Contains(err.Error(), `"3"`) {
		t.Fatalf("label 3 of 3 classes: %v", err)
	}
	for _, d := range []string{filepath.Join(dir, "big"), filepath.Join(dir, "c3")} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s written by a refused command", d)
		}
	}
	os.WriteFile(svm, []byte("0 3:1\n2 5:1\n1 7:1\n0 2:1\n2 9:1\n1 4:1\n0 1:1\n2 8:1\n1 6:1\n"), 0o644)
	if _, err := cli(t, nil, "data", "import", "libsvm", "--in", svm, "--out", filepath.Join(dir, "c3"), "--classes", "3", "--test-rows", "6"); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "embed.yaml")
	res := filepath.Join(dir, "res")
	os.WriteFile(cfg, fmt.Appendf(nil, "output: %s\ndata: {path: %s}\nmodel: {kind: kdd_embed}\npets: [{mechanism: none}]\n",
		res, filepath.Join(dir, "c3")), 0o644)
	if _, err := cli(t, nil, "fit", "-c", cfg); err == nil || !strings.Contains(err.Error(), "model.kind") ||
		!strings.Contains(err.Error(), "3 classes") {
		t.Fatalf("kdd_embed on 3 classes: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res, "config.resolved.yaml")); err == nil {
		t.Error("config.resolved.yaml written before the refusal")
	}
	if _, err := cli(t, env, "privatize", "--in", filepath.Join(syn, data.TrainFile), "--pet", "rr_prior", "--epsilon", "1",
		"--out", filepath.Join(outbox, "p.arrow")); err == nil || !strings.Contains(err.Error(), "--pet") {
		t.Fatalf("rr_prior in privatize: %v", err)
	}
	for _, pet := range []string{"ara_event", "ara_summary"} {
		if _, err := cli(t, env, "privatize", "--in", filepath.Join(syn, data.TrainFile), "--pet", pet, "--epsilon", "1",
			"--out", filepath.Join(outbox, "p.arrow")); err == nil || !strings.Contains(err.Error(), "--pet") || !strings.Contains(err.Error(), "train run/fit/sweep") {
			t.Fatalf("%s in privatize: %v", pet, err)
		}
	}
}
