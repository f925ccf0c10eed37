package report

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// roundTrip writes t as Parquet and reads it back.
func roundTrip(t *testing.T, tab *data.Table) *data.Table {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := tab.WriteParquet(path); err != nil {
		t.Fatal(err)
	}
	back, err := data.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func columnNames(t *data.Table) []string {
	var names []string
	for _, c := range t.Columns {
		names = append(names, c.Name)
	}
	return names
}

func sprint(v any) string { return fmt.Sprintf("%+v", v) }

// equalNaN is reflect.DeepEqual on values whose float fields may be NaN:
// both are compared through their %v rendering, where NaN prints as NaN.
func equalNaN(a, b any) bool {
	return reflect.DeepEqual(a, b) || sprint(a) == sprint(b)
}

func fullAudit() Audit {
	return Audit{Dataset: "sha256:00aa", ConfigID: "cfg:0b", Setting: "llp_k8", Pet: pets.LLP, K: 8, Epsilon: 0, EtaSource: "clean_model(lr=0.001)",
		Summary: audit.Summary{Mechanism: "llp(k=8)", Kind: pets.LLP, K: 8, Classes: 2, Epsilon: math.Inf(1), NExamples: 96, NDropped: 4,
			NBags: 12, LabelDraws: 3, EAdv: 0.0193, EAdvSE: math.NaN(), SEUnit: "bag", MAP50: 0.5, MAP90: 2, MAP98: math.Inf(1),
			MAP99: math.Inf(1), MAMax: math.Inf(1), MAInfFrac: 0.61, MACount: 288,
			EAdvBound: math.NaN(), RealizedDraws: 20, RealizedGain: 0.0187, RealizedGainSE: 0.0009, RealizedZ: -0.4,
			Canaries: 1200, EpsLower: 1.7, EpsLowerRealBags: 0.9},
		CalibrationRows: 500, EtaECE: 0.021, EtaBrier: 0.18, EAdvCalibrated: 0.0171, EAdvTrue: 0.0175,
		EtaTrials: 3, EAdvTrialMin: 0.0188, EAdvTrialMax: 0.0199,
		ModelRuns: 3, ModelRows: 1000, ModelPrior: "true", ModelAdv: 0.004, ModelAdvSE: 0.002, ModelReleaseAdv: 0.019,
		ModelAdvNonmember: -0.001, ModelAdvNonmemberSE: 0.0021, ModelCanaries: 500, EpsLowerModel: 0.2, ModelCanaryAUC: 0.71,
		RMSRE: 0.124, RMSREExpected: 0.118, RMSREKeys: 40}
}

func TestAuditTable(t *testing.T) {
	a := fullAudit()
	b := fullAudit()
	b.Setting, b.Pet, b.Kind, b.K, b.Summary.K, b.Epsilon, b.Summary.Epsilon = "rr_eps1", pets.RR, pets.RR, 0, 0, 1, 1
	b.MAP98, b.MAInfFrac, b.SEUnit, b.EAdvSE = 1, 0, "example", 0.0001
	// A C-class audit whose bags' IEAdv were estimated.
	c := fullAudit()
	c.Setting, c.Pet, c.Kind, c.Epsilon, c.Summary.Epsilon, c.Mechanism = "llp_geom_k8_eps2", pets.LLPGeom, pets.LLPGeom, 2, 2, "llp_geom(k=8, ε=2, C=10)"
	c.Summary.Classes, c.EAdvEstimated, c.BagDraws, c.EAdvBound, c.EpsLowerRealBags = 10, true, 32, 0.08, math.NaN()
	in := []Audit{a, b, c}
	tab := AuditTable(in)
	want := []string{"setting", "pet", "k", "epsilon", "eta_source", "n_examples", "n_dropped", "eadv", "eadv_se",
		"ma_p50", "ma_p90", "ma_p98", "ma_p99", "ma_max", "ma_inf_frac",
		"dataset", "label_dp_epsilon", "mechanism", "n_bags", "label_draws", "se_unit", "ma_count",
		"eadv_bound", "realized_draws", "realized_gain", "realized_gain_se", "realized_z", "canaries", "eps_lower",
		"calibration_rows", "eta_ece", "eta_brier", "eadv_calibrated", "eadv_true", "eta_trials", "eadv_trial_min", "eadv_trial_max", "config_id", "ma_mean", "eps_lower_real_bags", "classes",
		"eadv_estimated", "bag_draws", "model_runs", "model_rows", "model_prior", "model_adv", "model_adv_se", "model_release_adv",
		"model_adv_nonmember", "model_adv_nonmember_se", "model_canaries", "eps_lower_model", "model_canary_auc",
		"rmsre", "rmsre_expected", "rmsre_keys",
		"value_max", "value_step", "tau", "r2_adv", "r2_adv_se", "r2_adv_ratio", "tau_adv", "tau_adv_se", "tau_adv_bound", "tau_blind",
		"realized_r2", "realized_r2_se"}
	if names := columnNames(tab); !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	got, err := ReadAudits(roundTrip(t, tab))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNaN(got, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
	}

	// The first format (no dataset …ma_count) reads with those zero/NaN and
	// Summary.Kind/K taken from pet/k.
	old := AuditTable(in[:1])
	old.Columns = old.Columns[:15]
	got, err = ReadAudits(old)
	if err != nil {
		t.Fatal(err)
	}
	g := got[0]
	if g.Dataset != "" || !math.IsNaN(g.Summary.Epsilon) || g.NBags != 0 || g.Kind != pets.LLP || g.Summary.K != 8 || g.EAdv != 0.0193 {
		t.Fatalf("first format read as %+v", g)
	}

	// The format before the self-checks (through ma_count) reads their
	// figures as NaN and their counts as 0.
	mid := AuditTable(in[:1])
	mid.Columns = mid.Columns[:22]
	if got, err = ReadAudits(mid); err != nil {
		t.Fatal(err)
	}
	if g := got[0]; !math.IsNaN(g.RealizedGain) || !math.IsNaN(g.EpsLower) || !math.IsNaN(g.EtaECE) || !math.IsNaN(g.EAdvBound) ||
		g.Canaries != 0 || g.RealizedDraws != 0 || g.EAdv != 0.0193 || g.MACount != 288 {
		t.Fatalf("format before the self-checks read as %+v", g)
	}

	// The format before the real-bags canary game (through ma_mean) reads
	// eps_lower_real_bags as NaN and keeps eps_lower.
	prev := AuditTable(in[:1])
	prev.Columns = prev.Columns[:slices.Index(columnNames(prev), "eps_lower_real_bags")]
	if got, err = ReadAudits(prev); err != nil {
		t.Fatal(err)
	}
	if g := got[0]; !math.IsNaN(g.EpsLowerRealBags) || g.EpsLower != 1.7 {
		t.Fatalf("format before eps_lower_real_bags read as %+v", g)
	}

	// The format before classes (through eps_lower_real_bags) reads as
	// binary: classes 2.
	binary := AuditTable(in[2:])
	binary.Columns = binary.Columns[:slices.Index(columnNames(binary), "classes")]
	if got, err = ReadAudits(binary); err != nil || got[0].Classes != 2 || got[0].EAdvBound != 0.08 {
		t.Fatalf("format before classes read as %+v, %v", got, err)
	}

	// The format before eadv_estimated and bag_draws (through classes)
	// reads them as false and 0, keeping classes.
	noEst := AuditTable(in[2:])
	noEst.Columns = noEst.Columns[:slices.Index(columnNames(noEst), "eadv_estimated")]
	if got, err = ReadAudits(noEst); err != nil || got[0].Classes != 10 || got[0].EAdvEstimated || got[0].BagDraws != 0 {
		t.Fatalf("format before eadv_estimated read as %+v, %v", got, err)
	}

	// The format before the model attack (through bag_draws) reads its
	// figures as NaN and its counts as 0.
	noModel := AuditTable(in[:1])
	noModel.Columns = noModel.Columns[:slices.Index(columnNames(noModel), "model_runs")]
	if got, err = ReadAudits(noModel); err != nil || got[0].ModelRuns != 0 || !math.IsNaN(got[0].ModelAdv) ||
		!math.IsNaN(got[0].EpsLowerModel) || got[0].ModelPrior != "" || got[0].EpsLower != 1.7 {
		t.Fatalf("format before the model attack read as %+v, %v", got, err)
	}

	bad := AuditTable(in)
	bad.Columns[1].Values = []string{"llp", "nope", "llp_geom"}
	var re *RowError
	if _, err := ReadAudits(bad); !errors.As(err, &re) || re.Row != 1 || re.Table != "audit" {
		t.Fatalf("bad pet: err %v", err)
	}
	miss := AuditTable(in)
	miss.Columns = miss.Columns[1:]
	if _, err := ReadAudits(miss); !errors.Is(err, data.ErrSchema) {
		t.Fatalf("missing setting: err %v", err)
	}
}

// TestCalibrationTable: reliability tables round-trip through Parquet (one
// row per bin, two tables kept apart, NaN in empty bins) and an unknown
// column type is refused.
func TestCalibrationTable(t *testing.T) {
	mk := func(ds string, n int) Calibration {
		c := Calibration{Dataset: ds, EtaSource: "clean_model(lr=0.001)",
			Calibration: audit.Calibration{N: n, ECE: 0.02, Brier: 0.17}}
		for b := range 10 {
			cb := audit.CalBin{Lo: float64(b) / 10, Hi: float64(b+1) / 10, N: b * 7, MeanEta: math.NaN(), Rate: math.NaN()}
			if cb.N > 0 {
				cb.MeanEta, cb.Rate = cb.Lo+0.05, cb.Lo+0.03
			}
			c.Bins = append(c.Bins, cb)
		}
		return c
	}
	in := []Calibration{mk("sha256:aa", 315), mk("sha256:bb", 315)}
	tab := CalibrationTable(in)
	want := []string{"dataset", "eta_source", "rows", "ece", "brier", "bin", "lo", "hi", "n", "mean_eta", "rate", "config_id"}
	if names := columnNames(tab); !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	got, err := ReadCalibration(roundTrip(t, tab))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNaN(got, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, in)
	}
	if got, err := ReadCalibration(roundTrip(t, CalibrationTable(nil))); err != nil || len(got) != 0 {
		t.Fatalf("empty table: %v, %v", got, err)
	}
}

