package report

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// fullRun has every field set to a distinct value.
func fullRun() Run {
	return Run{
		RunID: "0123456789abcdef", Dataset: "sha256:00aa11bb22cc33dd", ConfigID: "cfg0123", Model: "higgs_mlp",
		Setting: "llp_geom_k8_eps1", Pet: pets.LLPGeom, K: 8, Epsilon: 1, LabelDPEpsilon: 1, Loss: "propmatch",
		LR: 1e-3, Trial: 2, Seed: 1<<63 + 5, Epochs: 3, Steps: 1234, TrainLoss: 0.25, TestAUC: 0.71, TestAccuracy: 0.66, Classes: 2,
		TestLogLoss: 0.52, WallS: 12.5, ExamplesPerS: 3600, GroupExamplesPerS: 28800, CompileS: 4.5,
		CheckpointS: 0.75, Backend: "go", Replicas: 8, TestMSE: math.NaN(), TestR2: math.NaN(), TestMAE: math.NaN(),
		Standardization: &Standardization{Mean: []float64{1, -2.5}, Std: []float64{0.5, 3}},
	}
}

// runsEqual compares runs field by field, NaN equal to NaN.
func runsEqual(a, b Run) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		fa, fb := va.Field(i), vb.Field(i)
		if sa, ok := fa.Interface().(*Standardization); ok {
			sb := fb.Interface().(*Standardization)
			if (sa == nil) != (sb == nil) || sa != nil && (!sameFloats(sa.Mean, sb.Mean) || !sameFloats(sa.Std, sb.Std)) {
				return false
			}
			continue
		}
		if fa.Kind() == reflect.Float64 {
			if !sameFloat(fa.Float(), fb.Float()) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			return false
		}
	}
	return true
}

// runJSON, derived from runSchema, has Run's fields in Run's order
// (copyFields relies on it), floats of Run being jfloats, each keyed by
// its column's name; every column of runs.csv is a key of the record.
func TestRunJSONFields(t *testing.T) {
	r, j := reflect.TypeFor[Run](), runJSON
	if r.NumField() != j.NumField() {
		t.Fatalf("Run has %d fields, runJSON %d", r.NumField(), j.NumField())
	}
	keys := map[string]bool{}
	for i := range r.NumField() {
		fr, fj := r.Field(i), j.Field(i)
		want := fr.Type
		if want.Kind() == reflect.Float64 {
			want = reflect.TypeFor[jfloat]()
		}
		if fr.Name != fj.Name || fj.Type != want {
			t.Errorf("field %d: Run.%s %v, runJSON.%s %v", i, fr.Name, fr.Type, fj.Name, fj.Type)
		}
		keys[strings.Split(fj.Tag.Get("json"), ",")[0]] = true
	}
	for _, n := range runSchema.names() {
		if !keys[n] {
			t.Errorf("column %s is not a key of the JSON record", n)
		}
	}
	if !keys["standardization"] {
		t.Error("the JSON record has no standardization")
	}
}

// A schema that misses a field of its record type, or stores one field
// twice, derives no JSON record: it panics when the package loads.
func TestJSONTypeIncompleteSchema(t *testing.T) {
	for name, s := range map[string]schema[Run]{
		"a field without a column": {name: "runs", cols: runSchema.cols[1:]},
		"a field stored twice": {name: "runs", cols: append(slices.Clone(runSchema.cols),
			strCol("dataset_again", func(r *Run) *string { return &r.Dataset }))},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			s.jsonType()
		})
	}
	// A column storing a field of a nested struct that starts where the
	// struct does stores that field, not the struct.
	type nested struct {
		Inner struct{ X float64 }
		Y     string
	}
	defer func() {
		if recover() == nil {
			t.Error("a column of Inner.X taken for Inner")
		}
	}()
	schema[nested]{name: "nested", cols: []column[nested]{
		f64Col("x", func(n *nested) *float64 { return &n.Inner.X }),
		strCol("y", func(n *nested) *string { return &n.Y }),
	}}.jsonType()
}

