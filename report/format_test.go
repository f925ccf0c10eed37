package report_test

import (
	"bytes"
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
		var buf bytes.Buffer
		for _, r := range []Run{FullRun(), nonFinite, noStd} {
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
