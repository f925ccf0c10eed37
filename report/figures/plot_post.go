package figures

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// A crowded posterior figure shows a rule-picked subset of the settings:
// at most maxScatterSettings per scatter panel, and, when a set has more
// than maxCDFOnePanel settings, one row of CDF panels per mechanism with at
// most maxCDFPerRow each, picked by pickSettings. Every setting is in the
// tables whatever the figures show.
const (
	maxScatterSettings = 4
	maxCDFOnePanel     = 6
	maxCDFPerRow       = 4
	maxScatterPoints   = 600 // per setting; more are thinned with a fixed stride
)

// pickSettings keeps at most n of ss (in canonical (k, ε) order): the
// first, the last and evenly spaced ones between.
func pickSettings(ss []*postSetting, n int) []*postSetting { return thin(ss, n) }

// settingColors gives each setting of a panel a distinct colour: the first
// of each mechanism the mechanism's, the others extraHues.
func settingColors(ss []*postSetting) []color.NRGBA {
	out := make([]color.NRGBA, len(ss))
	seen := map[pets.Kind]bool{}
	extra := 0
	for i, s := range ss {
		if !seen[s.pet] {
			seen[s.pet], out[i] = true, petColor(s.pet)
			continue
		}
		out[i] = extraHues[extra%len(extraHues)]
		extra++
	}
	return out
}

// scatterGlyphs are the markers of a scatter panel's settings, in order.
var scatterGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}}

// postSetting holds the posterior samples of one setting.
type postSetting struct {
	setting                        string
	pet                            pets.Kind
	k                              int
	eps                            float64
	prior, posterior, ieadv, absMA []float64
}

func (s *postSetting) label() string { return display.PetName(s.pet) + " " + s.params() }

// params is the setting's parameters, with what its id says beyond them
// (a curated bag rule, rr_prior's stage fraction): "k=8, sorted-x3".
func (s *postSetting) params() string {
	return paramLabel(s.pet, s.k, s.eps) + settingExtra(s.setting, s.pet, s.k, s.eps)
}

// groupPosteriors groups samples by setting, in canonical order, leaving
// out the trivial mechanisms none and bot.
func groupPosteriors(post []report.Posterior) []*postSetting {
	by := map[string]*postSetting{}
	var order []*postSetting
	for _, p := range post {
		if !privatized(p.Pet) {
			continue
		}
		s := by[p.Setting]
		if s == nil {
			s = &postSetting{setting: p.Setting, pet: p.Pet, k: p.K, eps: p.Epsilon}
			by[p.Setting] = s
			order = append(order, s)
		}
		s.prior = append(s.prior, p.Prior)
		s.posterior = append(s.posterior, p.Sample.Posterior)
		s.ieadv = append(s.ieadv, p.IEAdv)
		s.absMA = append(s.absMA, p.AbsMA)
	}
	slices.SortFunc(order, func(a, b *postSetting) int {
		return display.SettingOrder(a.pet, a.k, a.eps, a.setting, b.pet, b.k, b.eps, b.setting)
	})
	return order
}

// thin keeps at most n items, evenly spaced (first and last included).
func thin[T any](xs []T, n int) []T {
	if len(xs) <= n {
		return xs
	}
	out := make([]T, n)
	for i := range out {
		out[i] = xs[i*(len(xs)-1)/(n-1)]
	}
	return out
}

var diagStyle = draw.LineStyle{Color: color.Gray{Y: 60}, Width: 1.2, Dashes: []vg.Length{2, 3}}

// scatterFigure is scatterSets for one set of posteriors.
func scatterFigure(post []report.Posterior, titleSuffix string) (*figure, error) {
	return scatterSets([]Set{{Posteriors: post}}, titleSuffix)
}

