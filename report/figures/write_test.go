package figures

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

var update = flag.Bool("update", false, "rewrite report/figures/testdata (figures.sha256, the SVG digests, and the example PNGs)")

// The full pipeline: synthetic runs/audits/posteriors → summary → plots →
// report.md whose image links all resolve.
func TestWritePlotsAndReport(t *testing.T) {
	runs, audits := reporttest.SynthResults(5)
	post := reporttest.SynthPosteriors(5, 400)
	all, err := report.Summarize(runs, audits, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	noAudit, err := report.Summarize(runs, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := report.Summarize(append(slices.Clone(runs), reporttest.WithDataset(reporttest.RR(1e-3, 0, 0.7), reporttest.DatasetB), reporttest.WithDataset(reporttest.RR(1e-2, 0, 0.72), reporttest.DatasetB)),
		audits, report.Options{AllowMixed: true})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		sum   *report.Summary
		post  []report.Posterior
		names []string
	}{
		{"with posteriors", all, post, []string{"auc_by_setting", "auc_vs_eadv", "auc_vs_ma_p98", "posterior_scatter", "advantage_cdfs"}},
		{"without posteriors", all, nil, []string{"auc_by_setting", "auc_vs_eadv", "auc_vs_ma_p98"}},
		{"without audit: the AUC figure still", noAudit, nil, []string{"auc_by_setting"}},
		// Two groups (dataset B with runs only, the synthetic set with
		// audits and posteriors) overlaid in one set of figures, not one
		// set of files per group.
		{"mixed: the groups overlaid", mixed, post, []string{"auc_by_setting", "auc_vs_eadv", "auc_vs_ma_p98", "posterior_scatter", "advantage_cdfs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			figs, err := WritePlots(filepath.Join(dir, "figures"), tc.sum, tc.post)
			if sets := GroupSets(tc.sum, tc.post); len(sets) > 1 {
				for i, s := range sets {
					if s.Name == "" || i > 0 && s.Name == sets[0].Name {
						t.Fatalf("set %d of a mixed summary is named %q", i, s.Name)
					}
				}
			}
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
			if err := report.WriteMarkdown(md, report.Markdown{Summary: tc.sum, Figures: figs}); err != nil {
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
