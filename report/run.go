package report

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// Run is one trained model: a row of runs.csv / runs.parquet and the whole
// content of OUT/runs/<run_id>.json. Floats may be NaN or ±Inf (a NaN test
// AUC, label-DP ε = +Inf for none and llp); JSON writes those as the strings
// "nan", "inf", "-inf".
type Run struct {
	RunID    string // hash of everything the result depends on
	Dataset  string // dataset identity by content ("sha256:…")
	ConfigID string // fingerprint of the shared model/training config (model, hidden, init, epochs,
	// batch size, losses, standardization …): runs with different (Dataset, ConfigID) are never
	// averaged together
	Model string
	// Classes is the number of label classes C: 2 for binary labels (0 in
	// a Go value means binary too, as in records written before classes
	// existed; files always hold 2), 3..pets.MaxClasses otherwise. It
	// decides the reporting rule's metric (Best) and which runs may be
	// summarized together.
	Classes        int
	Setting        string    // PET setting id, e.g. "rr_eps1", "llp_geom_k8_eps1"
	Pet            pets.Kind // mechanism of the setting
	K              int       // bag size (0 outside the LLP family)
	Epsilon        float64   // the mechanism's ε parameter (0 when it has none)
	LabelDPEpsilon float64   // label-DP ε of one release (+Inf for none and llp, 0 for bot)
	Loss           string
	LR             float64
	Trial          int
	Seed           uint64
	Epochs         int
	Steps          int64
	TrainLoss      float64
	// TestAUC is the test AUC: for binary labels the AUC of P(y=1|x); for
	// C ≥ 3 the macro one-vs-rest AUC (the mean over classes c of the AUC
	// of P(y=c|x) against y = c), which for C = 2 is the binary AUC. NaN
	// when training diverged.
	TestAUC     float64
	TestLogLoss float64 // mean cross-entropy on the test set (nats)
	// TestAccuracy is the fraction of test rows whose most probable class
	// is the label (binary: P(y=1|x) > ½ predicts 1). The reporting rule
	// maximises it for C ≥ 3. NaN when not measured (records written
	// before it existed).
	TestAccuracy float64
	// Conversion values: ValueMax is the grid's B of a dataset of values
	// (0 for classes: the fields below are then NaN), TestMSE, TestR2 and
	// TestMAE the test MSE, R² (1 − MSE/Var of the test values) and MAE of
	// the model's prediction of the value (the clean model's: the mean of
	// its law over the grid). The reporting rule minimises the mean test
	// MSE. NaN when training diverged.
	ValueMax                 float64
	TestMSE, TestR2, TestMAE float64
	WallS                    float64 // this run's share of its group's wall time, seconds
	ExamplesPerS             float64 // steady-state training examples/s of this model (first step excluded)
	// GroupExamplesPerS is the same for its whole group (Replicas models).
	GroupExamplesPerS float64
	CompileS          float64 // compile time of its group, seconds
	CheckpointS       float64 // time spent writing checkpoints, seconds
	Backend           string
	Replicas          int              // size of the group it trained in (1: alone)
	Matmul            string           // matrix-product path: "avx2" or "simplego" (backend go), "xla"; "" before the field existed
	Standardization   *Standardization // per-feature mean/std applied to the features; nil: none
	// Bags is the LLP family's bag rule ("random", "sorted:x3",
	// "key:campaign"); "" for other mechanisms and in files written before
	// curated bags (read as random for the LLP family: BagsOf).
	Bags string
	// ConfigName is the config's name key; Config the keys ConfigID
	// fingerprints with their values, "key=value; key=value" in key order
	// (ParseConfig reads it). Both "" in files written before they existed.
	ConfigName, Config string
	// Provenance says what made the run (in runs/<run_id>.json only); nil in
	// records written before it existed.
	Provenance *Provenance
	// Curve is the run's learning curve, one point per epoch trained (in
	// runs/<run_id>.json and learning_curves.csv); nil for bot and for
	// records written before curves were recorded. A run resumed from a
	// checkpoint has the epochs trained after the resume.
	Curve []EpochPoint
}

