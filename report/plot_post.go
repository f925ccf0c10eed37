package report

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/data"
)

const (
	maxScatterPoints = 1000 // per setting; more are thinned with a fixed stride
)

// postSetting holds the posterior samples of one setting.
type postSetting struct {
	key                            settingKey
	prior, posterior, ieadv, absMA []float64
}

func (s *postSetting) label() string {
	if s.key.pet == "none" || s.key.pet == "bot" {
		return petName(s.key.pet)
	}
	return petName(s.key.pet) + " " + paramLabel(s.key.pet, s.key.k, s.key.eps)
}

// readPosteriors groups a posteriors table by setting, in canonical order.
// With no settings given, the trivial mechanisms none and bot are left out;
// otherwise exactly the named settings are kept (an unknown name is an
// error). need lists the value columns required.
func readPosteriors(post *data.Table, fn string, settings []string, need ...string) ([]*postSetting, error) {
	if post == nil || post.Rows() == 0 {
		return nil, fmt.Errorf("report: %s: empty posteriors table: %w", fn, ErrNoData)
	}
	if err := checkTable(post); err != nil {
		return nil, fmt.Errorf("report: %s: %w", fn, err)
	}
	c := &cols{t: post, what: "posteriors"}
	setting, pet, k, eps := c.str("setting"), c.str("pet"), c.i64("k"), c.f64("epsilon")
	vals := map[string][]float64{}
	for _, n := range need {
		vals[n] = c.f64(n)
	}
	if c.err != nil {
		return nil, c.err
	}
	want := map[string]bool{}
	for _, s := range settings {
		want[s] = true
	}
	by := map[string]*postSetting{}
	var order []*postSetting
	for i := range post.Rows() {
		if len(want) > 0 && !want[setting[i]] {
			continue
		}
		if len(want) == 0 && (pet[i] == "none" || pet[i] == "bot") {
			continue
		}
		s := by[setting[i]]
		if s == nil {
			s = &postSetting{key: settingKey{setting[i], pet[i], k[i], eps[i]}}
			by[setting[i]] = s
			order = append(order, s)
		}
		if v, ok := vals["prior"]; ok {
			s.prior = append(s.prior, v[i])
		}
		if v, ok := vals["posterior"]; ok {
			s.posterior = append(s.posterior, v[i])
		}
		if v, ok := vals["ieadv"]; ok {
			s.ieadv = append(s.ieadv, v[i])
		}
		if v, ok := vals["abs_ma"]; ok {
			s.absMA = append(s.absMA, v[i])
		}
	}
	var missing []string
	for _, s := range settings {
		if by[s] == nil {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("report: %s: settings not in the posteriors table: %s", fn, strings.Join(missing, ", "))
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("report: %s: no posterior rows outside none/bot: %w", fn, ErrNoData)
	}
	slices.SortFunc(order, func(a, b *postSetting) int { return compareKeys(a.key, b.key) })
	return order, nil
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

// PlotScatter draws prior vs posterior scatter plots (the paper's Figures 1
// and 2, top) from a posteriors table and writes pathNoExt.png and .svg:
// one panel per mechanism, each point an example (x = prior η, y = the Bayes
// attacker's posterior P(y=1 | x, release)), coloured by the setting's
// privacy parameter (a sequential colormap, dark = first in (k, ε) order),
// with the y = x diagonal (nothing learned). The y axis is [0,1]; the x
// axis ends at a round value above the largest prior (0.05, 0.1, 0.2, …,
// 0.6, else 1) so that skewed priors such as Beta(2,30) stay readable. A
// panel shows at most 12
// settings (evenly spaced in (k, ε) order when there are more, noted in its
// title) and at most 1000 points per setting (thinned with a fixed stride).
//
// With no settings given, every setting except the trivial none and bot
// mechanisms is plotted; otherwise exactly the named settings. An empty
// table (or nothing left to plot) returns an error wrapping ErrNoData and
// writes nothing.
func PlotScatter(post *data.Table, pathNoExt string, settings ...string) error {
	ss, err := readPosteriors(post, "PlotScatter", settings, "prior", "posterior")
	if err != nil {
		return err
	}
	type panel struct {
		pet   string
		ss    []*postSetting
		total int
	}
	var panels []*panel
	for _, s := range ss {
		if len(panels) == 0 || panels[len(panels)-1].pet != s.key.pet {
			panels = append(panels, &panel{pet: s.key.pet})
		}
		p := panels[len(panels)-1]
		p.ss = append(p.ss, s)
		p.total++
	}
	for _, p := range panels {
		p.ss = thin(p.ss, maxPerPanel)
	}
	// The x axis ends at a round value above the largest prior (skewed
	// priors such as Beta(2,30) would otherwise fill a sliver of [0,1]);
	// the y axis is always [0,1]: posteriors of 0 and 1 are full exposure.
	var priorMax float64
	for _, s := range ss {
		for _, v := range s.prior {
			if v <= 1 {
				priorMax = max(priorMax, v)
			}
		}
	}
	xMax := 1.0
	for _, c := range []float64{0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6} {
		if priorMax <= c {
			xMax = c
			break
		}
	}
	diag := draw.LineStyle{Color: color.Gray{Y: 60}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(2), vg.Points(3)}}
	type built struct {
		p   *plot.Plot
		leg plot.Legend
	}
	build := func(pn *panel) (built, error) {
		title := petName(pn.pet)
		if len(pn.ss) < pn.total {
			title += fmt.Sprintf(" (%d of %d settings)", len(pn.ss), pn.total)
		}
		p := newPlot(title, "prior η = P(y=1 | x)", "posterior P(y=1 | x, release)")
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, xMax, 0, 1
		p.X.Tick.Marker = plot.TickerFunc(func(float64, float64) []plot.Tick { return niceTicks(xMax) })
		p.Y.Tick.Marker = fixedTicks(0, 1, 0.2)
		d := plotter.NewFunction(func(x float64) float64 { return x })
		d.LineStyle = diag
		leg := newLegend()
		leg.Add("y = x (nothing learned)", d)
		for i, s := range pn.ss {
			clr := petColor(pn.pet)
			if len(pn.ss) > 1 {
				clr = viridis(float64(i) / float64(len(pn.ss)-1))
			}
			var xy plotter.XYs
			for j := range s.prior {
				x, y := s.prior[j], s.posterior[j]
				if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
					continue
				}
				xy = append(xy, plotter.XY{X: x, Y: y})
			}
			xy = thin(xy, maxScatterPoints)
			if len(xy) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return built{}, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: withAlpha(clr, 150), Radius: vg.Points(1.6), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			leg.Add(paramLabel(s.key.pet, s.key.k, s.key.eps), glyphThumb{draw.GlyphStyle{Color: clr, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}})
		}
		p.Add(d) // on top of the points
		return built{p, leg}, nil
	}
	for _, pn := range panels {
		if _, err := build(pn); err != nil {
			return fmt.Errorf("report: PlotScatter: %w", err)
		}
	}
	ncol := min(3, len(panels)) // one row up to 3 panels, 2×2 for 4
	if len(panels) == 4 {
		ncol = 2
	}
	nrow := (len(panels) + ncol - 1) / ncol
	cellW, cellH := 5*vg.Inch, 4.2*vg.Inch
	titleH := vg.Points(titleSize * 2)
	w, h := vg.Length(ncol)*cellW, vg.Length(nrow)*cellH+titleH
	return saveFigure(pathNoExt, w, h, func(dc draw.Canvas) {
		body := drawFigureTitle(dc, "Prior vs posterior of the Bayes-optimal label attacker (one point per example)")
		tiles := draw.Tiles{Rows: nrow, Cols: ncol, PadX: vg.Points(10), PadY: vg.Points(10), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(4)}
		for i, pn := range panels {
			b, _ := build(pn)
			cell := tiles.At(body, i%ncol, i/ncol)
			pc := splitLegend(cell, &b.leg, vg.Points(titleSize*1.8))
			b.p.Draw(pc)
		}
	})
}

