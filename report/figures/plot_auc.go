package figures

import (
	"cmp"
	"fmt"
	"image/color"
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

// advMetric is the x axis of the AUC-vs-advantage figure.
type advMetric uint8

const (
	metricEAdv  advMetric = iota // expected additive advantage (linear axis, ± SE bars)
	metricMAP98                  // 98th-percentile |multiplicative advantage| (log(1+x) axis, may be ∞)
)

func (m advMetric) of(r report.Row) float64 {
	if m == metricEAdv {
		return r.EAdv
	}
	return r.MAP98
}

func (m advMetric) name() string {
	if m == metricEAdv {
		return "eadv"
	}
	return "ma_p98"
}

var (
	cleanStyle = draw.LineStyle{Color: colBlack, Width: 1.5, Dashes: []vg.Length{6, 4}}
	botStyle   = draw.LineStyle{Color: colBot, Width: 1.5, Dashes: []vg.Length{1.5, 3}}
)

const aucAxisLabel = "test AUC (mean ± SE over trials, best LR)"

// finiteAUC reports whether a row has a usable mean AUC.
func finiteAUC(r report.Row) bool { return !math.IsNaN(r.AUCMean) && !math.IsInf(r.AUCMean, 0) }

// aucSE is the row's AUC error half-width: its SE with ≥ 2 trials, else 0.
func aucSE(r report.Row) float64 {
	if r.NTrials < 2 || !(r.AUCSE > 0) {
		return 0
	}
	return r.AUCSE
}

// aucRange is the y range of AUC values with their error bars and the
// reference lines, padded so that markers and labels clear the frame.
func aucRange(rows []report.Row) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if finiteAUC(r) {
			e := aucSE(r)
			lo, hi = math.Min(lo, r.AUCMean-e), math.Max(hi, r.AUCMean+e)
		}
	}
	pad := math.Max(0.01, 0.1*(hi-lo))
	return lo - pad, hi + pad
}

// refLines returns the dashed no-PET line(s) of rows and, withBot, the
// dotted bot line(s), and their legend items.
func refLines(rows []report.Row, withBot bool) ([]refLine, []legendItem) {
	var refs []refLine
	var items []legendItem
	for _, r := range rows {
		if !finiteAUC(r) || !(r.Pet == pets.None || withBot && r.Pet == pets.Bot) {
			continue
		}
		sty, what := cleanStyle, "no PET (clean labels)"
		if r.Pet == pets.Bot {
			sty, what = botStyle, "bot (nothing released)"
		}
		refs = append(refs, refLine{horizontal: true, v: r.AUCMean, style: sty})
		items = append(items, legendItem{text: fmt.Sprintf("%s: AUC %.3f", what, r.AUCMean), thumb: lineThumb(sty)})
	}
	return refs, items
}

// curveKey identifies one curve: a mechanism, k for the two-parameter
// mechanisms (one curve per k across ε) and the bag rule of the LLP family
// (one curve per rule; curated ones dashed).
type curveKey struct {
	pet  pets.Kind
	k    int
	bags string
}

func curveOf(r report.Row) curveKey {
	if r.Pet == pets.LLPLap || r.Pet == pets.LLPGeom {
		return curveKey{r.Pet, r.K, r.Bags}
	}
	return curveKey{r.Pet, 0, r.Bags}
}

// curveColors gives each curve its colour: the mechanism's, shaded light
// (small k) to dark (large k) for the two-parameter mechanisms.
func curveColors(keys []curveKey) map[curveKey]color.NRGBA {
	perPet := map[pets.Kind][]int{}
	for _, k := range keys {
		if !slices.Contains(perPet[k.pet], k.k) { // curated curves share their k's shade
			perPet[k.pet] = append(perPet[k.pet], k.k)
		}
	}
	out := map[curveKey]color.NRGBA{}
	curatedSeen := map[pets.Kind][]string{}
	for _, k := range keys {
		if curated(k.bags) {
			if !slices.Contains(curatedSeen[k.pet], k.bags) {
				curatedSeen[k.pet] = append(curatedSeen[k.pet], k.bags)
			}
			out[k] = shade(petColor(k.pet), curatedShade(slices.Index(curatedSeen[k.pet], k.bags)))
			continue
		}
		ks := perPet[k.pet]
		t := 0.5
		if len(ks) > 1 {
			t = float64(slices.Index(ks, k.k)) / float64(len(ks)-1)
		}
		if k.pet == pets.LLPLap || k.pet == pets.LLPGeom {
			out[k] = shade(petColor(k.pet), t)
		} else {
			out[k] = petColor(k.pet)
		}
	}
	return out
}

