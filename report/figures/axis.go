package figures

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report/internal/display"
)

// ---- ticks -------------------------------------------------------------------------

// Every tick is labelled: no unlabelled minor ticks.

// niceStep is the smallest of 1, 2, 2.5, 5 × 10^n that splits span into at
// most 7 intervals.
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

// fmtTick formats a tick value without float noise (0.30000000000000004).
func fmtTick(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// linTicks labels the multiples of a nice step within [lo, hi].
func linTicks(lo, hi float64) []plot.Tick {
	step := niceStep(hi - lo)
	eps := (hi - lo) * 1e-9
	var ticks []plot.Tick
	for i := math.Ceil((lo - eps) / step); ; i++ {
		v := i * step
		if v > hi+eps {
			break
		}
		v = math.Round(v/step*1e6) / 1e6 * step
		if v == 0 {
			v = 0 // not -0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: fmtTick(v)})
	}
	return ticks
}

// log1pTicks are the ticks of a log(1+x) axis from 0 to max: every integer
// up to min(5, max), then 10, 20, 50, 100, 200, 500, … (one dropped when it
// would sit closer than 6% of the axis to the previous one). 0.5 is added
// when it sits at least 12% of the axis from 0 (max up to about 28); with
// max < 1 the ticks are linear (0, 0.1, 0.2, … or similar).
func log1pTicks(max float64) []plot.Tick {
	if !(max > 0) {
		return []plot.Tick{{Value: 0, Label: "0"}}
	}
	if max < 1 {
		return linTicks(0, max)
	}
	vals := []float64{0}
	hi := math.Log1p(max)
	if math.Log(1.5)/hi >= 0.12 { // 0 to 1 spans ≥ 20% of the axis: label its middle
		vals = append(vals, 0.5)
	}
	for i := 1.0; i <= math.Min(5, max)+1e-9; i++ {
		vals = append(vals, i)
	}
	last := math.Log1p(vals[len(vals)-1]) / hi
	for d := 10.0; d <= max*(1+1e-9); d *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := d * m
			if v > max*(1+1e-9) {
				break
			}
			if n := math.Log1p(v) / hi; n-last >= 0.06 {
				vals, last = append(vals, v), n
			}
		}
	}
	ticks := make([]plot.Tick, len(vals))
	for i, v := range vals {
		ticks[i] = plot.Tick{Value: v, Label: fmtTick(v)}
	}
	return ticks
}

// valueTicks labels the given values (sorted, distinct), keeping every
// step-th one and always the last, so that at most maxN (≥ 2) remain.
func valueTicks(vals []float64, maxN int) []plot.Tick {
	vals = slices.Compact(slices.Sorted(slices.Values(vals)))
	n := len(vals)
	if n == 0 {
		return nil
	}
	step := 1
	if n > maxN {
		step = (n - 1 + maxN - 2) / (maxN - 1) // ⌈(n−1)/(maxN−1)⌉
	}
	var idx []int
	for i := 0; i < n-1; i += step {
		idx = append(idx, i)
	}
	if len(idx) > 1 && n-1-idx[len(idx)-1] < (step+1)/2 {
		idx = idx[:len(idx)-1] // it would crowd the last
	}
	idx = append(idx, n-1)
	ticks := make([]plot.Tick, len(idx))
	for j, i := range idx {
		ticks[j] = plot.Tick{Value: vals[i], Label: fmtTick(vals[i])}
	}
	return ticks
}

// log1pScale is log(1+x): linear near 0, logarithmic for large x, defined at
// 0 (multiplicative advantages are ≥ 0 and span orders of magnitude).
type log1pScale struct{}

func (log1pScale) Normalize(min, max, x float64) float64 {
	lo, hi := math.Log1p(min), math.Log1p(max)
	return (math.Log1p(x) - lo) / (hi - lo)
}

// symlogScale is sign(x)·log(1 + |x|/c): linear within a few c of 0,
// logarithmic beyond, defined at 0 and for negative x. Advantages of a
// skewed grid span decades (1e-5 … 0.06 on Beta(2,30) η): on a linear axis
// most settings pile up at 0.
type symlogScale struct{ c float64 }

