package figures

import (
	"cmp"
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// The learning curves: per setting, the training loss and the test metric
// of every learning rate across epochs (Run.Curve, learning_curves.csv).

// curvesName is the learning-curve figure's file name (without extension).
const curvesName = "learning_curves"

// curvesCaption is the figure's caption in report.md.
const curvesCaption = "Per setting (two panels side by side), the mean training loss over each epoch and the test AUC " +
	"(test accuracy for C ≥ 3 classes) of the model at its end, one colour and marker per learning rate, mean ± SE over " +
	"trials (from learning_curves.csv). With one epoch each run's curve is a single point: the panels then show " +
	"the end of that epoch against the learning rate. A loss beyond ±1e4 (a diverged run) is drawn as an open triangle " +
	"at the top; a loss axis spanning decades is symlog."

// lossCap bounds the training losses a loss axis shows: a mean loss
// beyond ±lossCap is a diverged run (pipeline's divergence warning uses
// the same 1e4), drawn at the axis' top instead.
const lossCap = 1e4

// lrHues are the colours of the learning rates, from the smallest: an
// ordered sweep of saturated hues, each dark enough on white, none two
// alike. More learning rates than hues reuse them with another marker.
var lrHues = []color.NRGBA{
	{R: 0x44, G: 0x1a, B: 0x8c, A: 0xff}, // violet
	{R: 0x1f, G: 0x5f, B: 0xc4, A: 0xff}, // blue
	{R: 0x0e, G: 0x8c, B: 0x99, A: 0xff}, // teal
	{R: 0x2e, G: 0x8b, B: 0x2e, A: 0xff}, // green
	{R: 0x8a, G: 0x8b, B: 0x10, A: 0xff}, // olive
	{R: 0xd9, G: 0x7a, B: 0x00, A: 0xff}, // orange
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, // red
	{R: 0x80, G: 0x00, B: 0x40, A: 0xff}, // wine
}

// lrGlyphs are the learning rates' markers, in turn.
var lrGlyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.BoxGlyph{},
	draw.RingGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// lrStyle is learning rate i's (of the figure's sorted ones) colour and
// marker.
func lrStyle(i int) (color.NRGBA, draw.GlyphDrawer) {
	return lrHues[i%len(lrHues)], lrGlyphs[(i+i/len(lrHues))%len(lrGlyphs)]
}

// curveSetting is one setting of the figure: its runs with a curve.
type curveSetting struct {
	dataset, config, id string
	run                 report.Run // the first run: mechanism and parameters
	runs                []report.Run
}

// title names the setting by its mechanism's look and parameters, and
// what sets it apart from settings of the same parameters (apart:
// priorApart's, e.g. rr_prior's stage fraction).
func (s *curveSetting) title(apart map[curveKey]string) string {
	r := s.run
	if !r.Pet.Spec().Takes.K && !r.Pet.Spec().Takes.Epsilon {
		return plainName(r.Pet)
	}
	t := display.PetName(r.Pet) + " " + paramLabel(r.Pet, r.K, r.Epsilon) + bagsText(r.Bags)
	if a := apart[s.key()]; a != "" {
		t += ", " + a
	}
	return t
}

// key is the setting's pointKey.
func (s *curveSetting) key() curveKey {
	return pointKey(s.id, s.run.Pet, s.run.K, s.run.Bags, s.run.Epsilon)
}

// curveAgg is the mean and its SE over trials (0 with one trial).
type curveAgg struct {
	mean, se float64
	n        int
}

func aggregate(vs []float64) curveAgg {
	n := len(vs)
	if n == 0 {
		return curveAgg{mean: math.NaN()}
	}
	var sum float64
	for _, v := range vs {
		sum += v
	}
	m := sum / float64(n)
	a := curveAgg{mean: m, n: n}
	if n > 1 {
		var ss float64
		for _, v := range vs {
			ss += (v - m) * (v - m)
		}
		a.se = math.Sqrt(ss / float64(n-1) / float64(n))
	}
	return a
}

// learningCurvesFigure draws the runs' learning curves: one pair of panels
// per setting (training loss, test metric), in canonical setting order,
// one series per learning rate (mean ± SE over trials at each epoch), each
// learning rate its own hue and marker in every panel. When no run has
// more than one epoch, x is the learning rate (log scale) and each series
// a single point: the figure says so. Runs without a curve (bot, records
// from before curves) are left out; none with one is ErrNoData. Runs of
// different class counts are an error (one metric per figure).
func learningCurvesFigure(runs []report.Run) (*figure, error) {
	c, err := collectCurves(runs)
	if err != nil {
		return nil, err
	}
	var panels []*panel
	var ckeys []curveKey
	for _, s := range c.settings {
		ckeys = append(ckeys, s.key())
	}
	apart := priorApart(ckeys)
	for _, s := range c.settings {
		name := s.title(apart)
		if len(c.datasets) > 1 {
			name += " (" + shortDataset(s.dataset) + ")"
		}
		panels = append(panels, c.settingPanels(s, name)...)
	}
	cols := 4
	if len(c.settings) == 1 {
		cols = 2
	}
	return &figure{title: "Learning curves: training loss and " + c.metric.String() + " per epoch" + report.ClassesTitle(c.classes),
		w: vg.Length(cols) * 3.2 * vg.Inch, cols: cols, cellH: 2.7 * vg.Inch, legend: c.legend(), panels: panels,
		note: c.notes()}, nil
}

// curves is what learningCurvesFigure draws: the settings with a curve in
// canonical order, their learning rates (sorted), the metric and its
// values (one axis for every panel), the x axis, and what its panels found
// (the most trials of a point, a loss off the scale).
type curves struct {
	settings []*curveSetting
	lrs      []float64
	datasets map[string]bool
	classes  int
	oneEpoch bool // no run has more than one epoch: x is the learning rate
	metric   report.Metric
	mvals    []float64
	xspec    axisSpec

	trialsMax int
	offScale  bool
}

// collectCurves groups the runs that have a curve by setting (refusing
// runs of different class counts) and sets the shared axes.
func collectCurves(runs []report.Run) (*curves, error) {
	byKey := map[[3]string]*curveSetting{}
	c := &curves{datasets: map[string]bool{}}
	maxEpoch := 0
	lrset := map[float64]bool{}
	for _, r := range runs {
		if len(r.Curve) == 0 {
			continue
		}
		rc := max(r.Classes, 2)
		if c.classes != 0 && rc != c.classes {
			return nil, fmt.Errorf("figures: learning curves: runs of %d and of %d label classes: draw each class count on its own", c.classes, rc)
		}
		c.classes = rc
		k := [3]string{r.Dataset, r.ConfigID, r.Setting}
		s := byKey[k]
		if s == nil {
			s = &curveSetting{dataset: r.Dataset, config: r.ConfigID, id: r.Setting, run: r}
			byKey[k] = s
			c.settings = append(c.settings, s)
		}
		s.runs = append(s.runs, r)
		lrset[r.LR] = true
		c.datasets[r.Dataset] = true
		for _, p := range r.Curve {
			maxEpoch = max(maxEpoch, p.Epoch)
		}
	}
	if len(c.settings) == 0 {
		return nil, fmt.Errorf("figures: learning curves: no run with a learning curve: %w", ErrNoData)
	}
	slices.SortFunc(c.settings, func(a, b *curveSetting) int {
		return cmp.Or(display.SettingOrder(a.run.Pet, a.run.K, a.run.Epsilon, a.id, b.run.Pet, b.run.K, b.run.Epsilon, b.id),
			cmp.Compare(a.dataset, b.dataset), cmp.Compare(a.config, b.config))
	})
	c.lrs = slices.Sorted(func(yield func(float64) bool) {
		for lr := range lrset {
			if !yield(lr) {
				return
			}
		}
	})
	c.oneEpoch = maxEpoch <= 1
	c.metric = report.MetricFor(c.classes)
	for _, s := range c.settings { // the shared metric axis
		for _, r := range s.runs {
			for _, p := range r.Curve {
				if v := c.metricOf(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
					c.mvals = append(c.mvals, v)
				}
			}
		}
	}
	if c.oneEpoch {
		c.xspec = lrAxis(c.lrs)
	} else {
		var eps []float64
		for e := 1; e <= maxEpoch; e++ {
			eps = append(eps, float64(e))
		}
		c.xspec = axisSpec{label: "epoch", min: 0.6, max: float64(maxEpoch) + 0.4, ticks: valueTicks(eps, 10)}
	}
	return c, nil
}

func (c *curves) metricOf(p report.EpochPoint) float64 {
	if c.metric == report.MetricAccuracy {
		return p.TestAccuracy
	}
	return p.TestAUC
}

func (c *curves) lrIndex(lr float64) int { i, _ := slices.BinarySearch(c.lrs, lr); return i }

// curveCell is the trials' losses and metrics at one learning rate and
// epoch.
type curveCell struct{ loss, metric []float64 }

// lrSeries is one learning rate's points in a setting's panels.
type lrSeries struct {
	lr       int
	loss     []xy
	lossSE   []float64
	met      []xy
	metSE    []float64
	offEpoch []float64 // x of the epochs whose mean loss is off the scale
}

// cells are setting s's trials per (learning rate, epoch), and their keys
// in order.
func (c *curves) cells(s *curveSetting) (map[[2]int]*curveCell, [][2]int) {
	cells := map[[2]int]*curveCell{}
	for _, r := range s.runs {
		for _, p := range r.Curve {
			k := [2]int{c.lrIndex(r.LR), p.Epoch}
			cl := cells[k]
			if cl == nil {
				cl = &curveCell{}
				cells[k] = cl
			}
			if !math.IsNaN(p.TrainLoss) && !math.IsInf(p.TrainLoss, 0) {
				cl.loss = append(cl.loss, p.TrainLoss)
			}
			if v := c.metricOf(p); !math.IsNaN(v) && !math.IsInf(v, 0) {
				cl.metric = append(cl.metric, v)
			}
		}
	}
	keys := slices.SortedFunc(func(yield func([2]int) bool) {
		for k := range cells {
			if !yield(k) {
				return
			}
		}
	}, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return cells, keys
}

// lrSeriesOf aggregates the cells into one series per learning rate (mean
// ± SE), and returns the loss values in range (for the loss axis).
func (c *curves) lrSeriesOf(cells map[[2]int]*curveCell, keys [][2]int) (ss []*lrSeries, inRange []float64) {
	for _, k := range keys {
		if len(ss) == 0 || ss[len(ss)-1].lr != k[0] {
			ss = append(ss, &lrSeries{lr: k[0]})
		}
		ls := ss[len(ss)-1]
		x := float64(k[1])
		if c.oneEpoch {
			x = c.lrs[k[0]]
		}
		cl := cells[k]
		if a := aggregate(cl.loss); a.n > 0 {
			c.trialsMax = max(c.trialsMax, a.n)
			if math.Abs(a.mean) > lossCap {
				ls.offEpoch = append(ls.offEpoch, x)
			} else {
				ls.loss, ls.lossSE = append(ls.loss, xy{x, a.mean}), append(ls.lossSE, a.se)
				inRange = append(inRange, a.mean-a.se, a.mean+a.se)
			}
		}
		if a := aggregate(cl.metric); a.n > 0 {
			ls.met, ls.metSE = append(ls.met, xy{x, a.mean}), append(ls.metSE, a.se)
		}
	}
	return ss, inRange
}

// settingPanels are setting s's two panels: training loss (a mean off the
// scale drawn as a triangle at the top) and the test metric.
func (c *curves) settingPanels(s *curveSetting, name string) []*panel {
	ss, inRange := c.lrSeriesOf(c.cells(s))
	// x is the epoch (or the learning rate): markers move along it only.
	lossP := &panel{title: name + ": training loss", x: c.xspec, nudge: nudgeX}
	metP := &panel{title: name + ": " + c.metric.String(), x: c.xspec, nudge: nudgeX}
	hasOff := slices.ContainsFunc(ss, func(l *lrSeries) bool { return len(l.offEpoch) > 0 })
	c.offScale = c.offScale || hasOff
	var offY float64
	lossP.y, offY = lossAxis(inRange, hasOff)
	for _, ls := range ss {
		clr, g := lrStyle(ls.lr)
		label := "lr=" + fmtParam(c.lrs[ls.lr])
		mk := func(pts []xy, se []float64) *series {
			s := &series{name: label, pts: pts, yerr: se, glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: g}}
			if len(pts) > 1 && !c.oneEpoch {
				s.line = &draw.LineStyle{Color: clr, Width: 1.6}
			}
			return s
		}
		if len(ls.loss) > 0 {
			lossP.series = append(lossP.series, mk(ls.loss, ls.lossSE))
		}
		if len(ls.offEpoch) > 0 {
			off := &series{name: label + " off the scale", glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR + 0.5, Shape: draw.TriangleGlyph{}}}
			for _, x := range ls.offEpoch {
				off.pts = append(off.pts, xy{x, offY})
			}
			lossP.series = append(lossP.series, off)
		}
		if len(ls.met) > 0 {
			metP.series = append(metP.series, mk(ls.met, ls.metSE))
		}
	}
	if c.oneEpoch {
		// A thin grey line across the learning rates guides the eye.
		for _, p := range []*panel{lossP, metP} {
			var pts []xy
			for _, s := range p.series {
				if !strings.HasSuffix(s.name, "off the scale") {
					pts = append(pts, s.pts...)
				}
			}
			slices.SortFunc(pts, func(a, b xy) int { return cmp.Compare(a.X, b.X) })
			if len(pts) > 1 {
				p.series = append([]*series{{name: "across learning rates", pts: pts,
					line: &draw.LineStyle{Color: colBot, Width: 0.8}}}, p.series...)
			}
		}
	}
	metP.y = metricAxis(c.mvals, c.metric)
	return []*panel{lossP, metP}
}

