package pets

import (
	"errors"
	"math"
	"math/big"
	"testing"

	"labelprivacy/ara"
)

func araEvent(t *testing.T, tv, w, r int, eps float64) (*Mechanism, *araEventLaw) {
	t.Helper()
	m, err := New(Params{Kind: ARAEvent, Epsilon: eps, TriggerData: tv, Windows: w, Reports: r, Classes: 1 + tv*w})
	if err != nil {
		t.Fatal(err)
	}
	return m, m.ExampleLaw().(*araEventLaw)
}

// TestARAEventChannelBruteForce builds the law of the release on the
// source's whole state space by enumeration — every state s of the
// space, P(s | y) = (1 − p)·1{s = y} + p/k with p = ara.FlipProbability —
// and projects it state by state onto the classes (ara.Space.Decode: a
// state of one report or none is its class, any other the release that
// shows none): the channel ara_event declares must equal it, and its
// form must hold (Channel.Check); within 1e-12 relative, the rounding of
// the enumeration's sum over up to 2,925 states.
func TestARAEventChannelBruteForce(t *testing.T) {
	cases := []struct {
		name    string
		t, w, r int
		eps     float64
	}{
		{"binary conversion, one report", 1, 1, 1, 1},
		{"binary conversion, two reports", 1, 1, 2, 0.5},
		{"event default", 2, 1, 1, 14},
		{"two values, two windows, two reports", 2, 2, 2, 2},
		{"three reports", 3, 2, 3, 4},
		{"navigation default", 8, 3, 3, 14},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, l := araEvent(t, tc.t, tc.w, tc.r, tc.eps)
			s := l.Space()
			c := m.Classes()
			p := ara.FlipProbability(new(big.Int).SetUint64(s.K), tc.eps)
			want := make([]float64, (c+1)*c)
			var cells []int
			for st := range s.K {
				cells = s.Decode(cells[:0], st)
				z := c // no class
				if len(cells) == 0 {
					z = 0
				} else if len(cells) == 1 {
					z = 1 + cells[0]
				}
				for y := range c {
					pr := p / float64(s.K)
					if st == uint64(y) {
						pr += 1 - p
					}
					want[z*c+y] += pr
				}
			}
			ch := m.FirstChannel()
			if err := ch.Check(); err != nil {
				t.Fatal(err)
			}
			if tc.r == 1 && (ch.Form != FormRR || ch.Z != c) || tc.r > 1 && (ch.Form != FormRRErased || ch.Z != c+1) {
				t.Fatalf("form %v with %d releases", ch.Form, ch.Z)
			}
			for z := range ch.Z {
				for y := range c {
					if got, w := ch.P[z*c+y], want[z*c+y]; math.Abs(got-w) > 1e-12*w+1e-18 {
						t.Fatalf("P(%d | %d) = %v, enumeration %v", z, y, got, w)
					}
				}
			}
			if tc.r == 1 {
				for y := range c {
					if want[c*c+y] != 0 {
						t.Fatalf("R = 1 has a state of no class")
					}
				}
			}
			// Given a release that is not erased, rr(ε) over the C classes.
			if wantFlip := float64(c-1) / (math.Exp(tc.eps) + float64(c-1)); math.Abs(m.FlipProb()-wantFlip) > 1e-12*wantFlip {
				t.Errorf("FlipProb %v, rr(ε) over %d classes %v", m.FlipProb(), c, wantFlip)
			}
		})
	}
}

// TestARAEventSampler draws states through ReleaseStates on small spaces:
// each state's frequency given each label within 6 binomial SE of
// (1 − p)·1{s = y} + p/k (a false failure below 2e-9 per frequency), and
// Release, from the same seed, writes the projections of those states.
func TestARAEventSampler(t *testing.T) {
	const draws = 100_000
	for _, tc := range []struct {
		name    string
		t, w, r int
		eps     float64
	}{
		{"binary, two reports", 1, 1, 2, 1},
		{"two values, two windows, two reports", 2, 2, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, l := araEvent(t, tc.t, tc.w, tc.r, tc.eps)
			k := l.States()
			p := l.p
			labels, states, proj := make([]uint8, draws), make([]uint64, draws), make([]uint8, draws)
			for y := range uint8(m.Classes()) {
				for i := range labels {
					labels[i] = y
				}
				l.ReleaseStates(states, labels, newRand(uint64(y)+1))
				l.Release(proj, labels, nil, newRand(uint64(y)+1))
				counts := make([]int, k)
				for i, s := range states {
					counts[s]++
					if proj[i] != l.Project(s) {
						t.Fatalf("draw %d: Release %d, the projection of state %d is %d", i, proj[i], s, l.Project(s))
					}
				}
				for s, n := range counts {
					want := p / float64(k)
					if uint64(s) == uint64(y) {
						want += 1 - p
					}
					got := float64(n) / draws
					if se := math.Sqrt(want*(1-want)/draws) + 1e-9; math.Abs(got-want) > 6*se {
						t.Errorf("label %d: state %d at frequency %v, want %v", y, s, got, want)
					}
				}
			}
		})
	}
}

