package pipeline

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
)

// valuesConfig is a small train run of conversion values: every kind of
// values (rr_bins with a public and a private prior, value_bags exact and
// noisy) on a synthetic dataset, audited with the synthetic law.
func valuesConfig(out string) *config.Config {
	c := testConfig(out)
	c.Data.Synth.Kind, c.Data.Synth.Rows, c.Data.Synth.TestRows = data.SynthValues, 2000, 1200
	c.Train.Trials, c.Train.Epochs, c.Train.LearningRates = 1, 2, []float64{0.003}
	eps, e1 := []float64{1}, 0.2
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.Bot}, {Mechanism: pets.LaplaceValue, Epsilon: eps},
		{Mechanism: pets.RRBins, Epsilon: eps, Prior: config.PriorPopulation}, {Mechanism: pets.RRBins, Epsilon: eps, PriorEpsilon: &e1},
		{Mechanism: pets.ValueBags, K: []int{8}}, {Mechanism: pets.ValueBags, K: []int{8}, Epsilon: eps}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = config.EtaTrue, 300, 3, 300
	return c
}

// TestValuesEndToEnd: train run on conversion values trains, audits and
// reports every kind of values: each run has a finite test MSE and no AUC;
// the summary's audit columns are in range (none's R²-advantage 1, bot's
// 0, every DP setting's τ-advantage within its worst case); the private
// prior is its own ledger step (ε₁ = 0.2, the bins 0.8); an rr_bins
// release carries its bins and prior and no seed; the report has the
// figures of values and no figure of classes. Then audit.eta: clean_model
// audits the same runs with the clean model's distribution over the grid.
func TestValuesEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("trains, audits and reports conversion values twice")
	}
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	c := valuesConfig(filepath.Join(t.TempDir(), "out"))
	if err := Run(context.Background(), c, nil, StageAll); err != nil {
		t.Fatal(err)
	}
	runs := resultRows(t, c.Output, "runs.csv")
	if len(runs) != 7 { // none, bot, laplace, 2 × rr_bins, 2 × value_bags, one each
		t.Fatalf("%d runs, want 7", len(runs))
	}
	for _, r := range runs {
		if mse := num(t, r["test_mse"]); !(mse > 0) || math.IsInf(mse, 0) || !math.IsNaN(num(t, r["test_auc"])) || r["value_max"] != "400" {
			t.Errorf("run %s: test_mse %s, test_auc %s, value_max %s", r["setting"], r["test_mse"], r["test_auc"], r["value_max"])
		}
	}
	sum := map[string]map[string]string{}
	for _, r := range resultRows(t, c.Output, "summary.csv") {
		sum[r["setting"]] = r
	}
	if len(sum) != 7 {
		t.Fatalf("%d summary rows, want 7: %v", len(sum), sum)
	}
	for set, r := range sum {
		r2, tau, bound := num(t, r["r2_adv"]), num(t, r["tau_adv"]), num(t, r["tau_adv_bound"])
		switch {
		case set == "none" && r2 != 1, set == "bot" && r2 != 0:
			t.Errorf("%s: r2_adv %v", set, r2)
		case !(r2 >= 0 && r2 <= 1):
			t.Errorf("%s: r2_adv %v outside [0, 1]", set, r2)
		case !math.IsNaN(bound) && tau > bound+1e-12:
			t.Errorf("%s: tau_adv %v above its ε-DP worst case %v", set, tau, bound)
		case strings.Contains(set, "eps1") && math.IsNaN(bound):
			t.Errorf("%s: no worst case", set)
		}
	}
	steps := map[string]float64{}
	for _, r := range resultRows(t, c.Output, "privacy_ledger.csv") {
		if strings.Contains(r["path"], "rr_bins_eps1_pe0.2") {
			steps[r["mechanism"]] = num(t, r["epsilon"])
		}
	}
	if steps["value_prior"] != 0.2 || math.Abs(steps["rr_bins"]-0.8) > 1e-12 {
		t.Errorf("ledger steps of the private prior's release %v, want value_prior 0.2 and rr_bins 0.8", steps)
	}
	md, err := data.ReadMetadata(filepath.Join(c.Output, "releases", "rr_bins_eps1_population", "trial-0.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	var edges, values, prior []float64
	for k, v := range map[string]*[]float64{"bin_edges": &edges, "bin_values": &values, "prior": &prior} {
		if err := json.Unmarshal([]byte(md[k]), v); err != nil {
			t.Fatalf("release metadata %s = %q: %v", k, md[k], err)
		}
	}
	if len(edges) != len(values)+1 || len(prior) != 401 || edges[0] != 0 {
		t.Errorf("bins: %d edges, %d values, prior of %d points", len(edges), len(values), len(prior))
	}
	for k := range md {
		if strings.Contains(k, "seed") {
			t.Errorf("the release's metadata has %s", k)
		}
	}
	for _, f := range []string{"mse_by_setting", "mse_vs_r2adv", "mse_vs_tauadv", "tau_vs_bound", "value_posteriors"} {
		if _, err := os.Stat(filepath.Join(c.Output, "figures", f+".png")); err != nil {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Output, "figures", "auc_by_setting.png")); err == nil {
		t.Error("a report of values drew a figure of classes")
	}
	md2, err := os.ReadFile(filepath.Join(c.Output, "report.md"))
	if err != nil || !strings.Contains(string(md2), "Summary (conversion values)") {
		t.Fatalf("report.md: %v\n%.400s", err, md2)
	}

	// The attacker's prior from the clean model (a classifier of the
	// grid's bins), on the same runs: audited anew, every R²-advantage in
	// [0, 1] and none's 1.
	c.Audit.Eta = config.EtaCleanModel
	if err := Run(context.Background(), c, nil, StageAudit); err != nil {
		t.Fatal(err)
	}
	for _, r := range resultRows(t, c.Output, "audit.csv") {
		r2 := num(t, r["r2_adv"])
		if !strings.HasPrefix(r["eta_source"], "clean_model") || !(r2 >= 0 && r2 <= 1) || (r["setting"] == "none" && r2 != 1) {
			t.Errorf("clean_model audit of %s: eta_source %s, r2_adv %v", r["setting"], r["eta_source"], r2)
		}
	}
}

// resultRows reads a CSV table of out as maps of column to field.
func resultRows(t *testing.T, out, name string) []map[string]string {
	t.Helper()
	tab := resultTable(t, filepath.Join(out, name))
	var rows []map[string]string
	for _, rec := range tab[1:] {
		m := map[string]string{}
		for i, h := range tab[0] {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return rows
}
