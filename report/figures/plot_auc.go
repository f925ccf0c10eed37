package figures

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

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

// The cost side of a figure is the reporting rule's metric of its rows
// (report.Row.Metric): the mean test AUC for binary labels, the mean test
// accuracy for labels of C ≥ 3 classes. Every row of a figure has the
// same class count (setsClasses).

// metricAxisLabel is the cost axis' label for labels of C classes.
func metricAxisLabel(classes int) string {
	return report.MetricFor(classes).String() + " (mean ± SE over trials, best LR)"
}

// metricTitle is the cost metric as a figure title starts: "Test AUC",
// "Test accuracy".
func metricTitle(classes int) string {
	if report.MetricFor(classes) == report.MetricAccuracy {
		return "Test accuracy"
	}
	return "Test AUC"
}

// metricMean is the row's mean of its reporting metric at the best LR.
func metricMean(r report.Row) float64 { m, _ := r.Metric(); return m }

// finiteMetric reports whether a row has a usable mean of its metric.
func finiteMetric(r report.Row) bool {
	m := metricMean(r)
	return !math.IsNaN(m) && !math.IsInf(m, 0)
}

// metricSE is the row's error half-width on its metric: its SE with ≥ 2
// trials, else 0.
func metricSE(r report.Row) float64 {
	_, se := r.Metric()
	if r.NTrials < 2 || !(se > 0) {
		return 0
	}
	return se
}

// metricRange is the y range of the rows' metric with their error bars
// and the reference lines, padded so that markers and labels clear the
// frame.
func metricRange(rows []report.Row) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if finiteMetric(r) {
			e := metricSE(r)
			lo, hi = math.Min(lo, metricMean(r)-e), math.Max(hi, metricMean(r)+e)
		}
	}
	pad := math.Max(0.01, 0.1*(hi-lo))
	return lo - pad, hi + pad
}

// setsClasses is the class count C of the rows of sets (2 for binary
// labels, and for sets without rows); rows of different class counts are
// an error: one figure has one cost metric and one C in its title
// (summaries and comparisons refuse such mixes already).
func setsClasses(sets []Set) (int, error) {
	c := 0
	for _, s := range sets {
		for _, r := range s.Rows {
			rc := max(r.Classes, 2)
			if c != 0 && rc != c {
				return 0, fmt.Errorf("figures: rows of %d and of %d label classes in one figure: draw each class count on its own", c, rc)
			}
			c = rc
		}
	}
	return max(c, 2), nil
}

// refLines returns the no-PET line(s) of rows (dashed) and, withBot, the
// bot line(s) (dotted), in the set's look (a secondary set's in grey), and
// their legend items.
func refLines(rows []report.Row, withBot bool, lk look, suffix string) ([]refLine, []legendItem) {
	var refs []refLine
	var items []legendItem
	for _, r := range rows {
		if !finiteMetric(r) || !(isClean(r.Pet) || withBot && isSilent(r.Pet)) {
			continue
		}
		sty, what := cleanStyle, plainName(r.Pet)
		if isSilent(r.Pet) {
			sty = botStyle
		}
		if !lk.primary {
			sty.Color = colBot
			if isClean(r.Pet) {
				sty.Dashes = []vg.Length{3, 2}
			}
		}
		refs = append(refs, refLine{horizontal: true, v: metricMean(r), style: sty})
		items = append(items, legendItem{text: fmt.Sprintf("%s%s: %s %.3f", what, suffix, report.MetricFor(r.Classes).Short(), metricMean(r)),
			thumb: lineThumb(sty)})
	}
	return refs, items
}

// curveKey identifies one curve: a mechanism, k for the two-parameter
// mechanisms (one curve per k across ε), the bag rule of the LLP family
// (one curve per rule; curated ones dashed) and rr_prior's parameters
// beyond ε (one curve per stage fraction and prior learning rate).
type curveKey struct {
	pet   pets.Kind
	k     int
	bags  string
	prior report.PriorParams
}

