package figures

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"labelprivacy/audit"
	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
	"labelprivacy/report/internal/reporttest"
)

// The figure tests check content, not just that a PNG decodes: the built
// figure's series, points, error bars, reference lines and ticks against
// the summary they come from; after drawing, that every label, legend item
// and marker lies inside its area and that no point label touches another
// label, a line, a marker or an error bar (checked by sampling, independent
// of the placer's own geometry); and that the PNG has ink of each
// mechanism's colour inside the data area (a blank plot fails).

// checkFigureFiles asserts that base.png decodes as a PNG of nonzero size
// and base.svg parses as an XML document with an <svg> root.
func checkFigureFiles(t *testing.T, base string) {
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
	for root == "" {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s.svg: no <svg> root: %v", base, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("%s.svg root <%s>", base, root)
	}
	for {
		if _, err := dec.Token(); err != nil {
			if err != io.EOF {
				t.Fatalf("%s.svg: %v", base, err)
			}
			break
		}
	}
}

// render draws f on an in-memory canvas (recording its layout) and returns
// the image.
func render(t *testing.T, f *figure) *image.RGBA {
	t.Helper()
	w, h := f.size()
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(img))
	rgba, ok := img.Image().(*image.RGBA)
	if !ok {
		t.Fatalf("image is %T", img.Image())
	}
	return rgba
}

func inside(r, outer vg.Rectangle) bool {
	const tol = 0.01
	return r.Min.X >= outer.Min.X-tol && r.Min.Y >= outer.Min.Y-tol && r.Max.X <= outer.Max.X+tol && r.Max.Y <= outer.Max.Y+tol
}

// strictlyIn reports whether p lies in the interior of r.
func strictlyIn(p vg.Point, r vg.Rectangle) bool {
	return p.X > r.Min.X && p.X < r.Max.X && p.Y > r.Min.Y && p.Y < r.Max.Y
}

// checkLayout checks a drawn figure's boxes; it returns the number of
// labels placed and left out.
func checkLayout(t *testing.T, f *figure) (placed, dropped int) {
	t.Helper()
	for i, b := range f.boxes {
		if !inside(b, f.canvas) {
			t.Errorf("figure text/legend box %d %v outside the canvas %v", i, b, f.canvas)
		}
		for j := range i {
			if overlapsTest(b, f.boxes[j]) {
				t.Errorf("figure boxes %d and %d overlap: %v %v", j, i, f.boxes[j], b)
			}
		}
	}
	for pi, p := range f.panels {
		if !inside(p.area, f.canvas) || p.area.Max.X-p.area.Min.X < 100 || p.area.Max.Y-p.area.Min.Y < 100 {
			t.Errorf("panel %d: data area %v (canvas %v)", pi, p.area, f.canvas)
		}
		for i, b := range p.legBox {
			if !inside(b, f.canvas) {
				t.Errorf("panel %d: legend item %d outside the canvas", pi, i)
			}
			for j := range i {
				if overlapsTest(b, p.legBox[j]) {
					t.Errorf("panel %d: legend items %d and %d overlap", pi, j, i)
				}
			}
			if b.Min.Y < p.area.Max.Y {
				t.Errorf("panel %d: legend item %d reaches into the data area", pi, i)
			}
		}
		for _, g := range p.drawn.glyphAt {
			if g.X < p.area.Min.X+1 || g.X > p.area.Max.X-1 || g.Y < p.area.Min.Y+1 || g.Y > p.area.Max.Y-1 {
				t.Errorf("panel %d: marker at %v on the frame of %v", pi, g, p.area)
				break
			}
		}
		for i, l := range p.placed {
			if !inside(l.box, p.area) {
				t.Errorf("panel %d: label %q %v outside the data area %v", pi, l.label.text, l.box, p.area)
			}
			for j := range i {
				if overlapsTest(l.box, p.placed[j].box) {
					t.Errorf("panel %d: labels %q and %q overlap", pi, p.placed[j].label.text, l.label.text)
				}
			}
			for _, s := range p.obst.segs {
				if segTouches(s, l.box) {
					t.Errorf("panel %d: label %q %v crosses a line %v–%v", pi, l.label.text, l.box, s.a, s.b)
					break
				}
			}
			for _, b := range p.obst.boxes {
				if overlapsTest(l.box, b) {
					t.Errorf("panel %d: label %q covers a marker or error bar", pi, l.label.text)
					break
				}
			}
		}
		placed += len(p.placed)
		dropped += len(p.dropped)
	}
	return placed, dropped
}

func overlapsTest(a, b vg.Rectangle) bool {
	ix := math.Min(float64(a.Max.X), float64(b.Max.X)) - math.Max(float64(a.Min.X), float64(b.Min.X))
	iy := math.Min(float64(a.Max.Y), float64(b.Max.Y)) - math.Max(float64(a.Min.Y), float64(b.Min.Y))
	return ix > 0.01 && iy > 0.01
}

