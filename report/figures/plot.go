package figures

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figures are built in two steps: a builder turns results into a figure
// value (panels of series, reference lines, point labels, axes with their
// ticks, legend items) that tests can inspect, and figure.draw renders it
// with gonum/plot, placing point labels where they collide with nothing
// (layout.go) and recording where everything went, which tests check too.

// Figure styling: sizes in points (1/72 inch).
const (
	pngDPI     = 120
	titleSize  = 13
	labelSize  = 11
	tickSize   = 10
	legendSize = 10
	annotSize  = 9.5
	glyphR     = 3 // marker radius
	capWidth   = 5 // error bar caps
	margin     = 8 // figure border
)

// sans is Liberation Sans (bundled with gonum/plot): more legible at small
// sizes than the default serif face.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func textStyle(size vg.Length, clr color.Color) text.Style {
	return text.Style{Color: clr, Font: font.From(sans, size), Handler: plot.DefaultTextHandler,
		XAlign: draw.XLeft, YAlign: draw.YBottom}
}

// textBox is the box of s drawn with sty at anchor pt.
func textBox(sty text.Style, pt vg.Point, s string) vg.Rectangle {
	r := sty.Rectangle(s)
	return vg.Rectangle{Min: r.Min.Add(pt), Max: r.Max.Add(pt)}
}

// ---- figure model ------------------------------------------------------------

type xy struct{ X, Y float64 }

// series is one drawn data series of a panel.
type series struct {
	name  string // legend text or setting, for tests and messages
	pts   []xy
	line  *draw.LineStyle  // nil: points only
	glyph *draw.GlyphStyle // nil: no markers
	// xerr, yerr are ± half-widths per point (nil, NaN or ≤ 0: no bar);
	// yband, when set, replaces yerr by an interval [lo, hi] per point (an
	// asymmetric one: Wilson's).
	xerr, yerr []float64
	yband      [][2]float64
	// cloud: a point cloud (posterior scatters), whose markers may overlap;
	// halo: rings drawn around other markers on purpose (the ε-DP worst
	// case). Other markers never hide one another (see dodge).
	cloud, halo bool
}

// refLine is a horizontal (y = v) or vertical (x = v) line across a panel.
type refLine struct {
	horizontal bool
	v          float64
	style      draw.LineStyle
}

// pointLabel is a text to place next to a data point. Labels are placed in
// priority order (1 first); one that fits nowhere is left out, never drawn
// over a line, a marker, an error bar or another label.
type pointLabel struct {
	x, y  float64
	text  string
	color color.Color
	prio  int
	// of, idx: the series and point labelled, when the label should follow
	// its marker if that is moved (dodge); nil: placed at (x, y).
	of  *series
	idx int
}

// axisSpec is one axis of a panel: fixed range, scale and labelled ticks.
type axisSpec struct {
	label    string
	min, max float64
	scale    plot.Normalizer // nil: linear
	ticks    []plot.Tick
}

// legendItem is one entry of a legend strip: a thumbnail and a text.
type legendItem struct {
	text  string
	thumb func(c draw.Canvas, r vg.Rectangle) // draws into r
}

type panel struct {
	title  string
	x, y   axisSpec
	refs   []refLine
	series []*series
	labels []pointLabel
	legend []legendItem // strip under the panel title (nil: none)

	// Set by draw (for tests).
	area    vg.Rectangle // the data area
	placed  []placedLabel
	dropped []pointLabel
	drawn   drawCounts
	obst    obstacles
	legBox  []vg.Rectangle
	// nudge is the axis along which dodge may move a marker: one that
	// holds a parameter or a category (ε, k, the epoch, the learning
	// rate), never one that holds a measurement. nudgeNone, the zero value,
	// for panels whose axes both hold measurements.
	nudge nudgeAxis
	// shift is what dodge did to the markers that would otherwise hide one
	// another, by series and point; nil when it did nothing.
	shift map[*series]map[int]nudged
}

// nudgeAxis is the axis along which markers of a panel may be moved.
type nudgeAxis uint8