func curveOf(r report.Row) curveKey {
	prior, _ := report.PriorParamsOf(r.Setting, r.Pet)
	if twoParams(r.Pet) {
		return curveKey{r.Pet, r.K, r.Bags, prior}
	}
	return curveKey{r.Pet, 0, r.Bags, prior}
}

// priorApart says, for each curve of keys, what sets it apart from the
// other curves of its mechanism with its k and bag rule: rr_prior's stage
// fraction and prior learning rate where they differ among them ("stage
// fraction 0.7"; "" for a curve alone of its kind, or for other
// mechanisms). Two settings that differ only there would otherwise read
// alike ("ε=1" twice).
func priorApart(keys []curveKey) map[curveKey]string {
	out := map[curveKey]string{}
	for _, a := range keys {
		var sf, lr bool
		for _, b := range keys {
			if a.pet == b.pet && a.k == b.k && a.bags == b.bags {
				sf = sf || a.prior.StageFraction != b.prior.StageFraction
				lr = lr || a.prior.PriorLR != b.prior.PriorLR
			}
		}
		out[a] = priorText(a.prior, sf, lr)
	}
	return out
}

// pointKey is the key of one setting for priorApart where settings, not
// curves, are told apart (a point's label, a panel's title): its ε joins
// its bag rule, so that only settings of equal k, ε and bag rule are
// compared.
func pointKey(setting string, pet pets.Kind, k int, bags string, eps float64) curveKey {
	prior, _ := report.PriorParamsOf(setting, pet)
	return curveKey{pet: pet, k: k, bags: bags + "@ε" + strconv.FormatFloat(eps, 'g', -1, 64), prior: prior}
}

// priorText names prior parameters: the stage fraction when sf, the prior
// model's learning rate when lr (a default of 0 as "default").
func priorText(p report.PriorParams, sf, lr bool) string {
	var parts []string
	if sf {
		parts = append(parts, "stage fraction "+fmtParam(p.StageFraction))
	}
	if lr {
		v := "default"
		if p.PriorLR > 0 {
			v = fmtParam(p.PriorLR)
		}
		parts = append(parts, "prior LR "+v)
	}
	return strings.Join(parts, ", ")
}

// curveColors gives each curve its colour: the first curve of each
// mechanism (in canonical order) the mechanism's own, every further curve
// (another k, a curated bag rule) a hue of its own from extraHues, so that
// no two curves of a figure share a colour and none is too light to see.
func curveColors(keys []curveKey) map[curveKey]color.NRGBA {
	out := map[curveKey]color.NRGBA{}
	seen := map[pets.Kind]bool{}
	extra := 0
	for _, k := range keys {
		if _, ok := out[k]; ok {
			continue
		}
		if !seen[k.pet] {
			seen[k.pet] = true
			out[k] = petColor(k.pet)
			continue
		}
		out[k] = extraHues[extra%len(extraHues)]
		extra++
	}
	return out
}

// extraHues are the colours of a mechanism's second and further curves:
// saturated hues none of the mechanisms uses, dark enough on white.
var extraHues = []color.NRGBA{
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff}, // brown
	{R: 0xd6, G: 0x4f, B: 0xb0, A: 0xff}, // pink
	{R: 0x0e, G: 0x8c, B: 0x99, A: 0xff}, // teal
	{R: 0x8a, G: 0x8b, B: 0x10, A: 0xff}, // olive
	{R: 0x2a, G: 0x3d, B: 0x8f, A: 0xff}, // navy
	{R: 0x80, G: 0x00, B: 0x00, A: 0xff}, // maroon
	{R: 0x11, G: 0x11, B: 0x11, A: 0xff}, // black
}

// Set is one result set of a figure: the rows of one (dataset, config)
// group of a summary, or one side of a comparison, with its posterior
// samples, under a name that tells it apart ("" when a figure has one).
// Figures of several sets overlay them: the last set solid with filled
// markers, the others dashed (dotted, …) with open markers.
type Set struct {
	Name       string
	Rows       []report.Row
	Posteriors []report.Posterior
}

