package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"labelprivacy/data"
)

// checkFigure asserts that base.png decodes as a PNG of nonzero size and
// base.svg parses as an XML document with an <svg> root.
func checkFigure(t *testing.T, base string) {
	t.Helper()
	b, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s.png: %v", base, err)
	}
	if r := img.Bounds(); r.Dx() < 100 || r.Dy() < 100 {
		t.Fatalf("%s.png is %v", base, r)
	}
	s, err := os.ReadFile(base + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(s))
	root := ""
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s.svg: no <svg> root: %v", base, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se.Name.Local
			break
		}
	}
	if root != "svg" {
		t.Fatalf("%s.svg root <%s>", base, root)
	}
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("%s.svg: %v", base, err)
			}
			break
		}
	}
}

// keepExample copies base.png to testdata/example_<name>.png under -update
// (reviewers look at these), checking its size.
func keepExample(t *testing.T, base, name string) {
	t.Helper()
	if !*update {
		return
	}
	b, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 200<<10 {
		t.Fatalf("%s.png is %d KB, want < 200 KB for testdata", base, len(b)>>10)
	}
	if err := os.WriteFile(filepath.Join("testdata", "example_"+name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func synthSummary(t *testing.T) *data.Table {
	t.Helper()
	runs, audit := synthTables(1)
	s, err := Summarize(runs, []*data.Table{audit})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlotAUCvsAdvantage(t *testing.T) {
	full := synthSummary(t)
	// A minimal summary: one RR point, no clean model, no audit for ⊥.
	tiny, err := Summarize(runsTable(rr(1e-3, 0, 0.7), runRow{"bot", "bot", 0, 0, 0, 1e-3, 0, "b", 0.5}),
		[]*data.Table{auditTable(auditRowT{"rr_eps1", 0.01, 0, 1, 0})})
	if err != nil {
		t.Fatal(err)
	}
	// Only infinite ma_p98 values (and a clean model).
	allInf, err := Summarize(runsTable(
		runRow{"llp_k2", "llp", 2, 0, math.Inf(1), 1e-3, 0, "a", 0.7},
		runRow{"llp_k4", "llp", 4, 0, math.Inf(1), 1e-3, 0, "b", 0.68},
		runRow{"none", "none", 0, 0, math.Inf(1), 1e-3, 0, "c", 0.72},
	), []*data.Table{auditTable(auditRowT{"llp_k2", 0.02, 0, math.Inf(1), 0.5}, auditRowT{"llp_k4", 0.01, 0, math.Inf(1), 0.3})})
	if err != nil {
		t.Fatal(err)
	}
	noAudit, err := Summarize(runsTable(rr(1e-3, 0, 0.7)), nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		summary *data.Table
		metric  string
		example string // kept in testdata under -update
		noData  bool
	}{
		{"synthetic grid, additive", full, "eadv", "auc_vs_eadv", false},
		{"synthetic grid, ma_p98 with ∞ and a single-point curve", full, "ma_p98", "auc_vs_ma_p98", false},
		{"single RR point and bot", tiny, "eadv", "", false},
		{"single RR point, ma_p98", tiny, "ma_p98", "", false},
		{"all ma_p98 infinite", allInf, "ma_p98", "", false},
		{"no audit joined", noAudit, "eadv", "", true},
		{"nil summary", nil, "eadv", "", true},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := filepath.Join(dir, "auc", string(rune('a'+i)))
			err := PlotAUCvsAdvantage(tc.summary, tc.metric, base)
			if tc.noData {
				if !errors.Is(err, ErrNoData) {
					t.Fatalf("err = %v, want ErrNoData", err)
				}
				if _, err := os.Stat(base + ".png"); !os.IsNotExist(err) {
					t.Fatalf("a file was written with no data")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFigure(t, base)
			if tc.example != "" {
				keepExample(t, base, tc.example)
			}
		})
	}
	if err := PlotAUCvsAdvantage(full, "no_such_metric", filepath.Join(dir, "x")); !errors.Is(err, data.ErrSchema) {
		t.Fatalf("unknown metric: err = %v", err)
	}
}

func TestPlotPosteriors(t *testing.T) {
	post := synthPosteriors(3, 1000)
	empty := sliceTable(post, 0, 0)
	// Only ∞ multiplicative advantages (the clean model) and a single point.
	single := sliceTable(post, 0, 1)
	cases := []struct {
		name     string
		post     *data.Table
		settings []string
		example  bool
		wantErr  error // nil: success
		errText  string
	}{
		{"synthetic RR/LLP/LLP+Geom", post, nil, true, nil, ""},
		{"explicit settings incl. none and bot", post, []string{"none", "bot", "rr_eps1", "llp_k8", "llp_geom_k8_eps1"}, false, nil, ""},
		{"one example of the clean model", single, []string{"none"}, false, nil, ""},
		{"empty table", empty, nil, false, ErrNoData, ""},
		{"nil table", nil, nil, false, ErrNoData, ""},
		{"only trivial mechanisms", sliceTable(post, 0, 2000), nil, false, ErrNoData, ""},
		{"unknown setting", post, []string{"rr_eps1", "rr_eps99"}, false, nil, "rr_eps99"},
	}
	dir := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, f := range []struct {
				name string
				fn   func(*data.Table, string, ...string) error
			}{{"posterior_scatter", PlotScatter}, {"advantage_cdfs", PlotCDFs}} {
				base := filepath.Join(dir, f.name+string(rune('a'+i)))
				err := f.fn(tc.post, base, tc.settings...)
				switch {
				case tc.wantErr != nil || tc.errText != "":
					if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.errText) {
						t.Fatalf("%s: err = %v, want %v %q", f.name, err, tc.wantErr, tc.errText)
					}
					if _, err := os.Stat(base + ".png"); !os.IsNotExist(err) {
						t.Fatalf("%s: a file was written on error", f.name)
					}
				case err != nil:
					t.Fatalf("%s: %v", f.name, err)
				default:
					checkFigure(t, base)
					if tc.example {
						keepExample(t, base, f.name)
					}
				}
			}
		})
	}
}