func (s symlogScale) f(x float64) float64 {
	return math.Copysign(math.Log1p(math.Abs(x)/s.c), x)
}

func (s symlogScale) inv(u float64) float64 {
	return math.Copysign(s.c*math.Expm1(math.Abs(u)), u)
}

func (s symlogScale) Normalize(min, max, x float64) float64 {
	lo, hi := s.f(min), s.f(max)
	return (s.f(x) - lo) / (hi - lo)
}

// symlogMinDecades is how many decades the positive values of an axis
// must span (largest / smallest) before it turns symlog.
const symlogMinDecades = 1.5

// symlogConstant returns the linear range c of a symlog axis for vals (a
// power of ten: the smallest positive value's decade, at most 3 decades
// below the largest, so that the axis has at most 4 labelled decades), or
// 0 when a linear axis shows them well: fewer than 3 positive values, or
// spanning less than symlogMinDecades decades.
func symlogConstant(vals []float64) float64 {
	var pos []float64
	for _, v := range vals {
		if v > 0 && !math.IsInf(v, 0) {
			pos = append(pos, v)
		}
	}
	if len(pos) < 3 {
		return 0
	}
	lo, hi := slices.Min(pos), slices.Max(pos)
	if math.Log10(hi/lo) < symlogMinDecades {
		return 0
	}
	return math.Pow(10, math.Floor(math.Log10(math.Max(lo, hi*1e-3))))
}

// fmtSymTick formats a symlog tick compactly: 1e-5 rather than 1e-05 or
// 0.00001 (decade ticks sit close together).
func fmtSymTick(v float64) string {
	if v != 0 && math.Abs(v) < 1e-3 {
		e := math.Floor(math.Log10(math.Abs(v)))
		m := v / math.Pow(10, e)
		return strconv.FormatFloat(math.Round(m*100)/100, 'g', 3, 64) + "e" + strconv.Itoa(int(e))
	}
	return fmtTick(v)
}

// symlogTicks labels 0, ±c·10^k up to |lo|, hi, and 2× and 5× each decade
// when there are at most 3 decades.
func symlogTicks(c, lo, hi float64) []plot.Tick {
	var decades []float64
	for d := c; d <= math.Max(hi, -lo)*(1+1e-9); d *= 10 {
		decades = append(decades, d)
	}
	var vals []float64
	for _, d := range decades {
		vals = append(vals, d)
		if len(decades) <= 3 {
			vals = append(vals, 2*d, 5*d)
		}
	}
	ticks := []plot.Tick{{Value: 0, Label: "0"}}
	for _, v := range vals {
		v = math.Round(v/c) * c // no float noise: 0.0001·10 = 0.0010000000000000002
		if v <= hi*(1+1e-9) {
			ticks = append(ticks, plot.Tick{Value: v, Label: fmtSymTick(v)})
		}
		if -v >= lo*(1+1e-9) && lo < 0 {
			ticks = append([]plot.Tick{{Value: -v, Label: fmtSymTick(-v)}}, ticks...)
		}
	}
	return ticks
}

// ---- the advantage axis, with a position for +Inf ------------------------------------

// advAxis lays out an advantage metric that may be +Inf: finite values on
// [0, finiteMax] (linear, symlog or log(1+x)), +Inf at infPos, right of a
// dashed separator at sepPos, with the tick "∞". Both ends have a margin so
// that markers and their labels never sit on the axis ends.
type advAxis struct {
	log1p                     bool
	symlog                    float64 // linear range c of a symlog axis (0: none)
	finiteMax, sepPos, infPos float64
	min, max                  float64
	hasInf                    bool
}