func TestRunJSONRoundTrip(t *testing.T) {
	nonFinite := fullRun()
	nonFinite.TestAUC, nonFinite.LabelDPEpsilon, nonFinite.TrainLoss = math.NaN(), math.Inf(1), math.Inf(-1)
	nonFinite.Standardization = &Standardization{Mean: []float64{math.NaN()}, Std: []float64{math.Inf(1)}}
	noStd := fullRun()
	noStd.Standardization = nil
	cases := []struct {
		name string
		run  Run
		want []string // substrings of the JSON
	}{
		{"every field", fullRun(), []string{`"pet":"llp_geom"`, `"seed":9223372036854775813`, `"standardization":{"mean":[1,-2.5],"std":[0.5,3]}`, `"replicas":8`}},
		{"NaN and ±Inf as strings", nonFinite, []string{`"test_auc":"nan"`, `"label_dp_epsilon":"inf"`, `"train_loss":"-inf"`, `"mean":["nan"]`, `"std":["inf"]`}},
		{"no standardization", noStd, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.run)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON lacks %s:\n%s", w, b)
				}
			}
			if tc.run.Standardization == nil && strings.Contains(string(b), "standardization") {
				t.Errorf("nil standardization written: %s", b)
			}
			var back Run
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !runsEqual(back, tc.run) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back, tc.run)
			}
		})
	}
}

// A runs/<id>.json written before config_id and the timing fields existed
// reads with those floats NaN (unknown), not 0.
func TestRunJSONFirstFormat(t *testing.T) {
	old := `{"run_id":"ab","dataset":"synth:beta:rows=100","model":"mlp","setting":"rr_eps1","pet":"rr","k":0,
	"epsilon":1,"label_dp_epsilon":1,"loss":"rr_debiased","lr":0.001,"trial":0,"seed":7,"epochs":2,"steps":10,
	"train_loss":0.6,"test_auc":"nan","test_logloss":0.7,"wall_s":1.5,"examples_per_s":1000,"backend":"go","extra":1}`
	var r Run
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if r.Pet != pets.RR || r.LR != 0.001 || r.Seed != 7 || !math.IsNaN(r.TestAUC) || r.WallS != 1.5 {
		t.Fatalf("old fields: %+v", r)
	}
	if r.ConfigID != "" || !math.IsNaN(r.CompileS) || !math.IsNaN(r.GroupExamplesPerS) || !math.IsNaN(r.CheckpointS) || r.Replicas != 0 {
		t.Fatalf("new fields of an old file: %+v", r)
	}
}

func TestRunJSONErrors(t *testing.T) {
	cases := []struct{ name, json string }{
		{"unknown mechanism", `{"pet":"gauss"}`},
		{"bad float string", `{"test_auc":"high"}`},
		{"float of wrong type", `{"lr":[1]}`},
		{"uneven standardization", `{"standardization":{"mean":[1,2],"std":[1]}}`},
		{"not an object", `[1,2]`},
		{"truncated", `{"run_id":"ab","test_auc":0.`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r Run
			if err := json.Unmarshal([]byte(tc.json), &r); err == nil {
				t.Fatalf("no error; got %+v", r)
			}
		})
	}
}

// FuzzRunJSON: no input panics the run parser, and what it accepts
// re-encodes to a fixed point.
func FuzzRunJSON(f *testing.F) {
	b, _ := json.Marshal(fullRun())
	f.Add(b)
	f.Add([]byte(`{"test_auc":"nan","lr":"inf","pet":"none"}`))
	for _, cut := range []int{1, len(b) / 3, len(b) / 2, len(b) - 1} {
		f.Add(b[:cut])
	}
	flipped := append([]byte(nil), b...)
	flipped[len(flipped)/2] ^= 0x20
	f.Add(flipped)
	f.Fuzz(func(t *testing.T, in []byte) {
		var r Run
		if err := json.Unmarshal(in, &r); err != nil {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("accepted %q but cannot write it back: %v", in, err)
		}
		var again Run
		if err := json.Unmarshal(out, &again); err != nil {
			t.Fatalf("cannot read back %s: %v", out, err)
		}
		if !runsEqual(r, again) {
			t.Fatalf("not a fixed point:\n%+v\n%+v", r, again)
		}
	})
}

