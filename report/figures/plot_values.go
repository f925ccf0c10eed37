package figures

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// The figures of conversion values (WriteValuePlots): the cost of each
// mechanism (test MSE) against ε and against what an attacker learns of the
// values (R²- and τ-advantage, the paper's Figure 3 for values), the
// τ-advantage against its ε-DP worst case, and the attacker's posterior
// mean against its prior mean. A curve is one mechanism with its other
// parameters fixed (rr_bins's prior, value_bags's k) across ε: its setting
// id without the ε.

// valueJobs are the figures of WriteValuePlots.
var valueJobs = []struct {
	name, title, caption string
	build                func(s *report.Summary, post []report.ValuePosterior) (*figure, error)
}{
	{"mse_by_setting", "Test MSE per privacy setting (conversion values)",
		"What each mechanism costs: the mean test MSE of the best learning rate (± SE over trials) of the model trained on " +
			"its release, one curve per mechanism across ε (log axis); rr_bins with a public and with a private prior, " +
			"value_bags one curve per k. Dashed: the clean model; dotted: bot (the training mean); thin dashed in a curve's " +
			"colour: value_bags without noise (exact bag means, not DP). Lower is better.",
		func(s *report.Summary, _ []report.ValuePosterior) (*figure, error) { return mseByEpsilon(s) }},
	{"mse_vs_r2adv", "Test MSE vs R²-advantage (conversion values)",
		"The paper's Figure 3 for values: x is the R²-advantage 1 − E[Var(y | release)]/Var(y) of the Bayes attacker who " +
			"knows each example's prior (mean over the audit examples, ± SE), y the test MSE (± SE); a point per setting, " +
			"labelled with its ε (or k), joined across ε. Down and left is better: less cost, less learned.",
		func(s *report.Summary, _ []report.ValuePosterior) (*figure, error) { return mseVsAdv(s, false) }},
	{"mse_vs_tauadv", "Test MSE vs τ-advantage (conversion values)",
		"x is the τ-advantage: the attacker's chance of guessing the value within ±τ after the release, over its chance " +
			"before (± SE); y the test MSE. Rings: each DP setting's ε-DP worst case e^ε·κ/(e^ε·κ + 1 − κ) − κ (κ the blind " +
			"chance), which no ε-label-DP mechanism exceeds.",
		func(s *report.Summary, _ []report.ValuePosterior) (*figure, error) { return mseVsAdv(s, true) }},
	{"tau_vs_bound", "τ-advantage and its ε-DP worst case",
		"Per mechanism across ε: the measured τ-advantage (solid, ± SE) and the ε-DP worst case at the same examples' blind " +
			"chances (dashed): how much of what ε allows the mechanism gives away.",
		func(s *report.Summary, _ []report.ValuePosterior) (*figure, error) { return tauVsBound(s) }},
	{"value_posteriors", "Posterior vs prior mean of the value",
		"Per setting (at most 4 panels), one point per sampled audit example: x the attacker's prior mean of its value, y its " +
			"posterior mean after one release of a value drawn from the prior. On y = x the release taught nothing; spread " +
			"about it is what the attacker learned.",
		func(_ *report.Summary, p []report.ValuePosterior) (*figure, error) { return valuePosteriorFigure(p) }},
}

// WriteValuePlots writes the figures of a summary of conversion values and
// its audit's samples into dir (NAME.png and NAME.svg) and returns them
// for WriteMarkdown; one with nothing to draw is skipped.
func WriteValuePlots(dir string, s *report.Summary, post []report.ValuePosterior) ([]report.Figure, error) {
	var figs []report.Figure
	for _, j := range valueJobs {
		f, err := j.build(s, post)
		if errors.Is(err, ErrNoData) {
			continue
		}
		if err != nil {
			return figs, err
		}
		base := filepath.Join(dir, j.name)
		if err := saveFigure(base, f); err != nil {
			return figs, err
		}
		figs = append(figs, report.Figure{Path: base + ".png", Title: j.title, Caption: j.caption})
	}
	return figs, nil
}

// epsPart is the ε of a setting id.
var epsPart = regexp.MustCompile(`_eps[0-9.e+-]+`)

