package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/ara"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// araValuesConfig is ara_summary on a small synthetic dataset of values
// with a key column of 6 groups (~330 training rows each).
func araValuesConfig(out string) *config.Config {
	c := testConfig(out)
	c.Data.Synth.Kind, c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Data.Synth.Groups = data.SynthValues, 2000, 1200, 6
	c.Train.Trials, c.Train.LearningRates, c.Train.BatchSize = 2, []float64{0.003}, 512
	c.Pets = []config.PetConfig{{Mechanism: pets.Bot},
		{Mechanism: pets.ARASummary, Key: "group", BudgetShare: []config.BudgetShare{{Value: 0.5}}, Epsilon: []float64{8}}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = config.EtaTrue, 300, 3, 300
	return c
}

// ara_summary on values through fit (fake executor), audit and report:
// the release is one mean per key group (6 bags, metadata with the
// value's share and scale B/(v·ε) = 100); the trainer gets bag_mse on
// sized batches whose targets are the groups' released means in units of
// B; the audit gives the R²- and τ-advantage (within its worst case) on
// the 6 key groups of the audit examples, and RMSRE₅ equal to Noise Lab's
// formula recomputed here from the training releases' key sums; the
// ledger charges ε = 8 once per release.
func TestARASummaryValuesThroughPipeline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	c := araValuesConfig(out)
	s, ex, audits := araRun(t, c)
	const id = "ara_summary_eps8_key-group_value0.5"
	var set *setting
	for _, st := range s.settings {
		if st.ID == id {
			set = st
		}
	}
	if set == nil {
		t.Fatalf("no setting %s", id)
	}
	var rmsre float64
	for trial := range 2 {
		rel, err := data.ReadFrame(releasePath(out, set, trial))
		if err != nil {
			t.Fatal(err)
		}
		if rel.Meta["bags"] != "6" || rel.Meta["budget_share_value"] != "0.5" || rel.Meta["value_noise_scale"] != "100" || rel.Rows != 2000 || rel.BagMean == nil {
			t.Fatalf("release: %d rows, metadata %v", rel.Rows, rel.Meta)
		}
		ns, ts := map[int64]float64{}, map[int64]float64{} // per bag: Σ of its rows' released mean = the released sum
		for i, b := range rel.BagID {
			ns[b] += rel.BagMean[i]
			ts[b] += s.train.Value[rel.Row[i]]
		}
		var noisy, truth []float64
		for b := range ns {
			noisy, truth = append(noisy, ns[b]), append(truth, ts[b])
		}
		rmsre += ara.RMSRE(noisy, truth, ara.RMSREThreshold) / 2
	}
	rec := runOf(t, ex, id)
	if rec.loss != model.LossBagMSE || !rec.run.Plan.SizedBags || len(rec.batches) == 0 || !rec.batches[0].Sized {
		t.Fatalf("trained with %s, sized %v", rec.loss, rec.run.Plan.SizedBags)
	}
	rel, _ := data.ReadFrame(releasePath(out, set, 0))
	mean := map[int32]float64{}
	for i, r := range rel.Row {
		mean[int32(r)] = rel.BagMean[i] / 400
	}
	for _, b := range rec.batches {
		slots := b.BagSize
		for j, row := range b.RowIDs {
			u := int(b.Target[2*slots+j])
			if u < 0 {
				continue
			}
			if got, want := float64(b.Target[u]), mean[row]; math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
				t.Fatalf("row %d trained on the mean %v, its group released %v", row, got, want)
			}
		}
	}
	a := audits[id]
	switch {
	case a.RMSREKeys != 6 || math.Abs(a.RMSRE-rmsre) > 1e-12*rmsre || !(a.RMSREExpected > 0):
		t.Errorf("RMSRE %v (recomputed %v, expected %v) over %d keys", a.RMSRE, rmsre, a.RMSREExpected, a.RMSREKeys)
	case !(a.R2Adv > 0 && a.R2Adv < 1) || !(a.TauAdv <= a.TauAdvBound+1e-12) || a.NBags != 6:
		t.Errorf("audit: R²-adv %v, τ-adv %v ≤ %v, %d bags", a.R2Adv, a.TauAdv, a.TauAdvBound, a.NBags)
	}
	if b := audits["bot"]; !math.IsNaN(b.RMSRE) {
		t.Errorf("bot's RMSRE %v, want NaN", b.RMSRE)
	}
	rows, err := ledger.Read(s.ledgerPath())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Mechanism.String() == "ara_summary" {
			n++
			if r.Epsilon != 8 {
				t.Errorf("ledger charges ε %v, want 8", r.Epsilon)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d ledger rows of ara_summary, want one per trial's release", n)
	}
}

