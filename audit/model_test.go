package audit

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// modelCase is one mechanism the model attack's tests release through.
type modelCase struct {
	name string
	p    pets.Params
	c    int // classes (2: binary)
}

var modelCases = []modelCase{
	{"rr_eps1", pets.Params{Kind: pets.RR, Epsilon: 1}, 2},
	{"rr_prior_eps1", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 2},
	{"llp_k8", pets.Params{Kind: pets.LLP, K: 8}, 2},
	{"llp_geom_k8_eps1", pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, 2},
	{"llp_lap_k8_eps2", pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 2}, 2},
	{"rr_eps2_C4", pets.Params{Kind: pets.RR, Epsilon: 2}, 4},
	{"rr_prior_eps1_C4", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, 4},
	{"llp_k4_C3", pets.Params{Kind: pets.LLP, K: 4}, 3},
	{"llp_geom_k4_eps2_C3", pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 2}, 3},
}

// simulated is one simulated training set: η (the audit's layout), the
// labels drawn from it, a release of them through the mechanism's own
// functions and the exact posteriors given that release.
type simulated struct {
	m          *pets.Mechanism
	c          int
	eta        []float64
	labels     []uint8
	rel        *ModelRelease
	ps         *Posteriors
	post       []float64
	priorGuess []int
}

// simulate draws n rows: η uniform (binary) or Dirichlet mixtures (C
// classes), labels from η, and the release. rr_prior releases the first
// third of the rows in stage 1 (RR) and the rest through uniform public
// priors. The LLP family partitions the rows at random, keeping the
// remainder as a smaller bag.
func simulate(t testing.TB, tc modelCase, n int, seed uint64) *simulated {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x39))
	c := tc.c
	s := &simulated{c: c}
	p := tc.p
	if c > 2 {
		p.Classes = c
		s.m = mcMech(tc.p, c)
		s.eta = mcAuditSet(n, c, seed)
	} else {
		s.m = testutil.MustNew(p)
		s.eta = uniformEta(n, seed)
	}
	s.labels = make([]uint8, n)
	s.priorGuess = make([]int, n)
	for i := range n {
		if c == 2 {
			s.labels[i] = b2u(r.Float64() < s.eta[i])
			s.priorGuess[i] = b2i(s.eta[i] > 0.5)
		} else {
			s.labels[i] = uint8(drawClass(s.eta[i*c:(i+1)*c], r))
			s.priorGuess[i], _ = argmax(s.eta[i*c : (i+1)*c])
		}
	}
	rel := &ModelRelease{}
	sp := s.m.Spec()
	switch {
	case sp.Release.PerBag():
		bags, err := llp.Partition(n, s.m.K(), r, true)
		if err != nil {
			t.Fatal(err)
		}
		counts := make([]int, c)
		alpha := make([]float64, c-1)
		for b := range bags.NumBags {
			idx := bags.Members(b)
			clear(counts)
			for _, i := range idx {
				counts[s.labels[i]]++
			}
			if c == 2 {
				alpha[0] = s.m.ReleaseBag(counts[1], len(idx), r)
			} else {
				s.m.BagLaw().ReleaseBag(alpha, counts, r)
			}
			for _, i := range idx {
				rel.Row = append(rel.Row, int(i))
				rel.Bag = append(rel.Bag, int64(b))
				rel.Alpha = append(rel.Alpha, alpha...)
			}
		}
	case sp.Release.WithPrior():
		// A third of the rows in the first stage (the uniform prior: RR
		// over every class), the others with a prior of their own.
		rel.Label, rel.Prior = make([]uint8, n), make([]float64, 0, n*max(1, c-1))
		ex := s.m.ExampleLaw()
		for i := range n {
			rel.Row = append(rel.Row, i)
			prior := make([]float64, c)
			switch {
			case i < n/3:
				for y := range prior {
					prior[y] = 1 / float64(c)
				}
			case c == 2:
				p := r.Float64()
				prior[0], prior[1] = 1-p, p
			default:
				prior = mcEta(r, c, 1, false)
			}
			if c == 2 {
				rel.Prior = append(rel.Prior, prior[1])
			} else {
				rel.Prior = append(rel.Prior, prior...)
			}
			ex.Release(rel.Label[i:i+1], s.labels[i:i+1], prior, r)
		}
	default:
		rel.Label = make([]uint8, n)
		for i := range n {
			rel.Row = append(rel.Row, i)
		}
		s.m.ExampleLaw().Release(rel.Label, s.labels, nil, r)
	}
	s.rel = rel
	var err error
	if s.ps, err = ReleasePosteriors(s.m, s.eta, rel); err != nil {
		t.Fatalf("%s seed %d: %v", tc.name, seed, err)
	}
	s.post = s.ps.Post
	return s
}

