package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"labelprivacy/data"
)

// Figure styling shared by all plots: sizes are in points (1/72 inch).
const (
	pngDPI      = 120
	titleSize   = 13
	labelSize   = 11
	tickSize    = 10
	legendSize  = 10
	annotSize   = 10
	maxPerPanel = 12 // settings per scatter panel / CDF figure (see PlotScatter)
)

// saveFigure renders fn on a w×h canvas twice: pathNoExt.png (pngDPI) and
// pathNoExt.svg, each written atomically (the directory is created).
func saveFigure(pathNoExt string, w, h vg.Length, fn func(c draw.Canvas)) error {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	fn(draw.New(img))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return fmt.Errorf("report: %s.png: %w", pathNoExt, err)
	}
	if err := data.WriteFileAtomic(pathNoExt+".png", buf.Bytes()); err != nil {
		return err
	}
	svg := vgsvg.New(w, h)
	c := draw.New(svg)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	fn(c)
	buf.Reset()
	if _, err := svg.WriteTo(&buf); err != nil {
		return fmt.Errorf("report: %s.svg: %w", pathNoExt, err)
	}
	return data.WriteFileAtomic(pathNoExt+".svg", buf.Bytes())
}

// sans is Liberation Sans (bundled with gonum/plot): more legible at small
// sizes than the default serif face.
var sans = font.Font{Typeface: "Liberation", Variant: "Sans"}

func fontOf(size vg.Length) font.Font { return font.From(sans, size) }

// newPlot returns a plot with the report's font sizes and a light grid.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = fontOf(titleSize)
	p.Title.Padding = vg.Points(6)
	p.X.Label.Text, p.Y.Label.Text = xlabel, ylabel
	p.X.Label.TextStyle.Font, p.Y.Label.TextStyle.Font = fontOf(labelSize), fontOf(labelSize)
	p.X.Tick.Label.Font, p.Y.Tick.Label.Font = fontOf(tickSize), fontOf(tickSize)
	p.X.Label.Padding, p.Y.Label.Padding = vg.Points(4), vg.Points(4)
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 225}
	g.Horizontal.Color = color.Gray{Y: 225}
	p.Add(g)
	return p
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.TextStyle.Font = fontOf(legendSize)
	l.Left, l.Top = true, true
	l.Padding = vg.Points(2.5)
	l.ThumbnailWidth = vg.Points(24)
	return l
}

// noThumb is the empty thumbnail of a legend group heading.
type noThumb struct{}

func (noThumb) Thumbnail(*draw.Canvas) {}

// splitLegend draws leg in a column at the right of c (top-aligned below
// topPad) and returns the rest of c for the plot.
func splitLegend(c draw.Canvas, leg *plot.Legend, topPad vg.Length) draw.Canvas {
	r := leg.Rectangle(c)
	w := r.Max.X - r.Min.X + vg.Points(14)
	lc := draw.Crop(c, c.Max.X-c.Min.X-w, -vg.Points(4), 0, -topPad)
	leg.Draw(lc)
	return draw.Crop(c, 0, -w, 0, 0)
}

// legendHeight is the height leg needs.
func legendHeight(leg *plot.Legend) vg.Length {
	c := draw.Canvas{Rectangle: vg.Rectangle{Max: vg.Point{X: 1000, Y: 1000}}}
	r := leg.Rectangle(c)
	return r.Max.Y - r.Min.Y
}

// fillText draws a string with the given size and alignment.
func fillText(c draw.Canvas, size vg.Length, clr color.Color, pt vg.Point, xa draw.XAlignment, ya draw.YAlignment, s string) {
	sty := text.Style{Color: clr, Font: fontOf(size), XAlign: xa, YAlign: ya, Handler: plot.DefaultTextHandler}
	c.FillText(sty, pt, s)
}

// ---- colours -------------------------------------------------------------

var (
	colRR    = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff} // grey, as in the paper
	colLLP   = color.NRGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff} // blue
	colLap   = color.NRGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff} // green
	colGeom  = color.NRGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff} // orange
	colOther = color.NRGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff} // purple
	colBlack = color.NRGBA{A: 0xff}
)

func petColor(pet string) color.NRGBA {
	switch pet {
	case "none", "bot":
		return colBlack
	case "rr":
		return colRR
	case "llp":
		return colLLP
	case "llp_lap":
		return colLap
	case "llp_geom":
		return colGeom
	}
	return colOther
}

