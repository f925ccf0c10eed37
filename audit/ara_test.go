package audit

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"labelprivacy/ara"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// araSamplerC releases through the production code (release.Apply: the
// states of ara_event, projected), for RunC.
type araSamplerC struct{}

func (araSamplerC) ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*ReleasedC, error) {
	rel, err := release.Apply(labels, m, release.Options{Noise: pets.NoiseSimulation, Seed: seed})
	if err != nil {
		return nil, err
	}
	f := rel.Simulation()
	out := &ReleasedC{Row: make([]int, len(f.Row)), Label: f.LabelRR}
	for i, r := range f.Row {
		out.Row[i] = int(r)
	}
	return out, nil
}

// araBrute is the exact audit of ara_event by enumeration of the source's
// whole state space: for an example of prior η (C values) IEAdv =
// Σ_s max_y η_y·P(s | y) − max_y η_y over the k states s, P(s | y) =
// (1 − p)·1{s = y} + p/k (ara.FlipProbability), and |MA| of state s
// max_{a,b} log P(s | a)/P(s | b); it returns EAdv, E|MA| (each example's
// expectation over y ~ η and the state) and the largest |MA| of a state.
func araBrute(eta []float64, c int, k uint64, eps float64) (eadv, maMean, maMax float64) {
	p := ara.FlipProbability(new(big.Int).SetUint64(k), eps)
	lik := func(s uint64, y int) float64 {
		v := p / float64(k)
		if s == uint64(y) {
			v += 1 - p
		}
		return v
	}
	n := len(eta) / c
	for i := range n {
		e := eta[i*c : (i+1)*c]
		top := 0.0
		for _, v := range e {
			top = max(top, v)
		}
		ie, ma := -top, 0.0
		for s := range k {
			best, lo, hi, mass := 0.0, math.Inf(1), 0.0, 0.0
			for y := range c {
				l := lik(s, y)
				best = max(best, e[y]*l)
				lo, hi = min(lo, l), max(hi, l)
				mass += e[y] * l
			}
			ie += best
			m := math.Log(hi / lo)
			ma += mass * m
			maMax = max(maMax, m)
		}
		eadv += ie
		maMean += ma
	}
	return eadv / float64(n), maMean / float64(n), maMax
}

// ara_event's exact audit equals the brute-force enumeration of its whole
// state space (EAdv within 1e-12; |MA| at most ε, the largest state's
// exactly ε; the mean realized |MA| within 5 SE of its exact expectation,
// |MA| being 0 or ε, a false failure below 1e-6), on binary labels and on
// C classes, with states of no class (R ≥ 2) and without (R = 1, where it
// is rr over the classes, audited the same); EAdv is within the ε-DP
// worst case, and the realized attack through the production sampler
// (release.Apply's states, projected) agrees with the stated law (no
// SamplerError, |RealizedZ| < 5).
func TestARAEventAuditBruteForce(t *testing.T) {
	cases := []struct {
		name    string
		t, w, r int
		eps     float64
	}{
		{"binary, one report (rr)", 1, 1, 1, 1},
		{"binary, two reports", 1, 1, 2, 0.5},
		{"binary, three reports", 1, 1, 3, 3},
		{"event default", 2, 1, 1, 2},
		{"two values, two reports", 2, 1, 2, 1},
		{"two values × two windows, two reports", 2, 2, 2, 2},
		{"navigation-like, 3 × 2, three reports", 3, 2, 3, 4},
	}
	const n, draws = 1500, 40
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := 1 + tc.t*tc.w
			m := mcMech(pets.Params{Kind: pets.ARAEvent, Epsilon: tc.eps, TriggerData: tc.t, Windows: tc.w, Reports: tc.r}, max(c, 3)*boolInt(c >= 3))
			sl := m.ExampleLaw().(pets.StateLaw)
			eta := mcAuditSet(n, c, 7)
			if c == 2 {
				r := rand.New(rand.NewPCG(3, 4))
				for i := range n {
					e := r.Float64()
					eta[2*i], eta[2*i+1] = 1-e, e
				}
			}
			res, err := RunC(eta, m, OptionsC{Seed: 5, LabelDraws: draws, Sampler: araSamplerC{}, Draws: 20})
			if err != nil {
				t.Fatal(err)
			}
			wantE, wantMA, wantMax := araBrute(eta, c, sl.States(), tc.eps)
			if math.Abs(res.EAdv-wantE) > 1e-12 {
				t.Errorf("EAdv %v, enumeration %v", res.EAdv, wantE)
			}
			if math.Abs(wantMax-tc.eps) > 1e-9 || res.MAMax > tc.eps+1e-9 || res.MAMax < tc.eps-1e-9 {
				t.Errorf("|MA| max %v, enumeration %v, ε %v", res.MAMax, wantMax, tc.eps)
			}
			f := wantMA / tc.eps // P(|MA| = ε)
			if se := tc.eps * math.Sqrt(f*(1-f)/float64(n*draws)); math.Abs(res.MAMean-wantMA) > 5*se+1e-3*wantMA {
				t.Errorf("mean |MA| %v, enumeration %v (SE %v)", res.MAMean, wantMA, se)
			}
			if !(res.EAdv <= res.EAdvBound+1e-12) {
				t.Errorf("EAdv %v above the ε-DP worst case %v", res.EAdv, res.EAdvBound)
			}
			if math.IsNaN(res.RealizedZ) || math.Abs(res.RealizedZ) > 5 {
				t.Errorf("realized attack z = %v (gain %v ± %v)", res.RealizedZ, res.RealizedGain, res.RealizedGainSE)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ara_event's canaries certify at least 0.9·ε at ε ≤ 4 with 10,000
// canaries, on small state spaces with states of no class (binary
// conversions, two reports: k = 3 of which one shows no class, about
// p/3 of the canaries erased; two trigger-data values, two reports: k = 6)
// and without (the event default, k = 3). The bound's law: a canary is
// guessed when its release is one of the coin's two classes, right with
// probability e^ε/(1+e^ε); at ε = 1 the bound falls below 0.9·ε with
// probability about 1% per case (the 95% Clopper–Pearson bound of ~7,900
// guesses has to stay above logit⁻¹(0.9)), at ε ≥ 2 below 1e-6; the seeds
// are fixed.
func TestARAEventCanaries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		t, w, r int
	}{
		{"binary, two reports", 1, 1, 2},
		{"event default", 2, 1, 1},
		{"two values, two reports", 2, 1, 2},
	} {
		for _, eps := range []float64{1, 2, 4} {
			c := 1 + tc.t*tc.w
			m := mcMech(pets.Params{Kind: pets.ARAEvent, Epsilon: eps, TriggerData: tc.t, Windows: tc.w, Reports: tc.r}, c*boolInt(c >= 3))
			eta := mcAuditSet(2000, c, 11)
			res, err := RunC(eta, m, OptionsC{Seed: 13, LabelDraws: 1, Sampler: araSamplerC{}, Draws: 1, Canaries: 10000})
			if err != nil {
				t.Fatalf("%s ε=%v: %v", tc.name, eps, err)
			}
			if res.Canaries != 10000 || !(res.EpsLower >= 0.9*eps) || res.EpsLower > eps*1.05 {
				t.Errorf("%s ε=%v: %d canaries certify ε ≥ %v", tc.name, eps, res.Canaries, res.EpsLower)
			}
		}
	}
}