// valueCurve is the curve of a row: its setting id without its ε.
func valueCurve(r report.Row) string { return epsPart.ReplaceAllString(r.Setting, "") }

// curveName names a curve in a legend: the mechanism's display name and
// what fixes the curve (k, the prior).
func curveName(r report.Row) string {
	name := display.PetName(r.Pet)
	switch {
	case r.K > 0:
		name += fmt.Sprintf(" k=%d", r.K)
	case r.Pet.Spec().Takes.ValuePrior:
		if s := valueCurve(r); regexp.MustCompile(`_pe[0-9.]`).MatchString(s) {
			name += ", private prior"
		} else {
			name += ", public prior"
		}
	}
	if r.Epsilon == 0 && privatized(r.Pet) {
		name += " (exact)"
	}
	return name
}

// valueColors are the hues of a figure's curves, in order.
var valueColors = []color.NRGBA{
	{0x8c, 0x56, 0x4b, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x1f, 0x77, 0xb4, 0xff}, {0xe3, 0x77, 0xc2, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0xd6, 0x27, 0x28, 0xff},
}

// valueCurves groups a summary's rows of values into curves across ε (in
// order of their first row), and the rows that are no curve: none, bot,
// and exact bags (no ε).
func valueCurves(s *report.Summary) (curves [][]report.Row, refs []report.Row, err error) {
	if s == nil || len(s.Rows) == 0 {
		return nil, nil, fmt.Errorf("figures: no rows: %w", ErrNoData)
	}
	at := map[string]int{}
	for _, r := range s.Rows {
		if r.ValueMax == 0 {
			return nil, nil, fmt.Errorf("figures: the summary mixes classes with conversion values")
		}
		if !privatized(r.Pet) || r.Epsilon == 0 {
			refs = append(refs, r)
			continue
		}
		c := valueCurve(r)
		if _, ok := at[c]; !ok {
			at[c] = len(curves)
			curves = append(curves, nil)
		}
		curves[at[c]] = append(curves[at[c]], r)
	}
	for _, c := range curves {
		slices.SortFunc(c, func(a, b report.Row) int { return cmp.Compare(a.Epsilon, b.Epsilon) })
	}
	return curves, refs, nil
}

// epsAxis is a log axis over the εs of the curves.
func epsAxis(curves [][]report.Row) axisSpec {
	var eps []float64
	for _, c := range curves {
		for _, r := range c {
			eps = append(eps, r.Epsilon)
		}
	}
	lo, hi := slices.Min(eps), slices.Max(eps)
	if hi == lo {
		lo, hi = lo/2, hi*2
	}
	var ticks []plot.Tick
	for _, t := range valueTicks(eps, 8) {
		ticks = append(ticks, plot.Tick{Value: math.Log2(t.Value), Label: t.Label})
	}
	return axisSpec{label: "ε (log scale)", min: math.Log2(lo) - 0.3, max: math.Log2(hi) + 0.3, ticks: ticks}
}

// rangeOf is a padded axis over vals (finite ones), starting at 0 when
// from0.
func rangeOf(label string, vals []float64, from0 bool) axisSpec {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if from0 {
		lo = min(lo, 0)
	}
	if hi <= lo {
		hi = lo + max(1e-3, math.Abs(lo)*0.1)
	}
	pad := 0.06 * (hi - lo)
	return axisSpec{label: label, min: lo - pad, max: hi + pad, ticks: linTicks(lo-pad, hi+pad)}
}

// mseAxis is the test MSE axis over vals: log-scale when the finite
// positive values span a factor 2 or more (laplace at small ε is many
// times the rest, which a linear axis from 0 squashes into a line), with
// ticks at 1, 2 and 5 (or 1 … 9) times a power of ten; else linear over
// the values alone.
func mseAxis(label string, vals []float64) axisSpec {
	var pos []float64
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			pos = append(pos, v)
		}
	}
	if len(pos) == 0 || slices.Max(pos) < 2*slices.Min(pos) {
		return rangeOf(label, vals, false)
	}
	lo, hi := slices.Min(pos)/1.08, slices.Max(pos)*1.08
	return axisSpec{label: label + " (log scale)", min: lo, max: hi, scale: plot.LogScale{}, ticks: logNiceTicks(lo, hi)}
}