func TestPosteriorTable(t *testing.T) {
	var in []Posterior
	for i := range 8 { // RR ε=1 on four examples, then LLP k=4 on a bag of four, one fully exposed
		p := Posterior{Dataset: "sha256:00aa", ConfigID: "cfg:0b", Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1,
			Sample: audit.Sample{Index: i, Prior: 0.05 + 0.1*float64(i), Label: uint8(i % 2), Release: float64(i % 3 % 2)}}
		if i >= 4 {
			p.Setting, p.Pet, p.K, p.Epsilon, p.Release = "llp_k4", pets.LLP, 4, 0, 1
		}
		p.Posterior, p.IEAdv = p.Prior*0.9, 0.01*float64(i)
		p.AbsMA = math.Abs(math.Log(p.Posterior/(1-p.Posterior)) - math.Log(p.Prior/(1-p.Prior)))
		if i == 5 {
			p.Posterior, p.AbsMA = 1, math.Inf(1)
		}
		in = append(in, p)
	}
	tab := PosteriorTable(in)
	want := []string{"setting", "pet", "k", "epsilon", "prior", "posterior", "ieadv", "abs_ma", "dataset", "index", "label", "release", "config_id"}
	if names := columnNames(tab); !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	got, err := ReadPosteriors(roundTrip(t, tab))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNaN(got, in) {
		t.Fatal("posteriors differ after a Parquet round trip")
	}
	var hasInf, hasLabel bool
	for _, p := range got {
		hasInf = hasInf || math.IsInf(p.AbsMA, 1)
		hasLabel = hasLabel || p.Label == 1
	}
	if !hasInf || !hasLabel {
		t.Fatalf("fixture should hold an infinite |MA| and a label 1 (%v %v)", hasInf, hasLabel)
	}
	old := PosteriorTable(in)
	old.Columns = old.Columns[:8]
	got, err = ReadPosteriors(old)
	if err != nil {
		t.Fatal(err)
	}
	if got[5].Dataset != "" || got[5].Index != 0 || !math.IsNaN(got[5].Release) || got[5].Prior != in[5].Prior {
		t.Fatalf("first format read as %+v", got[5])
	}
}