const (
	nudgeNone nudgeAxis = iota // both axes are measured: markers stay where their values are
	nudgeX                     // x holds a parameter or a category: markers may move along x only
)

// nudged is how dodge changed a marker: moved by d along the panel's
// nudge axis or, where it could not move, drawn open (an outline) at its
// own place, grow points larger when it would sit on another's centre (a
// ring around it).
type nudged struct {
	d    vg.Point
	open bool
	grow vg.Length
}

// drawCounts is what the series plotter drew inside the data area.
type drawCounts struct {
	segments, glyphs, xbars, ybars int
	glyphAt                        []vg.Point // centres of the drawn markers
	// marks are the drawn markers that must stay visible (not cloud or
	// halo), with their radii; moved counts those dodge moved, ringed
	// those it drew open and larger in place.
	marks         []mark
	moved, ringed int
}

// mark is a drawn marker: its centre and radius, and whether it is drawn
// open (an outline, which hides nothing beneath it).
type mark struct {
	at   vg.Point
	r    vg.Length
	open bool
}

type figure struct {
	title  string
	w      vg.Length
	cols   int       // panels per row
	cellH  vg.Length // height of one panel row
	legend []legendItem
	note   string // under the panels (wrapped)
	panels []*panel

	// Set by draw (for tests): the canvas and every text/legend box outside
	// the panels.
	canvas vg.Rectangle
	boxes  []vg.Rectangle
}

// ---- layout helpers ------------------------------------------------------------

const (
	legendThumbW = 22
	legendGapX   = 14 // between items
	legendPadX   = 4  // between thumbnail and text
)

// legendLayout places items left to right in rows of at most width w and
// returns their boxes relative to (0, 0) = the strip's top left corner, with
// y growing downwards (as rows do), and the strip's height.
func legendLayout(items []legendItem, w vg.Length) (boxes []vg.Rectangle, h vg.Length) {
	sty := textStyle(legendSize, color.Black)
	rowH := sty.Height("Ây") + 3
	var x, y vg.Length
	for _, it := range items {
		iw := legendThumbW + legendPadX + sty.Width(it.text)
		if x > 0 && x+iw > w {
			x, y = 0, y+rowH
		}
		boxes = append(boxes, vg.Rectangle{Min: vg.Point{X: x, Y: y}, Max: vg.Point{X: x + iw, Y: y + rowH}})
		x += iw + legendGapX
	}
	if len(items) > 0 {
		h = y + rowH
	}
	return boxes, h
}

// drawLegend draws items in a strip whose top left corner is at (x0, top)
// and returns the item boxes in canvas coordinates.
func drawLegend(c draw.Canvas, items []legendItem, x0, top, w vg.Length) []vg.Rectangle {
	boxes, _ := legendLayout(items, w)
	sty := textStyle(legendSize, color.Black)
	out := make([]vg.Rectangle, len(boxes))
	for i, b := range boxes {
		r := vg.Rectangle{Min: vg.Point{X: x0 + b.Min.X, Y: top - b.Max.Y}, Max: vg.Point{X: x0 + b.Max.X, Y: top - b.Min.Y}}
		out[i] = r
		th := vg.Rectangle{Min: vg.Point{X: r.Min.X, Y: r.Min.Y + 2}, Max: vg.Point{X: r.Min.X + legendThumbW, Y: r.Max.Y - 2}}
		if items[i].thumb != nil {
			items[i].thumb(c, th)
		}
		s := sty
		s.YAlign = draw.YCenter
		c.FillText(s, vg.Point{X: th.Max.X + legendPadX, Y: (r.Min.Y + r.Max.Y) / 2}, items[i].text)
	}
	return out
}

// wrapText breaks s into lines no wider than w.
func wrapText(sty text.Style, s string, w vg.Length) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		try := word
		if line != "" {
			try = line + " " + word
		}
		if line != "" && sty.Width(try) > w {
			lines = append(lines, line)
			line = word
			continue
		}
		line = try
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func lineHeight(size vg.Length) vg.Length { return textStyle(size, color.Black).Height("Ây") + 2 }