// scatterSets draws the paper's Figures 1 and 2 (top): per set, one panel
// per mechanism, one point per sampled example (x = prior η, y = the Bayes
// attacker's posterior), with the y = x diagonal (nothing learned). A
// panel shows at most maxScatterSettings settings (pickSettings: the first
// and last in (k, ε) order and evenly spaced ones between, named in its
// title), each in its own colour and marker, named in a legend strip under
// the panel title, with at most maxScatterPoints points. The x axis ends at
// a round value above the largest prior (0.05, 0.1, 0.2, …, 0.6, else 1)
// so that skewed priors such as Beta(2,30) stay readable; y is [0, 1].
// For labels of C ≥ 3 classes a sample's prior and posterior are those
// of its drawn label y (audit.Sample), and the axes and title say so.
func scatterSets(sets []Set, titleSuffix string) (*figure, error) {
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	sc := scatterAxes(classes)
	blocks, priorMax, perRow := scatterBlocks(sets)
	if len(blocks) == 0 {
		return nil, fmt.Errorf("figures: posterior scatter: no samples outside none/bot: %w", ErrNoData)
	}
	sc.xMax = scatterXMax(priorMax)
	cols := min(3, perRow)
	if perRow == 4 {
		cols = 2
	}
	cellW := 4.4 * vg.Inch
	var panels []*panel
	var header vg.Length
	picked := false
	for _, b := range blocks {
		p, some := sc.panel(sets, b)
		picked = picked || some
		header = max(header, p.headerHeight(cellW))
		panels = append(panels, p)
	}
	f := &figure{
		title:  "Prior vs posterior of the Bayes-optimal label attacker (one point per example)" + report.ClassesTitle(classes) + titleSuffix,
		w:      vg.Length(cols) * cellW,
		cols:   cols,
		cellH:  3.6*vg.Inch + header,
		legend: []legendItem{{text: sc.diag, thumb: lineThumb(diagStyle)}},
		panels: panels,
	}
	if picked {
		f.note = fmt.Sprintf("A panel shows at most %d settings: the first and last in (k, ε) order and evenly spaced ones "+
			"between; at most %d examples each. Every setting is in the tables.", maxScatterSettings, maxScatterPoints)
	}
	return f, nil
}

// scatterAxis is what every scatter panel shares: the axis labels, the
// diagonal's legend text and the x axis's end (a probability).
type scatterAxis struct {
	xl, yl, diag string
	xMax         float64
}

// scatterAxes labels the axes and the diagonal for labels of C classes
// (C ≥ 3: the prior and posterior of the drawn label).
func scatterAxes(classes int) scatterAxis {
	if classes >= 3 {
		return scatterAxis{xl: "prior η_y(x) of the drawn label y", yl: "posterior P(y | x, release) of the drawn label",
			diag: "y = x: nothing learned; posterior 1: label exposed, 0: the drawn label ruled out"}
	}
	return scatterAxis{xl: "prior η = P(y=1 | x)", yl: "posterior P(y=1 | x, release)",
		diag: "y = x: nothing learned; posteriors of 0 or 1: label exposed"}
}

// scatterBlock is one panel's settings: one mechanism's of set set.
type scatterBlock struct {
	set int
	all []*postSetting
}

// scatterBlocks groups every set's settings into one block per mechanism
// (a panel), and returns the largest prior ≤ 1 and the most blocks of one
// set (a row of panels).
func scatterBlocks(sets []Set) (blocks []scatterBlock, priorMax float64, perRow int) {
	for i, st := range sets {
		ss := groupPosteriors(st.Posteriors)
		n := 0
		for _, s := range ss {
			for _, v := range s.prior {
				if v <= 1 {
					priorMax = max(priorMax, v)
				}
			}
			if len(blocks) == 0 || blocks[len(blocks)-1].set != i || blocks[len(blocks)-1].all[0].pet != s.pet {
				blocks = append(blocks, scatterBlock{set: i})
				n++
			}
			blocks[len(blocks)-1].all = append(blocks[len(blocks)-1].all, s)
		}
		perRow = max(perRow, n)
	}
	return blocks, priorMax, perRow
}

// scatterXMax is the x axis's end: the first of 0.05, 0.1, 0.2, …, 0.6
// not below priorMax, else 1.
func scatterXMax(priorMax float64) float64 {
	for _, c := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6} {
		if priorMax <= c {
			return c
		}
	}
	return 1.0
}

