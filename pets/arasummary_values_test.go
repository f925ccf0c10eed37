package pets

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ara_summary on values is value_bags's law at ε·v on a key group: a
// ValueLaw of bag means whose sum noise is Laplace of scale B/(v·ε) (the
// value's ε, ValueEpsilon, is v·ε; the ledger's, Epsilon, ε); its spec
// releases value bags and trains with bag_mse on the mean, while on
// binary conversions it stays a release of proportions. The released sum
// of a bag's mean has the noise's mean 0 and variance 2b² within 6 SE of
// 40,000 draws (the variance estimate's SE is √(20b⁴/N): false failure
// below 1e-8 per check).
func TestARASummaryValues(t *testing.T) {
	g := Grid{Max: 400, Step: 1}
	cases := []struct {
		name       string
		eps, share float64
	}{{"all the budget", 4, 1}, {"half", 4, 0.5}, {"a quarter at 64", 64, 0.25}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(Params{Kind: ARASummary, Epsilon: tc.eps, ValueShare: tc.share, Values: g})
			if err != nil {
				t.Fatal(err)
			}
			l := m.ValueLaw()
			b := g.Max / (tc.share * tc.eps)
			switch {
			case l == nil || l.Form() != ValueBagMean:
				t.Fatalf("law %T, want bag means", l)
			case math.Abs(l.Scale()-b) > 1e-12*b:
				t.Fatalf("scale %v, want B/(v·ε) = %v", l.Scale(), b)
			case m.Epsilon() != tc.eps || math.Abs(m.ValueEpsilon()-tc.share*tc.eps) > 1e-15:
				t.Fatalf("ε %v and the value's %v, want %v and %v", m.Epsilon(), m.ValueEpsilon(), tc.eps, tc.share*tc.eps)
			case m.Spec().Release != ReleaseValueBags || m.Spec().Train != (Train{Loss: LossBagSquared, Target: TargetBagMean}):
				t.Fatalf("spec on values %+v", m.Spec())
			case ARASummary.Spec().Release != ReleaseBags || ARASummary.OfValues():
				t.Fatalf("the binary spec changed: %+v", ARASummary.Spec())
			}
			r := rand.New(rand.NewPCG(7, uint64(tc.eps*100+tc.share*10)))
			const n, draws, sum = 10, 40000, 1234.0
			var s1, s2 float64
			for range draws {
				d := l.ReleaseBag(sum, n, r)*n - sum
				s1 += d
				s2 += d * d
			}
			mean, v := s1/draws, s2/draws
			if se := math.Sqrt2 * b / math.Sqrt(draws); math.Abs(mean) > 6*se {
				t.Errorf("noise mean %v, SE %v", mean, se)
			}
			if se := math.Sqrt(20*b*b*b*b/draws) + 0; math.Abs(v-2*b*b) > 6*se {
				t.Errorf("noise variance %v, want %v (SE %v)", v, 2*b*b, se)
			}
		})
	}
}