// shadeLegend is the legend item of a two-parameter mechanism's curves.
func shadeLegend(pet pets.Kind, keys []curveKey, cols map[curveKey]color.NRGBA, varies string) legendItem {
	var cs []color.Color
	var ks []int
	for _, k := range keys {
		if k.pet == pet && !curated(k.bags) {
			cs, ks = append(cs, cols[k]), append(ks, k.k)
		}
	}
	if len(ks) == 0 {
		return curatedLegend(pet, keys, cols, varies)
	}
	text := fmt.Sprintf("%s, k=%d (%s)", display.PetName(pet), ks[0], varies)
	if len(ks) > 1 {
		text = fmt.Sprintf("%s, one curve per k=%d…%d light→dark (%s)", display.PetName(pet), ks[0], ks[len(ks)-1], varies)
	}
	th := shadesThumb(cs)
	g := draw.GlyphStyle{Color: cols[curveKey{pet, ks[len(ks)-1], randomBags(pet)}], Radius: glyphR, Shape: petGlyph(pet)}
	return legendItem{text: text, thumb: func(c draw.Canvas, r vg.Rectangle) {
		th(c, r)
		glyphThumb(g)(c, r)
	}}
}

// aucVsAdvFigure is the paper's Figure 3: test AUC against an advantage
// metric, one point per audited setting (±SE bars: AUC with ≥ 2 trials,
// E[adv] from the audit), RR one curve across ε, LLP across k, LLP+Lap and
// LLP+Geom one curve per k across ε, the clean model (and bot) as
// reference lines. Every point is labelled with its parameters where a
// label fits without touching anything (the curves' ends first).
func aucVsAdvFigure(rows []report.Row, m advMetric, titleSuffix string) (*figure, error) {
	var pts []report.Row
	var xs []float64
	for _, r := range rows {
		if r.Pet == pets.None || !finiteAUC(r) || !r.Audited {
			continue
		}
		x := m.of(r)
		if math.IsNaN(x) || math.IsInf(x, -1) {
			continue
		}
		pts, xs = append(pts, r), append(xs, x)
		if b := r.EAdvBound; m == metricEAdv && r.Pet.NeedsEpsilon() && b > 0 && !math.IsInf(b, 0) {
			xs = append(xs, b)
		}
	}
	if len(pts) == 0 {
		return nil, fmt.Errorf("figures: AUC vs %s: no audited setting with a test AUC: %w", m.name(), ErrNoData)
	}
	refs, refItems := refLines(rows, false)
	ax := newAdvAxis(xs, m == metricMAP98)

	byCurve := map[curveKey][]report.Row{}
	for _, r := range pts {
		byCurve[curveOf(r)] = append(byCurve[curveOf(r)], r)
	}
	keys := sortedCurveKeys(byCurve)
	cols := curveColors(keys)

	p := &panel{}
	p.refs = append(refs, ax.sep()...)
	var items []legendItem
	items = append(items, refItems...)
	worst := false
	lastPet := pets.Kind(255)
	for _, ck := range keys {
		rs := byCurve[ck]
		slices.SortFunc(rs, func(a, b report.Row) int { return cmp.Or(cmp.Compare(a.K, b.K), cmp.Compare(a.Epsilon, b.Epsilon)) })
		clr := cols[ck]
		s := &series{name: display.PetName(ck.pet), glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: curveGlyph(ck)}}
		if len(rs) > 1 {
			w := vg.Length(2)
			if ck.pet == pets.LLPLap || ck.pet == pets.LLPGeom {
				w = 1.2
			}
			s.line = &draw.LineStyle{Color: clr, Width: w, Dashes: bagDashes(ck.bags)}
		}
		for i, r := range rs {
			x := ax.pos(m.of(r))
			s.pts = append(s.pts, xy{x, r.AUCMean})
			s.yerr = append(s.yerr, aucSE(r))
			if m == metricEAdv {
				s.xerr = append(s.xerr, r.EAdvSE)
			}
			p.labels = append(p.labels, curvePointLabel(ck, r, x, i, len(rs), clr))
		}
		p.series = append(p.series, s)
		if m == metricEAdv {
			// The ε-DP worst case at each DP setting's ε (RR attains it):
			// a ring, joined to the setting's point by a dotted line.
			ws := &series{name: display.PetName(ck.pet) + " ε-DP worst case", glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR + 1, Shape: draw.RingGlyph{}}}
			for _, r := range rs {
				if b := r.EAdvBound; r.Pet.NeedsEpsilon() && b > 0 && !math.IsInf(b, 0) && !math.IsNaN(r.EAdv) {
					ws.pts = append(ws.pts, xy{b, r.AUCMean})
					p.series = append(p.series, &series{name: "to worst case", pts: []xy{{r.EAdv, r.AUCMean}, {b, r.AUCMean}},
						line: &draw.LineStyle{Color: withAlpha(clr, 160), Width: 0.8, Dashes: []vg.Length{1.5, 2}}})
				}
			}
			if len(ws.pts) > 0 {
				p.series = append(p.series, ws)
				worst = true
			}
		}
		switch {
		case (ck.pet == pets.LLPLap || ck.pet == pets.LLPGeom) && curated(ck.bags):
			items = append(items, legendItem{text: fmt.Sprintf("%s, k=%d, %s bags (ε varies)", display.PetName(ck.pet), ck.k, ck.bags),
				thumb: lineGlyphThumb(s.line, *s.glyph)})
		case ck.pet == pets.LLPLap || ck.pet == pets.LLPGeom:
			if ck.pet != lastPet {
				items = append(items, shadeLegend(ck.pet, keys, cols, "ε varies"))
			}
		case ck.pet == pets.Bot:
			items = append(items, legendItem{text: "bot (nothing released)", thumb: glyphThumb(*s.glyph)})
		default:
			varies := map[pets.Kind]string{pets.RR: " (ε varies)", pets.LLP: " (k varies)", pets.RRPrior: " (ε varies)"}[ck.pet]
			items = append(items, legendItem{text: display.PetName(ck.pet) + bagsText(ck.bags) + varies, thumb: lineGlyphThumb(s.line, *s.glyph)})
		}
		lastPet = ck.pet
	}
	if worst {
		items = append(items, legendItem{text: "ring: the ε-DP worst case at the same ε (RR attains it)",
			thumb: glyphThumb(draw.GlyphStyle{Color: colNote, Radius: glyphR + 1, Shape: draw.RingGlyph{}})})
	}
	lo, hi := aucRange(append(slices.Clone(pts), rowsOf(rows, pets.None)...))
	p.y = axisSpec{label: aucAxisLabel, min: lo, max: hi, ticks: linTicks(lo, hi)}
	title, xlabel := "Test AUC vs expected additive advantage", "expected additive advantage of the Bayes attacker (probability)"
	if m == metricMAP98 {
		title, xlabel = "Test AUC vs 98th-percentile multiplicative advantage",
			"98th-percentile |multiplicative advantage| = |Δ log-odds| (nats, log(1+x) scale)"
	}
	p.x = ax.spec(xlabel)
	f := &figure{title: title + titleSuffix, w: 9 * vg.Inch, cols: 1, cellH: 5 * vg.Inch, legend: items, panels: []*panel{p}}
	if ax.hasInf {
		f.note = "Points right of the dashed line have an infinite " + m.name() +
			": more than 2% of labels fully exposed (e.g. LLP bags whose labels are all equal)."
	}
	return f, nil
}