// panel draws block b of sets: the diagonal, then the shown settings
// (pickSettings) each in its colour and marker; picked says some were
// left out.
func (sc scatterAxis) panel(sets []Set, b scatterBlock) (p *panel, picked bool) {
	shown := pickSettings(b.all, maxScatterSettings)
	p = &panel{title: display.PetName(b.all[0].pet)}
	if len(shown) < len(b.all) {
		p.title += fmt.Sprintf(" (%d of %d settings)", len(shown), len(b.all))
	}
	if len(sets) > 1 && sets[b.set].Name != "" {
		p.title = sets[b.set].Name + ": " + p.title
	}
	p.x = axisSpec{label: sc.xl, min: -0.03 * sc.xMax, max: 1.03 * sc.xMax, ticks: linTicks(0, sc.xMax)}
	p.y = axisSpec{label: sc.yl, min: -0.03, max: 1.03, ticks: linTicks(0, 1)}
	p.series = append(p.series, &series{name: "y = x", pts: []xy{{0, 0}, {sc.xMax, sc.xMax}}, line: &diagStyle})
	clrs := settingColors(shown)
	for i, s := range shown {
		q := scatterPoints(s)
		if len(q) == 0 {
			continue
		}
		shape := scatterGlyphs[i%len(scatterGlyphs)]
		p.series = append(p.series, &series{name: s.label(), pts: q, cloud: true,
			glyph: &draw.GlyphStyle{Color: withAlpha(clrs[i], 140), Radius: 1.9, Shape: shape}})
		p.legend = append(p.legend, legendItem{text: s.params(),
			thumb: glyphThumb(draw.GlyphStyle{Color: clrs[i], Radius: 3.5, Shape: shape})})
	}
	return p, len(shown) < len(b.all)
}

// scatterPoints are setting s's finite (prior, posterior) pairs, at most
// maxScatterPoints (thin).
func scatterPoints(s *postSetting) []xy {
	var q []xy
	for j := range s.prior {
		x, y := s.prior[j], s.posterior[j]
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			continue
		}
		q = append(q, xy{x, y})
	}
	return thin(q, maxScatterPoints)
}

// cdfFigure is cdfSets for one set of posteriors (the ∞ fractions from
// rows, the audit's).
func cdfFigure(post []report.Posterior, rows []report.Row, titleSuffix string) (*figure, error) {
	return cdfSets([]Set{{Rows: rows, Posteriors: post}}, titleSuffix)
}

// cdfSets draws the paper's Figure 2 (middle and bottom): empirical CDFs
// of the individual expected advantage and of |multiplicative advantage|
// per setting, side by side, every set overlaid in its look. Up to
// maxCDFOnePanel settings share one pair of panels; more get one row of
// panels per mechanism with at most maxCDFPerRow settings each
// (pickSettings). Each setting has its own colour within its panels. The
// advantage axis is symlog when it spans decades; |MA| uses a log(1+x)
// axis, +Inf values drawn at the position marked ∞ beyond a dashed
// separator, where each CDF jumps to 1. The legend gives each setting's
// fraction of ∞ from the audit of all its examples (the row's ma_inf_frac;
// the curves are drawn from the posterior samples). For C ≥ 3 classes |MA|
// is the largest change of the log posterior odds between two classes,
// and the title names C.
func cdfSets(sets []Set, titleSuffix string) (*figure, error) {
	c, err := collectCDF(sets)
	if err != nil {
		return nil, err
	}
	rows := c.rows()
	var panels []*panel
	var items []legendItem
	if len(sets) > 1 {
		items = setLegend(sets)
	}
	for _, rs := range rows {
		pa, pm, legend := c.rowPanels(rs)
		if len(rows) == 1 {
			items = append(items, legend...)
		} else {
			pa.legend = legend
		}
		panels = append(panels, pa, pm)
	}
	return c.figure(panels, items, len(rows) > 1, titleSuffix), nil
}

// cdfPlot is what cdfSets draws: the sets, the class count, each set's
// settings and the audit's ∞ fractions, and the two shared x axes.
type cdfPlot struct {
	sets    []Set
	classes int
	per     [][]*postSetting     // per set: its settings (groupPosteriors)
	infOf   []map[string]float64 // per set: the audit's ma_inf_frac by setting
	total   int                  // the most settings of one set
	ieAx    advAxis              // individual expected advantage (probability)
	maAx    advAxis              // |MA| (nats, log(1+x)), ∞ beyond its separator
}

// cdfRow is one row of panels: its title ("" when one row shows every
// setting, else the mechanism's name) and the settings of a set it shows.
type cdfRow struct {
	title string
	pick  func(ss []*postSetting) []*postSetting
}

