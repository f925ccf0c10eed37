package report_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"

	. "labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

func sprint(v any) string { return fmt.Sprintf("%+v", v) }

func findRow(t *testing.T, s *Summary, dataset, setting string) Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.Setting == setting && r.Dataset == dataset {
			return r
		}
	}
	t.Fatalf("setting %s/%s not in summary", dataset, setting)
	return Row{}
}

func TestSummarize(t *testing.T) {
	se3 := func(sd float64) float64 { return sd / math.Sqrt(3) }
	nan := math.NaN()
	type want struct {
		dataset, setting string
		bestLR, mean, se float64
		n                int
		eadv, p98        float64
	}
	type counts struct{ read, dups, conflicts, nanAUC, outOfGrid, auditConflicts int }
	cases := []struct {
		name   string
		runs   []Run
		audits []Audit
		opts   Options
		want   []want
		counts *counts
	}{
		{
			name: "best LR by mean AUC, SE over its trials",
			runs: []Run{
				reporttest.RR(1e-2, 0, 0.70), reporttest.RR(1e-2, 1, 0.76), reporttest.RR(1e-2, 2, 0.67), // mean 0.71 (one high trial: best max, not best mean)
				reporttest.RR(1e-3, 0, 0.72), reporttest.RR(1e-3, 1, 0.73), reporttest.RR(1e-3, 2, 0.74), // mean 0.73, sd 0.01
				reporttest.RR(1e-4, 0, 0.60), reporttest.RR(1e-4, 1, 0.61), reporttest.RR(1e-4, 2, 0.62),
			},
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.73, se3(0.01), 3, nan, nan}},
			counts: &counts{read: 9},
		},
		{
			name: "tie keeps the smaller LR; one trial has SE NaN, not 0",
			runs: []Run{reporttest.RR(0.1, 0, 0.65), reporttest.RR(0.01, 0, 0.65), reporttest.RR(0.001, 0, 0.64)},
			want: []want{{reporttest.DatasetA, "rr_eps1", 0.01, 0.65, nan, 1, nan, nan}},
		},
		{
			name: "two result sets merge; duplicates dropped and counted",
			runs: append([]Run{reporttest.RR(1e-3, 0, 0.72), reporttest.RR(1e-3, 1, 0.73)},
				reporttest.RR(1e-3, 1, 0.73), // exact duplicate
				reporttest.RR(1e-3, 0, 0.99), // same key, different AUC: conflicting duplicate, first kept
				reporttest.RR(1e-3, 2, 0.74), // new trial
			),
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.73, se3(0.01), 3, nan, nan}},
			counts: &counts{read: 5, dups: 2, conflicts: 1},
		},
		{
			name: "same trial with another run_id is not a duplicate",
			runs: func() []Run {
				r := reporttest.RR(1e-3, 0, 0.70)
				r2 := r
				r2.RunID, r2.TestAUC = "other", 0.72
				return []Run{r, r2}
			}(),
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.71, 0.01, 2, nan, nan}},
			counts: &counts{read: 2},
		},
		{
			name: "audit joined; setting without audit gets NaN; identical repeated audit is no conflict",
			runs: []Run{reporttest.RR(1e-3, 0, 0.7), reporttest.Run("llp_k8", pets.LLP, 8, 0, 0, "l", 0.66), reporttest.Run("none", pets.None, 0, 0, 0, "n", 0.8)},
			audits: []Audit{reporttest.Audit("rr_eps1", 0.01, 0.001, 1, 0), reporttest.Audit("llp_k8", 0.02, 0.002, math.Inf(1), 0.3),
				reporttest.Audit("rr_eps1", 0.01, 0.001, 1, 0)},
			want: []want{
				{reporttest.DatasetA, "rr_eps1", 1e-3, 0.7, nan, 1, 0.01, 1},
				{reporttest.DatasetA, "llp_k8", 1e-3, 0.66, nan, 1, 0.02, math.Inf(1)},
				{reporttest.DatasetA, "none", 1e-3, 0.8, nan, 1, nan, nan},
			},
			counts: &counts{read: 3},
		},
		{
			name:   "conflicting audits counted",
			runs:   []Run{reporttest.RR(1e-3, 0, 0.7)},
			audits: []Audit{reporttest.Audit("rr_eps1", 0.01, 0.001, 1, 0), reporttest.Audit("rr_eps1", 0.02, 0.001, 1, 0)},
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.7, nan, 1, 0.01, 1}},
			counts: &counts{read: 1, auditConflicts: 1},
		},
		{
			name: "audit of another dataset does not join",
			runs: []Run{reporttest.RR(1e-3, 0, 0.7)},
			audits: []Audit{func() Audit {
				a := reporttest.Audit("rr_eps1", 0.01, 0, 1, 0)
				a.Dataset = reporttest.DatasetB
				return a
			}()},
			want: []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.7, nan, 1, nan, nan}},
		},
		{
			name:   "audit of the first format (no dataset) joins a single-dataset summary",
			runs:   []Run{reporttest.RR(1e-3, 0, 0.7)},
			audits: []Audit{func() Audit { a := reporttest.Audit("rr_eps1", 0.01, 0, 1, 0); a.Dataset = ""; return a }()},
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.7, nan, 1, 0.01, 1}},
		},
		{
			name:   "NaN AUC runs left out and counted",
			runs:   []Run{reporttest.RR(1e-3, 0, 0.7), reporttest.RR(1e-2, 0, nan), reporttest.RR(1e-2, 1, 0.9)},
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-2, 0.9, nan, 1, nan, nan}},
			counts: &counts{read: 3, nanAUC: 1},
		},
		{
			name: "a setting with only NaN AUCs keeps a row without a result",
			runs: []Run{reporttest.RR(1e-3, 0, nan)},
			want: []want{{reporttest.DatasetA, "rr_eps1", nan, nan, nan, 0, nan, nan}},
		},
		{
			// Issue 9 §4: 0.905 (dataset A) and 0.49 (dataset B, 2 trials) were
			// averaged into 0.7676 over "3 trials".
			name: "two datasets with AllowMixed: separate rows, never averaged",
			runs: []Run{reporttest.RR(1e-3, 0, 0.905), reporttest.WithDataset(reporttest.RR(1e-3, 0, 0.49), reporttest.DatasetB), reporttest.WithDataset(reporttest.RR(1e-3, 1, 0.49), reporttest.DatasetB)},
			opts: Options{AllowMixed: true},
			want: []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.905, nan, 1, nan, nan}, {reporttest.DatasetB, "rr_eps1", 1e-3, 0.49, 0, 2, nan, nan}},
		},
		{
			name:   "runs outside the grid left out and counted",
			runs:   []Run{reporttest.RR(1e-3, 0, 0.7), reporttest.RR(1e-3, 1, 0.72), reporttest.RR(1e-3, 2, 0.1)},
			opts:   Options{InGrid: func(id string) bool { return id != "r0.001-2" }},
			want:   []want{{reporttest.DatasetA, "rr_eps1", 1e-3, 0.71, 0.01, 2, nan, nan}},
			counts: &counts{read: 3, outOfGrid: 1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Summarize(tc.runs, tc.audits, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Rows) != len(tc.want) {
				t.Fatalf("%d rows, want %d: %+v", len(s.Rows), len(tc.want), s.Rows)
			}
			for _, w := range tc.want {
				r := findRow(t, s, w.dataset, w.setting)
				got := want{r.Dataset, r.Setting, r.BestLR, r.AUCMean, r.AUCSE, r.NTrials, r.EAdv, r.MAP98}
				if !reporttest.Near(got.bestLR, w.bestLR) || !reporttest.Near(got.mean, w.mean) || !reporttest.Near(got.se, w.se) || got.n != w.n ||
					!reporttest.Near(got.eadv, w.eadv) || !reporttest.Near(got.p98, w.p98) {
					t.Errorf("%s: got %+v, want %+v", w.setting, got, w)
				}
				if r.Audited == math.IsNaN(w.eadv) {
					t.Errorf("%s: Audited %v with eadv %v", w.setting, r.Audited, w.eadv)
				}
			}
			if c := tc.counts; c != nil {
				got := counts{s.RunsRead, s.Duplicates, s.Conflicts, s.NaNAUC, s.OutOfGrid, s.AuditConflicts}
				if got != *c {
					t.Errorf("counts %+v, want %+v", got, *c)
				}
			}
		})
	}
}

