package report

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"labelprivacy/data"
)

var update = flag.Bool("update", false, "rewrite report/testdata (golden report.md and example PNGs)")

type runRow struct {
	setting, pet string
	k            int64
	eps, ldp, lr float64
	trial        int64
	runID        string
	auc          float64
}

// runsTable builds a runs table with the full fixed schema.
func runsTable(rows ...runRow) *data.Table {
	n := len(rows)
	setting, pet, loss, ds, model, backend, runID := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	k, trial, seed, epochs, steps := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	eps, ldp, lr, trainLoss, auc, ll, wall, eps2 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, r := range rows {
		setting[i], pet[i], k[i], eps[i], ldp[i], lr[i], trial[i], runID[i], auc[i] = r.setting, r.pet, r.k, r.eps, r.ldp, r.lr, r.trial, r.runID, r.auc
		loss[i], ds[i], model[i], backend[i] = "bce", "beta", "mlp", "go"
		seed[i], epochs[i], steps[i] = 1000+r.trial, 2, 100
		trainLoss[i], ll[i], wall[i], eps2[i] = 0.3, 0.4, 1.5, 1e4
	}
	return &data.Table{Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "pet", Values: pet}, {Name: "k", Values: k},
		{Name: "epsilon", Values: eps}, {Name: "label_dp_epsilon", Values: ldp}, {Name: "loss", Values: loss},
		{Name: "lr", Values: lr}, {Name: "trial", Values: trial}, {Name: "seed", Values: seed},
		{Name: "dataset", Values: ds}, {Name: "model", Values: model}, {Name: "epochs", Values: epochs},
		{Name: "steps", Values: steps}, {Name: "train_loss", Values: trainLoss}, {Name: "test_auc", Values: auc},
		{Name: "test_logloss", Values: ll}, {Name: "wall_s", Values: wall}, {Name: "examples_per_s", Values: eps2},
		{Name: "backend", Values: backend}, {Name: "run_id", Values: runID},
	}}
}

type auditRowT struct {
	setting            string
	eadv, se, p98, inf float64
}

func auditTable(rows ...auditRowT) *data.Table {
	n := len(rows)
	setting, src := make([]string, n), make([]string, n)
	eadv, se, p98, inf, p50 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, r := range rows {
		setting[i], src[i], eadv[i], se[i], p98[i], inf[i], p50[i] = r.setting, "true_eta", r.eadv, r.se, r.p98, r.inf, r.p98/2
	}
	return &data.Table{Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "eta_source", Values: src}, {Name: "eadv", Values: eadv},
		{Name: "eadv_se", Values: se}, {Name: "ma_p50", Values: p50}, {Name: "ma_p98", Values: p98},
		{Name: "ma_inf_frac", Values: inf},
	}}
}

// rr returns an RR(ε=1) run row.
func rr(lr float64, trial int64, auc float64) runRow {
	return runRow{"rr_eps1", "rr", 0, 1, 1, lr, trial, "r" + data.FormatFloat(lr) + "-" + data.FormatFloat(float64(trial)), auc}
}

// summaryRow extracts one setting's row of a summary as a map.
func summaryRow(t *testing.T, s *data.Table, setting string) map[string]any {
	t.Helper()
	names, _ := lookup(s, "setting")
	for i, n := range names.([]string) {
		if n != setting {
			continue
		}
		row := map[string]any{}
		for _, c := range s.Columns {
			switch v := c.Values.(type) {
			case []string:
				row[c.Name] = v[i]
			case []float64:
				row[c.Name] = v[i]
			case []int64:
				row[c.Name] = v[i]
			case []bool:
				row[c.Name] = v[i]
			}
		}
		return row
	}
	t.Fatalf("setting %q not in summary", setting)
	return nil
}

func near(a, b float64) bool {
	return sameFloat(a, b) || math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b))
}