// fixedTicks labels lo, lo+step, …, hi.
func fixedTicks(lo, hi, step float64) plot.Ticker {
	return plot.TickerFunc(func(float64, float64) []plot.Tick {
		var t []plot.Tick
		for i := 0; ; i++ {
			v := lo + float64(i)*step
			if v > hi+step/1e6 {
				break
			}
			v = math.Round(v/step*1e6) / 1e6 * step
			t = append(t, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
		}
		return t
	})
}

// PlotCDFs draws empirical CDFs of the individual expected advantage
// (ieadv) and of the absolute multiplicative advantage (abs_ma, |Δ log-odds|)
// per setting (the paper's Figure 2, middle and bottom rows) side by side
// and writes pathNoExt.png and .svg. One line per setting, coloured by
// mechanism (RR grey, LLP blue, LLP+Lap green, LLP+Geom orange; shades by
// parameter). abs_ma uses a log(1+x) axis; +Inf values (posterior 0 or 1)
// are drawn at a position marked "∞" beyond a dashed separator, where each
// CDF jumps to 1, and the legend gives each setting's fraction of ∞.
// At most 12 settings are drawn (evenly spaced in canonical order when there
// are more, noted in the title). Settings are chosen as in PlotScatter; an
// empty table returns an error wrapping ErrNoData and writes nothing.
func PlotCDFs(post *data.Table, pathNoExt string, settings ...string) error {
	ss, err := readPosteriors(post, "PlotCDFs", settings, "ieadv", "abs_ma")
	if err != nil {
		return err
	}
	total := len(ss)
	ss = thin(ss, maxPerPanel)
	// Colours: per mechanism, shades by position within the mechanism.
	count, seen := map[string]int{}, map[string]int{}
	for _, s := range ss {
		count[s.key.pet]++
	}
	colors := make([]color.Color, len(ss))
	var allMA []float64
	for i, s := range ss {
		n := count[s.key.pet]
		t := 0.5
		if n > 1 {
			t = 0.15 + 0.7*float64(seen[s.key.pet])/float64(n-1)
		}
		seen[s.key.pet]++
		colors[i] = shade(petColor(s.key.pet), t)
		allMA = append(allMA, s.absMA...)
	}
	ax := newXAxis(allMA, true)
	var ieMax float64
	for _, s := range ss {
		for _, v := range s.ieadv {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				ieMax = max(ieMax, v)
			}
		}
	}
	if ieMax <= 0 {
		ieMax = 1
	}
	leg := newLegend()
	styles := make([]draw.LineStyle, len(ss))
	for i, s := range ss {
		styles[i] = draw.LineStyle{Color: colors[i], Width: vg.Points(2)}
		name := s.label()
		if f := infFrac(s.absMA); f > 0 {
			name += fmt.Sprintf(" (%s ∞)", pct(f))
		}
		leg.Add(name, lineThumb{styles[i], true})
	}
	build := func() (*plot.Plot, *plot.Plot, error) {
		pa := newPlot("Individual expected advantage", "individual expected advantage (probability)", "fraction of examples ≤ x")
		pa.X.Min, pa.X.Max, pa.Y.Min, pa.Y.Max = 0, ieMax*1.02, 0, 1.0
		pa.Y.Tick.Marker = fixedTicks(0, 1, 0.2)
		pa.X.Tick.Marker = plot.TickerFunc(func(float64, float64) []plot.Tick { return niceTicks(ieMax * 1.02) })
		pm := newPlot("|Multiplicative advantage|", "|Δ log-odds| (nats, log(1+x) scale)", "fraction of examples ≤ x")
		ax.apply(pm)
		pm.Y.Min, pm.Y.Max = 0, 1.0
		pm.Y.Tick.Marker = fixedTicks(0, 1, 0.2)
		for i, s := range ss {
			la, err := plotter.NewLine(cdfXY(s.ieadv, 0, ieMax*1.02, 0))
			if err != nil {
				return nil, nil, err
			}
			la.LineStyle = styles[i]
			pa.Add(la)
			lm, err := plotter.NewLine(cdfXY(s.absMA, 0, ax.sepPos, ax.infPos))
			if err != nil {
				return nil, nil, err
			}
			lm.LineStyle = styles[i]
			pm.Add(lm)
		}
		return pa, pm, nil
	}
	if _, _, err := build(); err != nil {
		return fmt.Errorf("report: PlotCDFs: %w", err)
	}
	title := "Empirical CDFs of per-example advantage"
	if len(ss) < total {
		title += fmt.Sprintf(" (%d of %d settings)", len(ss), total)
	}
	w := 12 * vg.Inch
	h := max(4.6*vg.Inch, legendHeight(&leg)+vg.Inch)
	return saveFigure(pathNoExt, w, h, func(dc draw.Canvas) {
		body := drawFigureTitle(dc, title)
		pa, pm, _ := build()
		pc := splitLegend(body, &leg, vg.Points(titleSize*1.8))
		tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(18), PadTop: vg.Points(2), PadBottom: vg.Points(4), PadLeft: vg.Points(4)}
		pa.Draw(tiles.At(pc, 0, 0))
		pm.Draw(tiles.At(pc, 1, 0))
	})
}