// logNiceTicks are labelled ticks in [lo, hi] (0 < lo < hi) at m·10^d for
// m in 1, 2, 5 — or every m in 1 … 9 when that gives fewer than 4 ticks.
func logNiceTicks(lo, hi float64) []plot.Tick {
	pick := func(ms []float64) []plot.Tick {
		var ts []plot.Tick
		for d := math.Floor(math.Log10(lo)); math.Pow(10, d) <= hi; d++ {
			for _, m := range ms {
				if v := m * math.Pow(10, d); v >= lo && v <= hi {
					ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
				}
			}
		}
		return ts
	}
	if ts := pick([]float64{1, 2, 5}); len(ts) >= 4 {
		return ts
	}
	return pick([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9})
}

// mseByEpsilon is mse_by_setting.
func mseByEpsilon(s *report.Summary) (*figure, error) {
	curves, refs, err := valueCurves(s)
	if err != nil {
		return nil, err
	}
	if len(curves) == 0 {
		return nil, fmt.Errorf("figures: no DP setting of values: %w", ErrNoData)
	}
	p := &panel{x: epsAxis(curves), nudge: nudgeX}
	var ys []float64
	var items []legendItem
	for i, c := range curves {
		clr := valueColors[i%len(valueColors)]
		sr := &series{name: valueCurve(c[0]), line: &draw.LineStyle{Color: clr, Width: 1.5},
			glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(c[0].Pet)}}
		for _, r := range c {
			sr.pts = append(sr.pts, xy{math.Log2(r.Epsilon), r.MSEMean})
			sr.yerr = append(sr.yerr, r.MSESE)
			ys = append(ys, r.MSEMean+finiteOr0(r.MSESE), r.MSEMean-finiteOr0(r.MSESE))
		}
		p.series = append(p.series, sr)
		items = append(items, legendItem{text: curveName(c[0]), thumb: lineGlyphThumb(sr.line, *sr.glyph)})
		for _, r := range refs { // exact bags of the same k
			if r.Pet == c[0].Pet && r.K == c[0].K && r.K > 0 {
				p.refs = append(p.refs, refLine{horizontal: true, v: r.MSEMean, style: draw.LineStyle{Color: clr, Width: 1, Dashes: []vg.Length{4, 3}}})
				ys = append(ys, r.MSEMean)
			}
		}
	}
	for _, r := range refs {
		var sty draw.LineStyle
		switch {
		case isClean(r.Pet):
			sty = cleanStyle
		case isSilent(r.Pet):
			sty = botStyle
		default:
			continue
		}
		p.refs = append(p.refs, refLine{horizontal: true, v: r.MSEMean, style: sty})
		ys = append(ys, r.MSEMean)
		items = append(items, legendItem{text: plainName(r.Pet), thumb: lineThumb(sty)})
	}
	p.y = mseAxis("test MSE (mean ± SE over trials, best LR)", ys)
	return &figure{title: "Test MSE per privacy setting (conversion values)", w: 9 * vg.Inch, cols: 1, cellH: 5.5 * vg.Inch,
		legend: items, panels: []*panel{p}}, nil
}

