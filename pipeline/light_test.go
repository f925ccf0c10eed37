package pipeline

import (
	"context"
	"labelprivacy/config"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"labelprivacy/llp"
	"labelprivacy/pets"
)

// A session that never trains (train audit) reads, of the training split,
// only its labels and key columns: no features, η or ids; its
// standardization (fitted on the training file a batch at a time) and its
// standardized test rows are the full session's, bit for bit.
func TestLightSessionLoadsNoTrainingFeatures(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	full := openTest(t, c)
	full.Close()
	light, err := open(context.Background(), c, nil, openOptions{access: Exclusive, light: true})
	if err != nil {
		t.Fatal(err)
	}
	defer light.Close()
	tr := light.train
	if tr.Rows != full.train.Rows || len(tr.X) != 0 || tr.Eta != nil || light.ids != nil || !slices.Equal(tr.Label, full.train.Label) {
		t.Fatalf("light training frame: %d rows, %d feature values, η %v", tr.Rows, len(tr.X), tr.Eta != nil)
	}
	if full.train.Eta != nil {
		t.Fatal("a fitting session loaded the training rows' η, which nothing reads")
	}
	if !reflect.DeepEqual(light.std, full.std) || light.std == nil {
		t.Fatalf("standardizer %+v, want the full session's %+v", light.std, full.std)
	}
	if !slices.Equal(light.test.X, full.test.X) {
		t.Fatal("the light session's test features differ")
	}
}

// train audit (a light session) writes the audit of train run, byte for
// byte: η from the k nearest training rows (a subsample read from the
// file), sorted bags and RR.
func TestAuditAloneMatchesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("trains and audits")
	}
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{1}, Bags: []llp.Rule{{Kind: llp.RuleSorted, Column: "x1"}}}}
	c.Audit.Eta, c.Audit.KNNK, c.Audit.KNNRows = config.EtaKNN, 7, 250
	c.Audit.RealizedDraws, c.Audit.Canaries = 3, 200
	if err := Run(context.Background(), c, nil, StageAll); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(c.Output, "audit.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), c, nil, StageAudit); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(c.Output, "audit.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("train audit wrote\n%s\ntrain run wrote\n%s", got, want)
	}
}
