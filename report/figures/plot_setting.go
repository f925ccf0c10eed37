package figures

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// The cost side alone: test AUC per privacy setting, one panel per
// mechanism family.

// aucBySettingFigure is aucBySettingSets for one result set.
func aucBySettingFigure(rows []report.Row, titleSuffix string) (*figure, error) {
	return aucBySettingSets([]Set{{Rows: rows}}, titleSuffix)
}

// aucBySettingSets shows the cost side alone, so it is drawn without any
// audit: one panel per mechanism with the mean test AUC (test accuracy for
// C ≥ 3 classes, with C in the title) (± SE) of each
// setting against its parameter (ε, or k for LLP; LLP+Lap and LLP+Geom one
// curve per k, labelled with k; one curve per bag rule), the clean model and
// bot as reference lines, one AUC scale for all panels, every set
// overlaid in its look. RR+prior is drawn in RR's panel when both are
// there.
func aucBySettingSets(sets []Set, titleSuffix string) (*figure, error) {
	c, err := collectBySetting(sets)
	if err != nil {
		return nil, err
	}
	var items []legendItem
	c.refs, items = setRefs(sets, true)
	var panels []*panel
	for _, pet := range slices.Sorted(maps.Keys(c.panels)) {
		panels = append(panels, c.panel(pet))
	}
	return c.figure(panels, append(items, curveLegend(c.keys, c.cols, true)...), titleSuffix), nil
}

// bySetting is what aucBySettingSets draws: the sets, their class count,
// the kinds with a metric, the panels (one per mechanism, RR+prior in RR's
// when both are there), every set's rows with a metric, the curves and
// their looks, the reference lines and the shared cost axis.
type bySetting struct {
	sets    []Set
	classes int
	has     map[pets.Kind]bool // kinds with a finite metric
	panels  map[pets.Kind]bool // the panels, by their mechanism (panelOf)
	all     []report.Row       // every set's rows with a finite metric
	curveStyles
	refs  []refLine
	yspec axisSpec
}

// collectBySetting gathers every set's rows with a metric and their
// panels and curves (ErrNoData without a privatized one), and sets the
// cost axis.
func collectBySetting(sets []Set) (*bySetting, error) {
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	c := &bySetting{sets: sets, classes: classes, has: map[pets.Kind]bool{}, panels: map[pets.Kind]bool{}}
	for _, s := range sets {
		for _, r := range s.Rows {
			c.has[r.Pet] = c.has[r.Pet] || finiteMetric(r)
		}
	}
	keyset := map[curveKey]bool{}
	for _, s := range sets {
		for _, r := range s.Rows {
			if finiteMetric(r) {
				c.all = append(c.all, r)
				if privatized(r.Pet) {
					c.panels[c.panelOf(r.Pet)] = true
					keyset[curveOf(r)] = true
				}
			}
		}
	}
	if len(c.panels) == 0 {
		return nil, fmt.Errorf("figures: %s per setting: no privatized setting with a %s: %w", metricTitle(classes), report.MetricFor(classes), ErrNoData)
	}
	c.curveStyles = newCurveStyles(keyset)
	c.yspec = costAxis(c.all, classes)
	return c, nil
}

// panelOf is the panel of kind p: its family's (RR+prior RR's) when the
// family's own kind is there, else its own.
func (c *bySetting) panelOf(p pets.Kind) pets.Kind {
	if f := p.Family(); c.has[f] {
		return f
	}
	return p
}

// settingParam is the parameter on the x axis of pet's panel: k for the
// LLP panel, else ε.
func settingParam(pet pets.Kind, r report.Row) float64 {
	if variesK(pet) {
		return float64(r.K)
	}
	return r.Epsilon
}

// panel draws pet's panel: every set's curves of the mechanisms in it,
// against their parameter on a log axis with room for the curves' end
// labels.
func (c *bySetting) panel(pet pets.Kind) *panel {
	var pkeys []curveKey
	var xs []float64
	for _, k := range c.keys {
		if c.panelOf(k.pet) == pet {
			pkeys = append(pkeys, k)
		}
	}
	for _, r := range c.all {
		if privatized(r.Pet) && c.panelOf(r.Pet) == pet {
			xs = append(xs, settingParam(pet, r))
		}
	}
	p := &panel{title: familyTitle(pet, pkeys), refs: c.refs, nudge: nudgeX} // x: the parameter
	sp := newBagSpread(pkeys)
	for si, set := range c.sets {
		keys, byCurve := rowsByCurve(set.Rows, func(r report.Row) bool {
			return finiteMetric(r) && privatized(r.Pet) && c.panelOf(r.Pet) == pet
		})
		for _, ck := range keys {
			c.addCurve(p, pet, si, ck, byCurve[ck], sp)
		}
	}
	xlabel := "ε (log scale)"
	if variesK(pet) {
		xlabel = "bag size k (log scale)"
	}
	p.x = paramAxis(xs, xlabel, len(p.labels) > 0)
	p.y = c.yspec
	return p
}

