package report

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// goldenInputs is a small hand-built result set: every mechanism, an
// infinite ma_p98, a setting without audit, single trials, a duplicate run,
// and a second result set for the comparison (one changed setting, one
// setting per side only).
func goldenInputs(t *testing.T) (runs []Run, audits []Audit, sum *Summary, cmp []Comparison) {
	t.Helper()
	inf := math.Inf(1)
	runs = []Run{
		run("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 0, "g0", 0.641),
		run("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 1, "g1", 0.645),
		run("rr_eps1", pets.RR, 0, 1, 0, "r0", 0.652),
		run("rr_eps1", pets.RR, 0, 1, 1, "r1", 0.66),
		func() Run { r := run("rr_eps1", pets.RR, 0, 1, 0, "r2", 0.61); r.LR = 1e-2; return r }(),
		run("rr_eps0.5", pets.RR, 0, 0.5, 0, "h0", 0.6),
		run("llp_k8", pets.LLP, 8, 0, 0, "l0", 0.63),
		run("llp_k8", pets.LLP, 8, 0, 1, "l1", 0.634),
		func() Run { r := run("llp_lap_k8_eps1", pets.LLPLap, 8, 1, 0, "p0", 0.62); r.LR = 1e-4; return r }(),
		func() Run { r := run("bot", pets.Bot, 0, 0, 0, "b0", 0.5); r.LabelDPEpsilon = 0; return r }(),
		run("none", pets.None, 0, 0, 0, "n0", 0.7),
		run("none", pets.None, 0, 0, 1, "n1", 0.702),
		run("none", pets.None, 0, 0, 1, "n1", 0.702), // duplicate
	}
	audits = []Audit{
		aud("none", 0.0584, 0, inf, 1),
		aud("bot", 0, 0, 0, 0),
		aud("rr_eps0.5", 0, 0, 0.5, 0),
		aud("rr_eps1", 0.00012, 0, 1, 0),
		aud("llp_k8", 0.0193, 0.0004, inf, 0.613),
		aud("llp_geom_k8_eps1", 0.0087, 0.0003, 1, 0),
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
	runs2 = append(runs2, run("rr_eps2", pets.RR, 0, 2, 0, "q0", 0.68))
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
	mixedRuns := append(runs, withDataset(rr(1e-3, 0, 0.9), dsB), withConfig(rr(1e-3, 0, 0.8), "cfg-b"))
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
		}, []string{"| `rr_eps0.5` | RR | — | 0.5 | 0.5 | 0.001 | 0.6000 | n/a | 1 |", "± n/a", "Results of dataset `" + dsA + "`, model config `cfg-a`."},
			[]string{"0.0000 | 1 |", "| dataset | config"}, []string{"1 of 7 settings were not audited"}},
		{"summary only", "report_summary_only.md.golden", Markdown{Summary: sum, AuditHint: "train audit -c sweep.yaml"},
			[]string{"Attacker's prior η (audit): `true`."}, nil, []string{"run `train audit -c sweep.yaml`"}},
		{"not audited", "report_not_audited.md.golden", Markdown{Summary: noAudit},
			[]string{"| trials |\n|", "| `rr_eps1` | RR | — | 1 | 1 | 0.001 | 0.6560 | 0.0040 | 2 |\n"},
			[]string{"| E[adv] |", "MA p98 (nats)", "— | — | — | — | — |"}, []string{"**Not audited:** run `train audit -c CONFIG`"}},
		{"mixed datasets and configs, runs outside the grid", "report_mixed.md.golden", Markdown{Summary: mixed},
			[]string{"| dataset | config | setting |", "**Several result groups** (2 datasets, 2 model configs)",
				"| `" + dsB + "` | `cfg-a` | `rr_eps1` |", "| `" + dsA + "` | `cfg-b` | `rr_eps1` |"},
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

// The full pipeline: synthetic runs/audits/posteriors → summary → plots →
// report.md whose image links all resolve.
func TestWritePlotsAndReport(t *testing.T) {
	runs, audits := synthResults(5)
	post := synthPosteriors(5, 400)
	all, err := Summarize(runs, audits, Options{})
	if err != nil {
		t.Fatal(err)
	}
	noAudit, err := Summarize(runs, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := Summarize(append(slices.Clone(runs), withDataset(rr(1e-3, 0, 0.7), dsB), withDataset(rr(1e-2, 0, 0.72), dsB)),
		audits, Options{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		sum   *Summary
		post  []Posterior
		names []string
	}{
		{"with posteriors", all, post, []string{"auc_by_setting", "auc_vs_eadv", "auc_vs_ma_p98", "posterior_scatter", "advantage_cdfs"}},
		{"without posteriors", all, nil, []string{"auc_by_setting", "auc_vs_eadv", "auc_vs_ma_p98"}},
		{"without audit: the AUC figure still", noAudit, nil, []string{"auc_by_setting"}},
		// Group 1 is dataset B (sorted first): runs only, so only its AUC
		// figure; group 2 is the synthetic set with audits and posteriors.
		{"mixed: one set per group", mixed, post, []string{"auc_by_setting_1", "auc_by_setting_2", "auc_vs_eadv_2",
			"auc_vs_ma_p98_2", "posterior_scatter_2", "advantage_cdfs_2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			figs, err := WritePlots(filepath.Join(dir, "figures"), tc.sum, tc.post)
			if err != nil {
				t.Fatal(err)
			}
			if len(figs) != len(tc.names) {
				t.Fatalf("%d figures %v, want %v", len(figs), figs, tc.names)
			}
			for i, f := range figs {
				if filepath.Base(f.Path) != tc.names[i]+".png" {
					t.Fatalf("figure %d is %s, want %s", i, f.Path, tc.names[i])
				}
				checkFigureFiles(t, strings.TrimSuffix(f.Path, ".png"))
			}
			md := filepath.Join(dir, "report.md")
			if err := WriteMarkdown(md, Markdown{Summary: tc.sum, Figures: figs}); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(md)
			links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`).FindAllStringSubmatch(string(b), -1)
			if len(links) != len(figs) {
				t.Fatalf("%d image links, want %d", len(links), len(figs))
			}
			for _, l := range links {
				if filepath.IsAbs(l[1]) {
					t.Fatalf("absolute link %s", l[1])
				}
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l[1]))); err != nil {
					t.Fatalf("link %s: %v", l[1], err)
				}
			}
		})
	}
}
