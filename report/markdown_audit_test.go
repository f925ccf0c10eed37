package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "labelprivacy/report"
	"labelprivacy/report/internal/reporttest"
)

// TestMarkdownAuditSections: report.md gets the audit checks table (E[adv]
// beside the realized gain, the worst case and E[adv]/worst, eps_lower of
// both canary games),
// the η section naming the headline η with E[adv] under other η, and the
// reliability table; without calibration rows it says so.
func TestMarkdownAuditSections(t *testing.T) {
	s := reporttest.Quickstart(t)
	path := filepath.Join(t.TempDir(), "report.md")
	if err := WriteMarkdown(path, Markdown{Summary: s, Audits: reporttest.CheckedAudits(), Calibration: reporttest.CheckedCalibration()}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	md := string(b)
	for _, want := range []string{
		"## Audit checks", "drew 20 fresh releases",
		"| `rr_eps1` | 1 | 0.04 | 0.0008 | 0.0398 | 0.0013 | -0.15 | 0.04 | 1.000 | 0.962 | — | 10000 |",
		"| `llp_geom_k8_eps1` | 1 | 0.0168 | 0.00034 | 0.0164 | 0.00056 | -0.71 | 0.04 | 0.420 | 0.947 | 0.450 | 10000 |",
		"| `llp_k8` | ∞ | 0.0398 | 0.0008 | 0.04 | 0.0013 | 0.15 | — | — | 7.890 | 2.760 | 10000 |",
		"| `none` | ∞ | 0.2157 | 0.0043 | — | — | — | — | — | — | — | — |",
		"*ε ≥, real bags*", "one-run bound of Steinke, Nasr and Jagielski",
		"## The attacker's η", "The headline E[adv] uses η = `clean_model(lr=0.001)`",
		"bracket the truth", "below its value under the true η for 5 of 5 settings",
		"| setting | E[adv] | recalibrated | true η |",
		"ECE 0.0165, Brier 0.1530", "| [0.3, 0.4) | 0 | — | — | — |", "| [0.9, 1.0] | 1000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	as := reporttest.CheckedAudits()
	for i := range as {
		as[i].CalibrationRows = 0
	}
	if err := WriteMarkdown(path, Markdown{Summary: s, Audits: as}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "calibration was not measured") {
		t.Error("no note on the missing calibration rows")
	}
	if err := WriteMarkdown(path, Markdown{Summary: s}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "## Audit checks") {
		t.Error("audit sections without audits")
	}
}