func b2u(b bool) uint8 { return uint8(b2i(b)) }

// guesses returns a model's predictions on every row (the audit's
// layout): honest ones, a function of the release, η and the model's own
// coin (the Bayes guess, the prior's, or a class drawn from the posterior,
// a third each), and with peek > 0 a trainer that read the true label of a
// fraction peek of the rows and predicts it there.
func (s *simulated) guesses(r *rand.Rand, peek float64) []float64 {
	c, n := s.c, len(s.labels)
	w := c
	if c == 2 {
		w = 1
	}
	out := make([]float64, n*w)
	for i := range n {
		post := s.post[i*c : (i+1)*c]
		var g int
		switch {
		case peek > 0 && r.Float64() < peek:
			g = int(s.labels[i])
		default:
			switch r.IntN(3) {
			case 0:
				g, _ = argmax(post)
			case 1:
				g = s.priorGuess[i]
			default:
				g = drawClass(post, r)
			}
		}
		if c == 2 {
			out[i] = 0.25 + 0.5*float64(g)
		} else {
			for y := range c {
				out[i*c+y] = 0.5 / float64(c)
			}
			out[i*c+g] += 0.5
		}
	}
	return out
}

func (s *simulated) attack(t testing.TB, prob []float64, alpha float64) *ModelAttackResult {
	t.Helper()
	rows := make([]int, len(s.labels))
	for i := range rows {
		rows[i] = i
	}
	res, err := ModelAttack(&ModelGuesses{Classes: s.c, Eta: s.eta, Label: s.labels, Release: s.ps, Rows: rows, Prob: prob}, alpha)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestModelAttackHonestRate is the bracket's false-failure rate on
// simulated inputs: for every mechanism, 200 seeds of 2,000 rows, an
// honest model (a function of the release, η and its own coin) tested at
// α = 0.05 must fail at most 22 times (the rate 5% plus 3.9 binomial sds:
// a false failure of this test about once in 20,000). Bernstein is
// conservative, so the observed rate is far lower; the mean of Z over the
// seeds must be within 0.4 of 0 (Z has mean 0 exactly for an honest
// model and sd ≤ 1: 5.6 sds of the mean), which fails for posteriors 10%
// off (TestModelAttackWrongPosteriors).
func TestModelAttackHonestRate(t *testing.T) {
	const seeds, n, alpha = 200, 2000, 0.05
	if testing.Short() {
		t.Skip("-short")
	}
	for _, tc := range modelCases {
		t.Run(tc.name, func(t *testing.T) {
			fails, zSum, gap := 0, 0.0, 0.0
			for seed := range uint64(seeds) {
				s := simulate(t, tc, n, seed)
				res := s.attack(t, s.guesses(rand.New(rand.NewPCG(seed, 1)), 0), alpha)
				if res.Exceeds() {
					fails++
				}
				zSum += res.Z
				gap += res.BayesAdv - res.Expected
				if res.Expected > res.BayesAdv+1e-12 {
					t.Fatalf("seed %d: the model's expected advantage %v above the Bayes attacker's %v", seed, res.Expected, res.BayesAdv)
				}
			}
			if fails > 22 {
				t.Errorf("%d of %d honest models failed the bracket at α = %g", fails, seeds, alpha)
			}
			if z := zSum / seeds; math.Abs(z) > 0.4 {
				t.Errorf("mean Z %.3f over %d honest models, want 0 ± 0.4", z, seeds)
			}
			t.Logf("%d of %d failed at α = %g; mean Z %.3f; mean Bayes − model expected %.4f", fails, seeds, alpha, zSum/seeds, gap/seeds)
		})
	}
}

// TestModelAttackWrongPosteriors is the mutation the rate test must catch:
// posteriors pulled 10% of the way back to the prior (an audit whose
// likelihood is slightly too flat) give a mean Z far from 0 on an honest
// model for rr.
func TestModelAttackWrongPosteriors(t *testing.T) {
	const seeds, n = 40, 2000
	tc := modelCases[0]
	zSum := 0.0
	for seed := range uint64(seeds) {
		s := simulate(t, tc, n, seed)
		for i := range len(s.labels) {
			for y := range 2 {
				e := s.eta[i]
				if y == 0 {
					e = 1 - e
				}
				s.post[2*i+y] = 0.9*s.post[2*i+y] + 0.1*e
			}
		}
		zSum += s.attack(t, s.guesses(rand.New(rand.NewPCG(seed, 1)), 0), 0.05).Z
	}
	if z := zSum / seeds; math.Abs(z) < 0.4 {
		t.Errorf("mean Z %.3f with posteriors 10%% too flat: the rate test would not notice", z)
	}
}

// TestModelAttackCatchesPeeking: a trainer that read the raw labels of 20%
// of its rows and predicts them there is caught at α = 1e-9 (the
// pipeline's level) on 10,000 rows, every seed, for every mechanism that
// hides labels; against none (the raw labels are the release) it cannot be.
func TestModelAttackCatchesPeeking(t *testing.T) {
	const seeds, n = 5, 10000
	for _, tc := range modelCases {
		for seed := range uint64(seeds) {
			s := simulate(t, tc, n, seed)
			res := s.attack(t, s.guesses(rand.New(rand.NewPCG(seed, 1)), 0.2), GuardAlpha)
			if !res.Exceeds() {
				t.Errorf("%s seed %d: a peeking model passed: adv %.4f, expected %.4f, excess %.4f ≤ slack %.4f",
					tc.name, seed, res.Adv, res.Expected, res.Excess, res.Slack)
			}
		}
	}
	none := modelCase{"none", pets.Params{Kind: pets.None}, 2}
	s := simulate(t, none, 2000, 1)
	if res := s.attack(t, s.guesses(rand.New(rand.NewPCG(1, 1)), 0.5), GuardAlpha); res.Exceeds() || math.Abs(res.Excess) > 1e-12 {
		t.Errorf("none: the release is the labels, so nothing can beat it; got excess %v, slack %v", res.Excess, res.Slack)
	}
}

// TestReleasePosteriorsBruteForce checks the bag posteriors against
// enumeration of every label vector (bruteBag, brutePosterior; binary) and
// mcBrute (C = 3), on bags of 1–5 rows, to 1e-9.
func TestReleasePosteriorsBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, p := range []pets.Params{{Kind: pets.LLP, K: 8}, {Kind: pets.LLPGeom, K: 8, Epsilon: 1.3}, {Kind: pets.LLPLap, K: 8, Epsilon: 0.7}} {
		m := testutil.MustNew(p)
		for _, n := range []int{1, 3, 5} {
			eta := make([]float64, n)
			for i := range eta {
				eta[i] = r.Float64()
			}
			joint := bruteBag(eta)
			for range 10 {
				sum := 0
				for _, e := range eta {
					sum += int(b2u(r.Float64() < e))
				}
				alpha := m.ReleaseBag(sum, n, r)
				rel := &ModelRelease{}
				for i := range n {
					rel.Row, rel.Bag, rel.Alpha = append(rel.Row, i), append(rel.Bag, 7), append(rel.Alpha, alpha)
				}
				ps, err := ReleasePosteriors(m, eta, rel)
				if err != nil {
					t.Fatal(err)
				}
				post, unit := ps.Post, ps.Unit
				rel.Skip = make([]bool, n) // the first row's posterior unwanted: its prior, the others' unchanged
				rel.Skip[0] = true
				skipped, err := ReleasePosteriors(m, eta, rel)
				if err != nil {
					t.Fatal(err)
				}
				if skipped.Post[1] != eta[0] || !slices.Equal(skipped.Post[2:], post[2:]) {
					t.Errorf("%s n=%d: Skip changed %v into %v", m, n, post, skipped.Post)
				}
				for i := range n {
					want := brutePosterior(p.Kind, p.Epsilon, joint, i, alpha)
					if math.Abs(post[2*i+1]-want) > 1e-9 || math.Abs(post[2*i]+post[2*i+1]-1) > 1e-12 || unit[i] != 0 {
						t.Errorf("%s n=%d α=%v row %d: posterior %v (unit %d), brute force %v", m, n, alpha, i, post[2*i+1], unit[i], want)
					}
				}
			}
		}
	}
	for _, p := range []pets.Params{{Kind: pets.LLP, K: 4}, {Kind: pets.LLPGeom, K: 4, Epsilon: 1.5}} {
		const c = 3
		mc := mcMech(p, c)
		for _, n := range []int{1, 2, 4} {
			eta := mcBag(r, c, n)
			joint, _ := mcBrute(eta, c, n, mc.BagLaw().NoiseRate())
			counts := make([]int, c)
			for range 10 {
				clear(counts)
				for i := range n {
					counts[drawClass(eta[i*c:(i+1)*c], r)]++
				}
				alpha := make([]float64, c-1)
				mc.BagLaw().ReleaseBag(alpha, counts, r)
				z := 0
				for cl := c - 1; cl >= 1; cl-- {
					z = z*(n+1) + int(math.Round(alpha[cl-1]*float64(n)))
				}
				rel := &ModelRelease{}
				for i := range n {
					rel.Row, rel.Bag, rel.Alpha = append(rel.Row, i), append(rel.Bag, 0), append(rel.Alpha, alpha...)
				}
				ps, err := ReleasePosteriors(mc, eta, rel)
				if err != nil {
					t.Fatal(err)
				}
				post := ps.Post
				for i := range n {
					tot := 0.0
					for y := range c {
						tot += joint[i][y][z]
					}
					for y := range c {
						if want := joint[i][y][z] / tot; math.Abs(post[i*c+y]-want) > 1e-9 {
							t.Errorf("%s C=3 n=%d α=%v row %d class %d: posterior %v, brute force %v", mc, n, alpha, i, y, post[i*c+y], want)
						}
					}
				}
			}
		}
	}
}

