package reporttest

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Each simulated release law is a distribution over its support: for every
// member of a drawn bag, P(z | y_i = 1) and P(z | y_i = 0) sum to 1 over zs
// (tolerance 1e-9: float sums of ≤ 33 terms) and the release zi is in zs.
func TestSynthLawsSumToOne(t *testing.T) {
	for _, sp := range synthPostSpecs() {
		t.Run(sp.setting(), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			law := newSynthLaw(sp)
			eta, y, sum, z := law.drawBag(r, max(sp.k, 1))
			for i := range eta {
				l1, l0, zs, zi := law.release(r, eta, y, i, sum, z)
				var s1, s0 float64
				for _, z := range zs {
					s1, s0 = s1+l1(z), s0+l0(z)
				}
				if math.Abs(s1-1) > 1e-9 || math.Abs(s0-1) > 1e-9 || !slices.Contains(zs, zi) {
					t.Fatalf("member %d: Σ P(z|1) = %g, Σ P(z|0) = %g over %v, release %d", i, s1, s0, zs, zi)
				}
			}
		})
	}
}
