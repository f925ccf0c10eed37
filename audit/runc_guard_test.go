package audit

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"labelprivacy/pets"
)

// TestRunCRealizedAgrees: on 10,000 examples of Dirichlet η with the true
// η, the accuracy gain the Bayes attacker realizes on releases made by an
// honest sampler (mcSampler, pets' own release functions) agrees with the
// exact (or estimated) EAdv within zAgree combined SEs, and so does the
// guard's RealizedZ (|z| ≤ zAgree, tighter than GuardZ), for rr, rr_prior,
// llp, llp_geom and llp_lap at C = 10 (k = 4, small enough to attack every
// bag) and C = 3 (k = 8); bot realizes exactly 0. Skipped with -short.
func TestRunCRealizedAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("40 releases of 10,000 examples per mechanism")
	}
	const n, draws = 10000, 40
	for _, c := range []int{3, 10} {
		k := 8
		if c == 10 {
			k = 4
		}
		eta, prior := mcAuditSet(n, c, 31), mcAuditSet(n, c, 32)
		for _, p := range []pets.Params{
			{Kind: pets.RR, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 2}, {Kind: pets.LLP, K: k},
			{Kind: pets.LLPGeom, K: k, Epsilon: 2}, {Kind: pets.LLPLap, K: k, Epsilon: 2}, {Kind: pets.Bot},
		} {
			m := mcMech(p, c)
			t.Run(m.String(), func(t *testing.T) {
				o := OptionsC{Seed: 3, LabelDraws: 1, Sampler: mcSampler{}, Draws: draws, BagDraws: 8}
				if p.Kind == pets.RRPrior {
					o.Prior, o.Sampler = prior, mcSampler{prior: prior}
				}
				res, err := RunC(eta, m, o)
				if err != nil {
					t.Fatal(err)
				}
				s := res.Summary
				if s.RealizedDraws != draws || s.Canaries != 0 || !math.IsNaN(s.EpsLower) || !math.IsNaN(s.EpsLowerRealBags) {
					t.Fatalf("draws %d canaries %d eps_lower %v", s.RealizedDraws, s.Canaries, s.EpsLower)
				}
				if p.Kind == pets.Bot {
					if s.RealizedGain != 0 || s.RealizedGainSE != 0 || s.RealizedZ != 0 {
						t.Fatalf("bot realized %v ± %v (z %v)", s.RealizedGain, s.RealizedGainSE, s.RealizedZ)
					}
					return
				}
				z := (s.RealizedGain - s.EAdv) / math.Hypot(s.RealizedGainSE, s.EAdvSE)
				t.Logf("EAdv %.5f ± %.5f (estimated %v), realized %.5f ± %.5f: z %+.2f; guard z %+.2f",
					s.EAdv, s.EAdvSE, s.EAdvEstimated, s.RealizedGain, s.RealizedGainSE, z, s.RealizedZ)
				if !(math.Abs(z) <= zAgree) || !(math.Abs(s.RealizedZ) <= zAgree) {
					t.Fatalf("realized %v vs EAdv %v: z %.2f, guard z %.2f", s.RealizedGain, s.EAdv, z, s.RealizedZ)
				}
			})
		}
	}
}

