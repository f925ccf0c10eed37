package audit

import (
	"flag"
	"fmt"
	"math"
	"testing"
	"time"

	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

var canarySims = flag.Int("canary-sims", 0, "TestSimulatedAudits: simulated audits per mechanism (0: skip the test)")

// TestSimulatedAudits measures the canary audit as
// docs/audit-measurements.md reports it: per mechanism, -canary-sims
// audits (seeds 0, 1, …) of 10000 canaries through the production sampler
// on an audit set of 10000 uniform η
// (rr_prior: uniform public priors, 46% of the rows on the RR branch at
// ε = 1), and prints a Markdown table of mean eps_lower/ε, the rate above ε
// with its 95% Clopper–Pearson interval, the largest value, the count above
// 1.05·ε, the real-bags game's mean and the time per audit (the whole Run
// with one realized draw). Skipped unless -canary-sims > 0 (1000 audits of
// the 12 settings take about 10 minutes on 2 cores):
//
//	go test ./audit -run TestSimulatedAudits -canary-sims 1000 -v
//
// It fails if a mechanism misses its targets (mean ≥ 0.95·ε for rr at
// ε = 1, ≥ 0.85·ε for llp_geom and llp_lap at k = 8, ε = 1) or if the rate
// above ε is beyond what ≤ 5% allows: the lower end of its 99.9%
// interval above 5% (a false failure once in 2000 settings).
func TestSimulatedAudits(t *testing.T) {
	sims := *canarySims
	if sims <= 0 {
		t.Skip("run with -canary-sims N")
	}
	const n = 10000
	eta, prior := uniformEta(n, 21), uniformEta(n, 22)
	fmt.Printf("| mechanism | ε | k | mean eps_lower/ε | sd | rate above ε (95%% CI) | max/ε | above 1.05·ε | real bags: mean/ε | audits | s/audit |\n")
	fmt.Printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, tc := range []struct {
		p      pets.Params
		target float64
	}{
		{pets.Params{Kind: pets.RR, Epsilon: 0.5}, 0},
		{pets.Params{Kind: pets.RR, Epsilon: 1}, 0.95},
		{pets.Params{Kind: pets.RR, Epsilon: 4}, 0},
		{pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 0},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, 0.85},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2}, 0},
		{pets.Params{Kind: pets.LLPGeom, K: 16, Epsilon: 1}, 0},
		{pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 1}, 0},
		{pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 1}, 0.85},
		{pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 2}, 0},
		{pets.Params{Kind: pets.LLPLap, K: 16, Epsilon: 1}, 0},
		{pets.Params{Kind: pets.LLP, K: 8}, 0},
	} {
		m := testutil.MustNew(tc.p)
		eps := m.Epsilon()
		scale := eps
		if math.IsInf(eps, 1) {
			scale = 1 // llp: the figures themselves
		}
		var sum, sq, real, mx float64
		above, above105 := 0, 0
		start := time.Now()
		for seed := range sims {
			o := Options{Seed: uint64(seed), LabelDraws: 1, Sampler: releaseSampler{}, Draws: 1, Canaries: 10000}
			if tc.p.Kind == pets.RRPrior {
				o.Prior, o.Sampler = prior, releaseSampler{prior: prior}
			}
			res, err := Run(eta, m, o)
			if err != nil {
				t.Fatalf("%s seed %d: %v", m, seed, err)
			}
			if res.Canaries != 10000 {
				t.Fatalf("%s seed %d: %d canaries", m, seed, res.Canaries)
			}
			v := res.EpsLower / scale
			sum, sq, mx = sum+v, sq+v*v, max(mx, v)
			real += res.EpsLowerRealBags / scale
			if res.EpsLower > eps {
				above++
			}
			if res.EpsLower > 1.05*eps {
				above105++
			}
		}
		per := time.Since(start).Seconds() / float64(sims)
		N := float64(sims)
		mean := sum / N
		sd := math.Sqrt(max(0, sq/N-mean*mean) * N / max(1, N-1))
		rate, lo, hi := "n/a", 0.0, 0.0
		if !math.IsInf(eps, 1) {
			lo, hi = cpLower(above, sims, 0.025), cpUpper(above, sims, 0.025)
			rate = fmt.Sprintf("%.1f%% (%.1f–%.1f%%)", 100*float64(above)/N, 100*lo, 100*hi)
			if cpLower(above, sims, 0.0005) > 0.05 {
				t.Errorf("%s: eps_lower above ε in %d of %d audits", m, above, sims)
			}
		}
		epsCell := fmt.Sprint(eps)
		if math.IsInf(eps, 1) {
			epsCell = "∞"
		}
		k := "–"
		if m.K() > 0 {
			k = fmt.Sprint(m.K())
		}
		realCell := "–"
		if m.Kind().IsLLP() {
			realCell = fmt.Sprintf("%.3f", real/N)
		}
		fmt.Printf("| %s | %s | %s | %.3f | %.3f | %s | %.3f | %d | %s | %d | %.3f |\n",
			m.Kind(), epsCell, k, mean, sd, rate, mx, above105, realCell, sims, per)
		if mean < tc.target {
			t.Errorf("%s: mean eps_lower %.3f·ε, target %v·ε", m, mean, tc.target)
		}
	}
}