// newAdvAxis lays out vals on a log(1+x) axis (log1p) or else on a linear
// axis that turns symlog when the values span decades (symlogConstant).
func newAdvAxis(vals []float64, log1p bool) advAxis {
	a := advAxis{log1p: log1p}
	if !log1p {
		a.symlog = symlogConstant(vals)
	}
	for _, v := range vals {
		if math.IsInf(v, 1) {
			a.hasInf = true
		} else if !math.IsNaN(v) && v > a.finiteMax {
			a.finiteMax = v
		}
	}
	if !(a.finiteMax > 0) {
		a.finiteMax = 1
	}
	if log1p {
		a.finiteMax = roundUpTick(a.finiteMax)
	}
	f, inv := func(x float64) float64 { return x }, func(u float64) float64 { return u }
	if log1p {
		f, inv = math.Log1p, math.Expm1
	}
	if a.symlog > 0 {
		s := symlogScale{a.symlog}
		f, inv = s.f, s.inv
	}
	u := f(a.finiteMax)
	a.min = inv(-0.05 * u)
	a.sepPos, a.infPos = inv(1.08*u), inv(1.16*u)
	if a.hasInf {
		a.max = inv(1.22 * u)
	} else {
		a.max = inv(1.06 * u)
	}
	return a
}

// roundUpTick extends a log(1+x) axis end v to the next tick value (an
// integer up to 5, then 10, 20, 50, …) when that widens the axis by at most
// 15%, so that the largest values sit between two labelled ticks.
func roundUpTick(v float64) float64 {
	if v < 1 {
		return v
	}
	next := math.Ceil(v - 1e-9)
	if v > 5 {
		next = 10
		for d := 10.0; next < v; d *= 10 {
			for _, m := range []float64{1, 2, 5, 10} {
				if next = d * m; next >= v {
					break
				}
			}
		}
	}
	if math.Log1p(next) <= 1.15*math.Log1p(v) {
		return next
	}
	return v
}

// pos maps a value to its plotting position (+Inf → infPos).
func (a advAxis) pos(v float64) float64 {
	if math.IsInf(v, 1) {
		return a.infPos
	}
	return v
}

func (a advAxis) spec(label string) axisSpec {
	s := axisSpec{label: label, min: a.min, max: a.max}
	tickMax := a.max
	if a.hasInf {
		tickMax = a.finiteMax * (1 + 1e-9)
	}
	switch {
	case a.log1p:
		s.scale = log1pScale{}
		s.ticks = log1pTicks(tickMax)
	case a.symlog > 0:
		s.scale = symlogScale{a.symlog}
		s.ticks = symlogTicks(a.symlog, 0, tickMax)
		s.label += fmt.Sprintf(" (symlog, linear below %s)", fmtSymTick(a.symlog))
	default:
		s.ticks = linTicks(0, tickMax)
	}
	if a.hasInf {
		s.ticks = append(s.ticks, plot.Tick{Value: a.infPos, Label: "∞"})
	}
	return s
}

// sep is the dashed line between finite values and ∞ (none without ∞).
func (a advAxis) sep() []refLine {
	if !a.hasInf {
		return nil
	}
	return []refLine{{v: a.sepPos, style: draw.LineStyle{Color: color.Gray{Y: 110}, Width: 1, Dashes: []vg.Length{4, 3}}}}
}

// ---- mechanisms: what figures ask of a pets.Kind -------------------------------

// petColor is the mechanism's colour (pets.Look.Color).
func petColor(k pets.Kind) color.NRGBA {
	c := k.Spec().Look.Color
	return color.NRGBA{R: c.R, G: c.G, B: c.B, A: 0xff}
}

// markerGlyphs draws each pets.Marker.
var markerGlyphs = [...]draw.GlyphDrawer{
	pets.MarkerSquare:   draw.SquareGlyph{},
	pets.MarkerCircle:   draw.CircleGlyph{},
	pets.MarkerRing:     draw.RingGlyph{},
	pets.MarkerBox:      draw.BoxGlyph{},
	pets.MarkerPyramid:  draw.PyramidGlyph{},
	pets.MarkerCross:    draw.CrossGlyph{},
	pets.MarkerTriangle: draw.TriangleGlyph{},
}

// petGlyph is the mechanism's marker (pets.Look.Marker; Supports refuses,
// at pets.Register, one this table does not draw, and TestEveryMarkerDrawn
// checks it has every pets.Marker).
func petGlyph(k pets.Kind) draw.GlyphDrawer { return markerGlyphs[k.Spec().Look.Marker] }