// collectCDF groups every set's posterior samples by setting, reads the
// audit's ∞ fractions from its rows and sets the axes over all samples
// (ErrNoData when no set has a privatized setting).
func collectCDF(sets []Set) (*cdfPlot, error) {
	classes, err := setsClasses(sets)
	if err != nil {
		return nil, err
	}
	c := &cdfPlot{sets: sets, classes: classes, per: make([][]*postSetting, len(sets)), infOf: make([]map[string]float64, len(sets))}
	var allMA, allIE []float64
	for i, st := range sets {
		c.per[i] = groupPosteriors(st.Posteriors)
		c.total = max(c.total, len(c.per[i]))
		c.infOf[i] = map[string]float64{}
		for _, r := range st.Rows {
			if r.Audited && !math.IsNaN(r.MAInfFrac) {
				c.infOf[i][r.Setting] = r.MAInfFrac
			}
		}
		for _, s := range c.per[i] {
			allMA = append(allMA, s.absMA...)
			allIE = append(allIE, s.ieadv...)
		}
	}
	if c.total == 0 {
		return nil, fmt.Errorf("figures: advantage CDFs: no samples outside none/bot: %w", ErrNoData)
	}
	c.ieAx, c.maAx = newAdvAxis(allIE, false), newAdvAxis(allMA, true)
	return c, nil
}

// rows are the rows of panels: one for every setting when a set has at
// most maxCDFOnePanel, else one per mechanism (in pets.Kind order) showing
// at most maxCDFPerRow of its settings (pickSettings).
func (c *cdfPlot) rows() []cdfRow {
	if c.total <= maxCDFOnePanel {
		return []cdfRow{{"", func(ss []*postSetting) []*postSetting { return ss }}}
	}
	var kinds []pets.Kind
	for _, ss := range c.per {
		for _, s := range ss {
			if !slices.Contains(kinds, s.pet) {
				kinds = append(kinds, s.pet)
			}
		}
	}
	slices.Sort(kinds)
	var rows []cdfRow
	for _, k := range kinds {
		rows = append(rows, cdfRow{display.PetName(k), func(ss []*postSetting) []*postSetting {
			var of []*postSetting
			for _, s := range ss {
				if s.pet == k {
					of = append(of, s)
				}
			}
			return pickSettings(of, maxCDFPerRow)
		}})
	}
	return rows
}

// rowPanels draws row rs: the individual expected advantage panel pa and
// the |MA| panel pm, every set's shown settings in both, and the legend
// naming each setting once (the primary set's look wins).
func (c *cdfPlot) rowPanels(rs cdfRow) (pa, pm *panel, legend []legendItem) {
	ylab := "fraction of examples ≤ x"
	pa = &panel{title: "Individual expected advantage", x: c.ieAx.spec("individual expected advantage (probability)"),
		y: axisSpec{label: ylab, min: -0.03, max: 1.03, ticks: linTicks(0, 1)}}
	pm = &panel{title: "|Multiplicative advantage|", x: c.maAx.spec(maCDFLabel(c.classes)),
		y: axisSpec{label: ylab, min: -0.03, max: 1.03, ticks: linTicks(0, 1)}, refs: c.maAx.sep()}
	if rs.title != "" {
		pa.title, pm.title = rs.title+": individual expected advantage", rs.title+": |multiplicative advantage|"
	}
	named := map[string]int{} // setting → its item in legend
	for si := range c.sets {
		lk := lookOf(si, len(c.sets))
		shown := rs.pick(c.per[si])
		if rs.title != "" && lk.primary {
			if of := c.ofMechanism(si, rs.title); len(shown) < of {
				pa.title = fmt.Sprintf("%s (%d of %d settings)", pa.title, len(shown), of)
			}
		}
		clrs := settingColors(shown)
		for i, s := range shown {
			sty := lk.line(draw.LineStyle{Color: clrs[i], Width: 2})
			name := s.label() + setSuffix(c.sets, si)
			pa.series = append(pa.series, &series{name: name, pts: cdfXY(s.ieadv, 0, c.ieAx.max, 0), line: sty})
			pm.series = append(pm.series, &series{name: name, pts: cdfXY(s.absMA, 0, c.maAx.sepPos, c.maAx.infPos), line: sty})
			item := legendItem{text: c.legendText(si, s), thumb: lineThumb(draw.LineStyle{Color: clrs[i], Width: 2})}
			switch at, ok := named[s.setting]; {
			case !ok:
				named[s.setting] = len(legend)
				legend = append(legend, item)
			case lk.primary: // the primary set (the last) names it
				legend[at] = item
			}
		}
	}
	return pa, pm, legend
}

