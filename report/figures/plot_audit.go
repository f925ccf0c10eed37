package figures

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// z95 is the normal quantile of the 95% intervals drawn (±1.96 SE).
const z95 = 1.959963984540054

// auditJobs are the figures of WriteAuditPlots.
var auditJobs = []struct {
	name, title, caption string
	build                func(audits []report.Audit, cals []report.Calibration) (*figure, error)
}{
	{"realized_vs_predicted", "Predicted vs realized advantage",
		"x: the audit's exact expected advantage E[adv] (Definition 3.1) on its own bag partition; y: the accuracy gain " +
			"over the prior-only attacker that the Bayes attacker realized on fresh releases of the audit labels made by " +
			"the production release code. Bars: 95% intervals (±1.96 SE). Points on y = x: the releases behave as " +
			"the mechanism's stated likelihood says. When the advantages span more than 1.5 decades both axes are symlog " +
			"(linear below the value they name), so y = x stays the diagonal." + crowdCaption,
		func(a []report.Audit, _ []report.Calibration) (*figure, error) { return realizedFigure(a) }},
	{"calibration", "Reliability of the attacker's η",
		"The audit's η on test rows that are neither trained on nor audited, in 10 equal-width bins: x = mean η of " +
			"the bin, y = fraction labelled 1 with its 95% Wilson score interval (which stays within [0, 1] and widens honestly " +
			"for a bin of few rows, unlike ±1.96 SE). Points below y = x: η is too high there. The " +
			"audit's figures are those of an attacker who believes η; eadv_calibrated repeats them with η " +
			"Platt-recalibrated on these rows.",
		func(a []report.Audit, c []report.Calibration) (*figure, error) { return calibrationFigure(c, a) }},
	{"model_attack", "Model attack vs the release's advantage", modelCaption,
		func(a []report.Audit, _ []report.Calibration) (*figure, error) { return modelAttackFigure(a) }},
}

// calibrationCaptionC is the calibration figure's caption for C ≥ 3
// classes, whose tables are top-label.
const calibrationCaptionC = "The audit's η on test rows that are neither trained on nor audited, top-label: each row's " +
	"probability of its most likely class, in 10 equal-width bins: x = mean top-class probability of the bin, y = fraction " +
	"of rows whose label is that class, with its 95% Wilson score interval. Points below y = x: η is overconfident there. " +
	"η is not recalibrated for C classes (Platt scaling is binary)."

// WriteAuditPlots writes the figures of the audit's self-checks into dir
// (NAME.png at 120 dpi and NAME.svg) and returns them for WriteMarkdown:
//
//	realized_vs_predicted  E[adv] against the realized gain, 95% bars, y = x
//	calibration            reliability diagram of η with the diagonal
//	model_attack           the model attack against the release's advantage, y = x
//
// A figure with nothing to draw (no realized attack, no calibration rows)
// is skipped. Several datasets get one panel each.
func WriteAuditPlots(dir string, audits []report.Audit, cals []report.Calibration) ([]report.Figure, error) {
	var figs []report.Figure
	for _, j := range auditJobs {
		f, err := j.build(audits, cals)
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
		caption := j.caption
		if j.name == "calibration" && allClassesC(cals, audits) {
			caption = calibrationCaptionC
		}
		figs = append(figs, report.Figure{Path: base + ".png", Title: j.title, Caption: caption})
	}
	return figs, nil
}

// allClassesC reports whether every calibration table is of C ≥ 3 classes.
func allClassesC(cals []report.Calibration, audits []report.Audit) bool {
	for _, c := range cals {
		if c.ClassesOf(audits) < 3 {
			return false
		}
	}
	return len(cals) > 0
}