func TestSummarizeErrors(t *testing.T) {
	cases := []struct {
		name     string
		runs     []Run
		is       error
		mentions []string
	}{
		{"two datasets", []Run{reporttest.RR(1e-3, 0, 0.905), reporttest.WithDataset(reporttest.RR(1e-3, 0, 0.49), reporttest.DatasetB), reporttest.WithDataset(reporttest.RR(1e-3, 1, 0.49), reporttest.DatasetB)},
			ErrMixed, []string{reporttest.DatasetA + ": 1 run", reporttest.DatasetB + ": 2 runs", "--allow-mixed"}},
		{"two configs (runs left from an earlier config)", []Run{reporttest.RR(1e-3, 0, 0.7), reporttest.WithConfig(reporttest.RR(1e-3, 1, 0.6), "cfg-old")},
			ErrMixed, []string{"2 model configs", "cfg-a: 1 run", "cfg-old: 1 run"}},
		{"setting with inconsistent parameters", []Run{reporttest.RR(1e-3, 0, 0.7), func() Run { r := reporttest.RR(1e-3, 1, 0.7); r.Epsilon = 2; return r }()},
			ErrInconsistent, []string{"rr_eps1", "r0.001-0", "r0.001-1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Summarize(tc.runs, nil, Options{})
			if !errors.Is(err, tc.is) {
				t.Fatalf("err = %v, want %v", err, tc.is)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestBestLR(t *testing.T) {
	nan := math.NaN()
	runs := []Run{
		reporttest.RR(1e-3, 0, 0.70), reporttest.RR(1e-3, 1, 0.72), reporttest.RR(1e-2, 0, 0.73), reporttest.RR(1e-2, 1, 0.69), // tie at 0.71: smaller LR
		reporttest.WithConfig(reporttest.RR(1e-2, 0, 0.8), "cfg-b"), reporttest.WithConfig(reporttest.RR(1e-3, 0, 0.6), "cfg-b"),
		reporttest.WithDataset(reporttest.RR(1e-3, 0, nan), reporttest.DatasetB),
		reporttest.RR(1e-3, 1, 0.99), // duplicate of trial 1, ignored
	}
	got := BestLR(runs)
	want := map[SettingKey]Best{
		{reporttest.DatasetA, reporttest.ConfigA, "rr_eps1"}: {LR: 1e-3, AUC: 0.71, AUCSE: 0.01, N: 2},
		{reporttest.DatasetA, "cfg-b", "rr_eps1"}:            {LR: 1e-2, AUC: 0.8, AUCSE: nan, N: 1},
		{reporttest.DatasetB, reporttest.ConfigA, "rr_eps1"}: {LR: nan, AUC: nan, AUCSE: nan, N: 0},
	}
	if len(got) != len(want) {
		t.Fatalf("%d keys, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !reporttest.Near(g.LR, w.LR) || !reporttest.Near(g.AUC, w.AUC) || !reporttest.Near(g.AUCSE, w.AUCSE) || g.N != w.N || g.Classes != 2 ||
			!math.IsNaN(g.Accuracy) || !math.IsNaN(g.AccuracySE) {
			t.Errorf("%v: got %+v, want %+v", k, g, w)
		}
	}
}

// Summaries do not depend on run or audit order, so shards merge in any
// order, and a repeated shard only adds duplicates.
func TestSummarizeOrderIndependent(t *testing.T) {
	runs, audits := reporttest.SynthResults(1)
	a, err := Summarize(runs, audits, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	shuffled := slices.Clone(runs)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	au := slices.Clone(audits)
	rng.Shuffle(len(au), func(i, j int) { au[i], au[j] = au[j], au[i] })
	half := len(runs) / 2
	merged := slices.Concat(shuffled[half:], shuffled[:half], shuffled[half:])
	b, err := Summarize(merged, au, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sprint(a.Rows) != sprint(b.Rows) {
		t.Fatal("summary depends on run order / sharding")
	}
	if b.Duplicates != len(runs)-half || b.RunsRead != len(merged) {
		t.Fatalf("duplicates %d, read %d; want %d, %d", b.Duplicates, b.RunsRead, len(runs)-half, len(merged))
	}
	// Canonical order: mechanism, then k, then ε.
	for i := 1; i < len(a.Rows); i++ {
		p, q := a.Rows[i-1], a.Rows[i]
		if p.Pet > q.Pet || (p.Pet == q.Pet && (p.K > q.K || (p.K == q.K && p.Epsilon > q.Epsilon))) {
			t.Fatalf("rows %d, %d out of order: %s, %s", i-1, i, p.Setting, q.Setting)
		}
	}
}

func TestSummaryTable(t *testing.T) {
	runs, audits := reporttest.SynthResults(2)
	runs = append(runs, reporttest.RR(1e-3, 0, 0.7)) // a run of another dataset and config: a mixed summary
	s, err := Summarize(runs, audits[1:], Options{AllowMixed: true, InGrid: func(id string) bool { return !strings.HasPrefix(id, "bot") }})
	if err != nil {
		t.Fatal(err)
	}
	tab := SummaryTable(s)
	names := ColumnNames(tab)
	want := []string{"setting", "pet", "k", "epsilon", "label_dp_epsilon", "best_lr", "auc_mean", "auc_se", "n_trials",
		"eadv", "eadv_se", "ma_p98", "ma_inf_frac", "dataset", "config_id", "audited", "eta_source", "eadv_bound", "bags", "ma_p50", "ma_p90", "ma_mean", "config_name", "config", "config_diff",
		"classes", "test_accuracy_mean", "test_accuracy_se", "learning_rates", "rmsre", "value_max", "test_mse", "test_mse_se", "test_r2", "test_r2_se",
		"tau", "r2_adv", "r2_adv_se", "r2_adv_ratio", "tau_adv", "tau_adv_se", "tau_adv_bound"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	back := RoundTrip(t, tab)
	rows, err := ReadSummaryRows(back)
	if err != nil {
		t.Fatal(err)
	}
	if sprint(rows) != sprint(s.Rows) {
		t.Fatal("rows differ after a Parquet round trip")
	}
	wantMeta := map[string]string{"report.runs_read": fmt.Sprint(len(runs)), "report.duplicate_runs": "0",
		"report.conflicting_duplicates": "0", "report.nan_auc_runs": "0", "report.out_of_grid_runs": "9", "report.conflicting_audit_rows": "0"}
	if !reflect.DeepEqual(back.Meta, wantMeta) {
		t.Fatalf("meta %v, want %v", back.Meta, wantMeta)
	}
	var hasNaN, hasInf, single bool
	for _, r := range rows {
		hasNaN = hasNaN || math.IsNaN(r.EAdv)
		hasInf = hasInf || math.IsInf(r.MAP98, 1)
		single = single || (r.NTrials == 1 && math.IsNaN(r.AUCSE))
	}
	if !hasNaN || !hasInf || !single {
		t.Fatalf("fixture should hold NaN eadv, +Inf ma_p98 and a single trial (%v %v %v)", hasNaN, hasInf, single)
	}
}

// Audits are keyed by (dataset, config, setting). Before, merged with
// AllowMixed, two configs' rr_eps1 rows both got the first one's EAdv. An
// audit of a format without config_id joins a single-config summary only.
func TestAuditsKeyedByConfig(t *testing.T) {
	runs := []Run{reporttest.RR(1e-3, 0, 0.7), reporttest.WithConfig(reporttest.RR(1e-3, 0, 0.8), "cfg-b")}
	other := reporttest.Audit("rr_eps1", 0.03, 0, 1, 0)
	other.ConfigID = "cfg-b"
	old := reporttest.Audit("rr_eps1", 0.01, 0, 1, 0)
	old.ConfigID = ""
	for _, tc := range []struct {
		name   string
		runs   []Run
		audits []Audit
		eadv   []float64 // per row, in (dataset, config) order
	}{
		{"each config its own", runs, []Audit{reporttest.Audit("rr_eps1", 0.01, 0, 1, 0), other}, []float64{0.01, 0.03}},
		{"other order", runs, []Audit{other, reporttest.Audit("rr_eps1", 0.01, 0, 1, 0)}, []float64{0.01, 0.03}},
		{"no config_id, two configs", runs, []Audit{old}, []float64{math.NaN(), math.NaN()}},
		{"no config_id, one config", runs[:1], []Audit{old}, []float64{0.01}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Summarize(tc.runs, tc.audits, Options{AllowMixed: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Rows) != len(tc.eadv) {
				t.Fatalf("%d rows", len(s.Rows))
			}
			for i, r := range s.Rows {
				if !reporttest.Near(r.EAdv, tc.eadv[i]) || r.Audited == math.IsNaN(tc.eadv[i]) {
					t.Fatalf("row %d (%s): EAdv %v audited %v, want %v", i, r.ConfigID, r.EAdv, r.Audited, tc.eadv[i])
				}
			}
		})
	}
}
