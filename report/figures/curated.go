package figures

import (
	"cmp"
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"labelprivacy/pets"
	"labelprivacy/report/internal/display"
)

// Curated LLP bags (a bag rule other than random): their curves are
// dashed and named by the rule.

// curveGlyph is a curve's marker: the mechanism's, except for curated bags
// (sorted: an open square, key: a plus).
func curveGlyph(ck curveKey) draw.GlyphDrawer {
	switch {
	case strings.HasPrefix(ck.bags, "sorted:"):
		return draw.SquareGlyph{}
	case strings.HasPrefix(ck.bags, "key:"):
		return draw.PlusGlyph{}
	}
	return petGlyph(ck.pet)
}

// curated reports whether a bag rule is one other than random.
func curated(bags string) bool { return bags != "" && bags != "random" }

// bagsText names a curated rule in a label (", sorted:x3 bags"); "" for
// random bags.
func bagsText(bags string) string {
	if !curated(bags) {
		return ""
	}
	return ", " + bags + " bags"
}

// bagDashes is the line dash pattern of a bag rule: solid for random.
func bagDashes(bags string) []vg.Length {
	if !curated(bags) {
		return nil
	}
	if strings.HasPrefix(bags, "key:") {
		return []vg.Length{2, 2}
	}
	return []vg.Length{7, 3}
}

// compareBags orders bag rules: random (and none) first, then by name.
func compareBags(a, b string) int {
	rank := func(s string) int {
		if curated(s) {
			return 1
		}
		return 0
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
}

// curatedLegend is the legend item of a two-parameter mechanism that only
// has curated curves.
func curatedLegend(pet pets.Kind, keys []curveKey, cols map[curveKey]color.NRGBA, varies string) legendItem {
	for _, k := range keys {
		if k.pet == pet {
			sty := draw.LineStyle{Color: cols[k], Width: 1.2, Dashes: bagDashes(k.bags)}
			return legendItem{text: fmt.Sprintf("%s, k=%d%s (%s)", display.PetName(pet), k.k, bagsText(k.bags), varies), thumb: lineThumb(sty)}
		}
	}
	return legendItem{text: display.PetName(pet)}
}

// settingExtra is what a setting id says beyond its mechanism, k and ε
// (the pipeline's "<mechanism>[_k<k>][_eps<ε>]" then, e.g., "_sorted-x3"
// or rr_prior's "_s0.3"): ", sorted-x3"; "" when nothing more.
func settingExtra(setting string, pet pets.Kind, k int, eps float64) string {
	base := pet.String()
	if k > 0 {
		base += "_k" + strconv.Itoa(k)
	}
	if eps > 0 {
		base += "_eps" + strconv.FormatFloat(eps, 'g', -1, 64)
	}
	rest, ok := strings.CutPrefix(setting, base+"_")
	if !ok || rest == "" {
		return ""
	}
	parts := strings.Split(rest, "_")
	for i, p := range parts { // the bag rule as written in a config: sorted:x3, key:campaign
		for _, r := range []string{"sorted-", "key-"} {
			if after, ok := strings.CutPrefix(p, r); ok {
				parts[i] = strings.TrimSuffix(r, "-") + ":" + after
			}
		}
	}
	return ", " + strings.Join(parts, ", ")
}