// mseVsAdv is mse_vs_r2adv (tau false) or mse_vs_tauadv.
func mseVsAdv(s *report.Summary, tau bool) (*figure, error) {
	curves, refs, err := valueCurves(s)
	if err != nil {
		return nil, err
	}
	adv := func(r report.Row) (v, se float64) {
		if tau {
			return r.TauAdv, r.TauAdvSE
		}
		return r.R2Adv, r.R2AdvSE
	}
	p := &panel{}
	var xs, ys []float64
	var items []legendItem
	audited := false
	add := func(rows []report.Row, clr color.NRGBA, line bool, name string) {
		sr := &series{name: name, glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(rows[0].Pet)}}
		if line {
			sr.line = &draw.LineStyle{Color: clr, Width: 1.2}
		}
		for _, r := range rows {
			v, se := adv(r)
			if math.IsNaN(v) {
				continue
			}
			audited = true
			sr.pts = append(sr.pts, xy{v, r.MSEMean})
			sr.xerr, sr.yerr = append(sr.xerr, se), append(sr.yerr, r.MSESE)
			xs, ys = append(xs, v), append(ys, r.MSEMean)
			p.labels = append(p.labels, pointLabel{x: v, y: r.MSEMean, text: paramLabel(r.Pet, r.K, r.Epsilon), color: clr, prio: 1, of: sr, idx: len(sr.pts) - 1})
			if tau && !math.IsNaN(r.TauAdvBound) {
				p.series = append(p.series, &series{name: r.Setting + " worst case", pts: []xy{{r.TauAdvBound, r.MSEMean}}, halo: true,
					glyph: &draw.GlyphStyle{Color: withAlpha(clr, 160), Radius: glyphR + 2, Shape: draw.CircleGlyph{}}})
				xs = append(xs, r.TauAdvBound)
			}
		}
		if len(sr.pts) > 0 {
			p.series = append(p.series, sr)
			items = append(items, legendItem{text: name, thumb: glyphThumb(*sr.glyph)})
		}
	}
	for i, c := range curves {
		add(c, valueColors[i%len(valueColors)], true, curveName(c[0]))
	}
	for _, r := range refs {
		clr := petColor(r.Pet)
		for i, c := range curves {
			if r.Pet == c[0].Pet && r.K == c[0].K {
				clr = valueColors[i%len(valueColors)]
			}
		}
		add([]report.Row{r}, clr, false, curveName(r))
	}
	if !audited {
		return nil, fmt.Errorf("figures: no audited setting of values: %w", ErrNoData)
	}
	what, title := "R²-advantage 1 − E[Var(y | release)]/Var(y) (mean ± SE)", "Test MSE vs R²-advantage (conversion values)"
	if tau {
		what, title = fmt.Sprintf("τ-advantage P(|y − guess| ≤ τ) gained by the release (τ = %g; mean ± SE)", tauOf(s)), "Test MSE vs τ-advantage (conversion values)"
	}
	p.x = rangeOf(what, xs, true)
	p.y = mseAxis("test MSE (mean ± SE over trials, best LR)", ys)
	return &figure{title: title, w: 9 * vg.Inch, cols: 1, cellH: 5.5 * vg.Inch, legend: items, panels: []*panel{p}}, nil
}

// tauOf is the τ of a summary's audits (NaN when none).
func tauOf(s *report.Summary) float64 {
	for _, r := range s.Rows {
		if !math.IsNaN(r.Tau) {
			return r.Tau
		}
	}
	return math.NaN()
}

// tauVsBound is tau_vs_bound.
func tauVsBound(s *report.Summary) (*figure, error) {
	curves, _, err := valueCurves(s)
	if err != nil {
		return nil, err
	}
	var kept [][]report.Row
	for _, c := range curves {
		if !math.IsNaN(c[0].TauAdv) && !math.IsNaN(c[0].TauAdvBound) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("figures: no audited DP setting of values: %w", ErrNoData)
	}
	p := &panel{x: epsAxis(kept), nudge: nudgeX}
	var ys []float64
	var items []legendItem
	for i, c := range kept {
		clr := valueColors[i%len(valueColors)]
		meas := &series{name: valueCurve(c[0]), line: &draw.LineStyle{Color: clr, Width: 1.5},
			glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(c[0].Pet)}}
		bound := &series{name: valueCurve(c[0]) + " worst case", line: &draw.LineStyle{Color: clr, Width: 1, Dashes: []vg.Length{5, 3}}}
		for _, r := range c {
			meas.pts = append(meas.pts, xy{math.Log2(r.Epsilon), r.TauAdv})
			meas.yerr = append(meas.yerr, r.TauAdvSE)
			bound.pts = append(bound.pts, xy{math.Log2(r.Epsilon), r.TauAdvBound})
			ys = append(ys, r.TauAdv, r.TauAdvBound)
		}
		p.series = append(p.series, bound, meas)
		items = append(items, legendItem{text: curveName(c[0]), thumb: lineGlyphThumb(meas.line, *meas.glyph)})
	}
	items = append(items, legendItem{text: "ε-DP worst case", thumb: lineThumb(draw.LineStyle{Color: colBlack, Width: 1, Dashes: []vg.Length{5, 3}})})
	p.y = rangeOf(fmt.Sprintf("τ-advantage (τ = %g)", tauOf(s)), ys, true)
	return &figure{title: "τ-advantage and its ε-DP worst case", w: 9 * vg.Inch, cols: 1, cellH: 5.5 * vg.Inch, legend: items, panels: []*panel{p}}, nil
}

