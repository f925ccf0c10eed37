package figures

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

// modelCaption is model_attack.png's caption.
const modelCaption = "The model attack (audit.model_attack): each trained model guesses its own training rows' labels by " +
	"its argmax. y: its accuracy over the prior-only attacker's on the same rows (mean over the best learning " +
	"rate's trials, ± 1.96 SE); x: the exact advantage the Bayes attacker gets from the very releases those models " +
	"trained on, on the same rows (with the true η), else the release's E[adv] on the audit rows. A model is " +
	"post-processing of its release, so every point lies on or below y = x up to its bar (the bracket, which fails " +
	"the audit for a model above it); how far below is how much of what the release shows the model did not learn " +
	"or memorize. Below 0: the model's guesses are worse than η's." + crowdCaption

// modelAttackX is a setting's bracket: the release's advantage on the
// model attack's rows, else its E[adv] under the model attack's prior.
func modelAttackX(a report.Audit) float64 {
	switch {
	case !math.IsNaN(a.ModelReleaseAdv):
		return a.ModelReleaseAdv
	case a.ModelPrior == "true" && a.EtaSource != "true" && !math.IsNaN(a.EAdvTrue):
		return a.EAdvTrue
	}
	return a.EAdv
}

// modelAttackFigure: one panel per (dataset, config), one point per
// setting with a model attack: x the release's advantage (modelAttackX),
// y the model attack ± 1.96 SE, and the diagonal.
func modelAttackFigure(audits []report.Audit) (*figure, error) {
	byDS := auditsByDataset(audits, func(a report.Audit) bool {
		return a.ModelRuns > 0 && !math.IsNaN(a.ModelAdv) && !math.IsNaN(modelAttackX(a))
	})
	if len(byDS) == 0 {
		return nil, fmt.Errorf("figures: model attack: no audit with one: %w", ErrNoData)
	}
	var panels []*panel
	seenPet := map[pets.Kind]bool{}
	var items []legendItem
	for _, ds := range slices.Sorted(maps.Keys(byDS)) {
		as := byDS[ds]
		slices.SortFunc(as, func(a, b report.Audit) int {
			return display.SettingOrder(a.Pet, a.K, a.Epsilon, a.Setting, b.Pet, b.K, b.Epsilon, b.Setting)
		})
		lo, hi := 0.0, 0.0
		var xs []float64
		for _, a := range as {
			x, e := modelAttackX(a), z95*finiteOr0(a.ModelAdvSE)
			xs = append(xs, x)
			hi = max(hi, x, a.ModelAdv+e)
			lo = min(lo, a.ModelAdv-e)
		}
		p := &panel{}
		if len(byDS) > 1 {
			p.title = "dataset " + ds
		}
		xl := "the release's exact advantage on the same rows"
		diagonalAxes(p, lo, hi, xs, xl, "model attack: accuracy over the prior (± 1.96 SE)",
			func(c float64) (string, string) {
				note := fmt.Sprintf(" (symlog: linear below %s)", fmtSymTick(c))
				return xl + note, "model attack over the prior" + note
			})
		for _, a := range as {
			clr := petColor(a.Pet)
			x := modelAttackX(a)
			p.series = append(p.series, &series{name: a.Setting, pts: []xy{{x, a.ModelAdv}},
				glyph: &draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(a.Pet)},
				yerr:  []float64{z95 * a.ModelAdvSE}})
			s := p.series[len(p.series)-1]
			p.labels = append(p.labels, pointLabel{x: x, y: a.ModelAdv, text: paramLabel(a.Pet, a.K, a.Epsilon), color: clr, prio: 1, of: s})
			if !seenPet[a.Pet] {
				seenPet[a.Pet] = true
				items = append(items, legendItem{text: display.PetName(a.Pet), thumb: glyphThumb(draw.GlyphStyle{Color: clr, Radius: glyphR, Shape: petGlyph(a.Pet)})})
			}
		}
		panels = append(panels, p)
	}
	slices.SortFunc(items, func(a, b legendItem) int { return cmp.Compare(a.text, b.text) })
	items = append([]legendItem{{text: "y = x", thumb: lineThumb(diagStyle)}}, items...)
	cols := min(len(panels), 2)
	return &figure{title: "Model attack vs the release's exact advantage (the bracket)",
		w: vg.Length(cols) * 7 * vg.Inch, cols: cols, cellH: 5.5 * vg.Inch, legend: items, panels: panels}, nil
}
