package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/pipeline"
	"labelprivacy/report"
)

// What made a result is written down where the result is: every run
// record and report.md say the tool, when, the command line with its --set
// flags and the TRAIN_* variables that set keys, and the config in words
// (model, epochs, data); report.md adds the total wall time, and
// config.resolved.yaml the command.
func TestProvenance(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	out := filepath.Join(t.TempDir(), "out")
	cfg := writeSweepConfig(t, out, "")
	env := map[string]string{"TRAIN_SEED": "5"}
	// pets as a key=value argument: applied, and in the command line as typed.
	if _, err := cli(t, env, "fit", "-c", cfg, "--set", "train.trials=1", "pets=[{mechanism: none}, {mechanism: rr, epsilon: 1}]"); err != nil {
		t.Fatal(err)
	}
	wantCmd := "train fit -c " + cfg + " --set train.trials=1 'pets=[{mechanism: none}, {mechanism: rr, epsilon: 1}]'"
	recs, _ := filepath.Glob(filepath.Join(out, "runs", "*.json"))
	if len(recs) != 4 {
		t.Fatalf("%d run records, want 4", len(recs))
	}
	for _, f := range recs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r report.Run
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		p := r.Provenance
		if p == nil || p.Tool != pipeline.Version || p.Command != wantCmd || strings.Join(p.Env, " ") != "TRAIN_SEED=5" ||
			p.ConfigFile != cfg || p.Started == "" || r.ConfigName != "sweeptest" {
			t.Fatalf("%s: provenance %+v, config name %q; want command %q", f, p, r.ConfigName, wantCmd)
		}
		for _, want := range []string{`config "sweeptest"`, "model mlp [16]", "1 epoch", "synthetic logistic, 3000 train + 600 test rows × 6 features"} {
			if !strings.Contains(p.ConfigSummary, want) {
				t.Fatalf("config summary %q lacks %q", p.ConfigSummary, want)
			}
		}
		if !strings.Contains(r.Config, "train.epochs=1") || !strings.Contains(r.Config, "model.hidden=[16]") {
			t.Fatalf("config keys %q", r.Config)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"*Made by " + pipeline.Version, "wall time", "Command: `" + wantCmd + "` with `TRAIN_SEED=5`",
		"## Provenance", "- Config: config \"sweeptest\"", "The runs reported (4) were made by"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	res, err := os.ReadFile(filepath.Join(out, "config.resolved.yaml"))
	if err != nil || !strings.Contains(string(res), "# Command: "+wantCmd+"\n# Environment: TRAIN_SEED=5\n") {
		t.Fatalf("config.resolved.yaml (%v):\n%s", err, res)
	}
	// train report says its own command, and what made the runs it read.
	rep := filepath.Join(t.TempDir(), "rep")
	if _, err := cli(t, nil, "report", "--in", out, "--out", rep); err != nil {
		t.Fatal(err)
	}
	md, err = os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Command: `train report --in " + out + " --out " + rep + "`", "The runs reported (4) were made by", wantCmd} {
		if !strings.Contains(string(md), want) {
			t.Errorf("train report's report.md lacks %q", want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"train":                 "train",
		"--set":                 "--set",
		"train.epochs=3":        "train.epochs=3",
		"/tmp/a b/c.yaml":       "'/tmp/a b/c.yaml'",
		"pets=[{mechanism: x}]": "'pets=[{mechanism: x}]'",
		"it's":                  `'it'\''s'`,
		"":                      "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// train report --compare A B: the config keys that differ are every key
// of the two configs (train.learning_rates too, which changes the best-LR
// rule's choice set: also in compare.csv's config_diff, per setting), the
// two differences are tested apart, the Summary section shows both sides,
// and the provenance is the command as typed.
func TestCompareReport(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	dir := t.TempDir()
	outA, outB, rep := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "cmp")
	for _, side := range []struct{ out, lrs string }{{outA, "[0.01]"}, {outB, "[0.01, 0.003]"}} {
		cfg := writeSweepConfig(t, side.out, "")
		if _, err := cli(t, nil, "run", "-c", cfg, "--set", "pets=[{mechanism: none}, {mechanism: rr, epsilon: [1]}]",
			"--set", "train.learning_rates="+side.lrs); err != nil {
			t.Fatal(err)
		}
	}
	out, err := cli(t, nil, "report", "--compare", outA, outB, "--out", rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"config keys that differ (A → B): ", "output: " + outA + " → " + outB,
		"train.learning_rates: [0.01] → [0.01, 0.003]"} {
		if !strings.Contains(out, want) {
			t.Errorf("console lacks %q:\n%s", want, out)
		}
	}
	tab, err := data.ReadTable(filepath.Join(rep, "compare.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := report.ReadComparisons(tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !strings.Contains(r.ConfigDiff, "train.learning_rates: [0.01] → [0.003, 0.01]") {
			t.Errorf("%s: config_diff %q lacks the learning rates", r.Setting, r.ConfigDiff)
		}
	}
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(md)
	summary, comparison, ok := strings.Cut(text, "## Comparison")
	if !ok {
		t.Fatalf("report.md has no comparison:\n%s", text)
	}
	for _, side := range []string{outA, outB} {
		_, table, ok := strings.Cut(summary, "### "+side+"\n")
		if !ok || !strings.Contains(table, "| `rr_eps1` |") {
			t.Errorf("the Summary section lacks side %s's table:\n%s", side, summary)
		}
	}
	for _, want := range []string{"| AUC > 2 SE |", "| E[adv] > 2 SE |", "`train.learning_rates: [0.01] → [0.01, 0.003]`"} {
		if !strings.Contains(comparison, want) {
			t.Errorf("the comparison lacks %q", want)
		}
	}
	if want := "Command: `train report --compare " + outA + " " + outB + " --out " + rep + "`"; !strings.Contains(text, want) {
		t.Errorf("report.md lacks %q:\n%s", want, text)
	}
}
