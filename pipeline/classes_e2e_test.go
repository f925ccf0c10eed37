package pipeline

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
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
