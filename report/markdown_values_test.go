package report_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/pets"

	. "labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// valueRun is a run of conversion values (B = 400) with test MSE mse.
func valueRun(set string, pet pets.Kind, k int, eps, lr float64, trial int, mse float64) Run {
	nan := math.NaN()
	ldp := eps
	if !pet.Spec().Privacy.DP() || (pet == pets.ValueBags && eps == 0) {
		ldp = math.Inf(1)
	}
	if pet == pets.Bot {
		ldp = 0
	}
	return Run{RunID: fmt.Sprintf("%s-%g-%d", set, lr, trial), Dataset: reporttest.DatasetA, ConfigID: reporttest.ConfigA,
		Setting: set, Pet: pet, K: k, Epsilon: eps, LabelDPEpsilon: ldp, LR: lr, Trial: trial, ValueMax: 400,
		TestMSE: mse, TestR2: 1 - mse/465, TestMAE: mse / 60, TestAUC: nan, TestLogLoss: nan, TestAccuracy: nan}
}

// valueAudit is an audit of values of a setting.
func valueAudit(set string, pet pets.Kind, k int, eps, r2, tau, bound float64) Audit {
	nan := math.NaN()
	return Audit{Dataset: reporttest.DatasetA, ConfigID: reporttest.ConfigA, Setting: set, Pet: pet, K: k, Epsilon: eps, EtaSource: "true",
		Summary: audit.Summary{NExamples: 2000, EAdv: nan, EAdvSE: nan, MAP98: nan, MAInfFrac: nan, MAP50: nan, MAP90: nan, MAMean: nan,
			EAdvBound: nan, EpsLower: nan, RealizedGain: nan, RealizedGainSE: nan, RealizedZ: nan, RealizedR2: nan, RealizedR2SE: nan,
			ValueMax: 400, ValueStep: 1, Tau: 10, R2Adv: r2, R2AdvSE: r2 / 50, R2AdvRatio: 2 * r2, TauAdv: tau, TauAdvSE: tau / 20,
			TauAdvBound: bound, TauBlind: 0.9}}
}

// The report of conversion values: its summary table (best LR by the
// lowest mean test MSE, MSE ± SE, R², the audit's R²- and τ-advantage and
// the worst case), none of the columns of classes, the golden
// report_values.md.
func TestWriteMarkdownValues(t *testing.T) {
	var runs []Run
	for trial := range 2 {
		d := float64(trial)
		runs = append(runs,
			valueRun("none", pets.None, 0, 0, 1e-3, trial, 442+d),
			valueRun("none", pets.None, 0, 0, 3e-3, trial, 445+d),
			valueRun("bot", pets.Bot, 0, 0, 1e-3, trial, 464.7),
			valueRun("laplace_eps1", pets.LaplaceValue, 0, 1, 1e-3, trial, 2549+10*d),
			valueRun("laplace_eps1", pets.LaplaceValue, 0, 1, 3e-3, trial, 2900+10*d),
			valueRun("rr_bins_eps1_population", pets.RRBins, 0, 1, 1e-3, trial, 462+d),
			valueRun("rr_bins_eps1_population", pets.RRBins, 0, 1, 3e-3, trial, 460+d),
			valueRun("value_bags_k8", pets.ValueBags, 8, 0, 3e-3, trial, 460.3+d))
	}
	audits := []Audit{
		valueAudit("none", pets.None, 0, 0, 1, 0.051, math.NaN()),
		valueAudit("bot", pets.Bot, 0, 0, 0, 0, 0),
		valueAudit("laplace_eps1", pets.LaplaceValue, 0, 1, 0.0021, -1e-17, 0.0306), // an exact 0 off by rounding
		valueAudit("rr_bins_eps1_population", pets.RRBins, 0, 1, 0.026, 0.0002, 0.0306),
		valueAudit("value_bags_k8", pets.ValueBags, 8, 0, 0.14, 0.0021, math.NaN()),
	}
	sum, err := Summarize(runs, audits, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Classes != ValuesKey {
		t.Fatalf("summary Classes %d, want ValuesKey", sum.Classes)
	}
	if _, err := Compare(sum, sum, CompareOptions{}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "conversion values") {
		t.Errorf("a comparison of values: %v, want it refused as not built", err)
	}
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(path, Markdown{Title: "values", Summary: sum}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"## Summary (conversion values)",
		"| `laplace_eps1` | Laplace | — | 1 | 1 | 0.001 | 2554.0 | 5.0 |",              // the lower mean MSE's LR
		"| `rr_bins_eps1_population` | RR-on-Bins | — | 1 | 1 | 0.003 | 460.5 | 0.5 |", // 0.003 here
		"| 0.02600 | 0.00052 | 0.0520 | 0.00020 | 0.00001 | 0.0306 |",
	} {
		if !strings.Contains(string(got), s) {
			t.Errorf("report lacks %q", s)
		}
	}
	for _, s := range []string{"AUC |", "| E[adv] |", "MA p98", "-0.00000"} {
		if strings.Contains(string(got), s) {
			t.Errorf("a report of values holds %q", s)
		}
	}
	golden := filepath.Join("testdata", "report_values.md.golden")
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
