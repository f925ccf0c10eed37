package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/data"
	"labelprivacy/pets"

	. "labelprivacy/report"
)

// formatFixtures returns one table of each kind the report writes, built
// from fixed values covering NaN, ±Inf, empty strings, a uint64 seed ≥ 2^63
// and a shared standardization (runs metadata).
func formatFixtures(t *testing.T) map[string]*data.Table {
	t.Helper()
	a, b := FullRun(), FullRun()
	a.Bags, a.Matmul = "sorted:x3", "avx2"
	b.RunID, b.Trial, b.TestAUC, b.LabelDPEpsilon, b.TrainLoss = "fedcba9876543210", 3, math.NaN(), math.Inf(1), math.Inf(-1)
	c := FullRun()
	c.Standardization = nil
	au, av := FullAudit(), FullAudit()
	av.Setting, av.Pet, av.Kind, av.K, av.Summary.K, av.Epsilon, av.Summary.Epsilon = "rr_eps1", pets.RR, pets.RR, 0, 0, 1, 1
	av.MAP98, av.MAInfFrac, av.SEUnit, av.EAdvSE, av.MAMean, av.EpsLowerRealBags = 1, 0, "example", 0.0001, 1, math.NaN()
	post := []Posterior{
		{Dataset: "sha256:00aa", ConfigID: "cfg:0b", Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1,
			Sample: audit.Sample{Index: 3, Prior: 0.2, Label: 1, Release: 0, Posterior: 0.084, IEAdv: 0.05, AbsMA: 1}},
		{Dataset: "sha256:00aa", ConfigID: "cfg:0b", Setting: "llp_k8", Pet: pets.LLP, K: 8,
			Sample: audit.Sample{Index: 4, Prior: 0.1, Release: 0, Posterior: 0, IEAdv: 0.1, AbsMA: math.Inf(1)}},
	}
	cal := Calibration{Dataset: "sha256:00aa", ConfigID: "cfg:0b", EtaSource: "clean_model(lr=0.001)",
		Calibration: audit.Calibration{N: 30, ECE: 0.02, Brier: 0.17, Bins: []audit.CalBin{
			{Lo: 0, Hi: 0.5, N: 30, MeanEta: 0.12, Rate: 0.1}, {Lo: 0.5, Hi: 1, MeanEta: math.NaN(), Rate: math.NaN()}}}}
	_, _, sum, cmp := goldenInputs(t)
	return map[string]*data.Table{
		"runs":        RunsTable([]Run{a, b}),
		"runs_mixed":  RunsTable([]Run{a, c}),
		"audit":       AuditTable([]Audit{au, av}),
		"posteriors":  PosteriorTable(post),
		"calibration": CalibrationTable([]Calibration{cal}),
		"summary":     SummaryTable(sum),
		"compare":     ComparisonTable(cmp),
		"model_attack": ModelAttackTable([]ModelAttack{FullModel(), func() ModelAttack {
			m := FullModel()
			m.Prior, m.ReleaseAdv, m.Expected, m.Excess, m.Slack, m.Z = "clean_model(lr=0.001)", math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()
			return m
		}()}),
	}
}

// TestFileFormatsGolden pins the bytes of every file the report writes
// (CSV, Parquet, runs/<run_id>.json) to testdata/formats: a change to a
// column's name, order or type, or to a JSON key, shows here. -update
// rewrites the files (only for a deliberate format change).
func TestFileFormatsGolden(t *testing.T) {
	dir := filepath.Join("testdata", "formats")
	check := func(t *testing.T, name string, got []byte) {
		t.Helper()
		path := filepath.Join(dir, name)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its golden file (%d bytes, want %d):\n%s", name, len(got), len(want), got)
		}
	}
	for name, tab := range formatFixtures(t) {
		t.Run(name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, ext := range []string{"csv", "parquet"} {
				p := filepath.Join(tmp, name+"."+ext)
				write := tab.WriteCSV
				if ext == "parquet" {
					write = tab.WriteParquet
				}
				if err := write(p); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				check(t, name+"."+ext, b)
			}
		})
	}
	t.Run("run json", func(t *testing.T) {
		nonFinite := FullRun()
		nonFinite.TestAUC, nonFinite.LabelDPEpsilon, nonFinite.TrainLoss = math.NaN(), math.Inf(1), math.Inf(-1)
		nonFinite.Standardization = &Standardization{Mean: []float64{math.NaN()}, Std: []float64{math.Inf(1)}}
		nonFinite.Bags, nonFinite.Matmul = "key:campaign", "avx2"
		noStd := FullRun()
		noStd.Standardization = nil
		withProv := FullRun()
		withProv.ConfigName, withProv.Config = "quickstart", "backend=go; model.hidden=[64, 64]; train.epochs=2"
		withProv.Provenance = &Provenance{Tool: "labelprivacy 0.2.0", Revision: "0123456789ab+modified", Started: "2026-01-02T03:04:05Z",
			Command: "train run -c configs/quickstart.yaml --set 'train.learning_rates=[0.01, 0.001]'", Env: []string{"TRAIN_SEED=7"},
			ConfigFile: "configs/quickstart.yaml", ConfigSummary: `config "quickstart" (cfg:0123); model mlp [64, 64]`}
		withProv.Curve = []EpochPoint{{1, 0.6, 0.7, 0.55, 0.64}, {2, 1.7e18, math.NaN(), math.Inf(1), math.NaN()}}
		var buf bytes.Buffer
		for _, r := range []Run{FullRun(), nonFinite, noStd, withProv} {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(b)
			buf.WriteByte('\n')
			ind, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(ind)
			buf.WriteByte('\n')
		}
		check(t, "runs.jsonl", buf.Bytes())
	})
}