// cdfXY returns the empirical CDF of vals as a step line from (lo, 0) to
// the right edge hi. NaNs are dropped. When infPos > 0, +Inf values are a
// jump to 1 at infPos (the line runs flat from the last finite value to
// infPos); without +Inf values the line ends at (hi, 1).
func cdfXY(vals []float64, lo, hi, infPos float64) plotter.XYs {
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
	xy := plotter.XYs{{X: lo, Y: 0}}
	for i := 0; i < len(fin); {
		j := i
		for j < len(fin) && fin[j] == fin[i] {
			j++
		}
		x := max(fin[i], lo)
		xy = append(xy, plotter.XY{X: x, Y: float64(i) / float64(n)}, plotter.XY{X: x, Y: float64(j) / float64(n)})
		i = j
	}
	last := xy[len(xy)-1].Y
	if inf > 0 && infPos > 0 {
		xy = append(xy, plotter.XY{X: infPos, Y: last}, plotter.XY{X: infPos, Y: 1})
	} else {
		xy = append(xy, plotter.XY{X: hi, Y: last})
	}
	return xy
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

// pct formats a fraction as a percentage: whole percents from 10%, two
// significant digits below (61%, 100%, 9.4%, 0.05%).
func pct(f float64) string {
	v := 100 * f
	if v >= 10 {
		return strconv.FormatFloat(v, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(v, 'g', 2, 64) + "%"
}