// TestRunCGuardFailsWrongSampler is the guard with power at C = 10 (and C =
// 3 for llp_lap), with the pipeline's defaults (10,000 examples, 20 draws,
// 10,000 canaries; 4,000 examples and 5 draws for the bags of C = 10,
// whose attack costs ~0.25 s per release): a sampler that releases at 4ε (mcSampler.epsScale, a
// test-only hook) fails RunC with an error saying that the releases
// disagree with the stated likelihood, for rr, rr_prior, llp_geom and
// llp_lap; so do samplers at ε/4 (more noise than stated), one that
// shuffles which example sits in which bag, one that shows an llp count
// that is not the bag's, one that releases a class outside rr_prior's set
// and one that shows a label ≥ C. The honest sampler passes the same
// audits (each distinct one audited once: cases of one mechanism, η and
// prior share it, as it depends on nothing else). Skipped with -short.
func TestRunCGuardFailsWrongSampler(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size audits")
	}
	const n = 10000
	honest := map[string]error{} // by mechanism, classes and priors: the honest audit's outcome
	for _, tc := range []struct {
		name    string
		p       pets.Params
		c       int
		sampler func(prior []float64) SamplerC
		want    string
	}{
		{"rr at 4ε", pets.Params{Kind: pets.RR, Epsilon: 1}, 10, scaled(4), "has mean"},
		{"rr at ε/4", pets.Params{Kind: pets.RR, Epsilon: 1}, 10, scaled(0.25), "has mean"},
		// At 4ε RRWithPrior chooses other sets (smaller ones where the
		// prior is confident): some label is released outside the set
		// the stated law has.
		{"rr_prior at 4ε", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 10, scaled(4), "never releases"},
		// With flat priors every set is all C classes at any ε (M_k = k/C,
		// and k/(e^ε+k−1) grows with k): the same sets, a kept label too
		// often, seen by the PIT.
		{"rr_prior at 4ε, flat priors", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 10, scaled(4), "has mean"},
		{"llp_geom at 4ε", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2}, 10, scaled(4), "probability integral transform"},
		{"llp_geom at ε/4", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2}, 10, scaled(0.25), "probability integral transform"},
		{"llp_lap at 4ε", pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 2}, 3, scaled(4), "less noisy"},
		{"llp_geom with shuffled bags", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 2}, 10, damaged(func(rel *ReleasedC, r *rand.Rand) {
			r.Shuffle(len(rel.Row), func(i, j int) { rel.Row[i], rel.Row[j] = rel.Row[j], rel.Row[i] })
		}), "more noisy"},
		{"llp with a wrong count", pets.Params{Kind: pets.LLP, K: 8}, 10, damaged(func(rel *ReleasedC, r *rand.Rand) {
			for j := range rel.Row {
				if rel.Bag[j] == rel.Bag[0] {
					rel.Alpha[j*9+2] += 1.0 / 8 // class 3: one label more than the bag holds
				}
			}
		}), "impossible under the stated law"},
		{"rr_prior outside the set", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 10, func(prior []float64) SamplerC {
			return lyingSamplerC{mcSampler{prior: prior}, func(rel *ReleasedC, r *rand.Rand) {
				// Row 0's least likely class under its prior is in no set
				// of more than C−1 classes; its set has fewer here.
				low, lv := 0, 2.0
				for y, v := range prior[:10] {
					if v < lv {
						low, lv = y, v
					}
				}
				rel.Label[0] = uint8(low)
			}}
		}, "never releases"},
		{"rr showing label C", pets.Params{Kind: pets.RR, Epsilon: 1}, 10, damaged(func(rel *ReleasedC, r *rand.Rand) { rel.Label[3] = 10 }), "is not in 0..9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, draws := n, 20
			if tc.c == 10 && tc.p.Kind.IsLLP() {
				n, draws = 4000, 5
			}
			eta, prior := mcAuditSet(n, tc.c, 5), mcAuditSet(n, tc.c, 6)
			if strings.Contains(tc.name, "flat") {
				for i := range prior {
					prior[i] = 1 / float64(tc.c)
				}
			}
			m := mcMech(tc.p, tc.c)
			o := OptionsC{Seed: 9, LabelDraws: 1, Draws: draws, Canaries: 10000, Sampler: tc.sampler(prior), BagDraws: 2}
			if tc.p.Kind == pets.RRPrior {
				o.Prior = prior
			}
			_, err := RunC(eta, m, o)
			var se *SamplerError
			if !errors.Is(err, ErrReleaseMismatch) || !errors.As(err, &se) {
				t.Fatalf("err %v, want a SamplerError", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "the mechanism's releases disagree with its stated likelihood") ||
				!strings.Contains(msg, tc.want) || !strings.Contains(msg, m.String()) {
				t.Fatalf("message %q lacks %q", msg, tc.want)
			}
			t.Log(err)
			key := fmt.Sprint(tc.p, tc.c, strings.Contains(tc.name, "flat"))
			if _, done := honest[key]; !done {
				o.Sampler = mcSampler{prior: prior}
				_, honest[key] = RunC(eta, m, o)
			}
			if err := honest[key]; err != nil {
				t.Fatalf("honest sampler: %v", err)
			}
		})
	}
}

func scaled(f float64) func([]float64) SamplerC {
	return func(prior []float64) SamplerC { return mcSampler{prior: prior, epsScale: f} }
}