// ara_summary's budget split against the labels, refused by open with one
// line naming the key, before a byte of output is written: a value share
// on binary conversions, a count share on values (with a value share, or
// alone), shares above 1 and ε above 64 (the config's checks), and a key
// column the dataset of values lacks.
func TestARASummaryValuesRefused(t *testing.T) {
	root := t.TempDir()
	synth := func(name string, o data.SynthOptions) string {
		dir := filepath.Join(root, name)
		o.Out, o.Rows, o.TestRows, o.Features, o.Seed, o.Groups = dir, 400, 200, 3, 1, 4
		if _, err := data.Synth(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	values := synth("values", data.SynthOptions{Kind: data.SynthValues})
	binary := synth("binary", data.SynthOptions{Kind: data.SynthLogistic})
	for _, tc := range []struct {
		name, dir, key string
		share          config.BudgetShare
		eps            float64
		want           string
	}{
		{"a value share on binary conversions", binary, "group", config.BudgetShare{Value: 1}, 4, "pets[1].budget_share[0]"},
		{"a count and a value share on binary conversions", binary, "group", config.BudgetShare{Count: 0.5, Value: 0.5}, 4, "pets[1].budget_share[0]"},
		{"a count share with the value's on values", values, "group", config.BudgetShare{Count: 0.5, Value: 0.5}, 4, "pets[1].budget_share[0]"},
		{"a count share alone on values", values, "group", config.BudgetShare{Count: 1}, 4, "pets[1].budget_share[0]"},
		{"shares above 1", values, "group", config.BudgetShare{Count: 0.25, Value: 0.9}, 4, "pets[1].budget_share[0]"},
		{"ε above 64", values, "group", config.BudgetShare{Value: 1}, 65, "pets[1].epsilon[0]"},
		{"no such key", values, "campaign", config.BudgetShare{Value: 1}, 4, "pets[1].key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			c.Data.Path, c.Train.BatchSize, c.Audit.Eta = tc.dir, 256, config.EtaTrue
			c.Pets = []config.PetConfig{{Mechanism: pets.Bot},
				{Mechanism: pets.ARASummary, Key: tc.key, BudgetShare: []config.BudgetShare{tc.share}, Epsilon: []float64{tc.eps}}}
			err := c.Validate()
			if err == nil {
				_, err = open(context.Background(), c, nil, openOptions{access: Exclusive, audit: true})
			}
			if err == nil {
				t.Fatalf("no error, want one naming %s", tc.want)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("%q, want one line naming %s", msg, tc.want)
			}
			if _, err := os.Stat(c.Output); !os.IsNotExist(err) {
				t.Fatalf("the refused open left its output folder: %v", err)
			}
		})
	}
}

// ara_summary on values trained for real (the model's bag_mse on sized
// batches), audited and reported: every run has a finite test MSE, and
// audit.csv's rmsre, rmsre_expected and rmsre_keys are those of its keys.
func TestARASummaryValuesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains, audits and reports ara_summary on values")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	c := araValuesConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Trials, c.Train.Epochs = 1, 3
	if err := Run(context.Background(), c, nil, StageAll); err != nil {
		t.Fatal(err)
	}
	runs := resultRows(t, c.Output, "runs.csv")
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2", len(runs))
	}
	for _, r := range runs {
		if mse := num(t, r["test_mse"]); !(mse > 0) || math.IsInf(mse, 0) {
			t.Errorf("run %s: test_mse %s", r["setting"], r["test_mse"])
		}
	}
	for _, r := range resultRows(t, c.Output, "audit.csv") {
		if r["setting"] != "ara_summary_eps8_key-group_value0.5" {
			continue
		}
		if got, exp := num(t, r["rmsre"]), num(t, r["rmsre_expected"]); !(got > 0) || !(exp > 0) || r["rmsre_keys"] != "6" {
			t.Errorf("audit.csv: rmsre %v, rmsre_expected %v, rmsre_keys %s", got, exp, r["rmsre_keys"])
		}
		return
	}
	t.Error("no audit row of ara_summary")
}
