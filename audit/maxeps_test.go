package audit

import (
	"math/rand/v2"
	"testing"

	"labelprivacy/pets"
)

// At the largest ε a mechanism accepts the audit's arithmetic still holds:
// no correct mechanism is reported as violating its ε (before the bound,
// rr at ε = 710 and llp_geom/llp_lap at ε ≥ 745 were, from underflow), and
// |MA| stays ≤ ε.
func TestNoFalseViolationAtMaxEpsilon(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	eta := make([]float64, 2048)
	for i := range eta {
		eta[i] = r.Float64()
	}
	eta[0], eta[1] = 0, 1 // extreme priors
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPGeom, K: 1, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPGeom, K: 8, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPGeom, K: 512, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPLap, K: 8, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPLap, K: 512, Epsilon: pets.MaxEpsilon},
		{Kind: pets.LLPLap, K: 8, Epsilon: pets.MaxEpsilon, Secure: true},
	} {
		m, err := pets.New(p)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(eta, m, Options{Seed: 3, LabelDraws: 5})
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if !(res.MAMax <= pets.MaxEpsilon+DPTolerance) {
			t.Fatalf("%s: max |MA| %v", m, res.MAMax)
		}
	}
	if _, err := pets.New(pets.Params{Kind: pets.RR, Epsilon: pets.MaxEpsilon * 1.01}); err == nil {
		t.Fatal("ε above MaxEpsilon accepted")
	}
}