// panelHeader is the height above a panel's plot: its title and legend.
func (p *panel) headerHeight(w vg.Length) vg.Length {
	h := vg.Length(0)
	if p.title != "" {
		h += lineHeight(labelSize+1) + 2
	}
	if len(p.legend) > 0 {
		_, lh := legendLayout(p.legend, w-8)
		h += lh + 4
	}
	return h
}

// size returns the figure's width and height.
func (f *figure) size() (w, h vg.Length) {
	w = f.w
	inner := w - 2*margin
	h = margin + lineHeight(titleSize) + 4
	if len(f.legend) > 0 {
		_, lh := legendLayout(f.legend, inner)
		h += lh + 6
	}
	rows := (len(f.panels) + f.cols - 1) / f.cols
	h += vg.Length(rows) * f.cellH
	if f.note != "" {
		n := len(wrapText(textStyle(annotSize, color.Black), f.note, inner))
		h += vg.Length(n)*lineHeight(annotSize) + 4
	}
	return w, h + margin
}

// draw renders the figure onto c (whose size is f.size()).
func (f *figure) draw(c draw.Canvas) {
	f.canvas = c.Rectangle
	f.boxes = f.boxes[:0]
	inner := c.Rectangle.Max.X - c.Rectangle.Min.X - 2*margin
	x0 := c.Min.X + margin
	top := c.Max.Y - margin

	ts := textStyle(titleSize, color.Black)
	ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
	tp := vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}
	c.FillText(ts, tp, f.title)
	f.boxes = append(f.boxes, textBox(ts, tp, f.title))
	top -= lineHeight(titleSize) + 4

	if len(f.legend) > 0 {
		f.boxes = append(f.boxes, drawLegend(c, f.legend, x0, top, inner)...)
		_, lh := legendLayout(f.legend, inner)
		top -= lh + 6
	}
	bottom := c.Min.Y + margin
	if f.note != "" {
		ns := textStyle(annotSize, colNote)
		lines := wrapText(ns, f.note, inner)
		lh := lineHeight(annotSize)
		for i, l := range lines {
			pt := vg.Point{X: x0, Y: bottom + vg.Length(len(lines)-1-i)*lh + 2}
			c.FillText(ns, pt, l)
			f.boxes = append(f.boxes, textBox(ns, pt, l))
		}
		bottom += vg.Length(len(lines))*lh + 4
	}
	cellW := inner / vg.Length(f.cols)
	for i, p := range f.panels {
		col, row := i%f.cols, i/f.cols
		cell := vg.Rectangle{
			Min: vg.Point{X: x0 + vg.Length(col)*cellW, Y: top - vg.Length(row+1)*f.cellH},
			Max: vg.Point{X: x0 + vg.Length(col+1)*cellW, Y: top - vg.Length(row)*f.cellH},
		}
		if cell.Min.Y < bottom {
			cell.Min.Y = bottom
		}
		p.draw(draw.Canvas{Canvas: c.Canvas, Rectangle: cell})
	}
}

// draw renders a panel into c: title, legend strip, then the plot.
func (p *panel) draw(c draw.Canvas) {
	w := c.Max.X - c.Min.X
	top := c.Max.Y
	if p.title != "" {
		ts := textStyle(labelSize+1, color.Black)
		ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
		c.FillText(ts, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: top}, p.title)
		top -= lineHeight(labelSize+1) + 2
	}
	if len(p.legend) > 0 {
		p.legBox = drawLegend(c, p.legend, c.Min.X+4, top, w-8)
		_, lh := legendLayout(p.legend, w-8)
		top -= lh + 4
	}
	pl := p.plot()
	pc := c
	pc.Max.Y = top
	pc.Min.X += 2
	pc.Max.X -= 10 // room for the last x tick label
	// The x label is drawn here, centred under the data area: gonum centres
	// it (and sizes the area to fit it) at the axis' data midpoint, which a
	// log or symlog axis maps far from the middle.
	// So is the y label, beside it.
	xl, yl := pl.X.Label.Text, pl.Y.Label.Text
	pl.X.Label.Text, pl.Y.Label.Text = "", ""
	ls := textStyle(labelSize, color.Black)
	ls.XAlign = draw.XCenter
	lh := lineHeight(labelSize) + 4
	pc.Min.Y += lh
	pc.Min.X += lh
	pl.Draw(pc)
	if xl != "" {
		c.FillText(ls, vg.Point{X: (p.area.Min.X + p.area.Max.X) / 2, Y: pc.Min.Y - lh + 2}, xl)
	}
	if yl != "" {
		ys := ls
		ys.Rotation = math.Pi / 2
		ys.YAlign = draw.YTop
		c.FillText(ys, vg.Point{X: pc.Min.X - lh + 2, Y: (p.area.Min.Y + p.area.Max.Y) / 2}, yl)
	}
}

