// Package display holds what report.md (package report) and the figures
// (package report/figures) show alike, so that a table row and a plotted
// point name a setting the same way and list settings in the same order:
// the display name of a mechanism, the canonical order of settings, and
// percentages.
package display

import (
	"cmp"
	"fmt"

	"labelprivacy/pets"
)

// PetName is the display name of a mechanism, its pets.Look.Name: "no
// PET", "bot", "RR", "LLP", "LLP+Lap", "LLP+Geom", "RR+prior" (the paper's
// names); the canonical name for a kind without one.
func PetName(k pets.Kind) string { return cmp.Or(k.Spec().Look.Name, k.String()) }

// SettingOrder orders settings canonically: mechanism in pets.Kind order
// (the registry's: none, bot, rr, llp, llp_lap, llp_geom, rr_prior, then
// kinds registered later), then k, then ε, then
// the setting name, so output never depends on input order.
func SettingOrder(pa pets.Kind, ka int, ea float64, sa string, pb pets.Kind, kb int, eb float64, sb string) int {
	return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(ka, kb), cmp.Compare(ea, eb), cmp.Compare(sa, sb))
}

// Percent formats a fraction as a percentage: whole percents from 10%, two
// significant digits below (61%, 100%, 9.4%, 0.05%).
func Percent(f float64) string {
	v := 100 * f
	if v >= 10 {
		return fmt.Sprintf("%.0f%%", v)
	}
	return fmt.Sprintf("%.2g%%", v)
}