// legend has one item per learning rate: its hue and marker.
func (c *curves) legend() []legendItem {
	var items []legendItem
	for i, lr := range c.lrs {
		clr, g := lrStyle(i)
		var ln *draw.LineStyle
		if !c.oneEpoch {
			ln = &draw.LineStyle{Color: clr, Width: 1.8}
		}
		items = append(items, legendItem{text: "lr=" + fmtParam(lr), thumb: lineGlyphThumb(ln, draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: g})})
	}
	return items
}

// notes say what the figure's reader needs: one epoch, the trials, a loss
// off the scale (after settingPanels found them).
func (c *curves) notes() string {
	var notes []string
	if c.oneEpoch {
		notes = append(notes, "One epoch (train.epochs = 1): each run's learning curve is a single point, so x is the learning rate "+
			"and each panel shows the end of that epoch; train 2 or more epochs for curves over epochs.")
	}
	if c.trialsMax > 1 {
		notes = append(notes, fmt.Sprintf("Mean ± SE over up to %d trials.", c.trialsMax))
	}
	if c.offScale {
		notes = append(notes, fmt.Sprintf("Open triangles at the top: a mean training loss beyond ±%g (diverged: the learning rate is too high; learning_curves.csv has the values).", lossCap))
	}
	return strings.Join(notes, " ")
}