// plot builds the gonum plot of a panel.
func (p *panel) plot() *plot.Plot {
	pl := plot.New()
	pl.BackgroundColor = nil
	pl.X.Label.Text, pl.Y.Label.Text = p.x.label, p.y.label
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Label.TextStyle.Font = font.From(sans, labelSize)
		a.Tick.Label.Font = font.From(sans, tickSize)
		a.Label.Padding = 4
	}
	for _, ax := range []struct {
		a *plot.Axis
		s axisSpec
	}{{&pl.X, p.x}, {&pl.Y, p.y}} {
		ax.a.Min, ax.a.Max = ax.s.min, ax.s.max
		if ax.s.scale != nil {
			ax.a.Scale = ax.s.scale
		}
		ticks := ax.s.ticks
		ax.a.Tick.Marker = plot.TickerFunc(func(float64, float64) []plot.Tick { return ticks })
	}
	pl.Add(&gridLines{p}, &refPlotter{p}, &seriesPlotter{p}, &labelPlotter{p})
	return pl
}

// gridLines draws light lines at the labelled ticks.
type gridLines struct{ p *panel }

func (g *gridLines) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	sty := draw.LineStyle{Color: color.Gray{Y: 228}, Width: 0.6}
	for _, t := range g.p.x.ticks {
		if x := tx(t.Value); x >= c.Min.X && x <= c.Max.X {
			c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
		}
	}
	for _, t := range g.p.y.ticks {
		if y := ty(t.Value); y >= c.Min.Y && y <= c.Max.Y {
			c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
		}
	}
}

type refPlotter struct{ p *panel }

func (r *refPlotter) Plot(c draw.Canvas, pl *plot.Plot) {
	r.p.area = c.Rectangle
	tx, ty := pl.Transforms(&c)
	for _, l := range r.p.refs {
		if l.horizontal {
			y := ty(l.v)
			c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
		} else {
			x := tx(l.v)
			c.StrokeLine2(l.style, x, c.Min.Y, x, c.Max.Y)
		}
	}
}

// seriesPlotter draws every series: lines, then error bars, then markers.
type seriesPlotter struct{ p *panel }