// Bad parameters are refused naming the parameter a config names: more
// trigger-data values (or windows) than the labels have classes, ε ≤ 0 or
// above Chromium's 14, no report, Chromium's limits on windows and on a
// navigation source's information gain; and the summary's ε above 64 and
// budget splits that do not sum to at most 1.
func TestARAValidation(t *testing.T) {
	cases := []struct {
		name  string
		p     Params
		param string
	}{
		{"more trigger data than classes", Params{Kind: ARAEvent, Epsilon: 1, TriggerData: 4, Windows: 1, Reports: 1, Classes: 3}, "trigger_data"},
		{"more windows than classes", Params{Kind: ARAEvent, Epsilon: 1, TriggerData: 2, Windows: 2, Reports: 1, Classes: 3}, "windows"},
		{"fewer outcomes than classes", Params{Kind: ARAEvent, Epsilon: 1, TriggerData: 1, Windows: 1, Reports: 1, Classes: 3}, "windows"},
		{"ε = 0", Params{Kind: ARAEvent, TriggerData: 1, Windows: 1, Reports: 1}, "epsilon"},
		{"ε above 14", Params{Kind: ARAEvent, Epsilon: 14.5, TriggerData: 1, Windows: 1, Reports: 1}, "epsilon"},
		{"no report", Params{Kind: ARAEvent, Epsilon: 1, TriggerData: 1, Windows: 1}, "reports"},
		{"six windows", Params{Kind: ARAEvent, Epsilon: 1, TriggerData: 1, Windows: 6, Reports: 1, Classes: 7}, "windows"},
		{"above the information-gain cap", Params{Kind: ARAEvent, Epsilon: 14, TriggerData: 8, Windows: 3, Reports: 4, Classes: 25}, "epsilon"},
		{"a source given to rr", Params{Kind: RR, Epsilon: 1, TriggerData: 1}, "trigger_data"},
		{"no source", Params{Kind: ARAEvent, Epsilon: 1}, "trigger_data"},
		{"summary ε above 64", Params{Kind: ARASummary, Epsilon: 65, CountShare: 1}, "epsilon"},
		{"summary ε = 0", Params{Kind: ARASummary, CountShare: 1}, "epsilon"},
		{"no count share", Params{Kind: ARASummary, Epsilon: 1}, "budget_share"},
		{"shares above 1", Params{Kind: ARASummary, Epsilon: 1, CountShare: 0.75, ValueShare: 0.5}, "budget_share"},
		{"a value share on binary labels", Params{Kind: ARASummary, Epsilon: 1, CountShare: 0.5, ValueShare: 0.5}, "budget_share"},
		{"negative value share", Params{Kind: ARASummary, Epsilon: 1, CountShare: 0.5, ValueShare: -0.1}, "budget_share"},
		{"a budget given to llp_lap", Params{Kind: LLPLap, K: 4, Epsilon: 1, CountShare: 1}, "budget_share"},
		{"a value share alone on binary labels", Params{Kind: ARASummary, Epsilon: 1, ValueShare: 1}, "budget_share"},
		{"values: a count share", Params{Kind: ARASummary, Epsilon: 1, CountShare: 0.5, ValueShare: 0.5, Values: UnitGrid}, "budget_share"},
		{"values: a count share alone", Params{Kind: ARASummary, Epsilon: 1, CountShare: 1, Values: UnitGrid}, "budget_share"},
		{"values: no share", Params{Kind: ARASummary, Epsilon: 1, Values: UnitGrid}, "budget_share"},
		{"values: a value share above 1", Params{Kind: ARASummary, Epsilon: 1, ValueShare: 1.5, Values: UnitGrid}, "budget_share"},
		{"values: ε above 64", Params{Kind: ARASummary, Epsilon: 65, ValueShare: 1, Values: UnitGrid}, "epsilon"},
		{"values: ε = 0", Params{Kind: ARASummary, ValueShare: 1, Values: UnitGrid}, "epsilon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.p)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("got %v, want a ParamError on %q", err, tc.param)
			}
		})
	}
	// Chromium's own defaults at its ε pass.
	for _, p := range []Params{
		{Kind: ARAEvent, Epsilon: 14, TriggerData: 8, Windows: 3, Reports: 3, Classes: 25},
		{Kind: ARAEvent, Epsilon: 14, TriggerData: 2, Windows: 1, Reports: 1, Classes: 3},
		{Kind: ARASummary, Epsilon: 64, CountShare: 1},
		{Kind: ARASummary, Epsilon: 64, ValueShare: 1, Values: Grid{Max: 400, Step: 1}},
	} {
		if _, err := New(p); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
}

// ara_summary's count is llp_lap's law at rate ε·share: the released
// proportion's noise has mean 0 and variance 2/(n·ε·share)² (within 5 SE
// of 40,000 draws; the variance of a Laplace variance estimate is 5σ⁴/N).
func TestARASummaryNoise(t *testing.T) {
	m, err := New(Params{Kind: ARASummary, Epsilon: 2, CountShare: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if m.BagLaw().NoiseRate() != 0.5 || m.BagLaw().SumNoise() != SumLaplace || m.Epsilon() != 2 {
		t.Fatalf("rate %v, noise %v, ε %v", m.BagLaw().NoiseRate(), m.BagLaw().SumNoise(), m.Epsilon())
	}
	const n, draws = 10, 40_000
	r := newRand(3)
	var s, ss float64
	for range draws {
		d := m.ReleaseBag(3, n, r) - 0.3
		s += d
		ss += d * d
	}
	v := 2 / math.Pow(n*0.5, 2)
	if mean := s / draws; math.Abs(mean) > 5*math.Sqrt(v/draws) {
		t.Errorf("mean noise %v", mean)
	}
	if got := ss / draws; math.Abs(got-v) > 5*math.Sqrt(5*v*v/draws) {
		t.Errorf("noise variance %v, want %v", got, v)
	}
}
