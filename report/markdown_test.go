package report_test

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"

	. "labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

var update = flag.Bool("update", false, "rewrite report/testdata (golden report.md and file format files)")

// goldenInputs is a small hand-built result set: every mechanism, an
// infinite ma_p98, a setting without audit, single trials, a duplicate run,
// and a second result set for the comparison (one changed setting, one
// setting per side only).
func goldenInputs(t *testing.T) (runs []Run, audits []Audit, sum *Summary, cmp []Comparison) {
	t.Helper()
	inf := math.Inf(1)
	runs = []Run{
		reporttest.Run("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 0, "g0", 0.641),
		reporttest.Run("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 1, "g1", 0.645),
		reporttest.Run("rr_eps1", pets.RR, 0, 1, 0, "r0", 0.652),
		reporttest.Run("rr_eps1", pets.RR, 0, 1, 1, "r1", 0.66),
		func() Run { r := reporttest.Run("rr_eps1", pets.RR, 0, 1, 0, "r2", 0.61); r.LR = 1e-2; return r }(),
		reporttest.Run("rr_eps0.5", pets.RR, 0, 0.5, 0, "h0", 0.6),
		reporttest.Run("llp_k8", pets.LLP, 8, 0, 0, "l0", 0.63),
		reporttest.Run("llp_k8", pets.LLP, 8, 0, 1, "l1", 0.634),
		func() Run {
			r := reporttest.Run("llp_lap_k8_eps1", pets.LLPLap, 8, 1, 0, "p0", 0.62)
			r.LR = 1e-4
			return r
		}(),
		func() Run { r := reporttest.Run("bot", pets.Bot, 0, 0, 0, "b0", 0.5); r.LabelDPEpsilon = 0; return r }(),
		reporttest.Run("none", pets.None, 0, 0, 0, "n0", 0.7),
		reporttest.Run("none", pets.None, 0, 0, 1, "n1", 0.702),
		reporttest.Run("none", pets.None, 0, 0, 1, "n1", 0.702), // duplicate
	}
	for i := range runs { // binary runs record accuracy at threshold ½ too
		runs[i].TestAccuracy = math.Round(1000*(runs[i].TestAUC+0.2)) / 1000
	}
	audits = []Audit{
		reporttest.Audit("none", 0.0584, 0, inf, 1),
		reporttest.Audit("bot", 0, 0, 0, 0),
		reporttest.Audit("rr_eps0.5", 0, 0, 0.5, 0),
		reporttest.Audit("rr_eps1", 0.00012, 0, 1, 0),
		reporttest.Audit("llp_k8", 0.0193, 0.0004, inf, 0.613),
		reporttest.Audit("llp_geom_k8_eps1", 0.0087, 0.0003, 1, 0),
	}
	var err error
	if sum, err = Summarize(runs, audits, Options{}); err != nil {
		t.Fatal(err)
	}
	// The "new" result set: RR ε=1 improved, LLP unchanged, ε=0.5 gone,
	// a new RR ε=2.
	var runs2 []Run
	for _, r := range runs {
		switch r.Setting {
		case "rr_eps0.5":
			continue
		case "rr_eps1":
			r.TestAUC += 0.03
		}
		runs2 = append(runs2, r)
	}
	runs2 = append(runs2, reporttest.Run("rr_eps2", pets.RR, 0, 2, 0, "q0", 0.68))
	sum2, err := Summarize(runs2, audits, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if cmp, err = Compare(sum, sum2, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	return runs, audits, sum, cmp
}

func TestWriteMarkdown(t *testing.T) {
	runs, audits, sum, cmp := goldenInputs(t)
	noAudit, err := Summarize(runs, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mixedRuns := append(runs, reporttest.WithDataset(reporttest.RR(1e-3, 0, 0.9), reporttest.DatasetB), reporttest.WithConfig(reporttest.RR(1e-3, 0, 0.8), "cfg-b"))
	mixed, err := Summarize(mixedRuns, audits, Options{AllowMixed: true, InGrid: func(id string) bool { return id != "h0" }})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	figs := []Figure{
		{Path: filepath.Join(dir, "figures", "auc_vs_eadv.png"), Title: "Test AUC vs expected additive advantage", Caption: "Paper Fig. 3."},
		{Path: filepath.Join(dir, "figures", "advantage_cdfs.png")},
	}
	cases := []struct {
		name, golden string
		md           Markdown
		has, hasNot  []string // substrings the report must (not) hold
		once         []string // substrings it must hold exactly once
	}{
		{"summary, comparison and figures", "report.md.golden", Markdown{
			Title: "Beta(2,30) sweep", Summary: sum, Comparison: cmp,
			CompareNames: [2]string{"baseline", "new"}, Figures: figs,
			Notes: []string{"Dataset: synthetic Beta(2,30), η known."},
		}, []string{"| `rr_eps0.5` | RR | — | 0.5 | 0.5 | 0.001 | 0.6000 | n/a | 1 |", "± n/a", "Results of dataset `" + reporttest.DatasetA + "`, model config `cfg-a`."},
			[]string{"0.0000 | 1 |", "| dataset | config"}, []string{"1 of 7 settings were not audited"}},
		{"summary only", "report_summary_only.md.golden", Markdown{Summary: sum, AuditHint: "train audit -c sweep.yaml"},
			[]string{"Attacker's prior η (audit): `true`."}, nil, []string{"run `train audit -c sweep.yaml`"}},
		{"not audited", "report_not_audited.md.golden", Markdown{Summary: noAudit},
			[]string{"| trials |\n|", "| `rr_eps1` | RR | — | 1 | 1 | 0.001 | 0.6560 | 0.0040 | 2 |\n"},
			[]string{"| E[adv] |", "MA p98 (nats)", "— | — | — | — | — |"}, []string{"**Not audited:** run `train audit -c CONFIG`"}},
		{"mixed datasets and configs, runs outside the grid", "report_mixed.md.golden", Markdown{Summary: mixed},
			[]string{"| dataset | config | setting |", "**Several result groups** (2 datasets, 2 model configs)",
				"| `" + reporttest.DatasetB + "` | `cfg-a` | `rr_eps1` |", "| `" + reporttest.DatasetA + "` | `cfg-b` | `rr_eps1` |"},
			[]string{"`rr_eps0.5`"}, []string{"**Left out: 1 run outside this config's grid**"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "report.md")
			if err := WriteMarkdown(path, tc.md); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.has {
				if !strings.Contains(string(got), s) {
					t.Errorf("report lacks %q", s)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(string(got), s) {
					t.Errorf("report holds %q", s)
				}
			}
			for _, s := range tc.once {
				if n := strings.Count(string(got), s); n != 1 {
					t.Errorf("report holds %q %d times, want once", s, n)
				}
			}
			golden := filepath.Join("testdata", tc.golden)
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
			// Writing twice gives the same bytes (no timestamps, fixed order).
			if err := WriteMarkdown(path, tc.md); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(path); string(again) != string(got) {
				t.Fatal("WriteMarkdown is not deterministic")
			}
		})
	}
	if err := WriteMarkdown(filepath.Join(dir, "x.md"), Markdown{}); err == nil {
		t.Fatal("nil summary: no error")
	}
}

// Provenance says the revision, or why there is none: a build without VCS
// information (go test, -buildvcs=false) says so wherever the revision
// would stand, never a bare tool version.
func TestProvenanceRevisionWords(t *testing.T) {
	runs, _, sum, _ := goldenInputs(t)
	cases := []struct {
		name, rev string
		has       []string
		hasNot    []string
	}{
		{"recorded", "0123456789ab+modified",
			[]string{"*Made by labelprivacy 0.2.0 (revision 0123456789ab+modified), started", "This report: labelprivacy 0.2.0, revision `0123456789ab+modified`,",
				": labelprivacy 0.2.0 (revision 0123456789ab+modified)"},
			[]string{"no VCS revision"}},
		{"none recorded", "",
			[]string{"*Made by labelprivacy 0.2.0 (no VCS revision recorded), started", "This report: labelprivacy 0.2.0, " + NoRevision + ",",
				": labelprivacy 0.2.0 (no VCS revision recorded)"},
			[]string{"revision `"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := Provenance{Tool: "labelprivacy 0.2.0", Revision: tc.rev, Started: "2026-01-02T03:04:05Z", Command: "train run"}
			rs := slices.Clone(runs)
			for i := range rs {
				rs[i].Provenance = &p
			}
			path := filepath.Join(t.TempDir(), "report.md")
			if err := WriteMarkdown(path, Markdown{Summary: sum, Made: &p, WallS: 3, Origins: Origins(rs)}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range tc.has {
				if !strings.Contains(string(b), s) {
					t.Errorf("report.md lacks %q:\n%s", s, b)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(string(b), s) {
					t.Errorf("report.md holds %q", s)
				}
			}
		})
	}
}