// TestAuditClassesOneField: an Audit's class count C is audit.Summary's
// Classes, promoted (no outer field shadowing it, which once let the two
// disagree), and the classes column reads into it.
func TestAuditClassesOneField(t *testing.T) {
	f, ok := reflect.TypeOf(Audit{}).FieldByName("Classes")
	if !ok || len(f.Index) != 2 || reflect.TypeOf(Audit{}).Field(f.Index[0]).Type != reflect.TypeOf(audit.Summary{}) {
		t.Fatalf("Audit.Classes is %+v, want audit.Summary's", f)
	}
	a := fullAudit()
	a.Summary.Classes = 7
	got, err := ReadAudits(roundTrip(t, AuditTable([]Audit{a})))
	if err != nil || got[0].Summary.Classes != 7 {
		t.Fatalf("classes read as %+v, %v", got, err)
	}
}

// The estimated-E[adv] note counts releases per bag in English: "1
// release per bag", "400 releases per bag".
func TestWriteEstimatedCounts(t *testing.T) {
	var b strings.Builder
	as := make([]Audit, 3)
	for i, n := range []int{1, 400, 7} {
		as[i].Setting, as[i].EAdvEstimated, as[i].BagDraws = string(rune('a'+i)), i < 2, n
	}
	writeEstimated(&b, as)
	got := b.String()
	for _, want := range []string{"`a` (1 release per bag), `b` (400 releases per bag)."} {
		if !strings.Contains(got, want) {
			t.Errorf("note %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "`c`") {
		t.Errorf("note %q names c, whose E[adv] is exact", got)
	}
}

func fullModelAttack() ModelAttack {
	return ModelAttack{Dataset: "sha256:00aa", ConfigID: "cfg:0b", Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1, RunID: "0123456789abcdef",
		LR: 0.001, Trial: 2, Prior: "true", Rows: 1000, ModelAcc: 0.71, PriorAcc: 0.7, Adv: 0.01, AdvSE: 0.004, ReleaseAdv: 0.04,
		Expected: 0.009, Excess: 0.001, Slack: 0.02, Z: 0.2, NonmemberRows: 500, NonmemberAcc: 0.69, NonmemberAdv: -0.002,
		NonmemberAdvSE: 0.005}
}

// model_attack.csv has its schema's columns and reads back what it wrote
// (NaN where the true η is missing; k of a kind without k empty).
func TestModelAttackTable(t *testing.T) {
	a, b := fullModelAttack(), fullModelAttack()
	b.Setting, b.Pet, b.K, b.Epsilon, b.Prior, b.ReleaseAdv, b.Z = "llp_k8", pets.LLP, 8, 0, "knn(k=100 rows=1000)", math.NaN(), math.NaN()
	tab := ModelAttackTable([]ModelAttack{a, b})
	if names := columnNames(tab); !reflect.DeepEqual(names, modelAttackSchema.names()) || names[0] != "dataset" || names[len(names)-1] != "model_adv_nonmember_se" {
		t.Fatalf("columns %v", names)
	}
	got, err := ReadModelAttacks(roundTrip(t, tab))
	if err != nil {
		t.Fatal(err)
	}
	if !equalNaN(got, []ModelAttack{a, b}) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, []ModelAttack{a, b})
	}
}