func damaged(d func(*ReleasedC, *rand.Rand)) func([]float64) SamplerC {
	return func(prior []float64) SamplerC { return lyingSamplerC{mcSampler{prior: prior}, d} }
}

// TestRunCGuardNoFalseFailures: the full self-check on an honest sampler
// over many seeds at C = 5 (1,000 examples, 8 draws, 1,000 canaries): no
// audit fails (each check's false-failure rate is ≤ 2e-9, so over these
// 100 audits ≤ 1e-6), the 95% eps_lower of the DP kinds exceeds ε in at
// most 14 of their 100 audits (each does with probability ≤ 5%; 15 or
// more of 100 has probability 1.1e-3), and RealizedZ behaves as a standard
// normal (its sd over the audits within [0.6, 1.5]: for 100 N(0,1) draws
// that fails with probability < 1e-6). -short runs 5 seeds.
func TestRunCGuardNoFalseFailures(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 5
	}
	const c = 5
	eta, prior := mcAuditSet(1000, c, 13), mcAuditSet(1000, c, 14)
	var zs []float64
	above, dp := 0, 0
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 2}, {Kind: pets.LLP, K: 4},
		{Kind: pets.LLPGeom, K: 4, Epsilon: 2}, {Kind: pets.LLPLap, K: 4, Epsilon: 2},
	} {
		m := mcMech(p, c)
		for seed := range seeds {
			o := OptionsC{Seed: uint64(seed), LabelDraws: 1, Sampler: mcSampler{}, Draws: 8, Canaries: 1000, BagDraws: 4}
			if p.Kind == pets.RRPrior {
				o.Prior, o.Sampler = prior, mcSampler{prior: prior}
			}
			res, err := RunC(eta, m, o)
			if err != nil {
				t.Fatalf("%s seed %d: %v", m, seed, err)
			}
			if m.Kind() != pets.LLP {
				dp++
				if res.EpsLower > m.Epsilon() {
					above++
				}
			}
			zs = append(zs, res.RealizedZ)
		}
	}
	if above*100 > 14*dp {
		t.Errorf("eps_lower above ε in %d of %d audits", above, dp)
	}
	_, se := meanSE(zs)
	sd := se * math.Sqrt(float64(len(zs)))
	t.Logf("RealizedZ over %d audits: sd %.3f; eps_lower above ε in %d of %d", len(zs), sd, above, dp)
	if !testing.Short() && !(sd > 0.6 && sd < 1.5) {
		t.Fatalf("sd of RealizedZ %v, want about 1", sd)
	}
}

// TestRunCDeterminism: the same seed gives the same Result (printed with
// %v: every float64 bit, samples included) whatever the number of workers,
// for a per-example kind, an exact and an estimated bag kind, with a
// sampler and canaries; another seed gives another. 140,000 examples make
// three chunks of work (65,536 examples or 16,384–21,845 bags each), so
// the workers really split the exact pass. Skipped with -short.
func TestRunCDeterminism(t *testing.T) {
	if testing.Short() {
		t.Skip("140,000 examples")
	}
	const c, n = 4, 140000
	eta, prior := mcAuditSet(n, c, 51), mcAuditSet(n, c, 52)
	for _, p := range []pets.Params{{Kind: pets.RRPrior, Epsilon: 1}, {Kind: pets.LLP, K: 3}, {Kind: pets.LLPGeom, K: 4, Epsilon: 1}} {
		m := mcMech(p, c)
		var first string
		for _, workers := range []int{1, 2, 5} {
			o := OptionsC{Seed: 7, LabelDraws: 2, MaxSamples: 100, Workers: workers, Sampler: mcSampler{}, Draws: 3, Canaries: 1000,
				BagDraws: 2, ExactWork: -1}
			if p.Kind == pets.RRPrior {
				o.Prior, o.Sampler = prior, mcSampler{prior: prior}
			}
			res, err := RunC(eta, m, o)
			if err != nil {
				t.Fatal(err)
			}
			if p.Kind == pets.LLPGeom && !res.EAdvEstimated {
				t.Fatal("llp_geom not estimated")
			}
			got := fmt.Sprintf("%+v", res)
			if first == "" {
				first = got
				o.Seed = 8
				other, err := RunC(eta, m, o)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprintf("%+v", other) == got {
					t.Fatalf("%v: seeds 7 and 8 give the same result", m)
				}
				continue
			}
			if got != first {
				t.Fatalf("%v: workers=%d differs from workers=1", m, workers)
			}
		}
	}
}