// bagSpread spreads the curves of a panel's bag rules a few percent apart
// along the (log) parameter axis when one is curated, so that rules
// sharing a k stay apart.
type bagSpread struct {
	hasCurated bool
	rules      []string // the panel's bag rules, in curve order
}

func newBagSpread(pkeys []curveKey) bagSpread {
	sp := bagSpread{hasCurated: slices.ContainsFunc(pkeys, func(k curveKey) bool { return curated(k.bags) })}
	for _, ck := range pkeys {
		if !slices.Contains(sp.rules, ck.bags) {
			sp.rules = append(sp.rules, ck.bags)
		}
	}
	return sp
}

// factor multiplies curve ck's parameter values: 1.08 to the power of its
// rule's offset from the middle rule, 1 without a curated rule.
func (sp bagSpread) factor(ck curveKey) float64 {
	if !sp.hasCurated {
		return 1
	}
	return math.Pow(1.08, float64(slices.Index(sp.rules, ck.bags))-float64(len(sp.rules)-1)/2)
}

// addCurve adds set si's curve ck (its rows cr) to pet's panel p: the
// series in parameter order with its error bars and, for a curve that is
// one of several (a k, a bag rule, prior parameters), its name at its last
// point.
func (c *bySetting) addCurve(p *panel, pet pets.Kind, si int, ck curveKey, cr []report.Row, sp bagSpread) {
	lk := lookOf(si, len(c.sets))
	slices.SortFunc(cr, func(a, b report.Row) int { return cmp.Compare(settingParam(pet, a), settingParam(pet, b)) })
	clr := c.cols[ck]
	name := display.PetName(ck.pet) + " " + paramLabel(ck.pet, ck.k, math.NaN()) + bagsText(ck.bags)
	if c.apart[ck] != "" {
		name += ", " + c.apart[ck]
	}
	s := curveSeries(name+setSuffix(c.sets, si), ck, clr, lk, len(cr), 1.6)
	for _, r := range cr {
		s.pts = append(s.pts, xy{settingParam(pet, r) * sp.factor(ck), metricMean(r)})
		s.yerr = append(s.yerr, metricSE(r))
	}
	p.series = append(p.series, s)
	if ck.k == 0 && !sp.hasCurated && c.apart[ck] == "" {
		return
	}
	var parts []string
	if ck.k != 0 {
		parts = append(parts, "k="+strconv.Itoa(ck.k))
	}
	if sp.hasCurated {
		parts = append(parts, ck.bags)
	}
	if c.apart[ck] != "" {
		parts = append(parts, c.apart[ck])
	}
	prio := 1
	if !lk.primary {
		prio = 4
	}
	last := len(s.pts) - 1
	p.labels = append(p.labels, pointLabel{x: s.pts[last].X, y: s.pts[last].Y, text: strings.Join(parts, ", "),
		color: clr, prio: prio, of: s, idx: last})
}

// figure lays the panels out (at most 3 a row, 2 for 4) under the legend,
// which ends with what a marker is.
func (c *bySetting) figure(panels []*panel, items []legendItem, titleSuffix string) *figure {
	ncols := min(len(panels), 3)
	if len(panels) == 4 {
		ncols = 2
	}
	items = append(items, legendItem{text: "mean ± SE over trials at the best learning rate",
		thumb: lineGlyphThumb(nil, draw.GlyphStyle{Color: colGrey, Radius: glyphR, Shape: draw.CircleGlyph{}})})
	return &figure{title: metricTitle(c.classes) + " per privacy setting" + report.ClassesTitle(c.classes) + titleSuffix, w: vg.Length(ncols) * 4.6 * vg.Inch,
		cols: ncols, cellH: 3.9 * vg.Inch, legend: items, panels: panels}
}

// paramAxis is a log-scale axis over positive parameter values (ε or k),
// with a margin of at least a factor 1.35 on each side (room for the
// curves' end labels on the right when labelRoom) and the values themselves
// as ticks; linear if a value is not positive.
func paramAxis(vals []float64, label string, labelRoom bool) axisSpec {
	lo, hi := slices.Min(vals), slices.Max(vals)
	if !(lo > 0) {
		pad := math.Max(0.05*(hi-lo), 0.5)
		right := pad
		if labelRoom {
			right = math.Max(pad, 0.25*(hi-lo))
		}
		return axisSpec{label: label, min: lo - pad, max: hi + right, ticks: valueTicks(vals, 8)}
	}
	f := math.Max(1.35, math.Pow(hi/lo, 0.06))
	right := f
	if labelRoom {
		right = math.Max(2.2, math.Pow(hi/lo, 0.25))
	}
	return axisSpec{label: label, min: lo / f, max: hi * right, scale: plot.LogScale{}, ticks: valueTicks(vals, 8)}
}