// A mechanism's k or ε that does not apply (k outside the LLP family, ε of
// none, bot and llp) is a null in every table: an empty CSV field and a
// Parquet null, which pandas reads as NaN, never as a 0 that looks like a
// bag size or a privacy level. Files written before (a plain 0) still read.
func TestNotApplicableIsNull(t *testing.T) {
	for name, tab := range formatFixtures(t) {
		if name == "calibration" {
			continue // no k or ε
		}
		t.Run(name, func(t *testing.T) {
			col := func(tb *data.Table, n string) any {
				for _, c := range tb.Columns {
					if c.Name == n {
						return c.Values
					}
				}
				t.Fatalf("no column %q", n)
				return nil
			}
			kinds := col(tab, "pet").([]string)
			dir := t.TempDir()
			if err := tab.WriteParquet(filepath.Join(dir, "t.parquet")); err != nil {
				t.Fatal(err)
			}
			back, err := data.ReadTable(filepath.Join(dir, "t.parquet"))
			if err != nil {
				t.Fatal(err)
			}
			if err := tab.WriteCSV(filepath.Join(dir, "t.csv")); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "t.csv"))
			rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			head := rows[0]
			cell := func(i int, n string) string {
				for j, h := range head {
					if h == n {
						return rows[i+1][j]
					}
				}
				return "?"
			}
			for i, p := range kinds {
				kind, err := pets.ParseKind(p)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					name  string
					apply bool
				}{{"k", kind.NeedsK()}, {"epsilon", kind.NeedsEpsilon()}} {
					var valid bool
					switch v := col(back, c.name).(type) {
					case data.Nullable[int64]:
						valid = v.Valid[i]
					case data.Nullable[float64]:
						valid = v.Valid[i]
					default:
						valid = true // no null in the column
					}
					if valid != c.apply || (cell(i, c.name) == "") == c.apply {
						t.Errorf("row %d (%s): %s is %q in CSV, valid %v in Parquet; want a value only where it applies (%v)",
							i, p, c.name, cell(i, c.name), valid, c.apply)
					}
				}
			}
		})
	}
	// A runs table of the first format: k and ε a plain 0 where n/a.
	old := RunsTable([]Run{FullRun()})
	for i, c := range old.Columns {
		switch v := c.Values.(type) {
		case data.Nullable[int64]:
			old.Columns[i].Values = v.Values
		case data.Nullable[float64]:
			old.Columns[i].Values = v.Values
		}
	}
	runs, err := ReadRuns(RoundTrip(t, old))
	if err != nil || len(runs) != 1 || runs[0].K != 8 || runs[0].Epsilon != 1 {
		t.Fatalf("first-format runs table: %+v, %v", runs, err)
	}
}

// The run record keeps what made the run and its learning curve (NaN and
// ±Inf included) through JSON.
func TestRunJSONProvenanceAndCurve(t *testing.T) {
	r := FullRun()
	r.ConfigName, r.Config = "q", "train.epochs=2"
	r.Provenance = &Provenance{Tool: "labelprivacy 0.2.0", Started: "2026-01-02T03:04:05Z", Command: "train fit -c x.yaml", Env: []string{"TRAIN_SEED=7"}}
	r.Curve = []EpochPoint{{1, 0.6, 0.7, 0.55, 0.64}, {2, 1.7e18, math.NaN(), math.Inf(1), math.NaN()}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Run
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.ConfigName != "q" || back.Config != r.Config || back.Provenance == nil || back.Provenance.Command != r.Provenance.Command ||
		len(back.Provenance.Env) != 1 || len(back.Curve) != 2 || back.Curve[1].TrainLoss != 1.7e18 ||
		!math.IsNaN(back.Curve[1].TestAUC) || !math.IsInf(back.Curve[1].TestLogLoss, 1) || back.Curve[0] != r.Curve[0] {
		t.Fatalf("round trip:\n%s\n%+v", b, back)
	}
}