// segTouches samples s every 0.25 pt and reports whether a sample falls in r.
func segTouches(s seg, r vg.Rectangle) bool {
	l := math.Hypot(float64(s.b.X-s.a.X), float64(s.b.Y-s.a.Y))
	n := int(l/0.25) + 1
	for i := 0; i <= n; i++ {
		f := vg.Length(float64(i) / float64(n))
		if strictlyIn(vg.Point{X: s.a.X + f*(s.b.X-s.a.X), Y: s.a.Y + f*(s.b.Y-s.a.Y)}, r) {
			return true
		}
	}
	return false
}

// inkOf counts the pixels of img inside the panel's data area within a
// small distance of colour c (blended over white when translucent).
func inkOf(img *image.RGBA, f *figure, p *panel, c color.Color) int {
	w, h := f.size()
	sx, sy := float64(img.Bounds().Dx())/float64(w), float64(img.Bounds().Dy())/float64(h)
	cr, cg, cb, ca := c.RGBA() // premultiplied
	cr, cg, cb = cr+0xffff-ca, cg+0xffff-ca, cb+0xffff-ca
	n := 0
	for y := int(float64(h-p.area.Max.Y) * sy); y < int(float64(h-p.area.Min.Y)*sy); y++ {
		for x := int(float64(p.area.Min.X) * sx); x < int(float64(p.area.Max.X)*sx); x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(r)-float64(cr)) + math.Abs(float64(g)-float64(cg)) + math.Abs(float64(b)-float64(cb))
			if d < 3*0x1000 {
				n++
			}
		}
	}
	return n
}

