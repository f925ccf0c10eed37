package display

import (
	"slices"
	"testing"

	"labelprivacy/pets"
)

func TestPetName(t *testing.T) {
	seen := map[string]pets.Kind{}
	for _, k := range pets.Kinds() {
		n := PetName(k)
		if n == "" || n == k.String() && k != pets.Bot {
			t.Errorf("%v has no display name (%q)", k, n)
		}
		if o, dup := seen[n]; dup {
			t.Errorf("%v and %v share the name %q", o, k, n)
		}
		seen[n] = k
	}
	if PetName(pets.RR) != "RR" || PetName(pets.LLPGeom) != "LLP+Geom" {
		t.Errorf("RR, LLP+Geom named %q, %q", PetName(pets.RR), PetName(pets.LLPGeom))
	}
}

// Settings sort by mechanism in pets.Kind order, then k, then ε, then id,
// whatever the input order.
func TestSettingOrder(t *testing.T) {
	type s struct {
		pet pets.Kind
		k   int
		eps float64
		id  string
	}
	want := []s{{pets.None, 0, 0, "none"}, {pets.RR, 0, 0.5, "rr_eps0.5"}, {pets.RR, 0, 2, "rr_eps2"},
		{pets.LLP, 8, 0, "llp_k8"}, {pets.LLP, 8, 0, "llp_k8_sorted-x3"}, {pets.LLP, 64, 0, "llp_k64"},
		{pets.LLPGeom, 8, 1, "llp_geom_k8_eps1"}, {pets.LLPGeom, 64, 0.5, "llp_geom_k64_eps0.5"}, {pets.RRPrior, 0, 1, "rr_prior_eps1"}}
	got := slices.Clone(want)
	slices.Reverse(got)
	slices.SortFunc(got, func(a, b s) int { return SettingOrder(a.pet, a.k, a.eps, a.id, b.pet, b.k, b.eps, b.id) })
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{{0.61, "61%"}, {1, "100%"}, {0.094, "9.4%"}, {0.0005, "0.05%"}, {0.1, "10%"}, {0, "0%"}} {
		if got := Percent(tc.f); got != tc.want {
			t.Errorf("Percent(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}