// ofMechanism counts set si's settings of the mechanism named name.
func (c *cdfPlot) ofMechanism(si int, name string) int {
	n := 0
	for _, s := range c.per[si] {
		if display.PetName(s.pet) == name {
			n++
		}
	}
	return n
}

// legendText names setting s of set si with its fraction of |MA| = ∞ when
// above 0: the audit's (the row's ma_inf_frac), else the samples'.
func (c *cdfPlot) legendText(si int, s *postSetting) string {
	text := s.label()
	f, ok := c.infOf[si][s.setting]
	if !ok {
		f = infFrac(s.absMA)
	}
	if f > 0 {
		text += fmt.Sprintf(" (%s ∞)", display.Percent(f))
	}
	return text
}

// figure lays the panels out two a row (cells 4.2 in high, or 3.3 in plus
// the tallest header when byMech: one row per mechanism) and notes the
// settings picked and what ∞ means.
func (c *cdfPlot) figure(panels []*panel, items []legendItem, byMech bool, titleSuffix string) *figure {
	title := "Empirical CDFs of per-example advantage"
	f := &figure{title: title + report.ClassesTitle(c.classes) + titleSuffix, w: 12 * vg.Inch, cols: 2, cellH: 4.2 * vg.Inch, legend: items, panels: panels}
	if byMech {
		var hdr vg.Length
		for _, p := range panels {
			hdr = max(hdr, p.headerHeight(6*vg.Inch))
		}
		f.cellH = 3.3*vg.Inch + hdr
	}
	var notes []string
	if byMech {
		notes = append(notes, fmt.Sprintf("%d settings: one row per mechanism, at most %d settings a row (the first and last in (k, ε) order and "+
			"evenly spaced ones between); every setting is in the tables.", c.total, maxCDFPerRow))
	}
	if c.maAx.hasInf {
		what := "|Δ log-odds| = ∞ (posterior 0 or 1: the label is exposed)"
		if c.classes >= 3 {
			what = "|MA| = ∞ (the release rules a class out: the posterior odds against it are infinite)"
		}
		notes = append(notes, "Right panels: right of the dashed line, "+what+"; the legend's % ∞ is the audit's, over all its examples.")
	}
	f.note = strings.Join(notes, " ")
	return f
}

// maCDFLabel is the x label of the |MA| CDF panel for labels of C classes.
func maCDFLabel(classes int) string {
	if classes >= 3 {
		return "largest |Δ log-odds| between two classes (nats, log(1+x) scale)"
	}
	return "|Δ log-odds| (nats, log(1+x) scale)"
}

// cdfXY returns the empirical CDF of vals as a step line from (lo, 0) to the
// right edge hi. NaNs are dropped. When infPos > 0, +Inf values are a jump
// to 1 at infPos (the line runs flat from the last finite value to infPos);
// without +Inf values the line ends at (hi, 1).
func cdfXY(vals []float64, lo, hi, infPos float64) []xy {
	var fin []float64
	n, inf := 0, 0
	for _, v := range vals {
		switch {
		case math.IsNaN(v):
			continue
		case math.IsInf(v, 1):
			inf++
		default:
			fin = append(fin, v)
		}
		n++
	}
	slices.Sort(fin)
	out := []xy{{lo, 0}}
	for i := 0; i < len(fin); {
		j := i
		for j < len(fin) && fin[j] == fin[i] {
			j++
		}
		x := max(fin[i], lo)
		out = append(out, xy{x, float64(i) / float64(n)}, xy{x, float64(j) / float64(n)})
		i = j
	}
	last := out[len(out)-1].Y
	if inf > 0 && infPos > 0 {
		out = append(out, xy{infPos, last}, xy{infPos, 1})
	} else {
		out = append(out, xy{hi, last})
	}
	return out
}

func infFrac(v []float64) float64 {
	n, inf := 0, 0
	for _, x := range v {
		if math.IsNaN(x) {
			continue
		}
		n++
		if math.IsInf(x, 1) {
			inf++
		}
	}
	if n == 0 {
		return 0
	}
	return float64(inf) / float64(n)
}