// shade returns base lightened (t=0) through darkened (t=1), for one curve
// per parameter value within a mechanism.
func shade(base color.NRGBA, t float64) color.NRGBA {
	mix := func(a, b uint8, f float64) uint8 { return uint8(math.Round(float64(a)*(1-f) + float64(b)*f)) }
	var out color.NRGBA
	out.A = 0xff
	if t < 0.5 { // towards white
		f := 0.45 * (0.5 - t) * 2
		out.R, out.G, out.B = mix(base.R, 255, f), mix(base.G, 255, f), mix(base.B, 255, f)
	} else { // towards black
		f := 0.6 * (t - 0.5) * 2
		out.R, out.G, out.B = mix(base.R, 0, f), mix(base.G, 0, f), mix(base.B, 0, f)
	}
	return out
}

// viridis samples a perceptually uniform sequential colormap, t ∈ [0,1]
// (the bright yellow end is left out: it is invisible on white).
func viridis(t float64) color.NRGBA {
	stops := []color.NRGBA{
		{0x44, 0x01, 0x54, 0xff}, {0x3b, 0x52, 0x8b, 0xff}, {0x21, 0x90, 0x8d, 0xff},
		{0x5d, 0xc8, 0x63, 0xff}, {0xb5, 0xcf, 0x1b, 0xff},
	}
	t = math.Max(0, math.Min(1, t)) * float64(len(stops)-1)
	i := int(t)
	if i >= len(stops)-1 {
		return stops[len(stops)-1]
	}
	f := t - float64(i)
	a, b := stops[i], stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*(1-f) + float64(y)*f)) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

func petGlyph(pet string) draw.GlyphDrawer {
	switch pet {
	case "bot":
		return draw.RingGlyph{}
	case "rr":
		return draw.CircleGlyph{}
	case "llp":
		return draw.BoxGlyph{}
	case "llp_lap":
		return draw.PyramidGlyph{}
	case "llp_geom":
		return draw.CrossGlyph{}
	}
	return draw.SquareGlyph{}
}

// ---- names ---------------------------------------------------------------

// petName is the display name of a mechanism.
func petName(pet string) string {
	switch pet {
	case "none":
		return "no PET"
	case "bot":
		return "bot"
	case "rr":
		return "RR"
	case "llp":
		return "LLP"
	case "llp_lap":
		return "LLP+Lap"
	case "llp_geom":
		return "LLP+Geom"
	}
	return pet
}

// fmtParam formats a privacy parameter compactly (0.0625, 8, 1e-05).
func fmtParam(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// paramLabel describes a setting by its parameters ("ε=1", "k=8",
// "k=8, ε=1"); for unknown mechanisms it lists the nonzero ones.
func paramLabel(pet string, k int64, eps float64) string {
	switch pet {
	case "none":
		return "clean labels"
	case "bot":
		return "nothing released"
	case "rr":
		return "ε=" + fmtParam(eps)
	case "llp":
		return "k=" + strconv.FormatInt(k, 10)
	}
	var parts []string
	if k != 0 {
		parts = append(parts, "k="+strconv.FormatInt(k, 10))
	}
	if eps != 0 {
		parts = append(parts, "ε="+fmtParam(eps))
	}
	return strings.Join(parts, ", ")
}

// ---- x axis with an ∞ position --------------------------------------------

// log1pScale is log(1+x): linear near 0, logarithmic for large x, defined at
// 0 (multiplicative advantages are ≥ 0 and span orders of magnitude).
type log1pScale struct{}

func (log1pScale) Normalize(min, max, x float64) float64 {
	lo, hi := math.Log1p(min), math.Log1p(max)
	return (math.Log1p(x) - lo) / (hi - lo)
}

// xAxis describes how a metric with possible +Inf values is laid out: finite
// values on [0, finiteMax] (linear or log1p), +Inf at infPos to the right of
// a dashed separator, with the tick "∞".
type xAxis struct {
	log1p             bool
	finiteMax, infPos float64
	sepPos            float64
	hasInf            bool
}

func newXAxis(vals []float64, log1p bool) xAxis {
	a := xAxis{log1p: log1p}
	for _, v := range vals {
		if math.IsInf(v, 1) {
			a.hasInf = true
		} else if !math.IsNaN(v) && v > a.finiteMax {
			a.finiteMax = v
		}
	}
	if a.finiteMax <= 0 {
		a.finiteMax = 1
	}
	if a.log1p {
		l := math.Log1p(a.finiteMax)
		a.sepPos = math.Expm1(l * 1.07)
		a.infPos = math.Expm1(l * 1.15)
	} else {
		a.sepPos = a.finiteMax * 1.07
		a.infPos = a.finiteMax * 1.15
	}
	return a
}

// pos maps a value to its plotting position (+Inf → infPos).
func (a xAxis) pos(v float64) float64 {
	if math.IsInf(v, 1) {
		return a.infPos
	}
	return v
}

// apply sets p.X's range, scale and ticks, and adds the ∞ separator.
func (a xAxis) apply(p *plot.Plot) {
	p.X.Min = 0
	if a.hasInf {
		if a.log1p {
			p.X.Max = math.Expm1(math.Log1p(a.finiteMax) * 1.19)
		} else {
			p.X.Max = a.finiteMax * 1.19
		}
	} else {
		p.X.Max = a.finiteMax * 1.02
	}
	if a.log1p {
		p.X.Scale = log1pScale{}
	}
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ticks []plot.Tick
		if a.log1p {
			ticks = log1pTicks(a.finiteMax)
		} else {
			ticks = niceTicks(a.finiteMax)
		}
		if a.hasInf {
			ticks = append(ticks, plot.Tick{Value: a.infPos, Label: "∞"})
		}
		return ticks
	})
	if a.hasInf {
		p.Add(&vline{x: a.sepPos, style: draw.LineStyle{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}})
	}
}