// realizedFigure: one panel per (dataset, config), one point per audited setting with
// a realized gain, x = EAdv ± 1.96·EAdvSE, y = realized ± 1.96·SE, marker
// and colour by mechanism, labelled with the setting's parameters.
func realizedFigure(audits []report.Audit) (*figure, error) {
	byDS := auditsByDataset(audits, func(a report.Audit) bool {
		return !math.IsNaN(a.RealizedGain) && !math.IsNaN(a.EAdv) && !isClean(a.Pet)
	})
	if len(byDS) == 0 {
		return nil, fmt.Errorf("figures: realized vs predicted: no audit with a realized attack: %w", ErrNoData)
	}
	var panels []*panel
	seenPet := map[pets.Kind]bool{}
	var items []legendItem
	for _, ds := range slices.Sorted(maps.Keys(byDS)) {
		as := byDS[ds]
		slices.SortFunc(as, func(a, b report.Audit) int {
			return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
		})
		hi := 0.0
		for _, a := range as {
			hi = max(hi, a.EAdv+z95*finiteOr0(a.EAdvSE), a.RealizedGain+z95*finiteOr0(a.RealizedGainSE))
		}
		lo := 0.0
		for _, a := range as {
			lo = min(lo, a.RealizedGain-z95*finiteOr0(a.RealizedGainSE))
		}
		p := &panel{}
		if len(byDS) > 1 {
			p.title = "dataset " + ds
		}
		var eadvs []float64
		for _, a := range as {
			eadvs = append(eadvs, a.EAdv)
		}
		diagonalAxes(p, lo, hi, eadvs,
			"predicted: exact E[adv] of the audit (± 1.96 SE)", "realized accuracy gain over the prior (± 1.96 SE)",
			func(c float64) (string, string) {
				note := fmt.Sprintf(", symlog: linear below %s)", fmtSymTick(c))
				return "predicted: exact E[adv] (± 1.96 SE" + note, "realized gain over the prior (± 1.96 SE" + note
			})
		key := func(a report.Audit) curveKey { return pointKey(a.Setting, a.Pet, a.K, "", a.Epsilon) }
		var keys []curveKey
		for _, a := range as {
			keys = append(keys, key(a))
		}
		apart := priorApart(keys)
		for _, a := range as {
			label := paramLabel(a.Pet, a.K, a.Epsilon)
			if t := apart[key(a)]; t != "" {
				label += ", " + t
			}
			clr := petColor(a.Pet)
			p.series = append(p.series, &series{name: a.Setting, pts: []xy{{a.EAdv, a.RealizedGain}},
				glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(a.Pet)},
				xerr:  []float64{z95 * a.EAdvSE}, yerr: []float64{z95 * a.RealizedGainSE}})
			s := p.series[len(p.series)-1]
			p.labels = append(p.labels, pointLabel{x: a.EAdv, y: a.RealizedGain, text: label, color: clr, prio: 1, of: s})
			if !seenPet[a.Pet] {
				seenPet[a.Pet] = true
				items = append(items, legendItem{text: display.PetName(a.Pet), thumb: glyphThumb(draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(a.Pet)})})
			}
		}
		panels = append(panels, p)
	}
	slices.SortFunc(items, func(a, b legendItem) int { return cmp.Compare(a.text, b.text) })
	items = append([]legendItem{{text: "y = x", thumb: lineThumb(diagStyle)}}, items...)
	cols := min(len(panels), 2)
	classes := 0 // the audits' class count when they share one (C in the title)
	for i, a := range audits {
		if c := max(a.Classes, 2); i == 0 || c == classes {
			classes = c
		} else {
			classes = 0
			break
		}
	}
	return &figure{title: "Predicted vs realized advantage (releases by the production sampler)" + report.ClassesTitle(classes),
		w: vg.Length(cols) * 7 * vg.Inch, cols: cols, cellH: 5.5 * vg.Inch, legend: items, panels: panels}, nil
}