// TestModelAttackFigures checks Adv, its SE, BayesAdv and Expected on a
// hand-computed case: four rr rows in two bags of a fake unit split.
func TestModelAttackFigures(t *testing.T) {
	g := &ModelGuesses{Classes: 2,
		Eta:     []float64{0.2, 0.8, 0.6, 0.3},
		Label:   []uint8{1, 1, 0, 0},
		Release: &Posteriors{Classes: 2, Post: []float64{0.4, 0.6, 0.1, 0.9, 0.7, 0.3, 0.5, 0.5}, Unit: []int{0, 0, 1, 1}},
		Rows:    []int{0, 1, 2, 3},
		Prob:    []float64{0.9, 0.9, 0.1, 0.7}, // guesses 1, 1, 0, 1; prior guesses 0, 1, 1, 0
	}
	res, err := ModelAttack(g, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	// Correct: model 1,1,1,0 (3/4); prior 0,1,0,1 (2/4). D per row: 1, 0, 1, −1.
	// Units: D = 1 and 0; mean 0.25 per row, unit means (m=2) 0.5: (1−0.5)² + (0−0.5)² = 0.5, ×2/1 → √1/4 = 0.25.
	// μ: row 0 p(1) − p(0) = 0.2, row 2 p(0) − p(1) = 0.4, row 3 p(1) − p(0) = 0: 0.6/4.
	// Bayes: Σ max p − p(a) = (0.6−0.4) + 0 + (0.7−0.3) + 0 = 0.6/4.
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ModelAcc", res.ModelAcc, 0.75}, {"PriorAcc", res.PriorAcc, 0.5}, {"Adv", res.Adv, 0.25},
		{"AdvSE", res.AdvSE, 0.25}, {"Expected", res.Expected, 0.15}, {"BayesAdv", res.BayesAdv, 0.15},
		{"Excess", res.Excess, 0.1},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if res.Units != 2 || res.Rows != 4 {
		t.Errorf("units %d rows %d", res.Units, res.Rows)
	}
	// Variance bound: unit 0 sd √(0.6+0.4−0.04) ≈ 0.980 (row 0); unit 1
	// rows 2, 3: √(0.7+0.3−0.16) + √(0.5+0.5−0) ≈ 0.917 + 1.
	v := 0.96 + math.Pow(math.Sqrt(0.84)+1, 2)
	if want := bernsteinTail(v, 1.6, 0.05) / 4; math.Abs(res.Slack-want) > 1e-12 {
		t.Errorf("slack %v, want %v", res.Slack, want)
	}
}

// TestModelAttackRefuses names what is wrong with its inputs, and
// ReleasePosteriors refuses a release its law cannot make.
func TestModelAttackRefuses(t *testing.T) {
	ok := func() *ModelGuesses {
		return &ModelGuesses{Classes: 2, Eta: []float64{0.5, 0.5}, Label: []uint8{0, 1}, Rows: []int{0, 1}, Prob: []float64{0.2, 0.7}}
	}
	for _, tc := range []struct {
		name, param string
		edit        func(*ModelGuesses)
		alpha       float64
	}{
		{"classes", "classes", func(g *ModelGuesses) { g.Classes = 1 }, 0.05},
		{"alpha", "alpha", func(*ModelGuesses) {}, 0},
		{"eta", "eta", func(g *ModelGuesses) { g.Eta = g.Eta[:1] }, 0.05},
		{"prob", "prob", func(g *ModelGuesses) { g.Prob = g.Prob[:1] }, 0.05},
		{"release", "release", func(g *ModelGuesses) { g.Release = &Posteriors{Classes: 2, Post: []float64{1}} }, 0.05},
		{"repeated row", "rows", func(g *ModelGuesses) { g.Rows = []int{0, 0} }, 0.05},
		{"no rows", "rows", func(g *ModelGuesses) { g.Rows, g.Prob = nil, nil }, 0.05},
		{"label", "label", func(g *ModelGuesses) { g.Label[1] = 2 }, 0.05},
	} {
		g := ok()
		tc.edit(g)
		_, err := ModelAttack(g, tc.alpha)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: got %v, want a ParamError on %q", tc.name, err, tc.param)
		}
	}
	m := testutil.MustNew(pets.Params{Kind: pets.LLP, K: 2})
	_, err := ReleasePosteriors(m, []float64{0, 0}, &ModelRelease{Row: []int{0, 1}, Bag: []int64{0, 0}, Alpha: []float64{1, 1}})
	if !errors.Is(err, ErrReleaseMismatch) {
		t.Errorf("a bag of η = 0 rows released α = 1: got %v, want ErrReleaseMismatch", err)
	}
	_, err = ReleasePosteriors(m, []float64{0.5, 0.5}, &ModelRelease{Row: []int{0, 0}, Bag: []int64{0, 0}, Alpha: []float64{1, 1}})
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Errorf("a row released twice: got %v", err)
	}
}