// look is how a set is told apart from the others of its figure.
type look struct {
	dashes  []vg.Length // nil: solid (or the curve's own dashes)
	hollow  bool
	primary bool
}

// lookOf is set i of n's look: the last is primary (solid, filled).
func lookOf(i, n int) look {
	if i == n-1 {
		return look{primary: true}
	}
	return look{dashes: [][]vg.Length{{5, 3}, {1.5, 2.5}, {8, 2, 1.5, 2}}[i%3], hollow: true}
}

// glyph is g in the set's look (open instead of filled).
func (l look) glyph(g draw.GlyphStyle) *draw.GlyphStyle {
	if l.hollow {
		g.Shape = openShape(g.Shape)
	}
	return &g
}

// line is a curve's line in the set's look (the set's dashes win).
func (l look) line(sty draw.LineStyle) *draw.LineStyle {
	if l.dashes != nil {
		sty.Dashes = l.dashes
	}
	return &sty
}

// setLegend is the legend entries naming the sets of a figure (none for
// one set).
func setLegend(sets []Set) []legendItem {
	if len(sets) < 2 {
		return nil
	}
	var items []legendItem
	for i, s := range sets {
		lk := lookOf(i, len(sets))
		items = append(items, legendItem{text: s.Name, thumb: lineGlyphThumb(lk.line(draw.LineStyle{Color: colNote, Width: 1.5}),
			*lk.glyph(draw.GlyphStyle{Color: colNote, Radius: glyphR, Shape: draw.CircleGlyph{}}))})
	}
	return items
}

// setSuffix is " (name)" for a set of a figure of several, else "".
func setSuffix(sets []Set, i int) string {
	if len(sets) < 2 || sets[i].Name == "" {
		return ""
	}
	return " (" + sets[i].Name + ")"
}

// setTag is a set's short name for legend entries: a comparison side's
// "A" or "B" (the part of "A: dir (…)" before the colon), else its name.
func setTag(sets []Set, i int) string {
	if len(sets) < 2 || sets[i].Name == "" {
		return ""
	}
	if tag, _, ok := strings.Cut(sets[i].Name, ":"); ok && len(tag) <= 3 {
		return " (" + tag + ")"
	}
	return " (" + sets[i].Name + ")"
}

// Crowding: a figure with more than crowdedCurves curves or crowdedPoints
// points in one set is drawn as small multiples, one panel per mechanism
// (RR with RR+prior), each showing the others' settings as grey dots.
const (
	crowdedCurves = 6
	crowdedPoints = 24
)

// aucVsAdvFigure is the paper's Figure 3 for one result set.
func aucVsAdvFigure(rows []report.Row, m advMetric, titleSuffix string) (*figure, error) {
	return aucVsAdvSets([]Set{{Rows: rows}}, m, titleSuffix)
}

