package report_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/pets"

	. "labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// rowOf returns the summary's row of setting.
func rowOf(t *testing.T, s *Summary, setting string) Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.Setting == setting {
			return r
		}
	}
	t.Fatalf("no row %q", setting)
	return Row{}
}

// For C ≥ 3 classes the reporting rule picks the learning rate with the
// highest mean test accuracy (where a binary summary of the same runs
// picks by AUC), and the row reports both metrics at that LR.
func TestSummarizeMulticlassBestLRByAccuracy(t *testing.T) {
	s := reporttest.Multiclass(t)
	if s.Classes != 10 {
		t.Fatalf("summary classes %d, want 10", s.Classes)
	}
	const se = 0.0030550504633038936 // sd of the trials' deviations (−6, +2, +4)·10⁻³ over √3
	for _, ms := range reporttest.MultiSettings() {
		r := rowOf(t, s, ms.Setting)
		best := 1e-3
		if ms.Acc[1e-2] > ms.Acc[1e-3] {
			best = 1e-2
		}
		if r.Classes != 10 || r.BestLR != best || r.NTrials != 3 ||
			!reporttest.Near(r.AccuracyMean, ms.Acc[best]) || math.Abs(r.AccuracySE-se) > 1e-12 ||
			!reporttest.Near(r.AUCMean, ms.AUC[best]) || math.Abs(r.AUCSE-se/2) > 1e-12 {
			t.Errorf("%s: %+v; want best LR %g, accuracy %g ± %g, macro AUC %g", ms.Setting, r, best, ms.Acc[best], se, ms.AUC[best])
		}
		if m, e := r.Metric(); m != r.AccuracyMean || e != r.AccuracySE {
			t.Errorf("%s: Metric() = %g ± %g, want the accuracy", ms.Setting, m, e)
		}
	}
	// rr_eps1 is where the metrics disagree: accuracy picks 1e-2, AUC 1e-3.
	if r := rowOf(t, s, "rr_eps1"); r.BestLR != 1e-2 {
		t.Fatalf("rr_eps1 best LR %g, want 1e-2 (accuracy 0.451 > 0.402; its AUC prefers 1e-3)", r.BestLR)
	}
	// The same runs as binary ones: the rule picks by AUC.
	var bin []Run
	for _, r := range reporttest.MultiRuns() {
		r.Classes = 2
		bin = append(bin, r)
	}
	b, err := Summarize(bin, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, b, "rr_eps1"); b.Classes != 2 || r.BestLR != 1e-3 || !reporttest.Near(r.AUCMean, 0.861) || !reporttest.Near(r.AccuracyMean, 0.402) {
		t.Fatalf("binary rr_eps1: classes %d, %+v; want best LR 1e-3 by AUC 0.861, accuracy 0.402 there", b.Classes, r)
	}
	// BestLR, which picks the clean model of the audit, follows the same rule.
	bl := BestLR(reporttest.MultiRuns())[SettingKey{Dataset: reporttest.MultiDataset, ConfigID: reporttest.MultiConfig, Setting: "rr_eps1"}]
	if m, _ := bl.Metric(); bl.LR != 1e-2 || bl.Classes != 10 || !reporttest.Near(m, 0.451) {
		t.Fatalf("BestLR rr_eps1 = %+v", bl)
	}
}