func TestSummarize(t *testing.T) {
	se3 := func(sd float64) float64 { return sd / math.Sqrt(3) }
	nan := math.NaN()
	type want struct {
		bestLR, mean, se float64
		n                int64
		eadv, p98        float64
	}
	cases := []struct {
		name     string
		runs     func() (*data.Table, error)
		audits   []*data.Table
		want     map[string]want
		wantMeta map[string]string
	}{
		{
			name: "best LR by mean AUC, SE over its trials",
			runs: func() (*data.Table, error) {
				return runsTable(
					rr(1e-2, 0, 0.70), rr(1e-2, 1, 0.76), rr(1e-2, 2, 0.67), // mean 0.71 (one high trial: best max, not best mean)
					rr(1e-3, 0, 0.72), rr(1e-3, 1, 0.73), rr(1e-3, 2, 0.74), // mean 0.73, sd 0.01
					rr(1e-4, 0, 0.60), rr(1e-4, 1, 0.61), rr(1e-4, 2, 0.62),
				), nil
			},
			want:     map[string]want{"rr_eps1": {1e-3, 0.73, se3(0.01), 3, nan, nan}},
			wantMeta: map[string]string{MetaRunsRead: "9", MetaDuplicates: "0", MetaConflicts: "0", MetaNaNAUC: "0"},
		},
		{
			name: "tie keeps the smaller LR; one trial has SE 0",
			runs: func() (*data.Table, error) {
				return runsTable(rr(0.1, 0, 0.65), rr(0.01, 0, 0.65), rr(0.001, 0, 0.64)), nil
			},
			want: map[string]want{"rr_eps1": {0.01, 0.65, 0, 1, nan, nan}},
		},
		{
			name: "two result sets merge; duplicates dropped and counted",
			runs: func() (*data.Table, error) {
				a := runsTable(rr(1e-3, 0, 0.72), rr(1e-3, 1, 0.73))
				b := runsTable(
					rr(1e-3, 1, 0.73), // exact duplicate
					rr(1e-3, 0, 0.99), // same key, different AUC: conflicting duplicate, first kept
					rr(1e-3, 2, 0.74), // new trial
				)
				return Concat(a, b)
			},
			want:     map[string]want{"rr_eps1": {1e-3, 0.73, se3(0.01), 3, nan, nan}},
			wantMeta: map[string]string{MetaRunsRead: "5", MetaDuplicates: "2", MetaConflicts: "1"},
		},
		{
			name: "same trial with another run_id is not a duplicate",
			runs: func() (*data.Table, error) {
				r := rr(1e-3, 0, 0.70)
				r2 := r
				r2.runID, r2.auc = "other", 0.72
				return runsTable(r, r2), nil
			},
			want:     map[string]want{"rr_eps1": {1e-3, 0.71, 0.01, 2, nan, nan}},
			wantMeta: map[string]string{MetaDuplicates: "0"},
		},
		{
			name: "audit joined; setting without audit gets NaN",
			runs: func() (*data.Table, error) {
				return runsTable(
					rr(1e-3, 0, 0.7),
					runRow{"llp_k8", "llp", 8, 0, math.Inf(1), 1e-3, 0, "l", 0.66},
					runRow{"none", "none", 0, 0, math.Inf(1), 1e-3, 0, "n", 0.8},
				), nil
			},
			audits: []*data.Table{
				auditTable(auditRowT{"rr_eps1", 0.01, 0.001, 1, 0}),
				auditTable(auditRowT{"llp_k8", 0.02, 0.002, math.Inf(1), 0.3}, auditRowT{"rr_eps1", 0.01, 0.001, 1, 0}),
			},
			want: map[string]want{
				"rr_eps1": {1e-3, 0.7, 0, 1, 0.01, 1},
				"llp_k8":  {1e-3, 0.66, 0, 1, 0.02, math.Inf(1)},
				"none":    {1e-3, 0.8, 0, 1, nan, nan},
			},
			wantMeta: map[string]string{MetaAuditConflicts: "0"},
		},
		{
			name: "NaN AUC rows ignored and counted",
			runs: func() (*data.Table, error) {
				return runsTable(rr(1e-3, 0, 0.7), rr(1e-2, 0, nan), rr(1e-2, 1, 0.9)), nil
			},
			want:     map[string]want{"rr_eps1": {1e-2, 0.9, 0, 1, nan, nan}},
			wantMeta: map[string]string{MetaNaNAUC: "1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runs, err := tc.runs()
			if err != nil {
				t.Fatal(err)
			}
			s, err := Summarize(runs, tc.audits)
			if err != nil {
				t.Fatal(err)
			}
			if s.Rows() != len(tc.want) {
				t.Fatalf("%d rows, want %d", s.Rows(), len(tc.want))
			}
			var names []string
			for _, c := range s.Columns {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, SummaryColumns) {
				t.Fatalf("columns %v", names)
			}
			for setting, w := range tc.want {
				r := summaryRow(t, s, setting)
				got := want{r["best_lr"].(float64), r["auc_mean"].(float64), r["auc_se"].(float64), r["n_trials"].(int64), r["eadv"].(float64), r["ma_p98"].(float64)}
				if !near(got.bestLR, w.bestLR) || !near(got.mean, w.mean) || !near(got.se, w.se) || got.n != w.n ||
					!near(got.eadv, w.eadv) || !near(got.p98, w.p98) {
					t.Errorf("%s: got %+v, want %+v", setting, got, w)
				}
			}
			for k, v := range tc.wantMeta {
				if s.Meta[k] != v {
					t.Errorf("Meta[%s] = %q, want %q", k, s.Meta[k], v)
				}
			}
		})
	}
}