// log1pTicks are 0, 0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, … up to max, thinned so that
// labels do not collide on the log1p scale; unlabeled minor ticks fill in.
func log1pTicks(max float64) []plot.Tick {
	var cands []float64
	cands = append(cands, 0)
	for d := 0.01; d <= max*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 3, 5} {
			if v := d * m; v <= max*1.0001 {
				cands = append(cands, v)
			}
		}
	}
	hi := math.Log1p(max)
	var ticks []plot.Tick
	last := math.Inf(-1)
	for _, v := range cands {
		n := math.Log1p(v) / hi
		if n-last >= 0.07 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			last = n
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// vline is a vertical line across the data area at x.
type vline struct {
	x     float64
	style draw.LineStyle
}

func (v *vline) Plot(c draw.Canvas, p *plot.Plot) {
	x := p.X.Norm(v.x)
	px := c.Min.X + vg.Length(x)*(c.Max.X-c.Min.X)
	c.StrokeLine2(v.style, px, c.Min.Y, px, c.Max.Y)
}

// hline is a horizontal reference line at y across the data area; it is a
// DataRanger in y only so that the axis includes it.
type hline struct {
	y     float64
	style draw.LineStyle
}

func (h *hline) Plot(c draw.Canvas, p *plot.Plot) {
	y := p.Y.Norm(h.y)
	py := c.Min.Y + vg.Length(y)*(c.Max.Y-c.Min.Y)
	c.StrokeLine2(h.style, c.Min.X, py, c.Max.X, py)
}

func (h *hline) DataRange() (xmin, xmax, ymin, ymax float64) {
	return math.Inf(1), math.Inf(-1), h.y, h.y
}

func (h *hline) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(h.style, c.Min.X, y, c.Max.X, y)
}

// drawFigureTitle writes a centred title at the top of c and returns the
// canvas below it.
func drawFigureTitle(c draw.Canvas, title string) draw.Canvas {
	h := vg.Points(titleSize * 1.6)
	fillText(c, titleSize, colBlack, vg.Point{X: c.Center().X, Y: c.Max.Y - vg.Points(6)}, draw.XCenter, draw.YTop, title)
	return draw.Crop(c, 0, 0, 0, -h)
}

// niceStep is the smallest of 1, 2, 2.5, 5 × 10^n that splits a span
// into at most 7 intervals.
func niceStep(span float64) float64 {
	if !(span > 0) || math.IsInf(span, 0) {
		return 1
	}
	base := math.Pow(10, math.Floor(math.Log10(span/7)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if span/(m*base) <= 7 {
			return m * base
		}
	}
	return 10 * base
}

// niceTicks labels 0, step, 2·step, … ≤ max with an unlabelled minor tick
// between labels.
func niceTicks(max float64) []plot.Tick { return rangeTicks(0, max) }

// rangeTicks labels the multiples of a nice step within [lo, hi], with
// unlabelled minor ticks halfway.
func rangeTicks(lo, hi float64) []plot.Tick {
	step := niceStep(hi - lo)
	eps := (hi - lo) * 1e-9
	var ticks []plot.Tick
	for i := math.Ceil((lo - eps) / step * 2); ; i++ {
		v := i * step / 2
		if v == 0 {
			v = 0 // not -0
		}
		if v > hi+eps {
			break
		}
		if math.Mod(i, 2) == 0 {
			// Round away float noise (0.30000000000000004).
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 6, 64)})
		} else {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}