// advPoints are a set's settings with an audit and a test AUC, and their
// x values (and ε-DP worst cases for E[adv]).
func advPoints(rows []report.Row, m advMetric) (pts []report.Row, xs []float64) {
	for _, r := range rows {
		if isClean(r.Pet) || !finiteMetric(r) || !r.Audited {
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
	return pts, xs
}

// aucVsAdvSets is the paper's Figure 3: test AUC (test accuracy for C ≥ 3
// classes, with C in the title) against an advantage
// metric, one point per audited setting (±SE bars: AUC with ≥ 2 trials,
// E[adv] from the audit), RR one curve across ε, LLP across k, LLP+Lap and
// LLP+Geom one curve per k across ε, the clean model as a reference line,
// every set overlaid in its look. E[adv] spanning decades gets a symlog
// axis. A crowded grid (crowdedCurves, crowdedPoints) is split into one
// panel per mechanism on shared axes, bot becoming a reference line and the
// other mechanisms' settings grey dots. Every point is labelled with its
// parameters where a label fits without touching anything (the curves'
// ends first, the primary set's first).
func aucVsAdvSets(sets []Set, m advMetric, titleSuffix string) (*figure, error) {
	a, err := collectAdv(sets, m)
	if err != nil {
		return nil, err
	}
	var items []legendItem
	a.refs, items = setRefs(sets, a.crowded)
	var panels []*panel
	for _, fam := range a.families() {
		panels = append(panels, a.panel(fam))
	}
	return a.figure(panels, append(items, a.legend()...), titleSuffix), nil
}

// advFigure is what aucVsAdvSets draws: the sets and the metric on x, the
// class count, each set's points, whether the grid is crowded, the axes,
// the curves and their looks, the reference lines, and what the panels
// drew (an ε-DP worst-case ring).
type advFigure struct {
	sets    []Set
	m       advMetric
	classes int
	pts     [][]report.Row // per set: its audited settings (advPoints)
	crowded bool
	ax      advAxis
	title   string
	xlabel  string
	yspec   axisSpec
	keyset  map[curveKey]bool // the curves drawn: bot's is a reference line when crowded
	curveStyles
	refs []refLine

	worst bool // a panel has an ε-DP worst-case ring
}

// collectAdv gathers every set's audited settings (ErrNoData when there
// are none), decides whether the grid is crowded and sets the shared axes
// and the curves' colours.
func collectAdv(sets []Set, m advMetric) (*advFigure, error) {
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	a := &advFigure{sets: sets, m: m, classes: classes, pts: make([][]report.Row, len(sets))}
	var xs []float64
	var all, cleanRows []report.Row
	for i, s := range sets {
		var x []float64
		a.pts[i], x = advPoints(s.Rows, m)
		xs = append(xs, x...)
		all = append(all, a.pts[i]...)
		cleanRows = append(cleanRows, rowsWhere(s.Rows, isClean)...)
		curves := map[curveKey]bool{}
		for _, r := range a.pts[i] {
			curves[curveOf(r)] = true
		}
		a.crowded = a.crowded || len(curves) > crowdedCurves || len(a.pts[i]) > crowdedPoints
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("figures: %s vs %s: no audited setting with a %s: %w", metricTitle(classes), m.name(),
			report.MetricFor(classes), ErrNoData)
	}
	a.ax = newAdvAxis(xs, m == metricMAP98)
	a.keyset = map[curveKey]bool{}
	for _, r := range all {
		if !(a.crowded && isSilent(r.Pet)) {
			a.keyset[curveOf(r)] = true
		}
	}
	a.curveStyles = newCurveStyles(a.keyset)
	a.title, a.xlabel = metricTitle(classes)+" vs expected additive advantage", "expected additive advantage of the Bayes attacker (probability)"
	if m == metricMAP98 {
		a.title, a.xlabel = metricTitle(classes)+" vs 98th-percentile multiplicative advantage", maAxisLabel(classes, true)
	}
	a.yspec = costAxis(append(slices.Clone(all), cleanRows...), classes)
	return a, nil
}

// families are the panels' mechanism families (pets.Look.Family) in curve
// order when crowded; else one panel (family 255: every curve).
func (a *advFigure) families() []pets.Kind {
	if !a.crowded {
		return []pets.Kind{255}
	}
	var fams []pets.Kind
	for _, k := range a.keys {
		if f := k.pet.Family(); !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	return fams
}

// panel draws family fam's panel: when crowded, titled by the family with
// the other families' settings as grey dots; then every set's curves of
// the family.
func (a *advFigure) panel(fam pets.Kind) *panel {
	p := &panel{refs: append(slices.Clone(a.refs), a.ax.sep()...), x: a.ax.spec(a.xlabel), y: a.yspec}
	if a.crowded {
		p.title = familyTitle(fam, a.keys)
		p.series = append(p.series, a.otherFamilies(fam))
	}
	for si := range a.sets {
		keys, byCurve := rowsByCurve(a.pts[si], func(r report.Row) bool {
			k := curveOf(r)
			return a.keyset[k] && (!a.crowded || k.pet.Family() == fam)
		})
		for _, ck := range keys {
			a.addCurve(p, si, ck, byCurve[ck])
		}
	}
	return p
}

// otherFamilies is the grey dots of a crowded panel: the primary set's
// settings of the other families (bot left out: it is a reference line).
func (a *advFigure) otherFamilies(fam pets.Kind) *series {
	ctx := &series{name: "other mechanisms", glyph: &draw.GlyphStyle{Color: color.Gray{Y: 190}, Radius: 1.8, Shape: draw.CircleGlyph{}}, cloud: true}
	for _, r := range a.pts[len(a.sets)-1] {
		if !isSilent(r.Pet) && r.Pet.Family() != fam {
			ctx.pts = append(ctx.pts, xy{a.ax.pos(a.m.of(r)), metricMean(r)})
		}
	}
	return ctx
}

// addCurve adds set si's curve ck (its settings rs) to p: the series in
// (k, ε) order with its error bars, a label for every point (the primary
// set's first) and, for E[adv] on the primary set, the ε-DP worst cases.
func (a *advFigure) addCurve(p *panel, si int, ck curveKey, rs []report.Row) {
	lk := lookOf(si, len(a.sets))
	slices.SortFunc(rs, func(x, y report.Row) int { return cmp.Or(cmp.Compare(x.K, y.K), cmp.Compare(x.Epsilon, y.Epsilon)) })
	clr := a.cols[ck]
	w := vg.Length(2)
	if twoParams(ck.pet) {
		w = 1.4
	}
	s := curveSeries(display.PetName(ck.pet)+setSuffix(a.sets, si), ck, clr, lk, len(rs), w)
	for i, r := range rs {
		x := a.ax.pos(a.m.of(r))
		s.pts = append(s.pts, xy{x, metricMean(r)})
		s.yerr = append(s.yerr, metricSE(r))
		if a.m == metricEAdv {
			s.xerr = append(s.xerr, r.EAdvSE)
		}
		l := curvePointLabel(ck, r, x, i, len(rs), clr, a.apart[ck])
		l.of, l.idx = s, i
		if !lk.primary {
			l.prio += 3
		}
		p.labels = append(p.labels, l)
	}
	p.series = append(p.series, s)
	if a.m == metricEAdv && lk.primary {
		a.addWorstCases(p, ck, rs)
	}
}

// addWorstCases adds the ε-DP worst case at each DP setting's ε of curve
// ck (RR attains it): a ring, joined to the setting's point by a dotted
// line.
func (a *advFigure) addWorstCases(p *panel, ck curveKey, rs []report.Row) {
	clr := a.cols[ck]
	ws := &series{name: display.PetName(ck.pet) + " ε-DP worst case", halo: true,
		glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR + 1.5, Shape: draw.RingGlyph{}}}
	for _, r := range rs {
		if b := r.EAdvBound; r.Pet.NeedsEpsilon() && b > 0 && !math.IsInf(b, 0) && !math.IsNaN(r.EAdv) {
			ws.pts = append(ws.pts, xy{b, metricMean(r)})
			p.series = append(p.series, &series{name: "to worst case", pts: []xy{{r.EAdv, metricMean(r)}, {b, metricMean(r)}},
				line: &draw.LineStyle{Color: withAlpha(clr, 160), Width: 0.8, Dashes: []vg.Length{1.5, 2}}})
		}
	}
	if len(ws.pts) > 0 {
		p.series = append(p.series, ws)
		a.worst = true
	}
}

// legend names every curve and, when a panel drew one, the worst-case
// ring (after the panels are drawn).
func (a *advFigure) legend() []legendItem {
	items := curveLegend(a.keys, a.cols, false)
	if a.worst {
		items = append(items, legendItem{text: "ring: the ε-DP worst case at the same ε (RR attains it)",
			thumb: glyphThumb(draw.GlyphStyle{Color: colNote, Radius: glyphR + 1.5, Shape: draw.RingGlyph{}})})
	}
	return items
}

// figure lays the panels out (one wide panel, or two columns of smaller
// ones with shorter axis labels when crowded) and says what the reader
// needs: why the grid is split, what lies beyond the ∞ separator.
func (a *advFigure) figure(panels []*panel, items []legendItem, titleSuffix string) *figure {
	f := &figure{title: a.title + report.ClassesTitle(a.classes) + titleSuffix, w: 9 * vg.Inch, cols: 1, cellH: 5 * vg.Inch, legend: items, panels: panels}
	var notes []string
	if a.crowded {
		f.cols = 2
		f.w, f.cellH = 11*vg.Inch, 4.2*vg.Inch
		for _, p := range panels {
			p.x.label = strings.Replace(p.x.label, "expected additive advantage of the Bayes attacker (probability)", "expected additive advantage (probability)", 1)
			p.x.label = strings.Replace(p.x.label, maAxisLabel(a.classes, true), maAxisLabelShort(a.classes), 1)
		}
		notes = append(notes, fmt.Sprintf("%d settings: one panel per mechanism on shared axes; the other mechanisms' settings are "+
			"the grey dots, bot (nothing released) the dotted line.", len(a.pts[len(a.sets)-1])))
	}
	if a.ax.hasInf {
		why := "more than 2% of labels fully exposed (e.g. LLP bags whose labels are all equal)"
		if a.classes >= 3 {
			why = "for more than 2% of examples the release rules a class out (e.g. an LLP bag's count of 0 for a class)"
		}
		notes = append(notes, "Points right of the dashed line have an infinite "+a.m.name()+": "+why+".")
	}
	f.note = strings.Join(notes, " ")
	return f
}

// The steps the cost figures share (aucVsAdvSets, aucBySettingSets).

// setRefs are the reference lines of every set (the clean model's, and
// bot's withBot), each in its set's look, and the legend's first items:
// the sets' names, then those lines.
func setRefs(sets []Set, withBot bool) ([]refLine, []legendItem) {
	var refs []refLine
	items := setLegend(sets)
	for i, s := range sets {
		r, it := refLines(s.Rows, withBot, lookOf(i, len(sets)), setTag(sets, i))
		refs, items = append(refs, r...), append(items, it...)
	}
	return refs, items
}

// curveStyles are a figure's curves in canonical order, each one's colour
// (curveColors) and what tells it apart from its mechanism's other curves
// (priorApart).
type curveStyles struct {
	keys  []curveKey
	cols  map[curveKey]color.NRGBA
	apart map[curveKey]string
}

func newCurveStyles(keyset map[curveKey]bool) curveStyles {
	keys := sortedCurveKeys(keyset)
	return curveStyles{keys: keys, cols: curveColors(keys), apart: priorApart(keys)}
}

// rowsByCurve groups the rows that keep accepts by curve, and returns the
// curves in canonical order.
func rowsByCurve(rows []report.Row, keep func(report.Row) bool) ([]curveKey, map[curveKey][]report.Row) {
	by := map[curveKey][]report.Row{}
	for _, r := range rows {
		if keep(r) {
			by[curveOf(r)] = append(by[curveOf(r)], r)
		}
	}
	return sortedCurveKeys(by), by
}

// curveSeries is curve ck's series of n points, named name, in colour clr
// and set look lk: its marker, and a line of width w (dashed by its bag
// rule) when n > 1.
func curveSeries(name string, ck curveKey, clr color.NRGBA, lk look, n int, w vg.Length) *series {
	s := &series{name: name, glyph: lk.glyph(draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: curveGlyph(ck)})}
	if n > 1 {
		s.line = lk.line(draw.LineStyle{Color: clr, Width: w, Dashes: bagDashes(ck.bags)})
	}
	return s
}

// costAxis is the cost axis over rows' metric (metricRange), labelled
// for labels of C classes.
func costAxis(rows []report.Row, classes int) axisSpec {
	lo, hi := metricRange(rows)
	return axisSpec{label: metricAxisLabel(classes), min: lo, max: hi, ticks: linTicks(lo, hi)}
}

// curveLegend names every curve, with its colour and marker (and line when
// it has one): "RR (ε varies)", "LLP+Geom, k=8 (ε varies)", "LLP, sorted:x3
// bags (k varies)". perSetting: the figure plots AUC per setting (ε or k
// on x), where a curve of a two-parameter mechanism is one k.
func curveLegend(keys []curveKey, cols map[curveKey]color.NRGBA, perSetting bool) []legendItem {
	var items []legendItem
	apart := priorApart(keys)
	for _, ck := range keys {
		g := draw.GlyphStyle{Color: cols[ck], Radius: glyphR, Shape: curveGlyph(ck)}
		ln := &draw.LineStyle{Color: cols[ck], Width: 1.8, Dashes: bagDashes(ck.bags)}
		var text string
		switch {
		case isSilent(ck.pet):
			text, ln = plainName(ck.pet), nil
		case twoParams(ck.pet):
			text = fmt.Sprintf("%s, k=%d%s (ε varies)", display.PetName(ck.pet), ck.k, bagsText(ck.bags))
		case variesK(ck.pet):
			text = display.PetName(ck.pet) + bagsText(ck.bags) + " (k varies)"
			if perSetting && curated(ck.bags) || perSetting && ck.bags == "random" {
				text = display.PetName(ck.pet) + ", " + ck.bags + " bags"
			}
		case apart[ck] != "":
			text = display.PetName(ck.pet) + ", " + apart[ck] + " (ε varies)"
		default:
			text = display.PetName(ck.pet) + bagsText(ck.bags) + " (ε varies)"
		}
		items = append(items, legendItem{text: text, thumb: lineGlyphThumb(ln, g)})
	}
	return items
}

// curvePointLabel labels point i of n on a curve: RR and LLP their ε or k
// (the ends first), a two-parameter curve "k=…, ε=…" at its first point and
// ε elsewhere, bot "bot".
func curvePointLabel(ck curveKey, r report.Row, x float64, i, n int, clr color.Color, apart string) pointLabel {
	l := pointLabel{x: x, y: metricMean(r), color: clr, prio: 3}
	end := i == 0 || i == n-1
	if end {
		l.prio = 1
	}
	switch {
	case isSilent(ck.pet):
		l.text, l.prio = display.PetName(ck.pet), 2
	case twoParams(ck.pet):
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
	if twoParams(ck.pet) && curated(ck.bags) && i == 0 {
		l.text += ", " + ck.bags
	}
	if apart != "" {
		l.text += ", " + apart
	}
	return l
}

// maAxisLabel is the label of an axis of |multiplicative advantage|
// (its 98th percentile when p98): |Δ log-odds| for binary labels; for C ≥
// 3 classes the largest change of the log posterior odds between two
// classes (the audit's MultAdvC).
func maAxisLabel(classes int, p98 bool) string {
	what := "|multiplicative advantage| = |Δ log-odds| (nats, log(1+x) scale)"
	if classes >= 3 {
		what = "|multiplicative advantage| = largest |Δ log-odds| between two classes (nats, log(1+x) scale)"
	}
	if p98 {
		return "98th-percentile " + what
	}
	return what
}

// maAxisLabelShort is maAxisLabel(classes, true) for a small panel.
func maAxisLabelShort(classes int) string {
	if classes >= 3 {
		return "98th-percentile |MA|, largest |Δ log-odds| of two classes (nats, log(1+x))"
	}
	return "98th-percentile |Δ log-odds| (nats, log(1+x) scale)"
}

// rowsWhere returns the rows whose mechanism is.
func rowsWhere(rows []report.Row, is func(pets.Kind) bool) []report.Row {
	var out []report.Row
	for _, r := range rows {
		if is(r.Pet) {
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
		return cmp.Or(cmp.Compare(a.pet, b.pet), cmp.Compare(a.k, b.k), compareBags(a.bags, b.bags),
			cmp.Compare(a.prior.StageFraction, b.prior.StageFraction), cmp.Compare(a.prior.PriorLR, b.prior.PriorLR))
	})
	return keys
}
