package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// araRun runs fit (fake executor), audit and report on c and returns the
// session, the executor and the audits by setting id.
func araRun(t *testing.T, c *config.Config) (*Session, *fakeExec, map[string]report.Audit) {
	t.Helper()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	runs, err := Fit(context.Background(), s, FitOptions{executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	audited, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Report(s, runs, audited); err != nil {
		t.Fatal(err)
	}
	by := map[string]report.Audit{}
	for _, a := range audited.Audits {
		by[a.Setting] = a
	}
	return s, ex, by
}

// runOf returns what the trainer of setting id's trial-0 run received.
func runOf(t *testing.T, ex *fakeExec, id string) *received {
	t.Helper()
	for _, rec := range ex.seen {
		if rec.run.Setting.ID == id && rec.run.Trial == 0 {
			return rec
		}
	}
	t.Fatalf("no run of %s reached the trainer", id)
	return nil
}

// Both Attribution Reporting kinds through the whole program on binary
// conversions (one trigger-data value, one window) with a key column:
// ara_event's release holds each row's state and its class; its trainer
// sees exactly the rows whose release is a class, each with its released
// label, trained by debiased_bce with rr's flip 1/(1+e^ε); ara_summary's
// release is one proportion per key group, whole, trained by propmatch on
// bags of every size (sized batches); the audit gives ara_summary its
// RMSRE₅ over the training releases' keys (and the others NaN), the
// ledger records both kinds, and the report is written.
func TestARAThroughPipeline(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	c.Data.Synth.Groups = 6
	c.Train.Trials, c.Train.LearningRates, c.Train.BatchSize = 2, []float64{0.01}, 128
	c.Pets = []config.PetConfig{{Mechanism: pets.None},
		{Mechanism: pets.ARAEvent, TriggerData: 1, Windows: 1, Reports: []int{2}, Epsilon: []float64{1}},
		{Mechanism: pets.ARASummary, Key: "group", BudgetShare: []config.BudgetShare{{Count: 0.5}}, Epsilon: []float64{4}}}
	c.Audit.Eta, c.Audit.RealizedDraws, c.Audit.Canaries, c.Audit.CalibrationRows = config.EtaTrue, 5, 300, 0
	s, ex, audits := araRun(t, c)

	const event, summary = "ara_event_eps1_t1_w1_r2", "ara_summary_eps4_key-group_count0.5"
	set := func(id string) *setting {
		for _, st := range s.settings {
			if st.ID == id {
				return st
			}
		}
		t.Fatalf("no setting %s", id)
		return nil
	}
	rel, err := data.ReadFrame(releasePath(out, set(event), 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rel.ARAState) != rel.Rows || rel.Meta["states"] != "3" {
		t.Fatalf("release: %d states of %d rows, metadata %v", len(rel.ARAState), rel.Rows, rel.Meta)
	}
	kept := map[int32]uint8{}
	for i, z := range rel.LabelRR {
		if z < 2 {
			kept[int32(rel.Row[i])] = z
		}
	}
	rec := runOf(t, ex, event)
	if rec.loss != model.LossDebiasedBCE || math.Abs(rec.params.FlipProb-1/(1+math.E)) > 1e-15 {
		t.Errorf("%s trained with %s, flip %v", event, rec.loss, rec.params.FlipProb)
	}
	seen := map[int32]bool{}
	for _, b := range rec.batches {
		for j, row := range b.RowIDs {
			z, ok := kept[row]
			if !ok || b.Target[j] != float32(z) {
				t.Fatalf("trained on row %d (target %v), whose release is %v (kept %v)", row, b.Target[j], z, ok)
			}
			seen[row] = true
		}
	}
	if b := rec.run.Plan.BatchSize; len(seen) != len(kept)/b*b || len(kept) == rel.Rows { // whole batches of the kept rows
		t.Errorf("trained on %d rows of the %d released as a class (of %d), batches of %d", len(seen), len(kept), rel.Rows, b)
	}

	rs := runOf(t, ex, summary)
	if rs.loss != model.LossPropMatch || !rs.run.Plan.SizedBags || len(rs.batches) == 0 || !rs.batches[0].Sized {
		t.Errorf("%s trained with %s, sized %v", summary, rs.loss, rs.run.Plan.SizedBags)
	}
	srel, err := data.ReadFrame(releasePath(out, set(summary), 0))
	if err != nil {
		t.Fatal(err)
	}
	if srel.Meta["bags"] != "6" || srel.Rows != 600 {
		t.Errorf("summary release: %d rows, metadata %v", srel.Rows, srel.Meta)
	}
	a := audits[summary]
	if !(a.RMSRE > 0) || !(a.RMSREExpected > 0) || a.RMSREKeys != 6 || a.NBags == 0 || !(a.EAdv > 0) || !(a.EAdv <= a.EAdvBound) {
		t.Errorf("summary audit: RMSRE %v (expected %v) over %d keys, %d bags, EAdv %v ≤ %v", a.RMSRE, a.RMSREExpected, a.RMSREKeys, a.NBags, a.EAdv, a.EAdvBound)
	}
	if e := audits[event]; !math.IsNaN(e.RMSRE) || !(e.EAdv > 0) || e.MAMax > 1+1e-9 || math.IsNaN(e.RealizedZ) {
		t.Errorf("event audit: RMSRE %v, EAdv %v, |MA| max %v, realized z %v", e.RMSRE, e.EAdv, e.MAMax, e.RealizedZ)
	}
	if _, err := stateOf(s.ledgerPath()); err != nil { // the people log composes both kinds
		t.Fatal(err)
	}
	rows, err := ledger.Read(s.ledgerPath())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, r := range rows {
		names[r.Mechanism.String()]++
	}
	if names["ara_event"] != 2 || names["ara_summary"] != 2 {
		t.Errorf("ledger rows by mechanism %v", names)
	}
}

// ara_event on labels of C = 5 classes (data synth --kind conversions,
// two trigger-data values in two windows), two reports: the trainer's
// rows are those released as a class, its loss forward_ce with the flip of
// rr over 5 classes, 4/(e^ε + 4); a source that does not fit the labels'
// classes is one config error naming its key.
func TestARAEventClassesThroughPipeline(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conv")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthConversions, Rows: 600, TestRows: 200, Features: 4, Seed: 3,
		Out: dir, TriggerData: 2, Windows: 2, ConversionRate: 0.4}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	c.Data.Path = dir
	c.Train.Trials, c.Train.LearningRates, c.Train.BatchSize = 1, []float64{0.01}, 64
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.ARAEvent, TriggerData: 2, Windows: 2, Reports: []int{2}, Epsilon: []float64{2}}}
	c.Audit.Eta, c.Audit.RealizedDraws, c.Audit.Canaries, c.Audit.CalibrationRows = config.EtaTrue, 5, 300, 0
	_, ex, audits := araRun(t, c)
	const id = "ara_event_eps2_t2_w2_r2"
	rec := runOf(t, ex, id)
	if want := 4 / (math.Exp(2) + 4); rec.loss != model.LossForwardCE || math.Abs(rec.params.FlipProb-want) > 1e-12 {
		t.Errorf("trained with %s, flip %v, want forward_ce with %v", rec.loss, rec.params.FlipProb, want)
	}
	rel, err := data.ReadFrame(releasePath(out, &setting{ID: id}, 0))
	if err != nil {
		t.Fatal(err)
	}
	kept := map[int32]uint8{}
	for i, z := range rel.LabelRR {
		if z < 5 {
			kept[int32(rel.Row[i])] = z
		}
	}
	for _, b := range rec.batches {
		for j, row := range b.RowIDs {
			z, ok := kept[row]
			if !ok || b.Target[j*5+int(z)] != 1 {
				t.Fatalf("trained on row %d, whose release is %v (a class: %v)", row, z, ok)
			}
		}
	}
	if a := audits[id]; !(a.EAdv > 0) || a.Classes != 5 || math.IsNaN(a.RealizedZ) {
		t.Errorf("audit: EAdv %v on %d classes, realized z %v", a.EAdv, a.Classes, a.RealizedZ)
	}

	for _, tc := range []struct {
		name    string
		t, w    int
		key     string
		mention string
	}{
		{"too few classes", 2, 1, "pets[1].windows", "fewer than the 5 classes"},
		{"more trigger data than classes", 5, 1, "pets[1].trigger_data", "more than the 5 classes"},
		{"as many classes, other windows", 4, 1, "pets[1].trigger_data", "2 trigger-data values in 2 windows"},
	} {
		c.Pets[1].TriggerData, c.Pets[1].Windows, c.Output = tc.t, tc.w, filepath.Join(t.TempDir(), "out2")
		_, err = Open(context.Background(), c, Exclusive, nil)
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Key != tc.key || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%s: %v", tc.name, err)
		}
		if _, err := os.Stat(filepath.Join(c.Output, "config.resolved.yaml")); err == nil {
			t.Errorf("%s: config.resolved.yaml written before the refusal", tc.name)
		}
	}
}

// ara_summary's bad inputs are refused when the session opens, one error
// naming the key, before anything is written: a key group larger than a
// batch (train.batch_size), a key column the dataset lacks (pets[1].key).
func TestARASummaryRefused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conv")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthConversions, Rows: 600, TestRows: 200, Features: 4, Seed: 3,
		Out: dir, TriggerData: 1, Windows: 1, Groups: 4}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key string
		batch     int
		want      string
	}{
		{"a group larger than a batch", "group", 64, "train.batch_size"},
		{"no such key", "campaign", 256, "pets[1].key"},
	} {
		c := testConfig(filepath.Join(t.TempDir(), "out"))
		c.Data.Path, c.Train.BatchSize = dir, tc.batch
		c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.ARASummary, Key: tc.key, BudgetShare: []config.BudgetShare{{Count: 1}}, Epsilon: []float64{1}}}
		_, err := Open(context.Background(), c, Exclusive, nil)
		var fe *config.FieldError
		if !errors.As(err, &fe) || fe.Key != tc.want || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", tc.name, err)
		}
		if _, err := os.Stat(filepath.Join(c.Output, "config.resolved.yaml")); err == nil {
			t.Errorf("%s: config.resolved.yaml written before the refusal", tc.name)
		}
	}
}