func (s *seriesPlotter) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	n := &s.p.drawn
	*n = drawCounts{}
	in := func(pt vg.Point) bool { return c.Contains(pt) }
	s.p.shift = dodge(s.p.series, tx, ty, c.Rectangle, s.p.nudge)
	at := func(sr *series, i int) vg.Point { return s.p.at(sr, i, tx, ty) }
	for _, sr := range s.p.series {
		if sr.line == nil || len(sr.pts) < 2 {
			continue
		}
		line := make([]vg.Point, len(sr.pts))
		for i, q := range sr.pts {
			line[i] = vg.Point{X: tx(q.X), Y: ty(q.Y)}
		}
		for _, part := range c.ClipLinesXY(line) {
			c.StrokeLines(*sr.line, part)
			n.segments += len(part) - 1
		}
	}
	for _, sr := range s.p.series {
		clr := color.Color(color.Black)
		if sr.glyph != nil {
			clr = sr.glyph.Color
		} else if sr.line != nil {
			clr = sr.line.Color
		}
		sty := draw.LineStyle{Color: clr, Width: 1}
		for i, q := range sr.pts {
			pt := at(sr, i)
			px, py := pt.X, pt.Y
			if d := s.p.shift[sr][i].d; d.X != 0 || d.Y != 0 {
				// A moved marker keeps a hairline to its true position.
				c.StrokeLine2(draw.LineStyle{Color: withAlpha(colNote, 150), Width: 0.5}, tx(q.X), ty(q.Y), px, py)
				n.moved++
			}
			if ylo, yhi, ok := sr.ybar(i); ok {
				lo, hi := ty(ylo)+(py-ty(q.Y)), ty(yhi)+(py-ty(q.Y))
				c.StrokeLine2(sty, px, lo, px, hi)
				c.StrokeLine2(sty, px-capWidth/2, lo, px+capWidth/2, lo)
				c.StrokeLine2(sty, px-capWidth/2, hi, px+capWidth/2, hi)
				if in(vg.Point{X: px, Y: lo}) && in(vg.Point{X: px, Y: hi}) {
					n.ybars++
				}
			}
			if e := errAt(sr.xerr, i); e > 0 {
				lo, hi := tx(q.X-e)+(px-tx(q.X)), tx(q.X+e)+(px-tx(q.X))
				c.StrokeLine2(sty, lo, py, hi, py)
				c.StrokeLine2(sty, lo, py-capWidth/2, lo, py+capWidth/2)
				c.StrokeLine2(sty, hi, py-capWidth/2, hi, py+capWidth/2)
				if in(vg.Point{X: lo, Y: py}) && in(vg.Point{X: hi, Y: py}) {
					n.xbars++
				}
			}
		}
	}
	for _, sr := range s.p.series {
		if sr.glyph == nil {
			continue
		}
		for i := range sr.pts {
			pt := at(sr, i)
			if in(pt) {
				g := s.p.glyphOf(sr, i)
				c.DrawGlyph(g, pt)
				n.glyphs++
				n.glyphAt = append(n.glyphAt, pt)
				if s.p.shift[sr][i].open {
					n.ringed++
				}
				if !sr.cloud && !sr.halo {
					n.marks = append(n.marks, mark{pt, g.Radius, isOpen(g.Shape)})
				}
			}
		}
	}
}

// at is where point i of sr is drawn: its position, moved by dodge along
// the panel's nudge axis.
func (p *panel) at(sr *series, i int, tx, ty func(float64) vg.Length) vg.Point {
	q := sr.pts[i]
	return vg.Point{X: tx(q.X), Y: ty(q.Y)}.Add(p.shift[sr][i].d)
}

// glyphOf is point i of sr's marker as drawn: its series' (which has one),
// open and larger where dodge ringed it.
func (p *panel) glyphOf(sr *series, i int) draw.GlyphStyle {
	g := *sr.glyph
	if n := p.shift[sr][i]; n.open {
		g.Radius += n.grow
		g.Shape = openShape(g.Shape)
	}
	return g
}

// openShape is a marker shape's outline (a ring for a disc, a square for a
// box, a triangle for a pyramid); outlines stay as they are.
func openShape(s draw.GlyphDrawer) draw.GlyphDrawer {
	switch s.(type) {
	case draw.CircleGlyph:
		return draw.RingGlyph{}
	case draw.BoxGlyph:
		return draw.SquareGlyph{}
	case draw.PyramidGlyph:
		return draw.TriangleGlyph{}
	}
	return s
}

// isOpen reports whether a marker shape is an outline, which hides nothing
// under it but its thin line.
func isOpen(s draw.GlyphDrawer) bool {
	switch s.(type) {
	case draw.CircleGlyph, draw.BoxGlyph, draw.PyramidGlyph:
		return false
	}
	return true
}

// ringGrow is how much larger (points) an open marker is drawn than the
// largest marker whose centre it sits on (within coincident), so that
// concentric outlines stay apart.
const (
	ringGrow   = 2.5
	coincident = 1.5
)