func TestSummarizeErrors(t *testing.T) {
	noAUC := runsTable(rr(1e-3, 0, 0.7))
	noAUC.Columns = noAUC.Columns[:len(noAUC.Columns)-1] // drop run_id
	badType := runsTable(rr(1e-3, 0, 0.7))
	for i := range badType.Columns {
		if badType.Columns[i].Name == "k" {
			badType.Columns[i].Values = []float64{0}
		}
	}
	inconsistent := runsTable(rr(1e-3, 0, 0.7), runRow{"rr_eps1", "rr", 0, 2, 2, 1e-3, 1, "x", 0.7})
	badAudit := auditTable(auditRowT{"rr_eps1", 0, 0, 0, 0})
	badAudit.Columns = badAudit.Columns[:2]
	cases := []struct {
		name   string
		runs   *data.Table
		audits []*data.Table
		schema bool // error wraps data.ErrSchema
	}{
		{"missing column", noAUC, nil, true},
		{"wrong column type", badType, nil, true},
		{"setting with inconsistent parameters", inconsistent, nil, false},
		{"audit without eadv", runsTable(rr(1e-3, 0, 0.7)), []*data.Table{badAudit}, true},
		{"nil runs", nil, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Summarize(tc.runs, tc.audits)
			if err == nil {
				t.Fatal("no error")
			}
			if tc.schema && !errors.Is(err, data.ErrSchema) {
				t.Fatalf("error %v does not wrap data.ErrSchema", err)
			}
		})
	}
}