// lrAxis is a log-scale learning-rate axis over lrs (positive), with a
// margin of a factor ≥ 1.35 each side; its ticks are the learning rates
// themselves when there are at most 5 within 4 decades, else powers of
// ten, every few decades so that at most 7 are labelled.
func lrAxis(lrs []float64) axisSpec {
	lo, hi := slices.Min(lrs), slices.Max(lrs)
	f := math.Max(1.35, math.Pow(hi/lo, 0.04))
	a := axisSpec{label: "learning rate (log scale)", min: lo / f, max: hi * f, scale: plot.LogScale{}}
	if len(lrs) <= 5 && hi/lo <= 1e4 {
		a.ticks = valueTicks(lrs, 8)
		return a
	}
	d0, d1 := int(math.Ceil(math.Log10(a.min))), int(math.Floor(math.Log10(a.max)))
	step := max(1, (d1-d0+7)/7)
	for d := d0; d <= d1; d += step {
		v := math.Pow(10, float64(d))
		a.ticks = append(a.ticks, plot.Tick{Value: v, Label: fmtLR(v)})
	}
	return a
}

// fmtLR formats a power of ten compactly: 1e-4, 0.001, 0.1, 100, 1e5.
func fmtLR(v float64) string {
	if e := math.Log10(v); e < -3.5 || e > 3.5 {
		return fmt.Sprintf("1e%d", int(math.Round(e)))
	}
	return fmtTick(v)
}