func TestRunsTable(t *testing.T) {
	a, b := fullRun(), fullRun()
	b.RunID, b.Trial, b.TestAUC, b.LabelDPEpsilon = "fedcba9876543210", 3, math.NaN(), math.Inf(1)
	other := fullRun()
	other.Standardization = &Standardization{Mean: []float64{0}, Std: []float64{1}}
	none := fullRun()
	none.Standardization = nil
	cases := []struct {
		name    string
		runs    []Run
		wantStd bool // metadata holds the shared standardization
	}{
		{"shared standardization in metadata", []Run{a, b}, true},
		{"differing standardization: none in metadata", []Run{a, other}, false},
		{"some without", []Run{a, none}, false},
		{"empty", nil, false},
	}
	firstFormat := []string{"dataset", "model", "pet", "k", "epsilon", "lr", "trial", "seed", "epochs", "steps",
		"train_loss", "test_auc", "test_logloss", "wall_s", "examples_per_s", "backend", "setting",
		"label_dp_epsilon", "loss", "run_id"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab := RunsTable(tc.runs)
			names := columnNames(tab)
			if !reflect.DeepEqual(names[:len(firstFormat)], firstFormat) {
				t.Fatalf("first columns %v, want %v", names, firstFormat)
			}
			if want := []string{"config_id", "group_examples_per_s", "compile_s", "checkpoint_s", "replicas", "matmul", "bags", "config_name", "config", "classes", "test_accuracy", "value_max", "test_mse", "test_r2", "test_mae"}; !reflect.DeepEqual(names[len(firstFormat):], want) {
				t.Fatalf("new columns %v, want %v", names[len(firstFormat):], want)
			}
			if _, ok := tab.Meta[MetaStandardization]; ok != tc.wantStd {
				t.Fatalf("metadata %v, want standardization: %v", tab.Meta, tc.wantStd)
			}
			got, err := ReadRuns(roundTrip(t, tab))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.runs) {
				t.Fatalf("%d runs, want %d", len(got), len(tc.runs))
			}
			for i, want := range tc.runs {
				if !tc.wantStd {
					want.Standardization = nil // not in the table: runs/*.json keep it
				}
				if !runsEqual(got[i], want) {
					t.Fatalf("run %d:\n got %+v\nwant %+v", i, got[i], want)
				}
			}
			if tc.wantStd && len(got) > 1 && got[0].Standardization == got[1].Standardization {
				t.Fatal("runs share one Standardization value; each should have its own copy")
			}
		})
	}
}

func TestReadRunsFirstFormat(t *testing.T) {
	tab := RunsTable([]Run{fullRun()})
	tab.Columns = tab.Columns[:20]
	got, err := ReadRuns(tab)
	if err != nil {
		t.Fatal(err)
	}
	r := got[0]
	if r.ConfigID != "" || !math.IsNaN(r.CompileS) || !math.IsNaN(r.CheckpointS) || !math.IsNaN(r.GroupExamplesPerS) || r.Replicas != 0 {
		t.Fatalf("missing new columns read as %+v", r)
	}
	if r.TestAUC != 0.71 || r.Pet != pets.LLPGeom || r.Seed != 1<<63+5 {
		t.Fatalf("old columns read as %+v", r)
	}
}

func TestReadRunsErrors(t *testing.T) {
	drop := func(name string) *data.Table {
		tab := RunsTable([]Run{fullRun()})
		for i, c := range tab.Columns {
			if c.Name == name {
				tab.Columns = append(tab.Columns[:i], tab.Columns[i+1:]...)
				break
			}
		}
		return tab
	}
	set := func(name string, v any) *data.Table {
		tab := RunsTable([]Run{fullRun(), fullRun()})
		for i, c := range tab.Columns {
			if c.Name == name {
				tab.Columns[i].Values = v
			}
		}
		return tab
	}
	cases := []struct {
		name   string
		tab    *data.Table
		schema bool // wraps data.ErrSchema
		row    int  // a *RowError with this row (-1: none)
	}{
		{"missing required column", drop("test_auc"), true, -1},
		{"wrong type", set("k", []float64{0, 0}), true, -1},
		{"wrong length", set("lr", []float64{1}), true, -1},
		{"unknown mechanism in row 1", set("pet", []string{"rr", "gauss"}), false, 1},
		{"bad standardization metadata", func() *data.Table {
			tab := RunsTable([]Run{fullRun()})
			tab.Meta[MetaStandardization] = "{"
			return tab
		}(), true, -1},
		{"nil", nil, false, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadRuns(tc.tab)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.schema != errors.Is(err, data.ErrSchema) {
				t.Fatalf("err %v: wraps ErrSchema %v, want %v", err, errors.Is(err, data.ErrSchema), tc.schema)
			}
			var re *RowError
			if errors.As(err, &re) != (tc.row >= 0) || (tc.row >= 0 && (re.Row != tc.row || re.Column != "pet")) {
				t.Fatalf("err %v (%#v), want a RowError at row %d", err, re, tc.row)
			}
		})
	}
}