// wilson is the Wilson score interval of a binomial proportion p observed
// in n trials at normal quantile z (Wilson 1927): within [0, 1] for every p
// and n ≥ 1, where the Wald interval p ± z·√(p(1−p)/n) runs below 0 or
// above 1 for small n and collapses to a point at p = 0 or 1.
func wilson(p float64, n int, z float64) (lo, hi float64) {
	if n <= 0 || math.IsNaN(p) {
		return math.NaN(), math.NaN()
	}
	fn := float64(n)
	den := 1 + z*z/fn
	mid := (p + z*z/(2*fn)) / den
	half := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

func finiteOr0(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// calibrationFigure: one reliability panel per table, the diagonal, each
// non-empty bin at (mean η, rate) with its 95% Wilson interval, labelled
// with its row count. A table of C ≥ 3 classes (its audits' count) is
// top-label, and its axes say so.
func calibrationFigure(cals []report.Calibration, audits []report.Audit) (*figure, error) {
	var panels []*panel
	for _, c := range cals {
		if c.N == 0 || len(c.Bins) == 0 {
			continue
		}
		p := &panel{title: fmt.Sprintf("η: %s, %d rows — ECE %.4f, Brier %.4f", c.EtaSource, c.N, c.ECE, c.Brier)}
		if len(cals) > 1 && c.Dataset != "" {
			p.title = "dataset " + c.Dataset + ", " + p.title
		}
		// Both axes end at the same round value above every bin and bar, so
		// that a skewed η (Beta(2,30): all below 0.35) fills the panel and
		// y = x stays the diagonal.
		top := 0.0
		for _, b := range c.Bins {
			if b.N > 0 {
				_, hi := wilson(b.Rate, b.N, z95)
				top = max(top, b.MeanEta, hi)
			}
		}
		end := 1.0
		for _, v := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8} {
			if top <= v {
				end = v
				break
			}
		}
		xl, yl := "mean η in the bin (predicted P(y=1))", "fraction labelled 1 (95% Wilson interval)"
		if classes := c.ClassesOf(audits); classes >= 3 {
			xl = fmt.Sprintf("mean top-class η in the bin (predicted P(y = its most likely class), C = %d)", classes)
			yl = "fraction whose label is that class (95% Wilson interval)"
			p.title += ", top label"
		}
		p.x = axisSpec{label: xl, min: -0.03 * end, max: 1.03 * end, ticks: linTicks(0, end)}
		p.y = axisSpec{label: yl, min: -0.03 * end, max: 1.03 * end, ticks: linTicks(0, end)}
		p.series = append(p.series, &series{name: "y = x", pts: []xy{{0, 0}, {end, end}}, line: &diagStyle})
		s := &series{name: "bins", line: &draw.LineStyle{Color: colBlue, Width: 1.4},
			glyph: &draw.GlyphStyle{Color: colBlue, Radius: glyphR, Shape: draw.CircleGlyph{}}}
		for _, b := range c.Bins {
			if b.N == 0 {
				continue
			}
			s.pts = append(s.pts, xy{b.MeanEta, b.Rate})
			lo, hi := wilson(b.Rate, b.N, z95)
			s.yband = append(s.yband, [2]float64{lo, hi})
			p.labels = append(p.labels, pointLabel{x: b.MeanEta, y: b.Rate, text: fmt.Sprintf("n=%d", b.N), color: colNote, prio: 2})
		}
		p.series = append(p.series, s)
		panels = append(panels, p)
	}
	if len(panels) == 0 {
		return nil, fmt.Errorf("figures: calibration: no calibration rows: %w", ErrNoData)
	}
	cols := min(len(panels), 2)
	items := []legendItem{
		{text: "y = x: calibrated", thumb: lineThumb(diagStyle)},
		{text: "bins of η (labels: rows per bin)", thumb: lineGlyphThumb(&draw.LineStyle{Color: colBlue, Width: 1.4},
			draw.GlyphStyle{Color: colBlue, Radius: glyphR, Shape: draw.CircleGlyph{}})},
	}
	return &figure{title: "Reliability of the attacker's η on the calibration rows", w: vg.Length(cols) * 6 * vg.Inch, cols: cols,
		cellH: 5.5 * vg.Inch, legend: items, panels: panels}, nil
}

// auditsByDataset groups the audits keep accepts by dataset (and config,
// when an audit names one): one panel each in the diagonal figures.
func auditsByDataset(audits []report.Audit, keep func(report.Audit) bool) map[string][]report.Audit {
	byDS := map[string][]report.Audit{}
	for _, a := range audits {
		if keep(a) {
			g := a.Dataset
			if a.ConfigID != "" {
				g += ", config " + a.ConfigID
			}
			byDS[g] = append(byDS[g], a)
		}
	}
	return byDS
}

// diagonalAxes sets p's two axes over [lo, hi] (padded 6%), the same on x
// and y, labelled xl and yl, and draws y = x. When spread (the x values)
// lies decades apart (symlogConstant), both axes are symlog so y = x stays
// the diagonal and no setting is lost at 0, labelled by sym(c).
func diagonalAxes(p *panel, lo, hi float64, spread []float64, xl, yl string, sym func(c float64) (x, y string)) {
	if !(hi > lo) {
		hi = lo + 0.01
	}
	pad := 0.06 * (hi - lo)
	p.x = axisSpec{label: xl, min: lo - pad, max: hi + pad, ticks: linTicks(lo, hi+pad)}
	p.y = axisSpec{label: yl, min: lo - pad, max: hi + pad, ticks: linTicks(lo, hi+pad)}
	if c := symlogConstant(spread); c > 0 {
		sc := symlogScale{c}
		u0, u1 := sc.f(lo), sc.f(hi)
		padU := 0.06 * (u1 - u0)
		mn, mx := sc.inv(u0-padU), sc.inv(u1+padU)
		xs, ys := sym(c)
		p.x = axisSpec{label: xs, min: mn, max: mx, scale: sc, ticks: symlogTicks(c, mn, mx)}
		p.y = axisSpec{label: ys, min: mn, max: mx, scale: sc, ticks: symlogTicks(c, mn, mx)}
		lo, hi, pad = mn, mx, 0
	}
	p.series = append(p.series, &series{name: "y = x", pts: []xy{{lo - pad, lo - pad}, {hi + pad, hi + pad}}, line: &diagStyle})
}