// Supports says whether the figures draw a kind with the spec sp
// (pets.Serve, asked by pets.Register): nil, or a sentence saying what
// they cannot draw: a marker they have no glyph for.
func Supports(sp pets.Spec) error {
	if int(sp.Look.Marker) >= len(markerGlyphs) {
		return fmt.Errorf("its marker %d is none of the %d shapes the figures draw (pets.MarkerSquare … MarkerTriangle)", sp.Look.Marker, len(markerGlyphs))
	}
	return nil
}

var _ = pets.Serve("report's figures", Supports)

// isClean reports whether k is the clean reference (none: its "release" is
// the raw labels), drawn as a dashed line.
func isClean(k pets.Kind) bool { return k.Spec().Release == pets.ReleaseRaw }

// isSilent reports whether k releases nothing (bot), drawn as a dotted
// line or a point.
func isSilent(k pets.Kind) bool { return k.Spec().Release == pets.ReleaseNothing }

// privatized reports whether k's models train on a release (neither
// reference).
func privatized(k pets.Kind) bool { return k.Spec().Release.Written() }

// twoParams reports whether k takes both a bag size and ε: one curve per
// k across ε (llp_lap, llp_geom).
func twoParams(k pets.Kind) bool { t := k.Spec().Takes; return t.K && t.Epsilon }

// variesK reports whether k's curves run across the bag size (it takes k
// and no ε: llp); the others' run across ε.
func variesK(k pets.Kind) bool { t := k.Spec().Takes; return t.K && !t.Epsilon }

// plainName names a mechanism without parameters in words: "no PET (clean
// labels)", "bot (nothing released)".
func plainName(k pets.Kind) string {
	l := k.Spec().Look
	return l.Name + " (" + l.Plain + ")"
}

// familyTitle is the title of the panel of family fam holding the kinds of
// keys: "RR", or "RR and RR+prior" when another member is there.
func familyTitle(fam pets.Kind, keys []curveKey) string {
	names := []string{display.PetName(fam)}
	for _, k := range keys {
		if n := display.PetName(k.pet); k.pet != fam && k.pet.Family() == fam && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, " and ")
}

// fmtParam formats a privacy parameter compactly (0.0625, 8, 1e-05, ∞).
func fmtParam(v float64) string {
	if math.IsInf(v, 1) {
		return "∞"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// paramLabel describes a setting by its parameters: "ε=1", "k=8",
// "k=8, ε=1".
// A mechanism without parameters is described in words ("clean labels",
// "nothing released": pets.Look.Plain).
func paramLabel(pet pets.Kind, k int, eps float64) string {
	sp := pet.Spec()
	if !sp.Takes.K && !sp.Takes.Epsilon {
		return sp.Look.Plain
	}
	var parts []string
	if sp.Takes.K {
		parts = append(parts, "k="+strconv.Itoa(k))
	}
	if sp.Takes.Epsilon && !(sp.Takes.OptionalEpsilon && eps == 0) { // value_bags without ε: exact
		parts = append(parts, "ε="+fmtParam(eps))
	}
	return strings.Join(parts, ", ")
}

func withAlpha(c color.NRGBA, a uint8) color.NRGBA { c.A = a; return c }

// ---- legend thumbnails -------------------------------------------------------------

func lineThumb(sty draw.LineStyle) func(draw.Canvas, vg.Rectangle) {
	return func(c draw.Canvas, r vg.Rectangle) {
		y := (r.Min.Y + r.Max.Y) / 2
		c.StrokeLine2(sty, r.Min.X, y, r.Max.X, y)
	}
}

func glyphThumb(sty draw.GlyphStyle) func(draw.Canvas, vg.Rectangle) {
	return func(c draw.Canvas, r vg.Rectangle) {
		c.DrawGlyph(sty, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: (r.Min.Y + r.Max.Y) / 2})
	}
}

func lineGlyphThumb(ln *draw.LineStyle, g draw.GlyphStyle) func(draw.Canvas, vg.Rectangle) {
	return func(c draw.Canvas, r vg.Rectangle) {
		if ln != nil {
			lineThumb(*ln)(c, r)
		}
		glyphThumb(g)(c, r)
	}
}