// TestCanaryBound is oneRunBound behind a checked interface.
func TestCanaryBound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	coins, scores := make([]uint8, 5000), make([]float64, 5000)
	trials := make([]canaryTrial, len(coins))
	for i := range coins {
		coins[i] = b2u(r.Float64() < 0.5)
		z := coins[i]
		if r.Float64() < 0.2 { // RR at ε = log 4
			z = 1 - z
		}
		scores[i] = math.Log(4) * (2*float64(z) - 1)
		trials[i] = canaryTrial{y: coins[i], s: scores[i]}
	}
	eps, guesses, right, err := CanaryBound(coins, scores, 0.05)
	want := oneRunBound(trials, 0.05)
	if err != nil || eps != want.eps || guesses != want.guesses || right != want.right {
		t.Errorf("CanaryBound = %v %d %d %v, oneRunBound %+v", eps, guesses, right, err, want)
	}
	if !(eps > 0.9*math.Log(4) && eps < math.Log(4)+0.1) {
		t.Errorf("RR(log 4) canaries certify ε ≥ %v", eps)
	}
	if _, _, _, err := CanaryBound(coins, scores[:1], 0.05); err == nil {
		t.Error("mismatched lengths accepted")
	}
	if _, _, _, err := CanaryBound([]uint8{2}, []float64{1}, 0.05); err == nil {
		t.Error("a coin of 2 accepted")
	}
}
