package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/internal/english"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// The report of fit (and run, audit) says what it left out: runs in the
// output directory that the current config's grid does not hold (left by
// an earlier config) are counted, as `train report` counts them, and never
// averaged in.
func TestEmbeddedReportCountsRunsOutsideTheGrid(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	first := testConfig(out)
	s := openTest(t, first)
	if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	old := len(s.runs)
	s.Close()

	second := testConfig(out)
	second.Train.Epochs = 2 // another config_id: none of the first grid's runs belongs to it
	s2 := openTest(t, second)
	runs, err := Fit(context.Background(), s2, FitOptions{executor: &fakeExec{t: t}})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Report(s2, runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.OutOfGrid != old || sum.RunsRead != old+len(runs) {
		t.Fatalf("summary: %d runs read, %d outside the grid; want %d and %d", sum.RunsRead, sum.OutOfGrid, old+len(runs), old)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := "Left out: " + strings.TrimSpace(english.Count(old, "run")) + " outside this config's grid"
	if !strings.Contains(string(md), want) {
		t.Fatalf("report.md lacks %q", want)
	}
	for _, r := range sum.Rows {
		if r.NTrials != second.Train.Trials {
			t.Fatalf("%s: %d trials averaged, want %d (the other config's runs kept apart)", r.Setting, r.NTrials, second.Train.Trials)
		}
	}
}

// report --compare says what it could test: single trials without an
// audit have no standard error, so "0 of 3 differ by more than 2 SE" would
// claim a test that never ran.
func TestCompareMessage(t *testing.T) {
	nan := math.NaN()
	untested := []report.Comparison{{Setting: "a", DAUC: 0.01, DAUCSE: nan, DEAdv: nan, DEAdvSE: nan},
		{Setting: "b", DAUC: -0.02, DAUCSE: nan, DEAdv: nan, DEAdvSE: nan}, {Setting: "c", DAUC: 0, DAUCSE: nan, DEAdv: nan, DEAdvSE: nan}}
	if m := compareMessage(untested); !strings.HasPrefix(m, "none of 3 settings in both sets could be tested") || strings.Contains(m, "0 of 3") {
		t.Fatalf("untested: %q", m)
	}
	auditOnly := []report.Comparison{{Setting: "a", DAUC: 0.01, DAUCSE: nan, DEAdv: 0.001, DEAdvSE: 0.01, Tested: true}}
	if m := compareMessage(auditOnly); m != "0 of 1 setting differ by more than 2 SE (E[adv] only: single trials give ΔAUC no standard error)" {
		t.Fatalf("audited single trials: %q", m)
	}
	tested := []report.Comparison{{Setting: "a", DAUC: 0.1, DAUCSE: 0.01, Tested: true, SignificantMetric: true},
		{Setting: "b", DAUC: 0.1, DAUCSE: nan, DEAdv: nan, DEAdvSE: nan}, {Setting: "c", OnlyIn: report.OnlyInB}}
	if m := compareMessage(tested); m != "1 of 2 settings differ by more than 2 SE: 1 in AUC, 0 in E[adv] (1 not testable: no standard error; ΔAUC tested for 1, the others have a single trial)" {
		t.Fatalf("partly tested: %q", m)
	}
}

// Report reads the audit's results from the value Audit returned, never
// from the session: another session on the same output (a later process)
// reports the calibration of η the audit measured, and a nil audit
// reports none.
func TestReportTakesTheAuditAsAValue(t *testing.T) {
	c := auditConfig(t)
	c.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}}
	c.Audit.RealizedDraws, c.Audit.Canaries = 0, 0
	s := openTest(t, c)
	audited, err := Audit(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(audited.Calibration) != 1 || len(audited.Audits) != 1 {
		t.Fatalf("audited %+v", audited)
	}
	s2 := openTest(t, c)
	for _, tc := range []struct {
		audited *Audited
		want    bool
	}{{audited, true}, {nil, false}} {
		if _, err := Report(s2, nil, tc.audited); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(s2.Out("report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(md), "Reliability of η"); got != tc.want {
			t.Errorf("audit %v: report.md shows the calibration: %v, want %v", tc.audited != nil, got, tc.want)
		}
	}
}