// curvePointLabel labels point i of n on a curve: RR and LLP their ε or k
// (the ends first), a two-parameter curve "k=…, ε=…" at its first point and
// ε elsewhere, bot "bot".
func curvePointLabel(ck curveKey, r report.Row, x float64, i, n int, clr color.Color) pointLabel {
	l := pointLabel{x: x, y: r.AUCMean, color: clr, prio: 3}
	end := i == 0 || i == n-1
	if end {
		l.prio = 1
	}
	switch ck.pet {
	case pets.Bot:
		l.text, l.prio = "bot", 2
	case pets.LLPLap, pets.LLPGeom:
		l.text = "ε=" + fmtParam(r.Epsilon)
		if i == 0 {
			l.text = "k=" + strconv.Itoa(r.K) + ", " + l.text
		} else if end {
			l.prio = 2
		}
	default:
		l.text = paramLabel(r.Pet, r.K, r.Epsilon)
		if curated(ck.bags) && i == n-1 {
			l.text += ", " + ck.bags
		}
	}
	if (ck.pet == pets.LLPLap || ck.pet == pets.LLPGeom) && curated(ck.bags) && i == 0 {
		l.text += ", " + ck.bags
	}
	return l
}

// rowsOf returns the rows of one mechanism.
func rowsOf(rows []report.Row, pet pets.Kind) []report.Row {
	var out []report.Row
	for _, r := range rows {
		if r.Pet == pet {
			out = append(out, r)
		}
	}
	return out
}

