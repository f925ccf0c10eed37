package figures

import (
	"cmp"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Point-label placement: each label tries positions around its point, in a
// fixed order, at two distances, and takes the first whose text box lies
// inside the data area and touches no line segment, marker, error bar or
// label already placed. Labels go in priority order; one that fits nowhere
// is left out.

// seg is a line segment in canvas coordinates.
type seg struct{ a, b vg.Point }

// obstacles are what a label must not touch, in canvas coordinates.
type obstacles struct {
	segs  []seg
	boxes []vg.Rectangle // markers and error bars
}

// placedLabel is a label drawn at anchor (text aligned left/bottom) with
// text box box.
type placedLabel struct {
	label  pointLabel
	anchor vg.Point
	box    vg.Rectangle
}

const labelPad = 1.5 // clearance around a label's box, points

// placeLabels places labels (at the canvas points pos gives) inside area,
// avoiding o and each other.
func placeLabels(area vg.Rectangle, labels []pointLabel, o obstacles, pos func(pointLabel) vg.Point) (placed []placedLabel, dropped []pointLabel) {
	order := slices.Clone(labels)
	slices.SortStableFunc(order, func(a, b pointLabel) int { return cmp.Compare(a.prio, b.prio) })
	inner := vg.Rectangle{Min: vg.Point{X: area.Min.X + 1, Y: area.Min.Y + 1}, Max: vg.Point{X: area.Max.X - 1, Y: area.Max.Y - 1}}
	// Directions, preferred first: right, above-right, below-right, above,
	// below, above-left, below-left, left.
	dirs := [][2]vg.Length{{1, 0}, {0.7, 0.7}, {0.7, -0.7}, {0, 1}, {0, -1}, {-0.7, 0.7}, {-0.7, -0.7}, {-1, 0}}
	for _, l := range order {
		sty := textStyle(annotSize, l.color)
		rel := sty.Rectangle(l.text) // box relative to the anchor
		w, h := rel.Max.X-rel.Min.X, rel.Max.Y-rel.Min.Y
		p := pos(l)
		ok := false
		for _, dist := range []vg.Length{glyphR + 3, 2.2 * (glyphR + 3)} {
			for _, d := range dirs {
				// The box's nearest edge is dist from p along d.
				cx := p.X + d[0]*(dist+w/2)
				cy := p.Y + d[1]*(dist+h/2)
				box := vg.Rectangle{Min: vg.Point{X: cx - w/2, Y: cy - h/2}, Max: vg.Point{X: cx + w/2, Y: cy + h/2}}
				if !fits(box, inner, o, placed) {
					continue
				}
				placed = append(placed, placedLabel{label: l, anchor: box.Min.Sub(rel.Min), box: box})
				ok = true
				break
			}
			if ok {
				break
			}
		}
		if !ok {
			dropped = append(dropped, l)
		}
	}
	return placed, dropped
}

// fits reports whether box lies inside area and clear of o and placed.
func fits(box, area vg.Rectangle, o obstacles, placed []placedLabel) bool {
	if box.Min.X < area.Min.X || box.Min.Y < area.Min.Y || box.Max.X > area.Max.X || box.Max.Y > area.Max.Y {
		return false
	}
	padded := grow(box, labelPad)
	for _, q := range placed {
		if overlaps(padded, q.box) {
			return false
		}
	}
	for _, b := range o.boxes {
		if overlaps(padded, b) {
			return false
		}
	}
	for _, s := range o.segs {
		if segHitsRect(s, padded) {
			return false
		}
	}
	return true
}

func grow(r vg.Rectangle, d vg.Length) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: r.Min.X - d, Y: r.Min.Y - d}, Max: vg.Point{X: r.Max.X + d, Y: r.Max.Y + d}}
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

// segHitsRect reports whether segment s meets rectangle r (Liang–Barsky
// clipping: the segment's parameter interval inside all four slabs is
// non-empty).
func segHitsRect(s seg, r vg.Rectangle) bool {
	t0, t1 := 0.0, 1.0
	dx, dy := float64(s.b.X-s.a.X), float64(s.b.Y-s.a.Y)
	for _, e := range [4][2]float64{
		{-dx, float64(s.a.X - r.Min.X)}, {dx, float64(r.Max.X - s.a.X)},
		{-dy, float64(s.a.Y - r.Min.Y)}, {dy, float64(r.Max.Y - s.a.Y)},
	} {
		p, q := e[0], e[1]
		if p == 0 {
			if q < 0 {
				return false
			}
			continue
		}
		t := q / p
		if p < 0 {
			t0 = max(t0, t)
		} else {
			t1 = min(t1, t)
		}
		if t0 > t1 {
			return false
		}
	}
	return true
}

// labelPlotter places and draws the point labels (last, on top).
type labelPlotter struct{ p *panel }

func (l *labelPlotter) Plot(c draw.Canvas, pl *plot.Plot) {
	tx, ty := pl.Transforms(&c)
	p := l.p
	p.placed, p.dropped = nil, nil
	if len(p.labels) == 0 {
		return
	}
	p.obst = p.obstaclesOn(c.Rectangle, tx, ty)
	p.placed, p.dropped = placeLabels(c.Rectangle, p.labels, p.obst, func(l pointLabel) vg.Point {
		if l.of != nil {
			return p.at(l.of, l.idx, tx, ty)
		}
		return vg.Point{X: tx(l.x), Y: ty(l.y)}
	})
	for _, pl := range p.placed {
		sty := textStyle(annotSize, pl.label.color)
		c.FillText(sty, pl.anchor, pl.label.text)
	}
}

// obstaclesOn returns the panel's lines, bars and markers in canvas
// coordinates.
func (p *panel) obstaclesOn(area vg.Rectangle, tx, ty func(float64) vg.Length) obstacles {
	var o obstacles
	for _, l := range p.refs {
		if l.horizontal {
			y := ty(l.v)
			o.segs = append(o.segs, seg{vg.Point{X: area.Min.X, Y: y}, vg.Point{X: area.Max.X, Y: y}})
		} else {
			x := tx(l.v)
			o.segs = append(o.segs, seg{vg.Point{X: x, Y: area.Min.Y}, vg.Point{X: x, Y: area.Max.Y}})
		}
	}
	for _, sr := range p.series {
		for i, q := range sr.pts {
			truePt := vg.Point{X: tx(q.X), Y: ty(q.Y)}
			pt := p.at(sr, i, tx, ty)
			d := pt.Sub(truePt)
			if sr.line != nil && i > 0 {
				o.segs = append(o.segs, seg{vg.Point{X: tx(sr.pts[i-1].X), Y: ty(sr.pts[i-1].Y)}, truePt})
			}
			if d.X != 0 || d.Y != 0 {
				o.segs = append(o.segs, seg{truePt, pt})
			}
			if lo, hi, ok := sr.ybar(i); ok {
				o.boxes = append(o.boxes, vg.Rectangle{Min: vg.Point{X: pt.X - capWidth/2, Y: ty(lo) + d.Y}, Max: vg.Point{X: pt.X + capWidth/2, Y: ty(hi) + d.Y}})
			}
			if e := errAt(sr.xerr, i); e > 0 {
				o.boxes = append(o.boxes, vg.Rectangle{Min: vg.Point{X: tx(q.X-e) + d.X, Y: pt.Y - capWidth/2}, Max: vg.Point{X: tx(q.X+e) + d.X, Y: pt.Y + capWidth/2}})
			}
			if sr.glyph != nil {
				r := p.glyphOf(sr, i).Radius + 0.5
				o.boxes = append(o.boxes, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
			}
		}
	}
	return o
}