// Provenance is what made a result: the tool, its source revision, when,
// the command line with the environment variables that set config keys,
// and the config in words.
type Provenance struct {
	Tool string `json:"tool"` // e.g. "labelprivacy 0.2.0"
	// Revision is the VCS revision the binary was built from (with
	// "+modified" for uncommitted changes); "" when the build recorded none
	// (go run, go test).
	Revision string `json:"revision,omitempty"`
	Started  string `json:"started"` // RFC 3339, when the command started
	// Command is the command line, shell-quoted, every --set included;
	// Env the TRAIN_* variables that set config keys, NAME=value.
	Command string   `json:"command"`
	Env     []string `json:"env,omitempty"`
	// ConfigFile is the config file read ("" or the embedded default's
	// name); ConfigSummary the config in a line (model, training, data).
	ConfigFile    string `json:"config_file,omitempty"`
	ConfigSummary string `json:"config_summary,omitempty"`
}

// Standardization is the per-dense-feature mean and standard deviation
// applied to a run's features (x−Mean)/Std, computed on the training rows.
type Standardization struct{ Mean, Std []float64 }

// jfloat is a float64 whose JSON form is a number, or the string "nan",
// "inf" or "-inf" (which encoding/json otherwise rejects; pandas reads the
// same spellings in CSV). It is the only such type in this repository.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte(strconv.Quote(data.FormatFloat(v))), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		switch strings.ToLower(s) {
		case "nan":
			*f = jfloat(math.NaN())
		case "inf", "+inf", "infinity":
			*f = jfloat(math.Inf(1))
		case "-inf", "-infinity":
			*f = jfloat(math.Inf(-1))
		default:
			return fmt.Errorf("report: %q is not a number (want a number, \"nan\", \"inf\" or \"-inf\")", s)
		}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("report: %s is not a number: %w", b, err)
	}
	*f = jfloat(v)
	return nil
}

// convert converts between float64 and jfloat slices (nil stays nil).
func convert[B, A ~float64](v []A) []B {
	if v == nil {
		return nil
	}
	out := make([]B, len(v))
	for i, x := range v {
		out[i] = B(x)
	}
	return out
}

type standardizationJSON struct {
	Mean []jfloat `json:"mean"`
	Std  []jfloat `json:"std"`
}

// MarshalJSON writes {"mean": [...], "std": [...]}.
func (s Standardization) MarshalJSON() ([]byte, error) {
	return json.Marshal(standardizationJSON{convert[jfloat](s.Mean), convert[jfloat](s.Std)})
}

// UnmarshalJSON reads MarshalJSON's form; Mean and Std must have one entry
// per feature each.
func (s *Standardization) UnmarshalJSON(b []byte) error {
	var j standardizationJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if len(j.Mean) != len(j.Std) {
		return fmt.Errorf("report: standardization has %d means and %d standard deviations", len(j.Mean), len(j.Std))
	}
	s.Mean, s.Std = convert[float64](j.Mean), convert[float64](j.Std)
	return nil
}

// runJSON is Run's file form, derived from runSchema: Run's fields in
// Run's order, each keyed by its column's name, floats as jfloat.
var runJSON = runSchema.jsonType()

// jsonType returns the JSON record of T: a struct type with T's fields in
// T's order, each tagged with the name of the column that stores it (and
// omitempty where the column says so), float64 fields as jfloat. Every
// field of T must have exactly one column (a programmer error otherwise:
// it panics when the package loads).
func (s schema[T]) jsonType() reflect.Type {
	t := reflect.TypeFor[T]()
	var zero T
	base := reflect.ValueOf(&zero).Pointer()
	byOffset := map[uintptr]column[T]{}
	for _, c := range s.cols {
		p := reflect.ValueOf(c.field(&zero))
		off := p.Pointer() - base
		if _, dup := byOffset[off]; dup {
			panic(fmt.Sprintf("report: %s schema: two columns store the field at offset %d", s.name, off))
		}
		byOffset[off] = c
	}
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		c, ok := byOffset[f.Offset]
		if !ok || reflect.TypeOf(c.field(&zero)).Elem() != f.Type {
			panic(fmt.Sprintf("report: %s schema has no column for %s.%s", s.name, t.Name(), f.Name))
		}
		typ := f.Type
		if typ.Kind() == reflect.Float64 {
			typ = reflect.TypeFor[jfloat]()
		}
		tag := c.name
		if c.omitEmpty {
			tag += ",omitempty"
		}
		fields[i] = reflect.StructField{Name: f.Name, Type: typ, Tag: reflect.StructTag(`json:"` + tag + `"`)}
	}
	if len(byOffset) != len(fields) {
		panic(fmt.Sprintf("report: %s schema has %d columns for %d fields of %s", s.name, len(byOffset), len(fields), t.Name()))
	}
	return reflect.StructOf(fields)
}

