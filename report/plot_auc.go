package report

import (
	"cmp"
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

// metricInfo gives the axis label, title and scale of a summary metric.
func metricInfo(metric string) (title, xlabel string, log1p bool) {
	switch metric {
	case "eadv":
		return "Test AUC vs expected additive advantage", "expected additive advantage of the Bayes attacker (probability, 0–1)", false
	case "ma_p98":
		return "Test AUC vs 98th-percentile multiplicative advantage", "98th-percentile multiplicative advantage |Δ log-odds| (nats, log(1+x) scale)", true
	}
	if strings.HasPrefix(metric, "ma_p") || metric == "ma_max" {
		return "Test AUC vs " + metric, metric + " |Δ log-odds| (nats, log(1+x) scale)", true
	}
	return "Test AUC vs " + metric, metric, false
}

type aucPoint struct {
	x, y, se float64 // x already mapped (∞ → infPos)
	k        int64
	eps      float64
}

type aucCurve struct {
	pet    string
	legend string
	color  color.Color
	width  vg.Length
	pts    []aucPoint
	label  func(p aucPoint) string // point labels (nil: none)
	ends   bool                    // label only first and last point
}

// PlotAUCvsAdvantage draws the paper's Figure 3 from a summary (Summarize's
// output) and writes pathNoExt.png and pathNoExt.svg: x = metric (a summary
// column: "eadv" for the expected additive advantage, "ma_p98" for the
// 98th-percentile multiplicative advantage), y = auc_mean with ±auc_se
// error bars where auc_se > 0. One curve per mechanism: RR across ε, LLP
// across k, and for the two-parameter mechanisms (llp_lap, llp_geom) one
// curve per k across ε (shades from light = small k to dark = large k);
// bot (nothing released) is a single point; the clean model (none) is a horizontal dashed
// reference line. RR and LLP curves have their end points labelled with
// their parameter.
//
// +Inf metric values (ma_p98 of LLP with frequent homogeneous bags) are
// drawn at a position marked "∞" at the right edge, beyond a dashed
// separator, and a note under the axis says so. Multiplicative metrics use
// a log(1+x) x axis. Rows with NaN AUC or NaN metric (no audit) are left
// out; if nothing remains the error wraps ErrNoData and no file is written.
func PlotAUCvsAdvantage(summary *data.Table, metric, pathNoExt string) error {
	if summary == nil {
		return fmt.Errorf("report: PlotAUCvsAdvantage: nil summary: %w", ErrNoData)
	}
	if err := checkTable(summary); err != nil {
		return fmt.Errorf("report: PlotAUCvsAdvantage: %w", err)
	}
	c := &cols{t: summary, what: "summary"}
	setting, pet, k := c.str("setting"), c.str("pet"), c.i64("k")
	eps, auc, se, mv := c.f64("epsilon"), c.f64("auc_mean"), c.f64("auc_se"), c.f64(metric)
	if c.err != nil {
		return c.err
	}
	title, xlabel, log1p := metricInfo(metric)

	type row struct {
		key     settingKey
		x, y, s float64
	}
	var rows, clean []row
	var xs []float64
	for i := range summary.Rows() {
		r := row{settingKey{setting[i], pet[i], k[i], eps[i]}, mv[i], auc[i], se[i]}
		if math.IsNaN(r.y) || math.IsInf(r.y, 0) {
			continue
		}
		if pet[i] == "none" {
			clean = append(clean, r)
			continue
		}
		if math.IsNaN(r.x) || math.IsInf(r.x, -1) {
			continue
		}
		rows = append(rows, r)
		xs = append(xs, r.x)
	}
	if len(rows) == 0 {
		return fmt.Errorf("report: PlotAUCvsAdvantage(%s): no setting has both auc_mean and %s: %w", metric, metric, ErrNoData)
	}
	slices.SortFunc(rows, func(a, b row) int { return compareKeys(a.key, b.key) })
	slices.SortFunc(clean, func(a, b row) int { return compareKeys(a.key, b.key) })
	ax := newXAxis(xs, log1p)

	// Group rows into curves.
	var curves []*aucCurve
	byID := map[string]*aucCurve{}
	perK := map[string][]int64{} // two-parameter pet → its k values
	for _, r := range rows {
		p := r.key.pet
		id := p
		if p == "llp_lap" || p == "llp_geom" {
			id = p + "/" + strconv.FormatInt(r.key.k, 10)
		}
		cv := byID[id]
		if cv == nil {
			cv = &aucCurve{pet: p, width: vg.Points(1.5)}
			switch p {
			case "bot":
				cv.legend = "bot (nothing released)"
			case "rr":
				cv.legend = "RR (ε varies)"
				cv.label = func(q aucPoint) string { return "ε=" + fmtParam(q.eps) }
				cv.ends = true
				cv.width = vg.Points(2)
			case "llp":
				cv.legend = "LLP (k varies)"
				cv.label = func(q aucPoint) string { return "k=" + strconv.FormatInt(q.k, 10) }
				cv.ends = true
				cv.width = vg.Points(2)
			case "llp_lap", "llp_geom":
				cv.legend = "k=" + strconv.FormatInt(r.key.k, 10)
				cv.width = vg.Points(1.2)
				perK[p] = append(perK[p], r.key.k)
			default:
				cv.legend = petName(p) + " (parameters vary)"
			}
			byID[id] = cv
			curves = append(curves, cv)
		}
		cv.pts = append(cv.pts, aucPoint{ax.pos(r.x), r.y, r.s, r.key.k, r.key.eps})
	}
	for _, cv := range curves {
		switch cv.pet {
		case "llp_lap", "llp_geom":
			ks := perK[cv.pet]
			i := slices.Index(ks, cv.pts[0].k)
			t := 0.5
			if len(ks) > 1 {
				t = float64(i) / float64(len(ks)-1)
			}
			cv.color = shade(petColor(cv.pet), t)
		default:
			cv.color = petColor(cv.pet)
		}
		// Rows are sorted by (k, ε), which is the curve's parameter order.
		slices.SortStableFunc(cv.pts, func(a, b aucPoint) int { return cmp.Or(cmp.Compare(a.k, b.k), cmp.Compare(a.eps, b.eps)) })
	}

	// Legend: mechanisms in canonical order, per-k curves under a heading.
	leg := newLegend()
	var cleanLines []*hline
	for _, r := range clean {
		h := &hline{y: r.y, style: draw.LineStyle{Color: colBlack, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(6), vg.Points(4)}}}
		cleanLines = append(cleanLines, h)
		name := "no PET: AUC " + strconv.FormatFloat(r.y, 'f', 3, 64)
		if len(clean) > 1 {
			name += " (" + r.key.setting + ")"
		}
		leg.Add(name, h)
	}
	lastPet := ""
	for _, cv := range curves {
		if (cv.pet == "llp_lap" || cv.pet == "llp_geom") && cv.pet != lastPet {
			leg.Add(petName(cv.pet)+" (ε varies), per k:", noThumb{})
		}
		lastPet = cv.pet
		sty := draw.GlyphStyle{Color: cv.color, Radius: vg.Points(3), Shape: petGlyph(cv.pet)}
		ln := draw.LineStyle{Color: cv.color, Width: cv.width}
		leg.Add(cv.legend, lineThumb{ln, len(cv.pts) > 1}, glyphThumb{sty})
	}
	note := ""
	if ax.hasInf {
		note = "Points right of the dashed line have " + metric + " = ∞: labels fully exposed (e.g. LLP bags of all-equal labels)."
	}

	build := func() (*plot.Plot, error) {
		p := newPlot(title, xlabel, "test AUC (mean ± SE over trials, best LR)")
		ax.apply(p)
		for _, h := range cleanLines {
			p.Add(h)
		}
		var ymin, ymax = math.Inf(1), math.Inf(-1)
		for _, cv := range curves {
			xy := make(plotter.XYs, len(cv.pts))
			var eb errPoints
			for i, q := range cv.pts {
				xy[i] = plotter.XY{X: q.x, Y: q.y}
				ymin, ymax = math.Min(ymin, q.y-q.se), math.Max(ymax, q.y+q.se)
				if q.se > 0 {
					eb = append(eb, q)
				}
			}
			if len(xy) > 1 {
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				l.LineStyle = draw.LineStyle{Color: cv.color, Width: cv.width}
				p.Add(l)
			}
			if len(eb) > 0 {
				e, err := plotter.NewYErrorBars(eb)
				if err != nil {
					return nil, err
				}
				e.LineStyle = draw.LineStyle{Color: cv.color, Width: vg.Points(1)}
				e.CapWidth = vg.Points(5)
				p.Add(e)
			}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			s.GlyphStyle = draw.GlyphStyle{Color: cv.color, Radius: vg.Points(3), Shape: petGlyph(cv.pet)}
			p.Add(s)
			if cv.label != nil {
				var lx plotter.XYLabels
				for i, q := range cv.pts {
					if cv.ends && i != 0 && i != len(cv.pts)-1 {
						continue
					}
					lx.XYs = append(lx.XYs, plotter.XY{X: q.x, Y: q.y})
					lx.Labels = append(lx.Labels, cv.label(q))
				}
				lb, err := plotter.NewLabels(lx)
				if err != nil {
					return nil, err
				}
				// RR labels go above-left of their point, LLP labels
				// below-right, so the two curves' labels do not collide
				// where both meet the clean model.
				above := cv.pet == "rr"
				for i := range lb.TextStyle {
					lb.TextStyle[i].Font = fontOf(annotSize)
					lb.TextStyle[i].Color = cv.color
					if above {
						lb.TextStyle[i].XAlign, lb.TextStyle[i].YAlign = draw.XRight, draw.YBottom
					} else {
						lb.TextStyle[i].XAlign, lb.TextStyle[i].YAlign = draw.XLeft, draw.YTop
					}
				}
				lb.Offset = vg.Point{X: vg.Points(5), Y: -vg.Points(4)}
				if above {
					lb.Offset = vg.Point{X: -vg.Points(5), Y: vg.Points(4)}
				}
				p.Add(lb)
			}
		}
		for _, r := range clean {
			ymin, ymax = math.Min(ymin, r.y), math.Max(ymax, r.y)
		}
		pad := math.Max(0.02, 0.06*(ymax-ymin))
		p.Y.Min, p.Y.Max = ymin-pad, ymax+pad
		p.Y.Tick.Marker = plot.TickerFunc(rangeTicks)
		return p, nil
	}
	if _, err := build(); err != nil {
		return fmt.Errorf("report: PlotAUCvsAdvantage: %w", err)
	}
	w := 9 * vg.Inch
	h := max(5*vg.Inch, legendHeight(&leg)+vg.Inch)
	return saveFigure(pathNoExt, w, h, func(dc draw.Canvas) {
		p, _ := build()
		pc := splitLegend(dc, &leg, vg.Points(titleSize*2))
		if note != "" {
			fillText(pc, annotSize, colRR, vg.Point{X: pc.Min.X + vg.Points(8), Y: pc.Min.Y + vg.Points(4)}, draw.XLeft, draw.YBottom, note)
			pc = draw.Crop(pc, 0, 0, vg.Points(annotSize*1.8), 0)
		}
		p.Draw(draw.Crop(pc, 0, 0, 0, -vg.Points(4)))
	})
}

// errPoints adapts aucPoints to plotter.XYer and plotter.YErrorer.
type errPoints []aucPoint

func (e errPoints) Len() int                        { return len(e) }
func (e errPoints) XY(i int) (float64, float64)     { return e[i].x, e[i].y }
func (e errPoints) YError(i int) (float64, float64) { return e[i].se, e[i].se }

// lineThumb and glyphThumb draw legend thumbnails.
type lineThumb struct {
	sty  draw.LineStyle
	show bool
}

func (l lineThumb) Thumbnail(c *draw.Canvas) {
	if !l.show {
		return
	}
	y := c.Center().Y
	c.StrokeLine2(l.sty, c.Min.X, y, c.Max.X, y)
}

type glyphThumb struct{ sty draw.GlyphStyle }

func (g glyphThumb) Thumbnail(c *draw.Canvas) { c.DrawGlyph(g.sty, c.Center()) }
