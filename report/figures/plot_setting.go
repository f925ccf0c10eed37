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
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	byPet := map[pets.Kind]bool{}
	var all []report.Row
	has := map[pets.Kind]bool{} // kinds with an AUC
	for _, s := range sets {
		for _, r := range s.Rows {
			has[r.Pet] = has[r.Pet] || finiteMetric(r)
		}
	}
	// A kind joins its family's panel (RR+prior RR's) when the family's
	// own kind is there.
	panelOf := func(p pets.Kind) pets.Kind {
		if f := p.Family(); has[f] {
			return f
		}
		return p
	}
	keyset := map[curveKey]bool{}
	for _, s := range sets {
		for _, r := range s.Rows {
			if finiteMetric(r) {
				all = append(all, r)
				if privatized(r.Pet) {
					byPet[panelOf(r.Pet)] = true
					keyset[curveOf(r)] = true
				}
			}
		}
	}
	if len(byPet) == 0 {
		return nil, fmt.Errorf("figures: %s per setting: no privatized setting with a %s: %w", metricTitle(classes), report.MetricFor(classes), ErrNoData)
	}
	keys := sortedCurveKeys(keyset)
	cols := curveColors(keys)
	apart := priorApart(keys)
	items := setLegend(sets)
	var refs []refLine
	for i, s := range sets {
		r, it := refLines(s.Rows, true, lookOf(i, len(sets)), setTag(sets, i))
		refs, items = append(refs, r...), append(items, it...)
	}
	lo, hi := metricRange(all)
	yticks := linTicks(lo, hi)
	var panels []*panel
	for _, pet := range slices.Sorted(maps.Keys(byPet)) {
		param := func(r report.Row) float64 {
			if variesK(pet) {
				return float64(r.K)
			}
			return r.Epsilon
		}
		var pkeys []curveKey
		var xs []float64
		for _, k := range keys {
			if panelOf(k.pet) == pet {
				pkeys = append(pkeys, k)
			}
		}
		for _, r := range all {
			if privatized(r.Pet) && panelOf(r.Pet) == pet {
				xs = append(xs, param(r))
			}
		}
		p := &panel{title: familyTitle(pet, pkeys), refs: refs, nudge: nudgeX} // x: the parameter
		hasCurated := slices.ContainsFunc(pkeys, func(k curveKey) bool { return curated(k.bags) })
		var rules []string // bag rules of the panel, in curve order
		for _, ck := range pkeys {
			if !slices.Contains(rules, ck.bags) {
				rules = append(rules, ck.bags)
			}
		}
		// dodge spreads the curves of different bag rules a few percent
		// apart along the (log) parameter axis, so that rules sharing a k
		// stay apart.
		spread := func(ck curveKey) float64 {
			if !hasCurated {
				return 1
			}
			return math.Pow(1.08, float64(slices.Index(rules, ck.bags))-float64(len(rules)-1)/2)
		}
		for si, set := range sets {
			lk := lookOf(si, len(sets))
			byCurve := map[curveKey][]report.Row{}
			for _, r := range set.Rows {
				if finiteMetric(r) && privatized(r.Pet) && panelOf(r.Pet) == pet {
					byCurve[curveOf(r)] = append(byCurve[curveOf(r)], r)
				}
			}
			for _, ck := range sortedCurveKeys(byCurve) {
				cr := byCurve[ck]
				slices.SortFunc(cr, func(a, b report.Row) int { return cmp.Compare(param(a), param(b)) })
				clr := cols[ck]
				name := display.PetName(ck.pet) + " " + paramLabel(ck.pet, ck.k, math.NaN()) + bagsText(ck.bags)
				if apart[ck] != "" {
					name += ", " + apart[ck]
				}
				s := &series{name: name + setSuffix(sets, si),
					glyph: lk.glyph(draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: curveGlyph(ck)})}
				if len(cr) > 1 {
					s.line = lk.line(draw.LineStyle{Color: clr, Width: 1.6, Dashes: bagDashes(ck.bags)})
				}
				for _, r := range cr {
					s.pts = append(s.pts, xy{param(r) * spread(ck), metricMean(r)})
					s.yerr = append(s.yerr, metricSE(r))
				}
				p.series = append(p.series, s)
				// One curve per k, bag rule or prior parameters: name it at
				// its last point.
				if ck.k != 0 || hasCurated || apart[ck] != "" {
					var parts []string
					if ck.k != 0 {
						parts = append(parts, "k="+strconv.Itoa(ck.k))
					}
					if hasCurated {
						parts = append(parts, ck.bags)
					}
					if apart[ck] != "" {
						parts = append(parts, apart[ck])
					}
					prio := 1
					if !lk.primary {
						prio = 4
					}
					p.labels = append(p.labels, pointLabel{x: s.pts[len(s.pts)-1].X, y: s.pts[len(s.pts)-1].Y, text: strings.Join(parts, ", "),
						color: clr, prio: prio, of: s, idx: len(s.pts) - 1})
				}
			}
		}
		xlabel := "ε (log scale)"
		if variesK(pet) {
			xlabel = "bag size k (log scale)"
		}
		p.x = paramAxis(xs, xlabel, len(p.labels) > 0)
		p.y = axisSpec{label: metricAxisLabel(classes), min: lo, max: hi, ticks: yticks}
		panels = append(panels, p)
	}
	items = append(items, curveLegend(keys, cols, true)...)
	ncols := min(len(panels), 3)
	if len(panels) == 4 {
		ncols = 2
	}
	items = append(items, legendItem{text: "mean ± SE over trials at the best learning rate",
		thumb: lineGlyphThumb(nil, draw.GlyphStyle{Color: colGrey, Radius: glyphR, Shape: draw.CircleGlyph{}})})
	return &figure{title: metricTitle(classes) + " per privacy setting" + report.ClassesTitle(classes) + titleSuffix, w: vg.Length(ncols) * 4.6 * vg.Inch,
		cols: ncols, cellH: 3.9 * vg.Inch, legend: items, panels: panels}, nil
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