// MarshalJSON writes the run with runs.csv's column names as keys, non-finite
// floats as "nan"/"inf"/"-inf" and the mechanism by name.
func (r Run) MarshalJSON() ([]byte, error) {
	r.Classes = binaryIs2(r.Classes)
	j := reflect.New(runJSON).Elem()
	copyFields(j, reflect.ValueOf(r))
	return json.Marshal(j.Interface())
}

// UnmarshalJSON reads MarshalJSON's form. Unknown keys are ignored; a
// missing float (a file written before the field existed) reads as NaN,
// missing classes as 2 (binary), anything else missing as its zero value.
// An unknown mechanism is an error.
func (r *Run) UnmarshalJSON(b []byte) error {
	j := reflect.New(runJSON)
	v := j.Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Type() == reflect.TypeFor[jfloat]() {
			f.SetFloat(math.NaN())
		}
	}
	if err := json.Unmarshal(b, j.Interface()); err != nil {
		return fmt.Errorf("report: run: %w", err)
	}
	copyFields(reflect.ValueOf(r).Elem(), v)
	r.Classes = binaryIs2(r.Classes)
	if math.IsNaN(r.ValueMax) { // absent: classes
		r.ValueMax = 0
	}
	return nil
}

// NumClasses is the run's class count C: 2 for binary labels (Classes 0
// or 2).
func (r Run) NumClasses() int { return binaryIs2(r.Classes) }

// OfValues reports whether the run is of conversion values (ValueMax > 0).
func (r Run) OfValues() bool { return r.ValueMax > 0 }

// labelKey is the run's label space for keeping summaries apart: its
// class count C, or valuesKey for conversion values.
func (r Run) labelKey() int {
	if r.OfValues() {
		return valuesKey
	}
	return r.NumClasses()
}

// valuesKey is labelKey's value for conversion values: no class count
// (binary is 2, and a summary of no rows has Classes 0).
const valuesKey = -1

// ValuesKey is Summary.Classes of a summary of conversion values.
const ValuesKey = valuesKey

// binaryIs2 maps a class count of 0 (binary, unset) to 2 and leaves any
// other value as it is (Validate judges it).
func binaryIs2(c int) int {
	if c == 0 {
		return 2
	}
	return c
}

// copyFields sets each field of dst to the same-position field of src,
// converted (float64 ⇄ jfloat); runJSON has Run's fields in Run's order.
func copyFields(dst, src reflect.Value) {
	for i := range dst.NumField() {
		dst.Field(i).Set(src.Field(i).Convert(dst.Field(i).Type()))
	}
}

