package data

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// schemaNames lists the column names of an Arrow IPC file.
func schemaNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, fd := range r.Schema().Fields() {
		names = append(names, fd.Name)
	}
	return names
}

// Kind conversions: C = 1 + T·W classes written as kind multiclass writes
// them (labels, eta_0 … eta_{C−1}); the train rows are the seeded draw of
// SynthMulticlass's model of the same seed and C with the no-report logit
// on class 0; meta.json records T, W, the rate and the logit; the labels
// follow η; and the rows convert at the rate asked for.
func TestSynthConversions(t *testing.T) {
	const rows, tv, w, d, seed = 40000, 3, 2, 8, 5
	const c = 1 + tv*w
	cases := []struct {
		name string
		rate float64 // asked (0: the default)
		want float64
	}{
		{"default rate", 0, DefaultConversionRate},
		{"a rate of 0.3", 0.3, 0.3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "conv")
			o := SynthOptions{Kind: SynthConversions, TriggerData: tv, Windows: w, ConversionRate: tc.rate, Rows: rows, TestRows: 2000, Features: d, Seed: seed, Out: out}
			meta, err := Synth(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Load(out)
			if err != nil {
				t.Fatal(err)
			}
			if meta.Kind != "conversions" || meta.Classes != c || ds.Train.Classes != c || meta.TriggerData != tv || meta.Windows != w || meta.ConversionRate != tc.want {
				t.Fatalf("meta %+v", meta)
			}
			want := []string{"label", "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "eta_0", "eta_1", "eta_2", "eta_3", "eta_4", "eta_5", "eta_6"}
			if got := schemaNames(t, filepath.Join(out, TrainFile)); !slices.Equal(got, want) {
				t.Fatalf("columns %v, want %v", got, want)
			}
			mc := newMulticlassModel(c, d, seed)
			if !reflect.DeepEqual(meta.ClassWeights, mc.weightRows()) {
				t.Fatal("the weights are not kind multiclass's of the same seed and classes")
			}
			m := newConversionModel(o)
			if m.bias[0] != meta.NoReportLogit || !(math.Abs(m.bias[0]) < 200) || slices.ContainsFunc(m.bias[1:], func(b float64) bool { return b != 0 }) {
				t.Fatalf("logits added %v, meta's no-report logit %v", m.bias, meta.NoReportLogit)
			}
			// The logit gives the calibration draws exactly the rate asked
			// for, η_0 computed by the model itself (not by the gaps).
			cr := rand.New(rand.NewPCG(seed, streamSynthCalib))
			x, eta := make([]float32, d), make([]float64, c)
			var calib float64
			for range conversionCalibrationRows {
				for j := range x {
					x[j] = float32(cr.NormFloat64())
				}
				m.eta(x, eta)
				calib += 1 - eta[0]
			}
			if got := calib / conversionCalibrationRows; math.Abs(got-tc.want) > 1e-9 {
				t.Fatalf("the calibration draws convert at %v, want %v", got, tc.want)
			}
			draw := m.frame(SynthFeatureNames(d), rows, rand.New(rand.NewPCG(seed, streamSynthTrain)), 0)
			if !slices.Equal(ds.Train.X, draw.X) || !slices.Equal(ds.Train.Label, draw.Label) || !slices.Equal(ds.Train.EtaC, draw.EtaC) {
				t.Fatal("train.arrow differs from the seeded draw")
			}
			// η_0 is the multiclass softmax with b added to class 0's logit:
			// η_0/(1−η_0) = e^b × (the same odds without b).
			plain := make([]float64, c)
			mc.eta(ds.Train.X[:d], plain)
			e := ds.Train.EtaC[:c]
			if got, want := math.Log(e[0]/(1-e[0])), m.bias[0]+math.Log(plain[0]/(1-plain[0])); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
				t.Fatalf("log-odds of no report %v, want b + the multiclass's %v", got, want)
			}
			// Given x, class k's count is a sum of independent Bernoulli(η_k):
			// each count within 5 SD of Σ η_k (two-sided false-failure rate
			// 5.7e-7 per class).
			counts := make([]float64, c)
			for _, y := range ds.Train.Label {
				counts[y]++
			}
			var conv, sq float64
			for i := range rows {
				conv += 1 - ds.Train.EtaC[i*c]
				sq += (1 - ds.Train.EtaC[i*c]) * (1 - ds.Train.EtaC[i*c])
			}
			for k := range c {
				var mean, v float64
				for i := range rows {
					e := ds.Train.EtaC[i*c+k]
					mean += e
					v += e * (1 - e)
				}
				if z := (counts[k] - mean) / math.Sqrt(v); math.Abs(z) > 5 {
					t.Errorf("class %d: %v labels, Σ η = %.1f (z = %.2f)", k, counts[k], mean, z)
				}
			}
			// The expected conversion rate over the rows: the calibration's
			// 65,536 draws and the 40,000 rows' own each move it by
			// sd(1 − η_0)/√n; 5 of their combined SD (false-failure rate
			// 5.7e-7; ±0.006 at the default rate, ±0.013 at 0.3).
			mean := conv / rows
			sd := math.Sqrt(sq/rows - mean*mean)
			tol := 5 * sd * math.Sqrt(1.0/conversionCalibrationRows+1.0/rows)
			t.Logf("rate %v: E[1 − η_0] = %.4f over the rows (tolerance ±%.4f), drawn %.4f; no-report logit %.3f", tc.want, mean, tol, 1-meta.ClassRates[0], m.bias[0])
			if math.Abs(mean-tc.want) > tol {
				t.Errorf("E[1 − η_0] = %.4f, want %v ± %.4f", mean, tc.want, tol)
			}
			if meta.ClassRates[0] < 0.5 && tc.want < 0.5 {
				t.Errorf("class 0 (no report) is %.3f of the rows", meta.ClassRates[0])
			}
			if meta.BayesAccuracy == nil || meta.PositiveRate != nil {
				t.Errorf("bayes_accuracy %v, positive_rate %v", meta.BayesAccuracy, meta.PositiveRate)
			}
		})
	}
}