func TestCDFXY(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		vals []float64
		want [][2]float64
	}{
		{"ties and end", []float64{1, 1, 2, math.NaN()}, [][2]float64{{0, 0}, {1, 0}, {1, 2.0 / 3}, {2, 2.0 / 3}, {2, 1}, {5, 1}}},
		{"infinite values jump at the ∞ position", []float64{1, inf, inf, 3}, [][2]float64{{0, 0}, {1, 0}, {1, 0.25}, {3, 0.25}, {3, 0.5}, {9, 0.5}, {9, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := cdfXY(tc.vals, 0, 5, 9)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v", got)
			}
			for i, w := range tc.want {
				if !near(got[i].X, w[0]) || !near(got[i].Y, w[1]) {
					t.Fatalf("point %d: got %v, want %v (all %v)", i, got[i], w, got)
				}
			}
		})
	}
}

func TestTicks(t *testing.T) {
	cases := []struct {
		name   string
		ticks  func() []string
		labels []string
	}{
		{"nice linear", func() []string { return labels(niceTicks(0.062)) }, []string{"0", "0.01", "0.02", "0.03", "0.04", "0.05", "0.06"}},
		{"range", func() []string { return labels(rangeTicks(0.48, 0.71)) }, []string{"0.5", "0.55", "0.6", "0.65", "0.7"}},
		{"log1p", func() []string { return labels(log1pTicks(8)) }, []string{"0", "0.2", "0.5", "1", "2", "3", "5"}},
		// A largest value between 2 and 5 (LLP's ma_p98 ≈ 3.6) still gets a label near it.
		{"log1p to 3.6", func() []string { return labels(log1pTicks(3.6)) }, []string{"0", "0.2", "0.5", "1", "2", "3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.ticks(); strings.Join(got, " ") != strings.Join(tc.labels, " ") {
				t.Fatalf("labels %v, want %v", got, tc.labels)
			}
		})
	}
}

func labels(ts []plot.Tick) []string {
	var out []string
	for _, t := range ts {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}
