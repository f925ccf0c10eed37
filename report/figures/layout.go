package figures

import (
	"cmp"
	"slices"

	"gonum.org/v1/plot/vg"
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