// TestCanaryScoreC: the closed-form score of the LLP family's controlled
// canaries (scoreCanaries: other labels 0, each canary a coin between
// classes 1 and 2) equals the general count-vector likelihood ratio
// (BagAuditorC.Likelihoods with the canaries' η = ½ on classes 1 and 2 and
// the other members one-hot on class 0) to relative 1e-9, for llp,
// llp_geom and llp_lap at C = 4, bags of 5 with 1 to 4 canaries.
func TestCanaryScoreC(t *testing.T) {
	const c, n = 4, 5
	r := rand.New(rand.NewPCG(71, 72))
	for _, p := range []pets.Params{{Kind: pets.LLP, K: n}, {Kind: pets.LLPGeom, K: n, Epsilon: 1.5}, {Kind: pets.LLPLap, K: n, Epsilon: 3}} {
		m := mcMech(p, c)
		run, err := newRunnerC(mcAuditSet(n, c, 1), m, OptionsC{LabelDraws: 1})
		if err != nil {
			t.Fatal(err)
		}
		w := run.newRWorker()
		a, err := NewBagAuditorC(m, n)
		if err != nil {
			t.Fatal(err)
		}
		members := []int{0, 1, 2, 3, 4}
		eta := make([]float64, n*c)
		dst := make([]float64, n*c)
		alpha := make([]float64, c-1)
		counts := make([]int, c)
		checked := 0
		for j := 1; j <= 4; j++ {
			for range 20 {
				clear(eta)
				clear(counts)
				for i := range n {
					w.canary[i] = i < j
					w.labels[i] = 0
					if i < j {
						eta[i*c+1], eta[i*c+2] = 0.5, 0.5
						w.labels[i] = uint8(1 + r.IntN(2))
					} else {
						eta[i*c] = 1
					}
					counts[w.labels[i]]++
				}
				m.BagLaw().ReleaseBag(alpha, counts, r)
				out := releaseStats{limit: 100}
				w.scoreCanaries(&out, members, alpha)
				if len(out.trials) != j {
					t.Fatalf("%v: %d trials for %d canaries", m, len(out.trials), j)
				}
				if err := a.Likelihoods(dst, eta, alpha); err != nil {
					t.Fatal(err)
				}
				for i, tr := range out.trials {
					want := logLR(dst[i*c+2], dst[i*c+1])
					if tr.s != want && !closeRel(tr.s, want, 1e-12, 1e-9) {
						t.Fatalf("%v, %d canaries, release %v: score %v, count-vector ratio %v", m, j, alpha, tr.s, want)
					}
					if (tr.y == 1) != (w.labels[i] == 2) {
						t.Fatalf("trial coin %d for label %d", tr.y, w.labels[i])
					}
					checked++
				}
			}
		}
		t.Logf("%v: %d canary scores checked", m, checked)
	}
}