func sortedCurveKeys[V any](m map[curveKey]V) []curveKey {
	keys := make([]curveKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b curveKey) int {
		return cmp.Or(cmp.Compare(a.pet, b.pet), cmp.Compare(a.k, b.k), compareBags(a.bags, b.bags))
	})
	return keys
}

// aucBySettingFigure shows the cost side alone, so it is drawn without any
// audit: one panel per mechanism with the mean test AUC (± SE) of each
// setting against its parameter (ε, or k for LLP; LLP+Lap and LLP+Geom one
// curve per k, labelled with k; one curve per bag rule), the clean model and
// bot as reference lines, one AUC scale for all panels. RR+prior is drawn in
// RR's panel when both are there.
func aucBySettingFigure(rows []report.Row, titleSuffix string) (*figure, error) {
	byPet := map[pets.Kind][]report.Row{}
	hasRR := slices.ContainsFunc(rows, func(r report.Row) bool { return r.Pet == pets.RR && finiteAUC(r) })
	for _, r := range rows {
		if finiteAUC(r) && r.Pet != pets.None && r.Pet != pets.Bot {
			pp := r.Pet
			if pp == pets.RRPrior && hasRR {
				pp = pets.RR
			}
			byPet[pp] = append(byPet[pp], r)
		}
	}
	if len(byPet) == 0 {
		return nil, fmt.Errorf("figures: AUC per setting: no privatized setting with a test AUC: %w", ErrNoData)
	}
	refs, items := refLines(rows, true)
	lo, hi := aucRange(rows)
	yticks := linTicks(lo, hi)
	var panels []*panel
	for _, pet := range slices.Sorted(maps.Keys(byPet)) {
		rs := byPet[pet]
		byCurve := map[curveKey][]report.Row{}
		var xs []float64
		param := func(r report.Row) float64 {
			if pet == pets.LLP {
				return float64(r.K)
			}
			return r.Epsilon
		}
		for _, r := range rs {
			byCurve[curveOf(r)] = append(byCurve[curveOf(r)], r)
			xs = append(xs, param(r))
		}
		keys := sortedCurveKeys(byCurve)
		cols := curveColors(keys)
		p := &panel{title: display.PetName(pet), refs: refs}
		if slices.ContainsFunc(keys, func(k curveKey) bool { return k.pet == pets.RRPrior }) && pet == pets.RR {
			p.title = "RR and RR+prior"
		}
		hasCurated := slices.ContainsFunc(keys, func(k curveKey) bool { return curated(k.bags) })
		var rules []string // bag rules of the panel, in curve order
		for _, ck := range keys {
			if !slices.Contains(rules, ck.bags) {
				rules = append(rules, ck.bags)
			}
		}
		// dodge spreads the curves of different bag rules a few percent
		// apart along the (log) parameter axis, so that rules sharing a k
		// stay apart.
		dodge := func(ck curveKey) float64 {
			if !hasCurated {
				return 1
			}
			return math.Pow(1.08, float64(slices.Index(rules, ck.bags))-float64(len(rules)-1)/2)
		}
		for _, ck := range keys {
			cr := byCurve[ck]
			slices.SortFunc(cr, func(a, b report.Row) int { return cmp.Compare(param(a), param(b)) })
			clr := cols[ck]
			s := &series{name: display.PetName(ck.pet) + " " + paramLabel(ck.pet, ck.k, math.NaN()) + bagsText(ck.bags),
				glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: curveGlyph(ck)}}
			if len(cr) > 1 {
				s.line = &draw.LineStyle{Color: clr, Width: 1.6, Dashes: bagDashes(ck.bags)}
			}
			for _, r := range cr {
				s.pts = append(s.pts, xy{param(r) * dodge(ck), r.AUCMean})
				s.yerr = append(s.yerr, aucSE(r))
			}
			p.series = append(p.series, s)
			if ck.k != 0 || hasCurated { // one curve per k or bag rule: name it at its last point
				last := cr[len(cr)-1]
				var parts []string
				if ck.k != 0 {
					parts = append(parts, "k="+strconv.Itoa(ck.k))
				}
				if hasCurated {
					parts = append(parts, ck.bags)
				}
				p.labels = append(p.labels, pointLabel{x: param(last) * dodge(ck), y: last.AUCMean, text: strings.Join(parts, ", "), color: clr, prio: 1})
			}
			if ck.pet == pets.RRPrior || (ck.pet == pets.RR && pet == pets.RR && len(keys) > 1) {
				items = append(items, legendItem{text: display.PetName(ck.pet) + " (ε varies)", thumb: lineGlyphThumb(s.line, *s.glyph)})
			}
		}
		xlabel := "ε (log scale)"
		if pet == pets.LLP {
			xlabel = "bag size k (log scale)"
		}
		p.x = paramAxis(xs, xlabel, len(p.labels) > 0)
		p.y = axisSpec{label: aucAxisLabel, min: lo, max: hi, ticks: yticks}
		panels = append(panels, p)
		if len(keys) > 1 && keys[0].k != 0 {
			items = append(items, shadeLegend(pet, keys, cols, "ε varies"))
		}
		for _, ck := range keys {
			if hasCurated && ck.k == keys[0].k {
				var line *draw.LineStyle
				if len(byCurve[ck]) > 1 {
					line = &draw.LineStyle{Color: cols[ck], Width: 1.6, Dashes: bagDashes(ck.bags)}
				}
				items = append(items, legendItem{text: display.PetName(ck.pet) + ", " + ck.bags + " bags",
					thumb: lineGlyphThumb(line, draw.GlyphStyle{Color: cols[ck], Radius: glyphR, Shape: curveGlyph(ck)})})
			}
		}
	}
	cols := min(len(panels), 3)
	if len(panels) == 4 {
		cols = 2
	}
	items = append(items, legendItem{text: "mean ± SE over trials at the best learning rate",
		thumb: lineGlyphThumb(nil, draw.GlyphStyle{Color: colRR, Radius: glyphR, Shape: draw.CircleGlyph{}})})
	return &figure{title: "Test AUC per privacy setting" + titleSuffix, w: vg.Length(cols) * 4.6 * vg.Inch,
		cols: cols, cellH: 3.9 * vg.Inch, legend: items, panels: panels}, nil
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
