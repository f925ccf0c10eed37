package main

import (
	"fmt"
	"strconv"

	"labelprivacy/pets"
)

// petSetting is one point of the PET grid: a mechanism and its parameters.
type petSetting struct {
	Kind    pets.Kind
	K       int     // 0 outside the LLP family
	Epsilon float64 // 0 for none, bot and llp
}

// ID names the setting in paths and tables: none, rr_eps1, llp_k8,
// llp_geom_k8_eps0.5.
func (s petSetting) ID() string {
	id := s.Kind.String()
	if s.K > 0 {
		id += "_k" + strconv.Itoa(s.K)
	}
	if s.Epsilon > 0 {
		id += "_eps" + strconv.FormatFloat(s.Epsilon, 'g', -1, 64)
	}
	return id
}

func (s petSetting) mechanism(secure bool) (*pets.Mechanism, error) {
	return newMechanism(s.Kind, s.K, s.Epsilon, secure)
}

// expandPets expands `pets:` into settings (k × epsilon grids), in config
// order, without duplicates. Validation already checked the parameters.
func expandPets(cfg []PetConfig) ([]petSetting, error) {
	var out []petSetting
	seen := map[petSetting]bool{}
	add := func(s petSetting) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i, p := range cfg {
		kind, err := pets.ParseKind(p.Mechanism)
		if err != nil {
			return nil, fmt.Errorf("pets[%d].mechanism: %w", i, err)
		}
		ks := []int{0}
		if len(p.K) > 0 {
			ks = p.K
		}
		eps := []float64{0}
		if len(p.Epsilon) > 0 {
			eps = p.Epsilon
		}
		for _, k := range ks {
			for _, e := range eps {
				add(petSetting{Kind: kind, K: k, Epsilon: e})
			}
		}
	}
	return out, nil
}
