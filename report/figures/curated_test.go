package figures

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"labelprivacy/pets"
	"labelprivacy/report"
	"labelprivacy/report/internal/display"
)

func curatedRows() []report.Row {
	row := func(setting string, pet pets.Kind, k int, eps, auc, eadv float64, bags string) report.Row {
		return report.Row{Setting: setting, Pet: pet, K: k, Epsilon: eps, AUCMean: auc, AUCSE: 0.001, NTrials: 3, Audited: true,
			EAdv: eadv, EAdvSE: 0.0005, MAP98: math.Max(eps, 0.5), Bags: bags, LabelDPEpsilon: eps}
	}
	return []report.Row{
		row("none", pets.None, 0, 0, 0.86, 0.2, ""),
		row("rr_eps0.5", pets.RR, 0, 0.5, 0.83, 0.011, ""), row("rr_eps1", pets.RR, 0, 1, 0.85, 0.042, ""),
		row("rr_prior_eps0.5", pets.RRPrior, 0, 0.5, 0.82, 0.007, ""), row("rr_prior_eps1", pets.RRPrior, 0, 1, 0.849, 0.037, ""),
		row("llp_k8", pets.LLP, 8, 0, 0.853, 0.041, "random"), row("llp_k16", pets.LLP, 16, 0, 0.85, 0.03, "random"),
		row("llp_k8_sorted-x3", pets.LLP, 8, 0, 0.857, 0.040, "sorted:x3"), row("llp_k16_sorted-x3", pets.LLP, 16, 0, 0.855, 0.03, "sorted:x3"),
		row("llp_k8_key-g", pets.LLP, 8, 0, 0.856, 0.041, "key:g"),
		row("llp_geom_k8_eps1_key-g", pets.LLPGeom, 8, 1, 0.84, 0.01, "key:g"),
	}
}

// Every figure draws rr_prior and curated bags beside the paper's
// mechanisms: rr_prior in RR's panel of the AUC figure, with its own colour
// and marker and legend entry; one curve per bag rule, each with its own
// marker, dashed when it has several points, named by its rule in the
// legend; the posterior figures name a curated setting's rule.
func TestCuratedFigures(t *testing.T) {
	rows := curatedRows()
	f, err := aucBySettingFigure(rows, "")
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	glyphs := map[string]reflect.Type{}
	for _, p := range f.panels {
		titles = append(titles, p.title)
		for _, s := range p.series {
			glyphs[s.name] = reflect.TypeOf(s.glyph.Shape)
			if strings.Contains(s.name, "sorted:x3") && (s.line == nil || s.line.Dashes == nil) {
				t.Errorf("curated curve %q is not dashed", s.name)
			}
		}
	}
	if !slices.Contains(titles, "RR and RR+prior") || slices.Contains(titles, "RR+prior") {
		t.Errorf("panels %v: RR+prior should share RR's panel", titles)
	}
	want := map[string]bool{}
	for name, g := range glyphs {
		if strings.HasPrefix(name, "LLP ") {
			want[g.String()] = true
		}
	}
	if len(want) != 3 {
		t.Errorf("LLP curves of 3 bag rules use markers %v: want 3 distinct", want)
	}
	var rrG, priorG []reflect.Type
	for name, g := range glyphs {
		switch {
		case strings.HasPrefix(name, "RR+prior "):
			priorG = append(priorG, g)
		case strings.HasPrefix(name, "RR "):
			rrG = append(rrG, g)
		}
	}
	if len(rrG) != 1 || len(priorG) != 1 || rrG[0] == priorG[0] {
		t.Errorf("RR markers %v, RR+prior markers %v: want one each, distinct", rrG, priorG)
	}
	legend := legendTexts(f.legend)
	for _, w := range []string{"RR+prior (ε varies)", "LLP, sorted:x3 bags", "LLP, key:g bags", "LLP, random bags"} {
		if !slices.Contains(legend, w) {
			t.Errorf("auc_by_setting legend %q lacks %q", legend, w)
		}
	}
	for _, m := range []advMetric{metricEAdv, metricMAP98} {
		g, err := aucVsAdvFigure(rows, m, "")
		if err != nil {
			t.Fatal(err)
		}
		legend := legendTexts(g.legend)
		for _, w := range []string{"RR+prior (ε varies)", "LLP, sorted:x3 bags (k varies)", "LLP+Geom, k=8, key:g bags (ε varies)"} {
			if !slices.Contains(legend, w) {
				t.Errorf("%s legend %q lacks %q", m.name(), legend, w)
			}
		}
	}
	if s := petColor(pets.RRPrior); s == petColor(pets.RR) || display.PetName(pets.RRPrior) != "RR+prior" {
		t.Error("RR+prior has RR's colour or no name")
	}
	post := []report.Posterior{{Setting: "llp_k8_sorted-x3", Pet: pets.LLP, K: 8}, {Setting: "llp_k8", Pet: pets.LLP, K: 8},
		{Setting: "rr_prior_eps1_s0.3", Pet: pets.RRPrior, Epsilon: 1}}
	var labels []string
	for _, s := range groupPosteriors(post) {
		labels = append(labels, s.label())
	}
	if w := []string{"LLP k=8", "LLP k=8, sorted:x3", "RR+prior ε=1, s0.3"}; !slices.Equal(labels, w) {
		t.Errorf("posterior labels %q, want %q", labels, w)
	}
}

func legendTexts(items []legendItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.text)
	}
	return out
}