// dodge keeps markers from hiding one another without misplacing a
// measurement: markers are taken in drawing order, and one whose disc
// would overlap an earlier one's (centres closer than the sum of the
// radii) moves along the panel's nudge axis only — the one holding a
// parameter or a category — to the nearest free spot (1 to 6 marker widths
// either way, inside area), its position on the measured axis unchanged; a
// hairline joins it to its true position. Where no such axis exists (both
// axes measured) or no spot is free, it stays at its values and is drawn
// open: an outline hides nothing under it. An open marker on another's
// centre (within coincident points) is also drawn ringGrow points larger
// than the largest such, a ring around it. Point clouds and halo rings are
// left as they are.
func dodge(ss []*series, tx, ty func(float64) vg.Length, area vg.Rectangle, axis nudgeAxis) map[*series]map[int]nudged {
	type placedMark struct {
		mark
		grow vg.Length
	}
	var placed []placedMark
	var out map[*series]map[int]nudged
	dist := func(a, b vg.Point) float64 { return math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y)) }
	overlaps := func(m mark) bool {
		for _, o := range placed {
			if dist(m.at, o.at) < float64(m.r+o.r+o.grow) {
				return true
			}
		}
		return false
	}
	free := func(m mark) bool {
		if m.at.X < area.Min.X+m.r || m.at.X > area.Max.X-m.r || m.at.Y < area.Min.Y+m.r || m.at.Y > area.Max.Y-m.r {
			return false
		}
		return !overlaps(m)
	}
	set := func(sr *series, i int, v nudged) {
		if out == nil {
			out = map[*series]map[int]nudged{}
		}
		if out[sr] == nil {
			out[sr] = map[int]nudged{}
		}
		out[sr][i] = v
	}
	for _, sr := range ss {
		if sr.glyph == nil || sr.cloud || sr.halo {
			continue
		}
		r := sr.glyph.Radius + 0.5
		for i, q := range sr.pts {
			m := mark{at: vg.Point{X: tx(q.X), Y: ty(q.Y)}, r: r}
			if m.at.X < area.Min.X || m.at.X > area.Max.X || m.at.Y < area.Min.Y || m.at.Y > area.Max.Y {
				continue
			}
			var grow vg.Length
			if overlaps(m) {
				moved := false
				for step := 1; axis == nudgeX && step <= 6 && !moved; step++ {
					for _, sign := range []vg.Length{1, -1} {
						d := vg.Point{X: sign * vg.Length(step) * (2*r + 0.5)}
						if try := (mark{at: m.at.Add(d), r: r}); free(try) {
							set(sr, i, nudged{d: d})
							m, moved = try, true
							break
						}
					}
				}
				if !moved {
					on := false
					for _, o := range placed {
						if dist(m.at, o.at) < coincident {
							on, grow = true, max(grow, o.grow)
						}
					}
					if on {
						grow += ringGrow
					}
					set(sr, i, nudged{open: true, grow: grow})
				}
			}
			placed = append(placed, placedMark{m, grow})
		}
	}
	return out
}

// ybar is point i's vertical bar [lo, hi] (yband, else ± yerr); ok false:
// none.
func (s *series) ybar(i int) (lo, hi float64, ok bool) {
	if i < len(s.yband) {
		b := s.yband[i]
		return b[0], b[1], !math.IsNaN(b[0]) && !math.IsNaN(b[1]) && b[1] > b[0]
	}
	if e := errAt(s.yerr, i); e > 0 {
		y := s.pts[i].Y
		return y - e, y + e, true
	}
	return 0, 0, false
}

// errAt returns e[i] when it is a usable error half-width, else 0.
func errAt(e []float64, i int) float64 {
	if i >= len(e) || !(e[i] > 0) || math.IsInf(e[i], 0) {
		return 0
	}
	return e[i]
}

// ---- colours (a mechanism's own is its pets.Look, petColor) ---------------------

var (
	colGrey  = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff} // RR's grey, as in the paper
	colBlue  = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // LLP's blue
	colBlack = color.NRGBA{A: 0xff}
	colBot   = color.NRGBA{R: 0x99, G: 0x99, B: 0x99, A: 0xff} // bot's light grey: reference lines, other sets
	colNote  = color.NRGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
)