// For C ≥ 3 a run without a test accuracy is left out like a NaN AUC in a
// binary summary, counted, and report.md says which metric was NaN.
func TestSummarizeMulticlassNaNAccuracy(t *testing.T) {
	runs := reporttest.MultiRuns()
	runs[0].TestAccuracy = math.NaN() // none, lr 1e-3, trial 0
	s, err := Summarize(runs, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, s, "none"); s.NaNAUC != 1 || r.NTrials != 3 || r.BestLR != 1e-2 {
		t.Fatalf("NaN accuracy: counted %d, none row %+v", s.NaNAUC, r)
	}
	// A NaN macro AUC keeps the run (accuracy decides), its AUC mean NaN.
	runs = reporttest.MultiRuns()
	for i := range runs {
		if runs[i].Setting == "none" && runs[i].LR == 1e-2 && runs[i].Trial == 1 {
			runs[i].TestAUC = math.NaN()
		}
	}
	s, err = Summarize(runs, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rowOf(t, s, "none"); s.NaNAUC != 0 || r.NTrials != 3 || !math.IsNaN(r.AUCMean) || !reporttest.Near(r.AccuracyMean, 0.802) {
		t.Fatalf("NaN macro AUC: counted %d, none row %+v", s.NaNAUC, r)
	}
	path := filepath.Join(t.TempDir(), "report.md")
	runs = reporttest.MultiRuns()
	runs[0].TestAccuracy = math.NaN()
	s, _ = Summarize(runs, nil, Options{})
	if err := WriteMarkdown(path, Markdown{Summary: s}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "Runs with a NaN test accuracy left out: 1.") {
		t.Fatalf("report.md does not name the NaN accuracy:\n%s", b)
	}
}

// Binary and 10-class results (or two values of C) never share a summary
// or a comparison, even where --allow-mixed lets datasets mix.
func TestMixedClassesRefused(t *testing.T) {
	multi := reporttest.MultiRuns()
	bin := reporttest.Run("rr_eps1", pets.RR, 0, 1, 0, "b0", 0.7)
	five := multi[0]
	five.Dataset, five.Classes, five.RunID = "sha256:five", 5, "five"
	for name, runs := range map[string][]Run{
		"binary and 10 classes": append(multi[:6:6], bin),
		"5 and 10 classes":      append(multi[:6:6], five),
		"one setting of both":   append(multi[:6:6], func() Run { r := multi[0]; r.RunID, r.Classes = "x", 2; return r }()),
	} {
		t.Run(name, func(t *testing.T) {
			for _, allow := range []bool{false, true} {
				_, err := Summarize(runs, nil, Options{AllowMixed: allow})
				if !errors.Is(err, ErrMixed) || !strings.Contains(err.Error(), "10 classes: 6 runs") {
					t.Fatalf("AllowMixed %v: err = %v, want ErrMixed naming the class counts", allow, err)
				}
			}
		})
	}
	if _, err := Summarize(append(multi[:6:6], bin), nil, Options{AllowMixed: true}); !strings.Contains(err.Error(), "2 classes (binary): 1 run") {
		t.Fatalf("message does not name the binary runs: %v", err)
	}
	// Out-of-grid runs do not count as mixing.
	if _, err := Summarize(append(multi[:6:6], bin), nil, Options{InGrid: func(id string) bool { return id != "b0" }}); err != nil {
		t.Fatalf("a binary run outside the grid: %v", err)
	}
	mb, err := Summarize([]Run{reporttest.WithDataset(bin, reporttest.MultiDataset)}, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mm := reporttest.Multiclass(t)
	for _, allow := range []bool{false, true} {
		if _, err := Compare(mb, mm, CompareOptions{AllowMixed: allow}); !errors.Is(err, ErrMixed) || !strings.Contains(err.Error(), "10 classes") {
			t.Fatalf("compare binary with 10 classes (AllowMixed %v): err = %v", allow, err)
		}
	}
}

// A comparison of two 10-class summaries differences accuracy with its SE
// and flags significance by accuracy, not by the macro AUC.
func TestCompareMulticlass(t *testing.T) {
	a := reporttest.Multiclass(t)
	runs := reporttest.MultiRuns()
	for i := range runs {
		switch runs[i].Setting {
		case "rr_eps4": // macro AUC far better, accuracy the same
			runs[i].TestAUC += 0.05
		case "llp_k8": // accuracy better by 0.02 (SE of Δ ≈ 0.0043)
			runs[i].TestAccuracy += 0.02
		}
	}
	b, err := Summarize(runs, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := Compare(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Comparison{}
	for _, c := range cs {
		by[c.Setting] = c
	}
	seD := math.Sqrt(2) * 0.0030550504633038936
	if c := by["llp_k8"]; c.Classes != 10 || !c.SignificantMetric || c.SignificantEAdv || !c.Tested || math.Abs(c.DAccuracy-0.02) > 1e-12 ||
		math.Abs(c.DAccuracySE-seD) > 1e-12 || !reporttest.Near(c.AccuracyA, 0.622) {
		t.Errorf("llp_k8: %+v", c)
	}
	if c := by["rr_eps4"]; c.Significant() || math.Abs(c.DAUC-0.05) > 1e-12 || c.DAccuracy != 0 {
		t.Errorf("rr_eps4 (Δ macro AUC only): %+v", c)
	}
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(path, Markdown{Summary: b, Comparison: cs}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, want := range []string{"## Comparison: a vs b (C = 10 classes)", "| setting | accuracy a | accuracy b | Δaccuracy ± SE | accuracy > 2 SE |",
		"| `llp_k8` | 0.6220 | 0.6420 | +0.0200 ± 0.0043 | **yes** |", "*accuracy > 2 SE* when |Δaccuracy| > 2·SE"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	tab := RoundTrip(t, ComparisonTable(cs))
	back, err := ReadComparisons(tab)
	if err != nil || sprint(back) != sprint(cs) {
		t.Fatalf("compare table round trip: %v\n%+v\nwant %+v", err, back, cs)
	}
}

// The 10-class report.md: accuracy and macro AUC columns, the rule stated
// for accuracy, C in the headings (golden file).
func TestWriteMarkdownMulticlass(t *testing.T) {
	s := reporttest.Multiclass(t)
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(path, Markdown{Title: "CIFAR-like softmax sweep", Summary: s, Audits: reporttest.MultiAudits()}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Summary (C = 10 classes)",
		"| setting | mechanism | k | ε | label-DP ε | best LR | test accuracy | ± SE | macro AUC | ± SE | trials |",
		"| `rr_eps1` | RR | — | 1 | 1 | 0.01 | 0.4510 | 0.0031 | 0.8320 | 0.0015 | 3 |",
		"the highest mean test accuracy over trials",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if strings.Contains(string(got), "| test AUC |") {
		t.Error("report.md of 10 classes has a test AUC column")
	}
	golden := filepath.Join("testdata", "report_multiclass.md.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./report -update creates it)", err)
	}
	if string(got) != string(want) {
		t.Fatalf("report.md differs from %s (go test ./report -update rewrites it):\n%s", golden, got)
	}
}

// The multi-class tables keep classes and accuracy through CSV/Parquet.
func TestMulticlassTables(t *testing.T) {
	s := reporttest.Multiclass(t)
	rows, err := ReadSummaryRows(RoundTrip(t, SummaryTable(s)))
	if err != nil {
		t.Fatal(err)
	}
	if sprint(rows) != sprint(s.Rows) {
		t.Fatalf("summary round trip:\n%+v\nwant %+v", rows, s.Rows)
	}
	runs := reporttest.MultiRuns()
	back, err := ReadRuns(RoundTrip(t, RunsTable(runs)))
	if err != nil || back[0].Classes != 10 || back[0].TestAccuracy != runs[0].TestAccuracy {
		t.Fatalf("runs round trip: %v %+v", err, back[0])
	}
	as, err := ReadAudits(RoundTrip(t, AuditTable(reporttest.MultiAudits())))
	if err != nil || as[0].Classes != 10 {
		t.Fatalf("audit round trip: %v %+v", err, as)
	}
	r := runs[0]
	r.Curve = []EpochPoint{{Epoch: 1, TrainLoss: 2.1, TestAUC: 0.9, TestLogLoss: 1.3, TestAccuracy: 0.7}}
	tab := CurveTable([]Run{r})
	if c := tab.Columns[len(tab.Columns)-1]; c.Name != "test_accuracy" || c.Values.([]float64)[0] != 0.7 {
		t.Fatalf("learning curve's last column %s = %v", c.Name, c.Values)
	}
}

// Records written before classes and test accuracy existed read as binary
// runs without a measured accuracy, and pass Validate.
func TestOldRecordsReadAsBinary(t *testing.T) {
	old := `{"run_id":"ab","dataset":"sha256:x","config_id":"c","model":"mlp","setting":"rr_eps1","pet":"rr","k":0,
	"epsilon":1,"label_dp_epsilon":1,"loss":"rr_debiased","lr":0.001,"trial":0,"seed":7,"epochs":2,"steps":10,
	"train_loss":0.6,"test_auc":0.7,"test_logloss":0.7,"wall_s":1.5,"examples_per_s":1000,"backend":"go",
	"curve":[{"epoch":1,"train_loss":0.6,"test_auc":0.7,"test_logloss":0.7}]}`
	var r Run
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	if r.Classes != 2 || r.NumClasses() != 2 || !math.IsNaN(r.TestAccuracy) || !math.IsNaN(r.Curve[0].TestAccuracy) {
		t.Fatalf("old record: classes %d, accuracy %v, curve %+v", r.Classes, r.TestAccuracy, r.Curve)
	}
	if err := r.Validate(); err != nil {
		t.Fatalf("old record invalid: %v", err)
	}
	// A Go value's 0 classes (binary) is written as 2.
	r.Classes = 0
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"classes":2`) {
		t.Fatalf("classes 0 written as %s (%v)", b, err)
	}
	// A runs table without the columns.
	tab := RunsTable([]Run{reporttest.MultiRuns()[0]})
	var cols []data.Column
	for _, c := range tab.Columns {
		if c.Name != "classes" && c.Name != "test_accuracy" {
			cols = append(cols, c)
		}
	}
	tab.Columns = cols
	runs, err := ReadRuns(RoundTrip(t, tab))
	if err != nil || runs[0].Classes != 2 || !math.IsNaN(runs[0].TestAccuracy) {
		t.Fatalf("old runs table: %v %+v", err, runs)
	}
	// A summary of old records is binary: the rule picks by AUC.
	s, err := Summarize(runs, nil, Options{})
	if err != nil || s.Classes != 2 || !math.IsNaN(s.Rows[0].AccuracyMean) {
		t.Fatalf("summary of old records: %v %+v", err, s)
	}
}