// shortDataset is a dataset identity shortened for a panel title
// ("sha256:0776c0db6adb0fd2" → "0776c0db").
func shortDataset(d string) string {
	_, h, ok := strings.Cut(d, ":")
	if !ok {
		h = d
	}
	return h[:min(len(h), 8)]
}

// lossAxis lays out the training losses within ±lossCap (each mean with
// its ± SE): linear, or symlog when the positive ones span
// symlogMinDecades decades; withOff leaves room at the top for the
// off-scale markers, whose y it returns.
func lossAxis(vals []float64, withOff bool) (axisSpec, float64) {
	label := "training loss (mean over the epoch)"
	if len(vals) == 0 {
		vals = []float64{0, 1}
	}
	lo, hi := slices.Min(vals), slices.Max(vals)
	c := symlogConstant(vals)
	f, inv := func(x float64) float64 { return x }, func(u float64) float64 { return u }
	if c > 0 {
		sc := symlogScale{c}
		f, inv = sc.f, sc.inv
	}
	ulo, uhi := f(lo), f(hi)
	pad := math.Max(0.08*(uhi-ulo), 1e-3*math.Max(1, math.Abs(uhi)))
	umax := uhi + pad
	var offY float64
	if withOff {
		offY = inv(uhi + 2*pad)
		umax = uhi + 3*pad
	}
	a := axisSpec{label: label, min: inv(ulo - pad), max: inv(umax)}
	if c > 0 {
		a.scale, a.ticks = symlogScale{c}, symlogTicks(c, a.min, a.max)
		a.label += ", symlog"
	} else {
		a.ticks = linTicks(a.min, a.max)
	}
	return a, offY
}

// metricAxis is the test metric's axis over vals, padded as metricRange.
func metricAxis(vals []float64, m report.Metric) axisSpec {
	lo, hi := 0.5, 1.0
	if len(vals) > 0 {
		lo, hi = slices.Min(vals), slices.Max(vals)
	}
	pad := math.Max(0.01, 0.1*(hi-lo))
	lo, hi = lo-pad, hi+pad
	return axisSpec{label: m.String() + " at the epoch's end", min: lo, max: hi, ticks: linTicks(lo, hi)}
}

// WriteCurvePlots writes the runs' learning curves (learningCurvesFigure)
// into dir as learning_curves.png (120 dpi) and .svg, and returns it for
// WriteMarkdown; nothing when no run has a curve.
func WriteCurvePlots(dir string, runs []report.Run) ([]report.Figure, error) {
	f, err := learningCurvesFigure(runs)
	if err != nil {
		if errors.Is(err, ErrNoData) {
			return nil, nil
		}
		return nil, err
	}
	base := filepath.Join(dir, curvesName)
	if err := saveFigure(base, f); err != nil {
		return nil, err
	}
	return []report.Figure{{Path: base + ".png", Title: "Learning curves", Caption: curvesCaption}}, nil
}
