package report

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"labelprivacy/data"
)

// goldenInputs is a small hand-built result set: every mechanism, an
// infinite ma_p98, a setting without audit, a duplicate run, and a second
// result set for the comparison (one changed setting, one setting per side
// only).
func goldenInputs(t *testing.T) (sum, cmp *data.Table) {
	t.Helper()
	inf := math.Inf(1)
	rows := []runRow{
		{"llp_geom_k8_eps1", "llp_geom", 8, 1, 1, 1e-3, 0, "g0", 0.641},
		{"llp_geom_k8_eps1", "llp_geom", 8, 1, 1, 1e-3, 1, "g1", 0.645},
		{"rr_eps1", "rr", 0, 1, 1, 1e-3, 0, "r0", 0.652},
		{"rr_eps1", "rr", 0, 1, 1, 1e-3, 1, "r1", 0.66},
		{"rr_eps1", "rr", 0, 1, 1, 1e-2, 0, "r2", 0.61},
		{"rr_eps0.5", "rr", 0, 0.5, 0.5, 1e-3, 0, "h0", 0.6},
		{"llp_k8", "llp", 8, 0, inf, 1e-3, 0, "l0", 0.63},
		{"llp_k8", "llp", 8, 0, inf, 1e-3, 1, "l1", 0.634},
		{"llp_lap_k8_eps1", "llp_lap", 8, 1, 1, 1e-4, 0, "p0", 0.62},
		{"bot", "bot", 0, 0, 0, 1e-3, 0, "b0", 0.5},
		{"none", "none", 0, 0, inf, 1e-3, 0, "n0", 0.7},
		{"none", "none", 0, 0, inf, 1e-3, 1, "n1", 0.702},
		{"none", "none", 0, 0, inf, 1e-3, 1, "n1", 0.702}, // duplicate
	}
	audit := auditTable(
		auditRowT{"none", 0.0584, 0, inf, 1},
		auditRowT{"bot", 0, 0, 0, 0},
		auditRowT{"rr_eps0.5", 0, 0, 0.5, 0},
		auditRowT{"rr_eps1", 0.00012, 0, 1, 0},
		auditRowT{"llp_k8", 0.0193, 0.0004, inf, 0.613},
		auditRowT{"llp_geom_k8_eps1", 0.0087, 0.0003, 1, 0},
	)
	var err error
	sum, err = Summarize(runsTable(rows...), []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	// The "new" result set: RR ε=1 improved, LLP unchanged, ε=0.5 gone,
	// a new RR ε=2.
	var rows2 []runRow
	for _, r := range rows {
		switch r.setting {
		case "rr_eps0.5":
			continue
		case "rr_eps1":
			r.auc += 0.03
		}
		rows2 = append(rows2, r)
	}
	rows2 = append(rows2, runRow{"rr_eps2", "rr", 0, 2, 2, 1e-3, 0, "q0", 0.68})
	sum2, err := Summarize(runsTable(rows2...), []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err = Compare(sum, sum2)
	if err != nil {
		t.Fatal(err)
	}
	return sum, cmp
}

func TestWriteMarkdownGolden(t *testing.T) {
	sum, cmp := goldenInputs(t)
	dir := t.TempDir()
	figs := []Figure{
		{Path: filepath.Join(dir, "figures", "auc_vs_eadv.png"), Title: "Test AUC vs expected additive advantage", Caption: "Paper Fig. 3."},
		{Path: filepath.Join(dir, "figures", "advantage_cdfs.png")},
	}
	cases := []struct {
		name, golden string
		md           Markdown
	}{
		{"summary, comparison and figures", "report.md.golden", Markdown{
			Title: "Beta(2,30) sweep", Summary: sum, Comparison: cmp,
			CompareNames: [2]string{"baseline", "new"}, Figures: figs,
			Notes: []string{"Dataset: synthetic Beta(2,30), η known."},
		}},
		{"summary only", "report_summary_only.md.golden", Markdown{Summary: sum}},
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
			golden := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./report -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Fatalf("report.md differs from %s (go test ./report -update rewrites it):\n%s", golden, got)
			}
			// Writing twice gives the same bytes (no timestamps, fixed order).
			if err := WriteMarkdown(path, tc.md); err != nil {
				t.Fatal(err)
			}
			again, _ := os.ReadFile(path)
			if string(again) != string(got) {
				t.Fatal("WriteMarkdown is not deterministic")
			}
		})
	}
}

// The full pipeline: synthetic runs/audit/posteriors → summary → plots →
// report.md whose image links all resolve.
func TestWritePlotsAndReport(t *testing.T) {
	runs, audit := synthTables(5)
	sum, err := Summarize(runs, []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	post := synthPosteriors(5, 400)
	cases := []struct {
		name  string
		post  *data.Table
		names []string
	}{
		{"with posteriors", post, []string{"auc_vs_eadv", "auc_vs_ma_p98", "posterior_scatter", "advantage_cdfs"}},
		{"without posteriors", nil, []string{"auc_vs_eadv", "auc_vs_ma_p98"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			figs, err := WritePlots(filepath.Join(dir, "figures"), sum, tc.post)
			if err != nil {
				t.Fatal(err)
			}
			if len(figs) != len(tc.names) {
				t.Fatalf("%d figures, want %d", len(figs), len(tc.names))
			}
			for i, f := range figs {
				if filepath.Base(f.Path) != tc.names[i]+".png" {
					t.Fatalf("figure %d is %s", i, f.Path)
				}
				checkFigure(t, strings.TrimSuffix(f.Path, ".png"))
			}
			md := filepath.Join(dir, "report.md")
			if err := WriteMarkdown(md, Markdown{Summary: sum, Figures: figs}); err != nil {
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
			if !strings.Contains(string(b), "| `llp_k8` | LLP | 8 | — | ∞ |") {
				t.Fatalf("summary row for llp_k8 not formatted as expected:\n%s", b)
			}
		})
	}
}