// TestRunCSamples pins the samples' meaning at C ≥ 3: Prior is η of the
// drawn label, Posterior the Bayes posterior of that label given the
// released value (recomputed here from pets' likelihood for rr, rr_prior
// and bot), IEAdv the example's exact IEAdv, AbsMA MultAdvC of the draw;
// for the LLP family Release is the released proportion of the drawn
// label's class (in [0, 1] for llp), and every kind keeps Figure 1's reading: |logit(Posterior)
// − logit(Prior)| ≤ AbsMA (+1e-9).
func TestRunCSamples(t *testing.T) {
	const c, n = 5, 400
	eta, prior := mcAuditSet(n, c, 81), mcAuditSet(n, c, 82)
	logit := func(p float64) float64 { return math.Log(p) - math.Log1p(-p) }
	for _, p := range []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 2}, {Kind: pets.Bot},
		{Kind: pets.LLPGeom, K: 4, Epsilon: 2}, {Kind: pets.LLP, K: 3}} {
		m := mcMech(p, c)
		o := OptionsC{Seed: 2, LabelDraws: 2, MaxSamples: n}
		if p.Kind == pets.RRPrior {
			o.Prior = prior
		}
		res, err := RunC(eta, m, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Samples) != res.NExamples {
			t.Fatalf("%v: %d samples", m, len(res.Samples))
		}
		lik, post := make([]float64, c), make([]float64, c)
		for _, s := range res.Samples {
			e := eta[s.Index*c : (s.Index+1)*c]
			if s.Prior != e[s.Label] || !(s.Posterior > 0 && s.Posterior <= 1) {
				t.Fatalf("%v sample %+v: prior %v", m, s, e[s.Label])
			}
			if d := math.Abs(logit(s.Posterior) - logit(s.Prior)); d > s.AbsMA+1e-9 && !math.IsInf(s.AbsMA, 1) {
				t.Fatalf("%v sample %+v: log odds moved %v > |MA|", m, s, d)
			}
			if m.Kind().IsLLP() {
				// llp's proportions are exact; a noisy kind's implied class-0
				// value 1 − Σα may leave [0, 1].
				if s.Bag < 0 || math.IsNaN(s.Release) || (p.Kind == pets.LLP && !(s.Release >= 0 && s.Release <= 1)) {
					t.Fatalf("%v sample %+v", m, s)
				}
				continue
			}
			var set *pets.Channel
			var wantIE float64
			switch p.Kind {
			case pets.RRPrior:
				set = chanOf(m, prior[s.Index*c:(s.Index+1)*c])
			default:
				set = chanOf(m, nil)
			}
			switch p.Kind {
			case pets.RRPrior:
				wantIE = IEAdvChannelC(e, set)
			case pets.RR:
				wantIE = IEAdvRRC(e, set)
			}
			if p.Kind == pets.Bot {
				clear(lik)
				for y := range lik {
					lik[y] = 1
				}
			} else {
				ExampleLikelihoodsC(lik, set, uint8(s.Release))
			}
			PosteriorC(post, e, lik)
			if s.Bag != -1 || s.IEAdv != wantIE || math.Abs(s.Posterior-post[s.Label]) > 1e-15 || s.AbsMA != MultAdvC(nil, lik) {
				t.Fatalf("%v sample %+v: posterior %v IEAdv %v |MA| %v", m, s, post[s.Label], wantIE, MultAdvC(nil, lik))
			}
		}
	}
}

var canarySimsC = flag.Int("canary-sims-c", 0, "TestSimulatedAuditsC: simulated audits per mechanism (0: skip the test)")