// runSchema is runs.csv's columns and runs/<run_id>.json's keys: the first
// 20 columns in the order of the first file format (required when
// reading), then the ones added since (optional); the JSON record lists
// them in Run's field order.
var runSchema = schema[Run]{name: "runs", cols: []column[Run]{
	strCol("dataset", func(r *Run) *string { return &r.Dataset }),
	strCol("model", func(r *Run) *string { return &r.Model }),
	kindCol("pet", func(r *Run) *pets.Kind { return &r.Pet }),
	nullIntCol("k", func(r *Run) *int { return &r.K }),
	nullF64Col("epsilon", func(r *Run) *float64 { return &r.Epsilon }),
	f64Col("lr", func(r *Run) *float64 { return &r.LR }),
	intCol("trial", func(r *Run) *int { return &r.Trial }),
	intCol("seed", func(r *Run) *uint64 { return &r.Seed }),
	intCol("epochs", func(r *Run) *int { return &r.Epochs }),
	intCol("steps", func(r *Run) *int64 { return &r.Steps }),
	f64Col("train_loss", func(r *Run) *float64 { return &r.TrainLoss }),
	f64Col("test_auc", func(r *Run) *float64 { return &r.TestAUC }),
	f64Col("test_logloss", func(r *Run) *float64 { return &r.TestLogLoss }),
	f64Col("wall_s", func(r *Run) *float64 { return &r.WallS }),
	f64Col("examples_per_s", func(r *Run) *float64 { return &r.ExamplesPerS }),
	strCol("backend", func(r *Run) *string { return &r.Backend }),
	strCol("setting", func(r *Run) *string { return &r.Setting }),
	f64Col("label_dp_epsilon", func(r *Run) *float64 { return &r.LabelDPEpsilon }),
	strCol("loss", func(r *Run) *string { return &r.Loss }),
	strCol("run_id", func(r *Run) *string { return &r.RunID }),
	opt(strCol("config_id", func(r *Run) *string { return &r.ConfigID })),
	opt(f64Col("group_examples_per_s", func(r *Run) *float64 { return &r.GroupExamplesPerS })),
	opt(f64Col("compile_s", func(r *Run) *float64 { return &r.CompileS })),
	opt(f64Col("checkpoint_s", func(r *Run) *float64 { return &r.CheckpointS })),
	opt(intCol("replicas", func(r *Run) *int { return &r.Replicas })),
	opt(strCol("matmul", func(r *Run) *string { return &r.Matmul })),
	omitEmpty(opt(strCol("bags", func(r *Run) *string { return &r.Bags }))),
	omitEmpty(opt(strCol("config_name", func(r *Run) *string { return &r.ConfigName }))),
	omitEmpty(opt(strCol("config", func(r *Run) *string { return &r.Config }))),
	opt(classesCol("classes", func(r *Run) *int { return &r.Classes })),
	opt(f64Col("test_accuracy", func(r *Run) *float64 { return &r.TestAccuracy })),
	omitEmpty(opt(nullF64Col("value_max", func(r *Run) *float64 { return &r.ValueMax }))),
	opt(f64Col("test_mse", func(r *Run) *float64 { return &r.TestMSE })),
	opt(f64Col("test_r2", func(r *Run) *float64 { return &r.TestR2 })),
	opt(f64Col("test_mae", func(r *Run) *float64 { return &r.TestMAE })),
	// In the JSON record only; the table keeps a shared one in its
	// metadata (MetaStandardization).
	omitEmpty(jsonOnly("standardization", func(r *Run) **Standardization { return &r.Standardization })),
	omitEmpty(jsonOnly("provenance", func(r *Run) **Provenance { return &r.Provenance })),
	omitEmpty(jsonOnly("curve", func(r *Run) *[]EpochPoint { return &r.Curve })),
}}

// MetaStandardization is the runs table's metadata key holding the
// Standardization (JSON) that all its runs share; absent when runs differ
// (each runs/<run_id>.json keeps its own) or none is used.
const MetaStandardization = "standardization"

// RunsTable converts runs into the runs.csv / runs.parquet table, one row per
// run in the given order, with runSchema's columns (listed in README's
// "Training"): those of the first format first, in their order, then the
// ones added since. The seed column holds the uint64 seed's bits as int64. When every run has the same non-nil
// Standardization it is stored as JSON under the metadata key
// MetaStandardization.
func RunsTable(runs []Run) *data.Table {
	meta := map[string]string{}
	if s := sharedStandardization(runs); s != nil {
		b, err := json.Marshal(s)
		if err != nil {
			panic(fmt.Sprintf("report: marshal standardization: %v", err)) // jfloat never fails
		}
		meta[MetaStandardization] = string(b)
	}
	return runSchema.toTable(runs, meta)
}

func sharedStandardization(runs []Run) *Standardization {
	if len(runs) == 0 || runs[0].Standardization == nil {
		return nil
	}
	s := runs[0].Standardization
	for _, r := range runs[1:] {
		o := r.Standardization
		if o == nil || !sameFloats(o.Mean, s.Mean) || !sameFloats(o.Std, s.Std) {
			return nil
		}
	}
	return s
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameFloat(a[i], b[i]) {
			return false
		}
	}
	return true
}

// ReadRuns reads a runs table (RunsTable's output read back with
// data.ReadTable, e.g. runs.parquet of a set without runs/*.json). Files of
// the first format (without config_id and the timing columns added since)
// read with those fields NaN or zero. The metadata's shared Standardization,
// if any, is given to every run (each its own copy).
func ReadRuns(t *data.Table) ([]Run, error) {
	runs, err := runSchema.fromTable(t)
	if err != nil {
		return nil, err
	}
	if js, ok := t.Meta[MetaStandardization]; ok {
		var s Standardization
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			return nil, fmt.Errorf("%w: report: runs table metadata %q: %w", data.ErrSchema, MetaStandardization, err)
		}
		for i := range runs {
			c := Standardization{Mean: append([]float64(nil), s.Mean...), Std: append([]float64(nil), s.Std...)}
			runs[i].Standardization = &c
		}
	}
	return runs, nil
}