// Summaries do not depend on row order, so shards merge in any order.
func TestSummarizeOrderIndependent(t *testing.T) {
	runs, audit := synthTables(1)
	a, err := Summarize(runs, []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	perm := rand.New(rand.NewPCG(9, 9)).Perm(runs.Rows())
	shuffled := &data.Table{}
	for _, c := range runs.Columns {
		var v any
		switch x := c.Values.(type) {
		case []string:
			y := make([]string, len(x))
			for i, p := range perm {
				y[i] = x[p]
			}
			v = y
		case []float64:
			y := make([]float64, len(x))
			for i, p := range perm {
				y[i] = x[p]
			}
			v = y
		case []int64:
			y := make([]int64, len(x))
			for i, p := range perm {
				y[i] = x[p]
			}
			v = y
		}
		shuffled.Columns = append(shuffled.Columns, data.Column{Name: c.Name, Values: v})
	}
	// Split into two shards with one shard repeated: every row of the repeat
	// is a duplicate.
	half := runs.Rows() / 2
	first, second := sliceTable(shuffled, 0, half), sliceTable(shuffled, half, runs.Rows())
	merged, err := Concat(second, first, second)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Summarize(merged, []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	if !tablesEqual(a.Columns, b.Columns) {
		t.Fatal("summary depends on row order / sharding")
	}
	if got, want := b.Meta[MetaDuplicates], data.FormatFloat(float64(runs.Rows()-half)); got != want {
		t.Fatalf("duplicates = %s, want %s", got, want)
	}
}

func sliceTable(t *data.Table, lo, hi int) *data.Table {
	out := &data.Table{}
	for _, c := range t.Columns {
		var v any
		switch x := c.Values.(type) {
		case []string:
			v = x[lo:hi]
		case []float64:
			v = x[lo:hi]
		case []int64:
			v = x[lo:hi]
		case []bool:
			v = x[lo:hi]
		}
		out.Columns = append(out.Columns, data.Column{Name: c.Name, Values: v})
	}
	return out
}

// tablesEqual compares columns exactly, NaN equal to NaN.
func tablesEqual(a, b []data.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for j := range a {
		if a[j].Name != b[j].Name {
			return false
		}
		fa, ok := a[j].Values.([]float64)
		if !ok {
			if !reflect.DeepEqual(a[j].Values, b[j].Values) {
				return false
			}
			continue
		}
		fb, ok := b[j].Values.([]float64)
		if !ok || len(fa) != len(fb) {
			return false
		}
		for i := range fa {
			if !sameFloat(fa[i], fb[i]) {
				return false
			}
		}
	}
	return true
}

func TestConcat(t *testing.T) {
	a := &data.Table{Columns: []data.Column{{Name: "s", Values: []string{"x"}}, {Name: "f", Values: []float64{1}}}, Meta: map[string]string{"m": "a"}}
	b := &data.Table{Columns: []data.Column{{Name: "i", Values: []int64{7, 8}}, {Name: "s", Values: []string{"y", "z"}}, {Name: "b", Values: []bool{true, false}}}, Meta: map[string]string{"m": "b", "n": "b"}}
	cases := []struct {
		name    string
		in      []*data.Table
		want    []data.Column
		wantErr bool
	}{
		{"union by name, fill missing", []*data.Table{a, nil, b}, []data.Column{
			{Name: "s", Values: []string{"x", "y", "z"}},
			{Name: "f", Values: []float64{1, math.NaN(), math.NaN()}},
			{Name: "i", Values: []int64{0, 7, 8}},
			{Name: "b", Values: []bool{false, true, false}},
		}, false},
		{"no tables", nil, []data.Column{}, false},
		{"type clash", []*data.Table{a, {Columns: []data.Column{{Name: "f", Values: []int64{1}}}}}, nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Concat(tc.in...)
			if tc.wantErr {
				if !errors.Is(err, data.ErrSchema) {
					t.Fatalf("err = %v, want data.ErrSchema", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tablesEqual(got.Columns, tc.want) {
				t.Fatalf("got %+v", got.Columns)
			}
			if len(tc.in) > 0 && (got.Meta["m"] != "a" || got.Meta["n"] != "b") {
				t.Fatalf("meta %v", got.Meta)
			}
		})
	}
}

func TestSummaryParquetRoundTrip(t *testing.T) {
	runs, audit := synthTables(2)
	// Drop the audit of one setting so the summary holds NaNs as well as ∞.
	s, err := Summarize(runs, []*data.Table{sliceTable(audit, 1, audit.Rows())})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "summary.parquet")
	if err := s.WriteParquet(path); err != nil {
		t.Fatal(err)
	}
	back, err := data.ReadTable(path)
	if err != nil {
		t.Fatal(err)
	}
	if !tablesEqual(back.Columns, s.Columns) {
		t.Fatalf("columns differ after Parquet round trip")
	}
	if !reflect.DeepEqual(back.Meta, s.Meta) {
		t.Fatalf("meta %v, want %v", back.Meta, s.Meta)
	}
	var hasNaN, hasInf bool
	for _, v := range back.Columns[slicesIndex(SummaryColumns, "eadv")].Values.([]float64) {
		hasNaN = hasNaN || math.IsNaN(v)
	}
	for _, v := range back.Columns[slicesIndex(SummaryColumns, "ma_p98")].Values.([]float64) {
		hasInf = hasInf || math.IsInf(v, 1)
	}
	if !hasNaN || !hasInf {
		t.Fatalf("fixture should hold NaN and +Inf (NaN %v, Inf %v)", hasNaN, hasInf)
	}
}

func slicesIndex(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