// TestSimulatedAuditsC measures the C-class canary audit as
// docs/audit-measurements.md reports it: per mechanism, -canary-sims-c
// audits (seeds 0, 1, …) of 10,000 canaries through mcSampler on an audit
// set of 10,000 Dirichlet η at C = 10 (rr_prior: public priors drawn
// alike, independent of η), printing a Markdown table of mean
// eps_lower/ε, its sd, the rate above ε with its 95%
// Clopper–Pearson interval, the largest value, the count above 1.05·ε and
// the time per audit (the whole RunC with one realized draw, LabelDraws 1
// and BagDraws 2: the exact pass is not what is measured). Skipped unless
// -canary-sims-c > 0:
//
//	go test ./audit -run TestSimulatedAuditsC -canary-sims-c 200 -v
//
// It fails if the rate above ε is beyond what ≤ 5% allows (the lower end of
// its 99.9% interval above 5%). -canary-kinds selects mechanisms by name.
func TestSimulatedAuditsC(t *testing.T) {
	sims := *canarySimsC
	if sims <= 0 {
		t.Skip("run with -canary-sims-c N")
	}
	const n, c = 10000, 10
	eta, prior := mcAuditSet(n, c, 21), mcAuditSet(n, c, 22)
	fmt.Printf("| mechanism | mean eps_lower/ε | sd | rate above ε (95%% CI) | max/ε | above 1.05·ε | audits | s/audit |\n")
	fmt.Printf("|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLPGeom, K: 8, Epsilon: 2}, {Kind: pets.RRPrior, Epsilon: 1},
		{Kind: pets.LLPLap, K: 8, Epsilon: 2}, {Kind: pets.RR, Epsilon: 4},
	} {
		m := mcMech(p, c)
		if *canaryKinds != "" && !strings.Contains(","+*canaryKinds+",", ","+m.String()+",") {
			continue
		}
		eps := m.Epsilon()
		var sum, sq, mx float64
		above, above105 := 0, 0
		start := time.Now()
		for seed := range sims {
			o := OptionsC{Seed: uint64(seed), LabelDraws: 1, BagDraws: 2, Sampler: mcSampler{}, Draws: 1, Canaries: 10000}
			if p.Kind == pets.RRPrior {
				o.Prior, o.Sampler = prior, mcSampler{prior: prior}
			}
			res, err := RunC(eta, m, o)
			if err != nil {
				t.Fatalf("%s seed %d: %v", m, seed, err)
			}
			if res.Canaries != 10000 {
				t.Fatalf("%s seed %d: %d canaries", m, seed, res.Canaries)
			}
			v := res.EpsLower / eps
			sum, sq, mx = sum+v, sq+v*v, max(mx, v)
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
		lo, hi := cpLower(above, sims, 0.025), cpUpper(above, sims, 0.025)
		if cpLower(above, sims, 0.0005) > 0.05 {
			t.Errorf("%s: eps_lower above ε in %d of %d audits", m, above, sims)
		}
		fmt.Printf("| %s | %.3f | %.3f | %.1f%% (%.1f–%.1f%%) | %.3f | %d | %d | %.2f |\n",
			m, mean, sd, 100*float64(above)/N, 100*lo, 100*hi, mx, above105, sims, per)
	}
}

var canaryKinds = flag.String("canary-kinds", "", "TestSimulatedAuditsC: comma-separated mechanism names to run (empty: all)")

// cpuSeconds returns the process's user + system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// BenchmarkRunC times RunC on 10,000 examples at C = 10 (Dirichlet η) with
// the pipeline's defaults: LabelDraws 10, 2,000 samples, BagDraws 32;
// "exact" is the exact pass alone, "checks" adds the self-checks (20
// releases through mcSampler, 10,000 canaries). It reports CPU seconds per
// run (cpu-s/op: every goroutine's time, from getrusage) beside the wall
// time.
//
//	go test ./audit -run XXX -bench RunC$ -benchtime 2x
func BenchmarkRunC(b *testing.B) {
	const n, c = 10000, 10
	eta, prior := mcAuditSet(n, c, 1), mcAuditSet(n, c, 2)
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 1}, {Kind: pets.LLP, K: 8},
		{Kind: pets.LLPGeom, K: 8, Epsilon: 2}, {Kind: pets.LLPLap, K: 8, Epsilon: 2},
	} {
		m := mcMech(p, c)
		for _, checks := range []bool{false, true} {
			name := "exact"
			if checks {
				name = "checks"
			}
			b.Run(fmt.Sprintf("%s/%s", m, name), func(b *testing.B) {
				o := OptionsC{Seed: 1, LabelDraws: 10, MaxSamples: 2000}
				if checks {
					o.Sampler, o.Draws, o.Canaries = mcSampler{}, 20, 10000
				}
				if p.Kind == pets.RRPrior {
					o.Prior = prior
					if checks {
						o.Sampler = mcSampler{prior: prior}
					}
				}
				cpu := cpuSeconds()
				for b.Loop() {
					if _, err := RunC(eta, m, o); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuSeconds()-cpu)/float64(b.N), "cpu-s/op")
			})
		}
	}
}

// BenchmarkRunCShapes times the exact pass of RunC per 10,000 examples
// (LabelDraws 10, BagDraws 32) over bag shapes (C, k) towards the exact
// audit's limits (multibag.go: C = 3: k ≤ 127, C = 5: k ≤ 36, C = 10:
// k ≤ 13), llp (exact) and llp_geom (exact where its release space is
// small, else estimated), on 2,000 examples scaled up, CPU seconds.
func BenchmarkRunCShapes(b *testing.B) {
	const n = 2000
	for _, sh := range [][2]int{{3, 8}, {3, 32}, {3, 64}, {5, 8}, {5, 16}, {5, 24}, {10, 4}, {10, 8}, {10, 12}, {20, 4}, {20, 6}} {
		c, k := sh[0], sh[1]
		eta := mcAuditSet(n, c, 3)
		for _, p := range []pets.Params{{Kind: pets.LLP, K: k}, {Kind: pets.LLPGeom, K: k, Epsilon: 2}} {
			m := mcMech(p, c)
			b.Run(m.String(), func(b *testing.B) {
				cpu := cpuSeconds()
				var res *Result
				for b.Loop() {
					var err error
					if res, err = RunC(eta, m, OptionsC{Seed: 1, LabelDraws: 10}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuSeconds()-cpu)/float64(b.N)*10000/n, "cpu-s/10k")
				est := 0.0
				if res.EAdvEstimated {
					est = 1
				}
				b.ReportMetric(est, "estimated")
			})
		}
	}
}

