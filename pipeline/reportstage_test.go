package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	sum, err := Report(s2, runs, nil, nil)
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
	want := "Left out: " + strings.TrimSpace(count(old, "run")) + " outside this config's grid"
	if !strings.Contains(string(md), want) {
		t.Fatalf("report.md lacks %q", want)
	}
	for _, r := range sum.Rows {
		if r.NTrials != second.Train.Trials {
			t.Fatalf("%s: %d trials averaged, want %d (the other config's runs kept apart)", r.Setting, r.NTrials, second.Train.Trials)
		}
	}
}