// maxValueScatter caps the points of one posterior panel.
const maxValueScatter = 1500

// valuePosteriorFigure is value_posteriors: prior mean against posterior
// mean, one panel per mechanism at one ε (valuePostSettings), so that the
// panels compare mechanisms at the same privacy.
func valuePosteriorFigure(post []report.ValuePosterior) (*figure, error) {
	var order []string
	by := map[string][]report.ValuePosterior{}
	for _, p := range post {
		if _, ok := by[p.Setting]; !ok {
			order = append(order, p.Setting)
		}
		by[p.Setting] = append(by[p.Setting], p)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("figures: no sampled audit examples of values: %w", ErrNoData)
	}
	order, eps := valuePostSettings(order, by)
	var panels []*panel
	for _, set := range order {
		ps := by[set]
		if len(ps) > maxValueScatter {
			ps = ps[:maxValueScatter]
		}
		clr := petColor(ps[0].Pet)
		sr := &series{name: set, cloud: true, glyph: &draw.GlyphStyle{Color: withAlpha(clr, 110), Radius: 1.6, Shape: draw.CircleGlyph{}}}
		var v []float64
		for _, p := range ps {
			sr.pts = append(sr.pts, xy{p.PriorMean, p.PostMean})
			v = append(v, p.PriorMean, p.PostMean)
		}
		ax := rangeOf("prior mean of the value", v, true)
		ay := ax
		ay.label = "posterior mean after one release"
		p := &panel{title: set, x: ax, y: ay}
		p.series = append(p.series, &series{name: "y = x", pts: []xy{{ax.min, ax.min}, {ax.max, ax.max}}, line: &diagStyle}, sr)
		panels = append(panels, p)
	}
	cols := min(len(panels), 2)
	title := "Posterior vs prior mean of the value"
	if eps > 0 {
		title += fmt.Sprintf(" (ε = %g)", eps)
	}
	return &figure{title: title, w: vg.Length(cols) * 6 * vg.Inch, cols: cols, cellH: 5 * vg.Inch,
		legend: []legendItem{{text: "y = x: nothing learned", thumb: lineThumb(diagStyle)}}, panels: panels}, nil
}

// maxValuePostPanels caps value_posteriors' panels.
const maxValuePostPanels = 4

// valuePostSettings picks value_posteriors' settings from the sampled
// ones (in the samples' order): those at the ε that most DP settings share
// (ties: the one nearest 1 in log scale, then the larger), at most maxValuePostPanels, and
// that ε; without DP settings (or with one setting at each ε), the first,
// last and evenly spaced ones between, and ε 0.
func valuePostSettings(order []string, by map[string][]report.ValuePosterior) ([]string, float64) {
	count := map[float64]int{}
	for _, set := range order {
		if e := by[set][0].Epsilon; e > 0 && !math.IsInf(e, 0) {
			count[e]++
		}
	}
	best, n := 0.0, 1
	for _, e := range slices.Sorted(maps.Keys(count)) { // ascending: of two as near 1, the larger wins
		if c := count[e]; c > n || c == n && best > 0 && math.Abs(math.Log(e)) <= math.Abs(math.Log(best)) {
			best, n = e, c
		}
	}
	if best > 0 {
		var at []string
		for _, set := range order {
			if by[set][0].Epsilon == best && len(at) < maxValuePostPanels {
				at = append(at, set)
			}
		}
		return at, best
	}
	if len(order) > maxValuePostPanels {
		pick := make([]string, maxValuePostPanels)
		for i := range pick {
			pick[i] = order[i*(len(order)-1)/(maxValuePostPanels-1)]
		}
		order = pick
	}
	return order, 0
}