// keepExample writes the figure as testdata/example_<name>.png under
// -update, for reviewers to look at.
func keepExample(t *testing.T, f *figure, name string) {
	t.Helper()
	if name == "" {
		return
	}
	svg, err := renderSVG(f)
	if err != nil {
		t.Fatal(err)
	}
	checkDigest(t, name, svg)
	if !*update {
		return
	}
	base := filepath.Join(t.TempDir(), name)
	if err := saveFigure(base, f); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(base + ".png")
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 250<<10 {
		t.Logf("%s.png is %d KB, over testdata's 250 KB: its example is not rewritten (its digest is)", name, len(b)>>10)
		return
	}
	if err := os.WriteFile(filepath.Join("testdata", "example_"+name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// digestFile holds the SHA-256 of each example figure's SVG, one
// "name hex" line each, sorted: the figures' golden file. A change in a
// figure (a point moved, a label renamed, a panel reordered) fails
// checkDigest; -update rewrites the line after a change meant to be.
const digestFile = "testdata/figures.sha256"

var digestMu sync.Mutex

// checkDigest compares svg's SHA-256 with name's line in digestFile, or
// under -update writes it there.
func checkDigest(t *testing.T, name string, svg []byte) {
	t.Helper()
	sum := sha256.Sum256(svg)
	got := hex.EncodeToString(sum[:])
	digestMu.Lock()
	defer digestMu.Unlock()
	lines := map[string]string{}
	if b, err := os.ReadFile(digestFile); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if n, h, ok := strings.Cut(l, " "); ok {
				lines[n] = h
			}
		}
	} else if !*update {
		t.Fatalf("%v (go test ./report/figures -update writes it)", err)
	}
	if !*update {
		if want, ok := lines[name]; !ok {
			t.Fatalf("figure %s has no digest in %s (go test ./report/figures -update)", name, digestFile)
		} else if want != got {
			t.Fatalf("figure %s changed: its SVG's SHA-256 is %s, %s has %s (if meant: go test ./report/figures -update, and look at testdata/example_%s.png)", name, got, digestFile, want, name)
		}
		return
	}
	lines[name] = got
	var out []string
	for n, h := range lines {
		out = append(out, n+" "+h)
	}
	sort.Strings(out)
	if err := os.WriteFile(digestFile, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func synthSummary(t *testing.T, audited bool) *report.Summary {
	t.Helper()
	runs, audits := reporttest.SynthResults(1)
	if !audited {
		audits = nil
	}
	s, err := report.Summarize(runs, audits, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dataSeries are a panel's series of settings: not the grey context dots,
// the worst-case rings or their dotted joins.
func dataSeries(p *panel) []*series {
	var out []*series
	for _, s := range p.series {
		if !s.cloud && !s.halo && s.name != "to worst case" {
			out = append(out, s)
		}
	}
	return out
}

func TestAUCvsAdvantageFigure(t *testing.T) {
	full, small := synthSummary(t, true), reporttest.Quickstart(t)
	cases := []struct {
		name     string
		sum      *report.Summary
		metric   advMetric
		example  string
		allLabel bool // every point must be labelled
		crowded  bool // small multiples, bot a reference line
		symlog   bool
	}{
		{"synthetic grid, additive", full, metricEAdv, "auc_vs_eadv", false, true, true},
		{"synthetic grid, ma_p98 with ∞ and a single-point curve", full, metricMAP98, "auc_vs_ma_p98", false, true, false},
		{"quickstart grid, additive", small, metricEAdv, "", true, false, false},
		{"quickstart grid, ma_p98", small, metricMAP98, "quickstart_auc_vs_ma_p98", true, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := aucVsAdvFigure(tc.sum.Rows, tc.metric, "")
			if err != nil {
				t.Fatal(err)
			}
			// One series per curve, one point per audited privatized setting
			// (bot a reference line when crowded), across the panels.
			wantPts, curves := 0, map[curveKey]bool{}
			fams := map[pets.Kind]bool{}
			var clean, bot report.Row
			for _, r := range tc.sum.Rows {
				switch {
				case r.Pet == pets.None:
					clean = r
					continue
				case r.Pet == pets.Bot && tc.crowded:
					bot = r
					continue
				}
				wantPts++
				curves[curveOf(r)] = true
				fams[r.Pet.Family()] = true
			}
			if tc.crowded != (len(f.panels) > 1) || tc.crowded && len(f.panels) != len(fams) {
				t.Fatalf("%d panels for %d mechanism families, crowded %v", len(f.panels), len(fams), tc.crowded)
			}
			if tc.crowded && !strings.Contains(f.note, "one panel per mechanism") {
				t.Errorf("note %q does not state the rule", f.note)
			}
			if got := f.panels[0].x.scale != nil && tc.metric == metricEAdv; got != tc.symlog {
				t.Errorf("symlog x axis %v, want %v", got, tc.symlog)
			}
			nSeries, pts, withSE, withXSE, segs := 0, 0, 0, 0, 0
			for _, p := range f.panels {
				if len(p.refs) == 0 || !p.refs[0].horizontal || p.refs[0].v != clean.AUCMean {
					t.Fatalf("no-PET line %+v, want y = %v", p.refs, clean.AUCMean)
				}
				if tc.crowded && !slices.ContainsFunc(p.refs, func(l refLine) bool { return l.horizontal && l.v == bot.AUCMean }) {
					t.Fatalf("%s: no bot line at %v", p.title, bot.AUCMean)
				}
				for _, s := range dataSeries(p) {
					nSeries++
					pts += len(s.pts)
					if s.line != nil {
						segs += len(s.pts) - 1
					}
					for i, q := range s.pts {
						if errAt(s.yerr, i) > 0 {
							withSE++
						}
						if errAt(s.xerr, i) > 0 {
							withXSE++
						}
						e := errAt(s.yerr, i)
						if q.Y-e < p.y.min || q.Y+e > p.y.max || q.X < p.x.min || q.X > p.x.max {
							t.Fatalf("%s point %v ± %v outside the axes x [%v, %v] y [%v, %v]", s.name, q, e, p.x.min, p.x.max, p.y.min, p.y.max)
						}
					}
				}
				if p.y.min != f.panels[0].y.min || p.x.max != f.panels[0].x.max {
					t.Errorf("%s: axes differ from the first panel's", p.title)
				}
			}
			if nSeries != len(curves) || pts != wantPts {
				t.Fatalf("%d series with %d points, want %d and %d", nSeries, pts, len(curves), wantPts)
			}
			if withSE != wantPts {
				t.Fatalf("%d points with AUC error bars, want all %d (3 trials each)", withSE, wantPts)
			}
			if tc.metric == metricEAdv && withXSE == 0 || tc.metric == metricMAP98 && withXSE != 0 {
				t.Fatalf("%d points with E[adv] error bars", withXSE)
			}
			// Every point has a label naming its parameters (ε for the
			// two-parameter mechanisms' points; k and ε where it starts).
			labels := 0
			for _, p := range f.panels {
				labels += len(p.labels)
				for _, l := range p.labels {
					if l.text == "" {
						t.Fatalf("empty label at %v", l)
					}
				}
			}
			if labels != wantPts {
				t.Fatalf("%d labels for %d points", labels, wantPts)
			}
			img := render(t, f)
			placed, dropped := checkLayout(t, f)
			checkNoHiddenMarkers(t, f)
			if tc.allLabel && dropped > 0 {
				t.Errorf("%d of %d labels left out on a small grid", dropped, placed+dropped)
			}
			prio1, drawnPts, ybars, xbars, drawnSegs := 0, 0, 0, 0, 0
			for _, p := range f.panels {
				for _, l := range p.placed {
					if l.label.prio == 1 {
						prio1++
					}
				}
				ctx := 0
				for _, s := range p.series {
					if s.cloud {
						ctx += len(s.pts)
					}
				}
				drawnPts += p.drawn.glyphs - ctx
				ybars, xbars, drawnSegs = ybars+p.drawn.ybars, xbars+p.drawn.xbars, drawnSegs+p.drawn.segments
			}
			if prio1 < 4 {
				t.Errorf("only %d curve-end labels placed", prio1)
			}
			if ybars != withSE || drawnPts != wantPts || drawnSegs != segs || segs == 0 || xbars == 0 && withXSE > 0 {
				t.Fatalf("drew %d y bars, %d x bars, %d markers, %d segments; want %d, ≤ %d, %d, %d",
					ybars, xbars, drawnPts, drawnSegs, withSE, withXSE, wantPts, segs)
			}
			for _, pet := range []pets.Kind{pets.RR, pets.LLP} {
				ink := 0
				for _, p := range f.panels {
					ink += inkOf(img, f, p, petColor(pet))
				}
				if ink < 200 {
					t.Errorf("%s: only %d pixels of its colour in the data area", display.PetName(pet), ink)
				}
			}
			keepExample(t, f, tc.example)
		})
	}
}

// checkNoHiddenMarkers: after drawing, no marker's disc overlaps another's
// in a panel (context dots and halo rings aside).
func checkNoHiddenMarkers(t *testing.T, f *figure) {
	t.Helper()
	for _, p := range f.panels {
		m := p.drawn.marks
		for i := range m {
			for j := range i {
				// Markers may overlap only when the later one is an outline
				// (it hides nothing but its line), off the earlier's centre
				// or larger than it (a ring around it).
				d := math.Hypot(float64(m[i].at.X-m[j].at.X), float64(m[i].at.Y-m[j].at.Y))
				if d < float64(m[i].r+m[j].r)-0.01 && !(m[i].open && (d >= coincident || m[i].r >= m[j].r+ringGrow-0.01)) {
					t.Errorf("%s: markers at %v (r %.1f) and %v (r %.1f, open %v) overlap (distance %.2f < %.2f)",
						p.title, m[j].at, m[j].r, m[i].at, m[i].r, m[i].open, d, m[i].r+m[j].r)
				}
			}
		}
	}
}

// Small and degenerate inputs (ported from the table-based tests): a single
// RR point with bot and no clean model, and only infinite ma_p98 values.
func TestAUCvsAdvantageEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	bot := reporttest.Run("bot", pets.Bot, 0, 0, 0, "b", 0.5)
	bot.LabelDPEpsilon = 0
	tiny, err := report.Summarize([]report.Run{reporttest.RR(1e-3, 0, 0.7), bot}, []report.Audit{reporttest.Audit("rr_eps1", 0.01, 0, 1, 0), reporttest.Audit("bot", 0, 0, 0, 0)}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	allInf, err := report.Summarize([]report.Run{reporttest.Run("llp_k2", pets.LLP, 2, 0, 0, "a", 0.7), reporttest.Run("llp_k4", pets.LLP, 4, 0, 0, "b", 0.68),
		reporttest.Run("none", pets.None, 0, 0, 0, "c", 0.72)},
		[]report.Audit{reporttest.Audit("llp_k2", 0.02, 0, inf, 0.5), reporttest.Audit("llp_k4", 0.01, 0, inf, 0.3)}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		sum    *report.Summary
		metric advMetric
		points int
		labels []string
		atInf  int // points at the ∞ position
	}{
		{"single RR point and bot, E[adv]", tiny, metricEAdv, 2, []string{"bot", "ε=1"}, 0},
		{"single RR point and bot, ma_p98", tiny, metricMAP98, 2, []string{"bot", "ε=1"}, 0},
		{"all ma_p98 infinite", allInf, metricMAP98, 2, []string{"k=2", "k=4"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := aucVsAdvFigure(tc.sum.Rows, tc.metric, "")
			if err != nil {
				t.Fatal(err)
			}
			render(t, f)
			placed, dropped := checkLayout(t, f)
			p := f.panels[0]
			n, atInf := 0, 0
			for _, s := range p.series {
				for _, q := range s.pts {
					n++
					if hasTick(p.x.ticks, "∞") && q.X == p.x.ticks[len(p.x.ticks)-1].Value {
						atInf++
					}
				}
			}
			var got []string
			for _, l := range p.placed {
				got = append(got, l.label.text)
			}
			slices.Sort(got)
			if n != tc.points || atInf != tc.atInf || p.drawn.glyphs != n || p.drawn.ybars != 0 || dropped != 0 ||
				placed != len(tc.labels) || !slices.Equal(got, tc.labels) {
				t.Fatalf("%d points (%d at ∞), %d drawn, %d y bars, labels %q (%d left out); want %d, %d, labels %q",
					n, atInf, p.drawn.glyphs, p.drawn.ybars, got, dropped, tc.points, tc.atInf, tc.labels)
			}
			if tc.atInf > 0 && (f.note == "" || len(p.refs) != 2) {
				t.Fatalf("∞ points without the note or the separator: %q, %d reference lines", f.note, len(p.refs))
			}
		})
	}
	if _, err := aucVsAdvFigure(nil, metricEAdv, ""); !errors.Is(err, ErrNoData) {
		t.Fatalf("no rows: err %v", err)
	}
}

// The drawn picture shows the series: removing the RR curve's line, or its
// markers, or its error bars, takes visible ink of its colour away.
func TestAUCvsAdvantageInk(t *testing.T) {
	s := reporttest.Quickstart(t)
	ink := func(change func(*series)) int {
		f, err := aucVsAdvFigure(s.Rows, metricEAdv, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, sr := range f.panels[0].series {
			if sr.name == "RR" {
				change(sr)
			}
		}
		return inkOf(render(t, f), f, f.panels[0], petColor(pets.RR))
	}
	all := ink(func(*series) {})
	cases := []struct {
		name   string
		change func(*series)
		min    int // pixels at 120 dpi
	}{
		// Measured: 1503, 98 and 55 of 1781 pixels; the bounds are about half.
		{"line", func(s *series) { s.line = nil }, 700},
		{"markers", func(s *series) { s.glyph = nil }, 45},
		{"error bars", func(s *series) { s.yerr, s.xerr = nil, nil }, 25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := all - ink(tc.change); d < tc.min {
				t.Fatalf("without the %s, %d fewer pixels of RR's colour (of %d); want ≥ %d", tc.name, d, all, tc.min)
			}
		})
	}
}

func TestAUCvsAdvantageLabels(t *testing.T) {
	s := reporttest.Quickstart(t)
	f, err := aucVsAdvFigure(s.Rows, metricEAdv, "")
	if err != nil {
		t.Fatal(err)
	}
	render(t, f)
	var got []string
	for _, l := range f.panels[0].placed {
		got = append(got, l.label.text)
	}
	slices.Sort(got)
	// Single LLP+Lap and LLP+Geom points carry k and ε.
	want := []string{"k=64", "k=8", "k=8, ε=1", "k=8, ε=1", "ε=1", "ε=4"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("labels %q, want %q", got, want)
	}
}

func TestAUCBySettingFigure(t *testing.T) {
	noAudit := synthSummary(t, false)
	cases := []struct {
		name    string
		sum     *report.Summary
		panels  []string
		example string
	}{
		{"synthetic grid without audit", noAudit, []string{"RR", "LLP", "LLP+Lap", "LLP+Geom"}, "auc_by_setting"},
		{"quickstart", reporttest.Quickstart(t), []string{"RR", "LLP", "LLP+Lap", "LLP+Geom"}, ""},
		{"RR only, single trials", func() *report.Summary {
			s, err := report.Summarize([]report.Run{reporttest.RR(1e-3, 0, 0.7), reporttest.Run("none", pets.None, 0, 0, 0, "n", 0.74)}, nil, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}(), []string{"RR"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := aucBySettingFigure(tc.sum.Rows, "")
			if err != nil {
				t.Fatal(err)
			}
			var titles []string
			for _, p := range f.panels {
				titles = append(titles, p.title)
			}
			if !slices.Equal(titles, tc.panels) {
				t.Fatalf("panels %v, want %v", titles, tc.panels)
			}
			want := map[pets.Kind]int{}
			withSE := 0
			var refs []float64 // the clean and bot AUCs: a line each in every panel
			for _, r := range tc.sum.Rows {
				if r.Pet == pets.None || r.Pet == pets.Bot {
					refs = append(refs, r.AUCMean)
				}
				if r.Pet != pets.None && r.Pet != pets.Bot {
					want[r.Pet]++
					if metricSE(r) > 0 {
						withSE++
					}
				}
			}
			render(t, f)
			checkLayout(t, f)
			gotSE := 0
			for _, p := range f.panels {
				pts := 0
				for _, s := range p.series {
					pts += len(s.pts)
				}
				var got []float64
				for _, r := range p.refs {
					if r.horizontal {
						got = append(got, r.v)
					}
				}
				if !slices.Equal(got, refs) {
					t.Errorf("%s: reference lines at %v, want %v (clean, bot)", p.title, got, refs)
				}
				if p.y.min != f.panels[0].y.min || p.y.max != f.panels[0].y.max {
					t.Errorf("%s: y axis [%v, %v] differs from the first panel's", p.title, p.y.min, p.y.max)
				}
				if len(p.x.ticks) == 0 {
					t.Errorf("%s: no x ticks", p.title)
				}
				gotSE += p.drawn.ybars
				if p.drawn.glyphs != pts {
					t.Errorf("%s: drew %d markers for %d points", p.title, p.drawn.glyphs, pts)
				}
			}
			total := 0
			for _, n := range want {
				total += n
			}
			drawn := 0
			for _, p := range f.panels {
				drawn += p.drawn.glyphs
			}
			if drawn != total || gotSE != withSE {
				t.Fatalf("drew %d points with %d error bars, want %d and %d", drawn, gotSE, total, withSE)
			}
			keepExample(t, f, tc.example)
		})
	}
}

func TestPosteriorFigures(t *testing.T) {
	post := reporttest.SynthPosteriors(3, 1000)
	f, err := scatterFigure(post, "")
	if err != nil {
		t.Fatal(err)
	}
	img := render(t, f)
	checkLayout(t, f)
	if len(f.panels) != 3 {
		t.Fatalf("%d scatter panels, want RR, LLP, LLP+Geom", len(f.panels))
	}
	for _, p := range f.panels {
		n := 0
		colors, shapes := map[color.Color]bool{}, map[string]bool{}
		for _, s := range p.series[1:] {
			n += len(s.pts)
			if len(s.pts) > maxScatterPoints {
				t.Errorf("%s: %d points, more than %d", s.name, len(s.pts), maxScatterPoints)
			}
			colors[s.glyph.Color] = true
			shapes[fmt.Sprintf("%T", s.glyph.Shape)] = true
		}
		settings := len(p.series) - 1
		if settings < 2 || settings > maxScatterSettings || p.drawn.glyphs != n || len(p.legend) != settings {
			t.Fatalf("%s: %d settings, %d points, %d drawn, %d legend items", p.title, settings, n, p.drawn.glyphs, len(p.legend))
		}
		if len(colors) != settings || len(shapes) != settings {
			t.Errorf("%s: %d settings in %d colours and %d markers; want each its own", p.title, settings, len(colors), len(shapes))
		}
		if inkOf(img, f, p, p.series[1].glyph.Color) < 50 {
			t.Errorf("%s: no ink of its first setting's colour", p.title)
		}
	}
	keepExample(t, f, "posterior_scatter")

	// More settings of a mechanism than a panel shows: the first, the last
	// and evenly spaced ones, said in the title and the note.
	var many []report.Posterior
	for _, e := range []float64{0.1, 0.25, 0.5, 1, 2, 4, 8} {
		for i := range 50 {
			many = append(many, report.Posterior{Setting: fmt.Sprintf("rr_eps%g", e), Pet: pets.RR, Epsilon: e,
				Sample: audit.Sample{Prior: float64(i) / 60, Posterior: float64(i) / 55}})
		}
	}
	g, err := scatterFigure(many, "")
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, it := range g.panels[0].legend {
		shown = append(shown, it.text)
	}
	if want := []string{"ε=0.1", "ε=0.5", "ε=2", "ε=8"}; !slices.Equal(shown, want) || !strings.Contains(g.panels[0].title, "4 of 7") ||
		!strings.Contains(g.note, "at most 4 settings") {
		t.Fatalf("crowded scatter shows %q under %q (note %q); want %q", shown, g.panels[0].title, g.note, want)
	}

	// CDFs: more than 6 settings, one row per mechanism; the ∞ fraction is
	// the audit's (here 1.7%), not the samples'.
	rows := []report.Row{{Setting: "llp_k2", Pet: pets.LLP, K: 2, Audited: true, MAInfFrac: 0.017}}
	c, err := cdfFigure(post, rows, "")
	if err != nil {
		t.Fatal(err)
	}
	img = render(t, c)
	checkLayout(t, c)
	if len(c.panels) != 6 || !strings.Contains(c.note, "one row per mechanism") {
		t.Fatalf("CDF of 10 settings: %d panels (want 3 rows of 2), note %q", len(c.panels), c.note)
	}
	for i := 0; i < len(c.panels); i += 2 {
		pa, pm := c.panels[i], c.panels[i+1]
		if len(pa.series) > maxCDFPerRow || len(pa.series) != len(pm.series) || len(pa.legend) != len(pa.series) {
			t.Fatalf("%s: %d and %d series, %d legend items", pa.title, len(pa.series), len(pm.series), len(pa.legend))
		}
		colors := map[color.Color]bool{}
		for _, s := range pa.series {
			colors[s.line.Color] = true
		}
		if len(colors) != len(pa.series) {
			t.Errorf("%s: %d settings share %d colours", pa.title, len(pa.series), len(colors))
		}
		for _, p := range []*panel{pa, pm} {
			ink := 0
			for _, s := range p.series {
				ink += inkOf(img, c, p, s.line.Color)
			}
			if p.drawn.segments < 20 || ink < 50*len(p.series) {
				t.Fatalf("%s: %d segments drawn, %d pixels of the settings' colours", p.title, p.drawn.segments, ink)
			}
		}
	}
	llp := c.panels[2]
	if !strings.HasPrefix(llp.title, "LLP") || !strings.Contains(llp.legend[0].text, "k=2 (1.7% ∞)") ||
		!hasTick(c.panels[3].x.ticks, "∞") || len(c.panels[3].refs) != 1 {
		t.Fatalf("CDF of LLP: %q, legend %q, ticks %v", llp.title, llp.legend[0].text, c.panels[3].x.ticks)
	}
	keepExample(t, c, "advantage_cdfs")

	// Six settings or fewer share one pair of panels.
	few := slices.DeleteFunc(slices.Clone(post), func(p report.Posterior) bool { return p.Pet == pets.LLPGeom || p.K == 32 })
	c2, err := cdfFigure(few, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	render(t, c2)
	checkLayout(t, c2)
	if len(c2.panels) != 2 || len(c2.panels[0].series) != 6 || len(c2.legend) != 6 {
		t.Fatalf("CDF of 6 settings: %d panels, %d series, %d legend items", len(c2.panels), len(c2.panels[0].series), len(c2.legend))
	}

	trivial := slices.DeleteFunc(slices.Clone(post), func(p report.Posterior) bool { return p.Pet != pets.None && p.Pet != pets.Bot })
	for _, in := range [][]report.Posterior{nil, trivial} {
		if _, err := scatterFigure(in, ""); !errors.Is(err, ErrNoData) {
			t.Fatalf("scatter of %d trivial samples: err %v", len(in), err)
		}
		if _, err := cdfFigure(in, nil, ""); !errors.Is(err, ErrNoData) {
			t.Fatalf("CDFs of %d trivial samples: err %v", len(in), err)
		}
	}
}

// Overlaid sets get their own panels even when one set's last mechanism
// is the next set's first: one RR panel per set, titled by the set.
func TestScatterSetsPanelPerSet(t *testing.T) {
	var rr []report.Posterior
	for _, e := range []float64{1, 4} {
		for i := range 20 {
			rr = append(rr, report.Posterior{Setting: fmt.Sprintf("rr_eps%g", e), Pet: pets.RR, Epsilon: e,
				Sample: audit.Sample{Prior: float64(i) / 40, Posterior: float64(i) / 30}})
		}
	}
	f, err := scatterSets([]Set{{Name: "A", Posteriors: rr}, {Name: "B", Posteriors: rr[:20]}}, "")
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, p := range f.panels {
		titles = append(titles, fmt.Sprintf("%s: %d settings", p.title, len(p.legend)))
	}
	if want := []string{"A: RR: 2 settings", "B: RR: 1 settings"}; !slices.Equal(titles, want) {
		t.Fatalf("panels %q, want %q", titles, want)
	}
}

// Overlaid sets that share a setting name it once in the CDFs' legend,
// with the primary (last) set's text; a setting of one set only is named
// too.
func TestCDFSetsLegendNamesEachSettingOnce(t *testing.T) {
	sample := func(setting string, e float64) []report.Posterior {
		var ps []report.Posterior
		for i := range 20 {
			ps = append(ps, report.Posterior{Setting: setting, Pet: pets.RR, Epsilon: e,
				Sample: audit.Sample{Prior: 0.5, Posterior: 0.5 + float64(i)/50, IEAdv: float64(i) / 50, AbsMA: float64(i) / 10}})
		}
		return ps
	}
	a := append(sample("rr_eps1", 1), sample("rr_eps4", 4)...)
	b := sample("rr_eps1", 1)
	f, err := cdfSets([]Set{{Name: "A", Posteriors: a}, {Name: "B", Posteriors: b}}, "")
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, it := range f.legend {
		count[it.text]++
	}
	for _, name := range []string{"RR ε=1", "RR ε=4"} {
		if count[name] != 1 {
			t.Errorf("legend names %q %d times, want once (legend %v)", name, count[name], count)
		}
	}
}

func hasTick(ts []plot.Tick, label string) bool {
	return slices.ContainsFunc(ts, func(t plot.Tick) bool { return t.Label == label })
}

func TestFiguresWithoutData(t *testing.T) {
	noAudit := synthSummary(t, false)
	cleanOnly, err := report.Summarize([]report.Run{reporttest.Run("none", pets.None, 0, 0, 0, "n", 0.7), reporttest.Run("bot", pets.Bot, 0, 0, 0, "b", 0.5)}, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		build func() (*figure, error)
	}{
		{"AUC vs E[adv] without audit", func() (*figure, error) { return aucVsAdvFigure(noAudit.Rows, metricEAdv, "") }},
		{"AUC vs MA without audit", func() (*figure, error) { return aucVsAdvFigure(noAudit.Rows, metricMAP98, "") }},
		{"AUC per setting of clean and bot only", func() (*figure, error) { return aucBySettingFigure(cleanOnly.Rows, "") }},
		{"AUC per setting of nothing", func() (*figure, error) { return aucBySettingFigure(nil, "") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.build(); !errors.Is(err, ErrNoData) {
				t.Fatalf("err = %v, want ErrNoData", err)
			}
		})
	}
	dir := t.TempDir()
	figs, err := WritePlots(dir, cleanOnly, nil)
	if err != nil || len(figs) != 0 {
		t.Fatalf("WritePlots with nothing to draw: %v, %v", figs, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("files written with nothing to draw: %v", ents)
	}
}

func TestTicks(t *testing.T) {
	cases := []struct {
		name   string
		ticks  []plot.Tick
		labels string
	}{
		{"linear", linTicks(0, 0.062), "0 0.01 0.02 0.03 0.04 0.05 0.06"},
		{"range", linTicks(0.48, 0.71), "0.5 0.55 0.6 0.65 0.7"},
		{"linear from a negative margin", linTicks(-0.003, 0.062), "0 0.01 0.02 0.03 0.04 0.05 0.06"},
		// Issue 12: every integer up to 5 (the ε=4 step must meet a tick at 4).
		{"log1p to 8", log1pTicks(8), "0 0.5 1 2 3 4 5"},
		{"log1p to 4", log1pTicks(4), "0 0.5 1 2 3 4"},
		{"log1p to 3.6", log1pTicks(3.6), "0 0.5 1 2 3"},
		{"log1p to 2.5", log1pTicks(2.5), "0 0.5 1 2"},
		{"log1p below 1", log1pTicks(0.6), "0 0.1 0.2 0.3 0.4 0.5 0.6"},
		{"log1p to 1000", log1pTicks(1000), "0 1 2 3 4 5 10 20 50 100 200 500 1000"},
		{"log1p to 60", log1pTicks(60), "0 1 2 3 4 5 10 20 50"},
		{"values", valueTicks([]float64{8, 1, 2, 4, 2}, 8), "1 2 4 8"},
		{"values thinned", valueTicks([]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}, 8), "1 4 16 64 256 512"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, tk := range tc.ticks {
				if tk.Label == "" {
					t.Fatalf("unlabelled tick at %v", tk.Value)
				}
				got = append(got, tk.Label)
			}
			if strings.Join(got, " ") != tc.labels {
				t.Fatalf("labels %q, want %q", strings.Join(got, " "), tc.labels)
			}
		})
	}
}

func TestAdvAxis(t *testing.T) {
	a := newAdvAxis([]float64{0, 0.5, 4, math.Inf(1), math.NaN()}, true)
	if !a.hasInf || a.finiteMax != 4 || !(a.min < 0) || !(a.sepPos > 4 && a.infPos > a.sepPos && a.max > a.infPos) {
		t.Fatalf("axis %+v", a)
	}
	s := a.spec("x")
	if !hasTick(s.ticks, "4") || !hasTick(s.ticks, "∞") || s.ticks[len(s.ticks)-1].Value != a.infPos {
		t.Fatalf("ticks %v", s.ticks)
	}
	if len(a.sep()) != 1 || a.pos(math.Inf(1)) != a.infPos || a.pos(2) != 2 {
		t.Fatal("separator / positions")
	}
	for _, tc := range []struct{ max, end float64 }{{3.6, 4}, {7.6, 10}, {4, 4}, {0.6, 0.6}, {1.7, 2}, {1.1, 1.1}, {140, 200}, {120, 200}, {21, 21}} {
		if got := newAdvAxis([]float64{tc.max}, true).finiteMax; got != tc.end {
			t.Errorf("log1p axis over [0, %v] ends at %v, want the tick %v", tc.max, got, tc.end)
		}
	}
	lin := newAdvAxis([]float64{0, 0.02}, false)
	if lin.hasInf || len(lin.sep()) != 0 || !(lin.min < 0) || !(lin.max > 0.02) {
		t.Fatalf("linear axis %+v", lin)
	}
}

func TestCDFXY(t *testing.T) {
	inf := math.Inf(1)
	cases := []struct {
		name string
		vals []float64
		want []xy
	}{
		{"ties and end", []float64{1, 1, 2, math.NaN()}, []xy{{0, 0}, {1, 0}, {1, 2.0 / 3}, {2, 2.0 / 3}, {2, 1}, {5, 1}}},
		{"infinite values jump at the ∞ position", []float64{1, inf, inf, 3}, []xy{{0, 0}, {1, 0}, {1, 0.25}, {3, 0.25}, {3, 0.5}, {9, 0.5}, {9, 1}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := cdfXY(tc.vals, 0, 5, 9)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v", got)
			}
			for i, w := range tc.want {
				if !reporttest.Near(got[i].X, w.X) || !reporttest.Near(got[i].Y, w.Y) {
					t.Fatalf("point %d: got %v, want %v (all %v)", i, got[i], w, got)
				}
			}
		})
	}
}

func TestSegHitsRect(t *testing.T) {
	r := vg.Rectangle{Min: vg.Point{X: 0, Y: 0}, Max: vg.Point{X: 10, Y: 5}}
	cases := []struct {
		name string
		s    seg
		want bool
	}{
		{"through", seg{vg.Point{X: -5, Y: 2}, vg.Point{X: 15, Y: 3}}, true},
		{"inside", seg{vg.Point{X: 1, Y: 1}, vg.Point{X: 2, Y: 2}}, true},
		{"above", seg{vg.Point{X: -5, Y: 6}, vg.Point{X: 15, Y: 6}}, false},
		{"diagonal past the corner", seg{vg.Point{X: 8, Y: 8}, vg.Point{X: 14, Y: 2}}, false},
		{"diagonal through the corner region", seg{vg.Point{X: 7, Y: 7}, vg.Point{X: 12, Y: 2}}, true},
		{"vertical left of it", seg{vg.Point{X: -1, Y: -10}, vg.Point{X: -1, Y: 10}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := segHitsRect(tc.s, r); got != tc.want {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if got := segTouches(tc.s, r); got != tc.want {
				t.Fatalf("sampling check says %v", got)
			}
		})
	}
}

// Every marker a mechanism's Look may name is drawn, by a glyph of its own.
func TestEveryMarkerDrawn(t *testing.T) {
	seen := map[draw.GlyphDrawer]bool{}
	for m := pets.MarkerSquare; m <= pets.MarkerTriangle; m++ {
		if int(m) >= len(markerGlyphs) || markerGlyphs[m] == nil || seen[markerGlyphs[m]] {
			t.Fatalf("marker %d has no glyph of its own", m)
		}
		seen[markerGlyphs[m]] = true
	}
}
