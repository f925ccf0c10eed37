package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// bayesIEAdv is Definition 3.1 for one example of a finite mechanism with
// output laws p1 = P(z | y=1), p0 = P(z | y=0): min(η,1−η) minus the
// Bayes error Σ_z min(η p1, (1−η) p0).
func bayesIEAdv(eta float64, p1, p0 []float64) float64 {
	lost := 0.0
	for z := range p1 {
		lost += math.Min(eta*p1[z], (1-eta)*p0[z])
	}
	return math.Min(eta, 1-eta) - lost
}

// randomDPMech draws a random binary-input mechanism on m outputs whose
// likelihood ratios lie in [e^{−ε}, e^ε] (p1[z] = p0[z]·e^{ε·u_z} with
// u ∈ [−1, 1], then both normalized and re-checked).
func randomDPMech(r *rand.Rand, m int, eps float64) (p1, p0 []float64) {
	for {
		p1, p0 = make([]float64, m), make([]float64, m)
		var s1, s0 float64
		for z := range m {
			p0[z] = r.Float64() + 0.01
			p1[z] = p0[z] * math.Exp(eps*(2*r.Float64()-1))
			s1, s0 = s1+p1[z], s0+p0[z]
		}
		ok := true
		for z := range m {
			p1[z], p0[z] = p1[z]/s1, p0[z]/s0
			ok = ok && math.Abs(math.Log(p1[z]/p0[z])) <= eps
		}
		if ok {
			return p1, p0
		}
	}
}

// TestIEAdvBoundTheorem checks the theorem behind IEAdvBound on random
// finite mechanisms: every ε-label-DP one gives IEAdv ≤ IEAdvBound(η, ε)
// at every prior; RR(ε) attains it; and mechanisms that are only
// 2ε-DP exceed it at some prior (the bound is not vacuous, and the test
// would catch a bound 10% too low: RR at 1.1ε exceeds it).
func TestIEAdvBoundTheorem(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, eps := range []float64{0.1, 0.5, 1, 2, 4} {
		pi := 1 / (1 + math.Exp(eps))
		exceeded := false
		for range 300 {
			m := 2 + r.IntN(6)
			p1, p0 := randomDPMech(r, m, eps)
			q1, q0 := randomDPMech(r, m, 2*eps)
			for range 20 {
				eta := r.Float64()
				b := IEAdvBound(eta, eps)
				if got := bayesIEAdv(eta, p1, p0); got > b+1e-12 {
					t.Fatalf("ε=%v η=%v: an ε-DP mechanism has IEAdv %v > bound %v", eps, eta, got, b)
				}
				if rr := bayesIEAdv(eta, []float64{pi, 1 - pi}, []float64{1 - pi, pi}); math.Abs(rr-b) > 1e-12 {
					t.Fatalf("ε=%v η=%v: RR's IEAdv %v ≠ bound %v", eps, eta, rr, b)
				}
				exceeded = exceeded || bayesIEAdv(eta, q1, q0) > b+1e-9
			}
		}
		if !exceeded {
			t.Errorf("ε=%v: no 2ε-DP mechanism exceeded the ε bound", eps)
		}
		pi11 := 1 / (1 + math.Exp(1.1*eps))
		if bayesIEAdv(0.5, []float64{pi11, 1 - pi11}, []float64{1 - pi11, pi11}) <= IEAdvBound(0.5, eps) {
			t.Errorf("ε=%v: RR(1.1ε) does not exceed the ε bound at η = ½", eps)
		}
	}
	// ε = 0 reveals nothing; ε = ∞ may reveal the label: min(η, 1−η).
	if IEAdvBound(0.3, 0) != 0 || IEAdvBound(0.3, math.Inf(1)) != 0.3 || math.Abs(IEAdvBound(0.9, math.Inf(1))-0.1) > 1e-15 {
		t.Errorf("limits: ε=0 %v, ε=∞ %v %v", IEAdvBound(0.3, 0), IEAdvBound(0.3, math.Inf(1)), IEAdvBound(0.9, math.Inf(1)))
	}
}

// TestEAdvBoundInRun: Run's EAdvBound is the mean of IEAdvBound over the
// audited examples; every DP setting's per-example IEAdv (all samples
// kept) is at most its IEAdvBound; RR's EAdv equals its bound; bot's bound
// is 0; none and llp have none (NaN).
func TestEAdvBoundInRun(t *testing.T) {
	eta := uniformEta(3000, 17)
	beta := betaEta(3000, 2, 30, 18)
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 0.5}, {Kind: pets.RR, Epsilon: 3},
		{Kind: pets.LLPGeom, K: 1, Epsilon: 1}, {Kind: pets.LLPGeom, K: 8, Epsilon: 1}, {Kind: pets.LLPGeom, K: 64, Epsilon: 4},
		{Kind: pets.LLPLap, K: 2, Epsilon: 2}, {Kind: pets.LLPLap, K: 8, Epsilon: 0.5}, {Kind: pets.LLPLap, K: 16, Epsilon: 8, Secure: true},
		{Kind: pets.Bot}, {Kind: pets.None}, {Kind: pets.LLP, K: 8},
	} {
		m := testutil.MustNew(p)
		for _, e := range [][]float64{eta, beta} {
			res, err := Run(e, m, Options{Seed: 1, LabelDraws: 1, MaxSamples: len(e)})
			if err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			s := res.Summary
			switch p.Kind {
			case pets.None, pets.LLP:
				if !math.IsNaN(s.EAdvBound) {
					t.Errorf("%s: bound %v, want NaN", m, s.EAdvBound)
				}
				continue
			case pets.Bot:
				if s.EAdvBound != 0 {
					t.Errorf("bot: bound %v", s.EAdvBound)
				}
			}
			sum := 0.0
			for _, x := range res.Samples {
				b := IEAdvBound(x.Prior, m.Epsilon())
				sum += b
				if x.IEAdv > b+BoundTolerance {
					t.Fatalf("%s example %d (η %v): IEAdv %v > bound %v", m, x.Index, x.Prior, x.IEAdv, b)
				}
			}
			if want := sum / float64(len(res.Samples)); math.Abs(s.EAdvBound-want) > 1e-12 {
				t.Errorf("%s: EAdvBound %v, mean of bounds %v", m, s.EAdvBound, want)
			}
			if s.EAdv > s.EAdvBound+1e-12 {
				t.Errorf("%s: EAdv %v > bound %v", m, s.EAdv, s.EAdvBound)
			}
			if (p.Kind == pets.RR || p.Kind == pets.LLPGeom && p.K == 1) && math.Abs(s.EAdv-s.EAdvBound) > 1e-12 {
				t.Errorf("%s: RR-like EAdv %v ≠ bound %v", m, s.EAdv, s.EAdvBound)
			}
		}
	}
}