// TestRunCGuardSkewedPrior: where η is confident (class 0 with probability
// ~0.99, more skewed than the paper's Beta(2, 30) makes binary η) the Bayes
// guess almost never differs from the prior's; honest samplers must still
// pass the attack check (|RealizedZ| ≤ 4 over 3 seeds each). In the binary
// audit such a prior needed realized.go's variance floor Σ p_i(1 − p_i);
// here no setting tried did (removing the floor still passes), so this pins
// only the absence of false failures.
func TestRunCGuardSkewedPrior(t *testing.T) {
	const c, n = 5, 10000
	r := rand.New(rand.NewPCG(91, 92))
	eta := make([]float64, 0, n*c)
	for range n {
		e := mcEta(r, c, 1, false)
		for y := range e {
			e[y] *= 0.01
		}
		e[0] += 0.99
		eta = append(eta, e...)
	}
	for _, p := range []pets.Params{{Kind: pets.LLPGeom, K: 8, Epsilon: 0.5}, {Kind: pets.LLP, K: 8}, {Kind: pets.LLPLap, K: 4, Epsilon: 0.5}, {Kind: pets.RR, Epsilon: 0.1}} {
		m := mcMech(p, c)
		for seed := range 3 {
			res, err := RunC(eta, m, OptionsC{Seed: uint64(seed), LabelDraws: 1, Sampler: mcSampler{}, Draws: 10, BagDraws: 2})
			if err != nil {
				t.Fatalf("%s seed %d: %v", m, seed, err)
			}
			if math.Abs(res.RealizedZ) > 4 {
				t.Errorf("%s seed %d: RealizedZ %v (realized %v, EAdv %v)", m, seed, res.RealizedZ, res.RealizedGain, res.EAdv)
			}
		}
	}
}

// TestRunCAttackBudget: when a release's bags cost more than maxAttackWork
// to attack (lowered here so that about a fifth of them are), only a
// label-independent random subset of bags is attacked: the realized gain
// still agrees with EAdv (within zAgree combined SEs, and so does
// RealizedZ) with an SE about √5 times larger, and the likelihood check
// still sees every bag (a 4ε sampler fails).
func TestRunCAttackBudget(t *testing.T) {
	const c, k, n = 5, 8, 10000
	old := maxAttackWork
	maxAttackWork = 0.2 * float64(n/k) * 2 * BagWorkC(c, k)
	t.Cleanup(func() { maxAttackWork = old })
	eta := mcAuditSet(n, c, 41)
	m := mcMech(pets.Params{Kind: pets.LLPGeom, K: k, Epsilon: 2}, c)
	o := OptionsC{Seed: 4, LabelDraws: 1, Sampler: mcSampler{}, Draws: 40, BagDraws: 4}
	res, err := RunC(eta, m, o)
	if err != nil {
		t.Fatal(err)
	}
	maxAttackWork = old
	full, err := RunC(eta, m, o)
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	z := (s.RealizedGain - s.EAdv) / math.Hypot(s.RealizedGainSE, s.EAdvSE)
	ratio := s.RealizedGainSE / full.RealizedGainSE
	t.Logf("EAdv %.5f ± %.5f, realized %.5f ± %.5f (z %+.2f, guard %+.2f); all bags attacked: ± %.5f (SE ratio %.2f)",
		s.EAdv, s.EAdvSE, s.RealizedGain, s.RealizedGainSE, z, s.RealizedZ, full.RealizedGainSE, ratio)
	if !(math.Abs(z) <= zAgree) || !(math.Abs(s.RealizedZ) <= zAgree) {
		t.Fatalf("z %v, guard z %v", z, s.RealizedZ)
	}
	if !(ratio > 1.5 && ratio < 3.5) {
		t.Errorf("SE ratio %v, want about √5", ratio)
	}
	maxAttackWork = 0.2 * float64(n/k) * 2 * BagWorkC(c, k)
	o.Sampler, o.Draws = mcSampler{epsScale: 4}, 5
	if _, err := RunC(eta, m, o); !errors.Is(err, ErrReleaseMismatch) {
		t.Fatalf("4ε: err %v", err)
	}
}
