package figures

import (
	"fmt"
	"image/color"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

const (
	maxPerPanel      = 12   // settings per scatter panel / CDF figure
	maxScatterPoints = 1000 // per setting; more are thinned with a fixed stride
)

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
		if p.Pet == pets.None || p.Pet == pets.Bot {
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

// scatterFigure draws the paper's Figures 1 and 2 (top): one panel per
// mechanism, one point per sampled example (x = prior η, y = the Bayes
// attacker's posterior), coloured by the setting's parameters (a sequential
// colormap, dark = first in (k, ε) order; named in a legend strip under the
// panel title), with the y = x diagonal (nothing learned). The x axis ends
// at a round value above the largest prior (0.05, 0.1, 0.2, …, 0.6, else 1)
// so that skewed priors such as Beta(2,30) stay readable; y is [0, 1]. A
// panel shows at most 12 settings (evenly spaced in (k, ε) order when there
// are more, noted in its title) and 1000 points per setting.
func scatterFigure(post []report.Posterior, titleSuffix string) (*figure, error) {
	ss := groupPosteriors(post)
	if len(ss) == 0 {
		return nil, fmt.Errorf("figures: posterior scatter: no samples outside none/bot: %w", ErrNoData)
	}
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
	var byPet [][]*postSetting
	for _, s := range ss {
		if len(byPet) == 0 || byPet[len(byPet)-1][0].pet != s.pet {
			byPet = append(byPet, nil)
		}
		byPet[len(byPet)-1] = append(byPet[len(byPet)-1], s)
	}
	cols := min(3, len(byPet))
	if len(byPet) == 4 {
		cols = 2
	}
	cellW := 4.4 * vg.Inch
	var panels []*panel
	var header vg.Length
	for _, all := range byPet {
		shown := thin(all, maxPerPanel)
		p := &panel{title: display.PetName(all[0].pet)}
		if len(shown) < len(all) {
			p.title += fmt.Sprintf(" (%d of %d settings)", len(shown), len(all))
		}
		p.x = axisSpec{label: "prior η = P(y=1 | x)", min: -0.03 * xMax, max: 1.03 * xMax, ticks: linTicks(0, xMax)}
		p.y = axisSpec{label: "posterior P(y=1 | x, release)", min: -0.03, max: 1.03, ticks: linTicks(0, 1)}
		p.series = append(p.series, &series{name: "y = x", pts: []xy{{0, 0}, {xMax, xMax}}, line: &diagStyle})
		for i, s := range shown {
			clr := petColor(s.pet)
			if len(shown) > 1 {
				clr = viridis(float64(i) / float64(len(shown)-1))
			}
			var q []xy
			for j := range s.prior {
				x, y := s.prior[j], s.posterior[j]
				if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
					continue
				}
				q = append(q, xy{x, y})
			}
			q = thin(q, maxScatterPoints)
			if len(q) == 0 {
				continue
			}
			p.series = append(p.series, &series{name: s.label(), pts: q,
				glyph: &draw.GlyphStyle{Color: withAlpha(clr, 150), Radius: 1.6, Shape: draw.CircleGlyph{}}})
			p.legend = append(p.legend, legendItem{text: s.params(),
				thumb: glyphThumb(draw.GlyphStyle{Color: clr, Radius: 3.5, Shape: draw.CircleGlyph{}})})
		}
		header = max(header, p.headerHeight(cellW))
		panels = append(panels, p)
	}
	return &figure{
		title:  "Prior vs posterior of the Bayes-optimal label attacker (one point per example)" + titleSuffix,
		w:      vg.Length(cols) * cellW,
		cols:   cols,
		cellH:  3.6*vg.Inch + header,
		legend: []legendItem{{text: "y = x: nothing learned; posteriors of 0 or 1: label exposed", thumb: lineThumb(diagStyle)}},
		panels: panels,
	}, nil
}

// cdfFigure draws the paper's Figure 2 (middle and bottom): empirical CDFs
// of the individual expected advantage and of |multiplicative advantage|
// per setting, side by side. One line per setting, coloured by mechanism
// (shades by parameter). |MA| uses a log(1+x) axis; +Inf values are drawn
// at the position marked ∞ beyond a dashed separator, where each CDF jumps
// to 1, and the legend gives each setting's fraction of ∞. At most 12
// settings are drawn (evenly spaced in canonical order, noted in the title).
func cdfFigure(post []report.Posterior, titleSuffix string) (*figure, error) {
	all := groupPosteriors(post)
	if len(all) == 0 {
		return nil, fmt.Errorf("figures: advantage CDFs: no samples outside none/bot: %w", ErrNoData)
	}
	ss := thin(all, maxPerPanel)
	count, seen := map[pets.Kind]int{}, map[pets.Kind]int{}
	for _, s := range ss {
		count[s.pet]++
	}
	var allMA []float64
	var ieMax float64
	styles := make([]draw.LineStyle, len(ss))
	var items []legendItem
	for i, s := range ss {
		t := 0.5
		if n := count[s.pet]; n > 1 {
			t = 0.15 + 0.7*float64(seen[s.pet])/float64(n-1)
		}
		seen[s.pet]++
		styles[i] = draw.LineStyle{Color: shade(petColor(s.pet), t), Width: 2}
		allMA = append(allMA, s.absMA...)
		for _, v := range s.ieadv {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				ieMax = max(ieMax, v)
			}
		}
		name := s.label()
		if f := infFrac(s.absMA); f > 0 {
			name += fmt.Sprintf(" (%s ∞)", display.Percent(f))
		}
		items = append(items, legendItem{text: name, thumb: lineThumb(styles[i])})
	}
	if ieMax <= 0 {
		ieMax = 1
	}
	ax := newAdvAxis(allMA, true)
	ylab := "fraction of examples ≤ x"
	pa := &panel{title: "Individual expected advantage",
		x: axisSpec{label: "individual expected advantage (probability)", min: -0.03 * ieMax, max: 1.04 * ieMax, ticks: linTicks(0, 1.04*ieMax)},
		y: axisSpec{label: ylab, min: -0.03, max: 1.03, ticks: linTicks(0, 1)}}
	pm := &panel{title: "|Multiplicative advantage|", x: ax.spec("|Δ log-odds| (nats, log(1+x) scale)"),
		y: axisSpec{label: ylab, min: -0.03, max: 1.03, ticks: linTicks(0, 1)}, refs: ax.sep()}
	for i, s := range ss {
		pa.series = append(pa.series, &series{name: s.label(), pts: cdfXY(s.ieadv, 0, 1.04*ieMax, 0), line: &styles[i]})
		pm.series = append(pm.series, &series{name: s.label(), pts: cdfXY(s.absMA, 0, ax.sepPos, ax.infPos), line: &styles[i]})
	}
	title := "Empirical CDFs of per-example advantage"
	if len(ss) < len(all) {
		title += fmt.Sprintf(" (%d of %d settings)", len(ss), len(all))
	}
	f := &figure{title: title + titleSuffix, w: 12 * vg.Inch, cols: 2, cellH: 4.2 * vg.Inch, legend: items, panels: []*panel{pa, pm}}
	if ax.hasInf {
		f.note = "Right panel: right of the dashed line, |Δ log-odds| = ∞ (posterior 0 or 1: the label is exposed)."
	}
	return f, nil
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