// One trigger-data value in one window is a binary dataset (C = 2:
// labels 0/1 and `eta`, as kind multiclass writes C = 2).
func TestSynthConversionsBinary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "conv")
	meta, err := Synth(context.Background(), SynthOptions{Kind: SynthConversions, TriggerData: 1, Windows: 1, Rows: 2000, TestRows: 100, Features: 3, Seed: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Classes != 2 || ds.Train.Eta == nil || ds.Train.EtaC != nil || meta.TriggerData != 1 || meta.PositiveRate == nil {
		t.Fatalf("meta %+v, eta %v", meta, ds.Train.Eta != nil)
	}
	if r := *meta.PositiveRate; r < 0.02 || r > 0.09 {
		t.Errorf("positive rate %v, want about %v", r, DefaultConversionRate)
	}
}

func TestSynthConversionsValidation(t *testing.T) {
	base := SynthOptions{Kind: SynthConversions, TriggerData: 8, Windows: 3, Rows: 10, TestRows: 10, Features: 2, Seed: 1}
	cases := []struct {
		name string
		edit func(*SynthOptions)
		says string
	}{
		{"no trigger data", func(o *SynthOptions) { o.TriggerData = 0 }, "trigger_data must be ≥ 1"},
		{"no windows", func(o *SynthOptions) { o.Windows = 0 }, "windows must be ≥ 1"},
		{"65 classes", func(o *SynthOptions) { o.TriggerData, o.Windows = 8, 8 }, "at most 64"},
		{"a huge product", func(o *SynthOptions) { o.TriggerData, o.Windows = 1<<40, 1<<40 }, "at most 64"},
		{"classes not 1 + T·W", func(o *SynthOptions) { o.Classes = 24 }, "has 1 + 8·3 = 25"},
		{"a rate of 1", func(o *SynthOptions) { o.ConversionRate = 1 }, "conversion_rate must be in (0, 1)"},
		{"a negative rate", func(o *SynthOptions) { o.ConversionRate = -0.1 }, "conversion_rate"},
		{"a NaN rate", func(o *SynthOptions) { o.ConversionRate = math.NaN() }, "conversion_rate"},
		{"trigger data on kind multiclass", func(o *SynthOptions) { o.Kind, o.Classes = SynthMulticlass, 25 }, "kind multiclass takes no trigger_data"},
		{"a rate on kind logistic", func(o *SynthOptions) { o.Kind, o.TriggerData, o.Windows, o.ConversionRate = SynthLogistic, 0, 0, 0.1 }, "kind logistic takes no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			o.Out = filepath.Join(t.TempDir(), "conv")
			tc.edit(&o)
			_, err := Synth(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err %v, want one saying %q", err, tc.says)
			}
			if _, serr := os.Stat(o.Out); serr == nil {
				t.Errorf("%s written by a refused synth", o.Out)
			}
		})
	}
	if k, err := ParseSynthKind("Conversions"); err != nil || k != SynthConversions || k.String() != "conversions" {
		t.Errorf("ParseSynthKind: %v %v", k, err)
	}
}
