package audit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"labelprivacy/llp"
	"labelprivacy/pets"
)

// mcSampler is a SamplerC over the C-class laws' own release functions (the
// pipeline's implements it over the release package): the per-example
// kinds ExampleLaw.Release (rr_prior with the audit's priors), the LLP
// family a random partition (llp.Partition, the remainder dropped unless
// keep) and BagLaw.ReleaseBag per bag, bot rows only. epsScale ≠ 0 is the
// test-only hook that makes it release at epsScale·ε while the audit is
// told ε.
type mcSampler struct {
	prior    []float64
	epsScale float64
	keep     bool
}

func (s mcSampler) ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*ReleasedC, error) {
	if s.epsScale != 0 && m.Kind().NeedsEpsilon() {
		p := m.Params()
		p.Epsilon *= s.epsScale
		m = mcMech(p, m.Classes())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n, c := len(labels), m.Classes()
	sp := m.Spec()
	out := &ReleasedC{Row: make([]int, 0, n)}
	switch {
	case sp.Release.PerBag():
		bags, err := llp.Partition(n, m.K(), rng, s.keep)
		if err != nil {
			return nil, err
		}
		counts := make([]int, c)
		alpha := make([]float64, c-1)
		for b := range bags.NumBags {
			clear(counts)
			idx := bags.Members(b)
			for _, i := range idx {
				counts[labels[i]]++
			}
			m.BagLaw().ReleaseBag(alpha, counts, rng)
			for _, i := range idx {
				out.Row = append(out.Row, int(i))
				out.Bag = append(out.Bag, int64(b))
				out.Alpha = append(out.Alpha, alpha...)
			}
		}
	case sp.Release == pets.ReleaseNothing:
		for i := range n {
			out.Row = append(out.Row, i)
		}
	default:
		out.Label = make([]uint8, n)
		if sp.Release.WithPrior() {
			m.ExampleLaw().Release(out.Label, labels, s.prior, rng)
		} else {
			m.ExampleLaw().Release(out.Label, labels, nil, rng)
		}
		for i := range n {
			out.Row = append(out.Row, i)
		}
	}
	return out, nil
}

// lyingSamplerC wraps mcSampler and damages what it shows.
type lyingSamplerC struct {
	inner  mcSampler
	damage func(rel *ReleasedC, r *rand.Rand)
}

func (s lyingSamplerC) ReleaseC(labels []uint8, m *pets.Mechanism, seed uint64) (*ReleasedC, error) {
	rel, err := s.inner.ReleaseC(labels, m, seed)
	if err != nil {
		return nil, err
	}
	s.damage(rel, rand.New(rand.NewPCG(seed, 7)))
	return rel, nil
}

// mcAuditSet draws n class-probability vectors over c classes (flat), a
// mix of Dirichlet(0.3), Dirichlet(1) and Dirichlet(5) rows.
func mcAuditSet(n, c int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	eta := make([]float64, 0, n*c)
	for range n {
		eta = append(eta, mcEta(r, c, []float64{0.3, 1, 5}[r.IntN(3)], false)...)
	}
	return eta
}

// binTwin is mcSampler's binary twin for TestRunCBinary: the same
// partition and the same streams through the binary laws' release
// functions, which pets tests equal bit for bit to the C-class ones at
// C = 2 (TestMulticlassBinaryBitIdentical).
type binTwin struct{ prior []float64 }

func (s binTwin) Release(labels []uint8, m *pets.Mechanism, seed uint64) (*Released, error) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n := len(labels)
	sp := m.Spec()
	out := &Released{Row: make([]int, 0, n)}
	switch {
	case sp.Release.PerBag():
		bags, err := llp.Partition(n, m.K(), rng, false)
		if err != nil {
			return nil, err
		}
		for b := range bags.NumBags {
			idx := bags.Members(b)
			sum := 0
			for _, i := range idx {
				sum += int(labels[i])
			}
			a := m.ReleaseBag(sum, len(idx), rng)
			for _, i := range idx {
				out.Row = append(out.Row, int(i))
				out.Bag = append(out.Bag, int64(b))
				out.Alpha = append(out.Alpha, a)
			}
		}
	case sp.Release == pets.ReleaseNothing:
		for i := range n {
			out.Row = append(out.Row, i)
		}
	default:
		out.Label = make([]uint8, n)
		if sp.Release.WithPrior() {
			m.ExampleLaw().Release(out.Label, labels, binaryPriors(s.prior), rng)
		} else {
			m.ExampleLaw().Release(out.Label, labels, nil, rng)
		}
		for i := range n {
			out.Row = append(out.Row, i)
		}
	}
	return out, nil
}

// TestRunCBinary: at C = 2 RunC is Run on class 1's probabilities, the same
// Result bit for bit (printed with %v, which distinguishes every float64 and
// prints NaN alike), for every kind, with samples, a sampler (mcSampler
// against its binary twin) and canaries; Summary.Classes is 2.
func TestRunCBinary(t *testing.T) {
	const n = 1200
	r := rand.New(rand.NewPCG(41, 42))
	eta, e1 := make([]float64, 2*n), make([]float64, n)
	prior, p1 := make([]float64, 2*n), make([]float64, n)
	for i := range n {
		e1[i], p1[i] = r.Float64(), r.Float64()
		eta[2*i], eta[2*i+1] = 1-e1[i], e1[i]
		prior[2*i], prior[2*i+1] = 1-p1[i], p1[i]
	}
	for _, p := range []pets.Params{
		{Kind: pets.RR, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 1}, {Kind: pets.LLP, K: 4},
		{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, {Kind: pets.LLPLap, K: 4, Epsilon: 2}, {Kind: pets.None}, {Kind: pets.Bot},
	} {
		m := mcMech(p, 2)
		t.Run(m.String(), func(t *testing.T) {
			oc := OptionsC{Seed: 5, LabelDraws: 3, MaxSamples: 50, Sampler: mcSampler{}, Draws: 3, Canaries: 500}
			ob := Options{Seed: 5, LabelDraws: 3, MaxSamples: 50, Sampler: binTwin{}, Draws: 3, Canaries: 500}
			if p.Kind == pets.RRPrior {
				oc.Prior, oc.Sampler = prior, mcSampler{prior: prior}
				ob.Prior, ob.Sampler = p1, binTwin{prior: p1}
			}
			got, err := RunC(eta, m, oc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Run(e1, m, ob)
			if err != nil {
				t.Fatal(err)
			}
			if got.Classes != 2 {
				t.Errorf("Classes %d", got.Classes)
			}
			if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
				t.Fatalf("RunC at C = 2\n%s\nRun\n%s", g, w)
			}
			if p.Kind != pets.None && (got.RealizedDraws != 3 || math.IsNaN(got.EpsLower)) {
				t.Fatalf("the sampler was not used: %+v", got.Summary)
			}
		})
	}
}

// TestRunCRRClosedForm pins the meaning of RunC's EAdv for k-ary RR: the
// mean over the audit examples of the closed form
// Σ_z max_y η_y·P(z|y) − max_y η_y, P(z|y) written here from its
// definition (kept with e^ε/(e^ε+C−1), each other class 1/(e^ε+C−1)), to
// 1e-12; EAdvSE is sd/√n of those values (relative 1e-9); EAdvBound the
// mean of IEAdvBoundC; every realized |MA| is ε (p50 = max = mean = ε to
// 1e-12) and no value is infinite. Mutations caught: the keep probability
// with C in place of C−1 (EAdv 3–12% off), IEAdvRRC's sum over every z
// (off by ~max η·v).
func TestRunCRRClosedForm(t *testing.T) {
	for _, c := range []int{3, 10} {
		for _, eps := range []float64{0.5, 1, 4} {
			const n = 3000
			eta := mcAuditSet(n, c, uint64(c))
			m := mcMech(pets.Params{Kind: pets.RR, Epsilon: eps}, c)
			res, err := RunC(eta, m, OptionsC{Seed: 1, LabelDraws: 2})
			if err != nil {
				t.Fatal(err)
			}
			E := math.Exp(eps)
			lik := func(z, y int) float64 {
				if z == y {
					return E / (E + float64(c-1))
				}
				return 1 / (E + float64(c-1))
			}
			var vals []float64
			bound := 0.0
			for i := range n {
				e := eta[i*c : (i+1)*c]
				vals = append(vals, channelIEAdv(e, c, lik))
				bound += IEAdvBoundC(e, eps)
			}
			mean, se := meanSE(vals)
			s := res.Summary
			if math.Abs(s.EAdv-mean) > 1e-12 || !closeRel(s.EAdvSE, se, 0, 1e-9) || math.Abs(s.EAdvBound-bound/n) > 1e-12 {
				t.Fatalf("%v: EAdv %v ± %v bound %v, closed form %v ± %v bound %v", m, s.EAdv, s.EAdvSE, s.EAdvBound, mean, se, bound/n)
			}
			for _, v := range []float64{s.MAP50, s.MAMax, s.MAMean} {
				if math.Abs(v-eps) > 1e-12 {
					t.Fatalf("%v: |MA| %v, want ε", m, v)
				}
			}
			if s.MAInfFrac != 0 || s.MACount != 2*n || s.Classes != c || s.SEUnit != "example" || s.NExamples != n || s.EAdvEstimated {
				t.Fatalf("%v: summary %+v", m, s)
			}
		}
	}
}

// TestRunCBagsBruteForce: RunC's IEAdv of every member of every bag (all
// kept as samples) equals the brute-force sum over all C^k label vectors of
// the bag and all its releases (mcBrute, channelIEAdv) to 1e-12, for llp
// and llp_geom (exact) at (C, k) ∈ {(3, 4), (4, 3), (5, 2)}; EAdv is their
// mean, EAdvSE the sd of the bag means over √NBags (relative 1e-9), and
// the remainder is dropped.
func TestRunCBagsBruteForce(t *testing.T) {
	for _, sh := range [][2]int{{3, 4}, {4, 3}, {5, 2}} {
		c, k := sh[0], sh[1]
		const n = 61
		eta := mcAuditSet(n, c, uint64(7*c))
		for _, p := range []pets.Params{{Kind: pets.LLP, K: k}, {Kind: pets.LLPGeom, K: k, Epsilon: 1.5}} {
			m := mcMech(p, c)
			res, err := RunC(eta, m, OptionsC{Seed: 2, LabelDraws: 1, MaxSamples: n})
			if err != nil {
				t.Fatal(err)
			}
			s := res.Summary
			if s.EAdvEstimated || s.NBags != n/k || s.NExamples != n/k*k || s.NDropped != n%k || len(res.Samples) != s.NExamples {
				t.Fatalf("%v: %+v, %d samples", m, s, len(res.Samples))
			}
			members := map[int][]Sample{}
			for _, x := range res.Samples {
				members[x.Bag] = append(members[x.Bag], x)
			}
			var means []float64
			tot := 0.0
			for b := range s.NBags {
				xs := members[b]
				if len(xs) != k {
					t.Fatalf("bag %d has %d samples", b, len(xs))
				}
				bag := make([]float64, 0, k*c)
				for _, x := range xs {
					bag = append(bag, eta[x.Index*c:(x.Index+1)*c]...)
				}
				joint, nz := mcBrute(bag, c, k, m.BagLaw().NoiseRate())
				bm := 0.0
				for i, x := range xs {
					lik := func(z, y int) float64 {
						if bag[i*c+y] == 0 {
							return 0
						}
						return joint[i][y][z] / bag[i*c+y]
					}
					want := channelIEAdv(bag[i*c:(i+1)*c], nz, lik)
					if math.Abs(x.IEAdv-want) > 1e-12 {
						t.Fatalf("%v bag %d example %d: IEAdv %.17g, brute force %.17g", m, b, x.Index, x.IEAdv, want)
					}
					bm += want / float64(k)
					tot += want
				}
				means = append(means, bm)
			}
			_, se := meanSE(means)
			if math.Abs(s.EAdv-tot/float64(s.NExamples)) > 1e-12 || !closeRel(s.EAdvSE, se, 0, 1e-9) {
				t.Fatalf("%v: EAdv %v ± %v, brute force %v ± %v", m, s.EAdv, s.EAdvSE, tot/float64(s.NExamples), se)
			}
		}
	}
}

// TestRunCDP: the realized |MA| of every DP mechanism stays ≤ ε +
// DPTolerance at C ∈ {3, 10} (RunC fails with a *DPViolation otherwise)
// and, in every draw, rr's and rr_prior's RR rows reach ε exactly while
// llp_geom's and llp_lap's largest value comes within 10% of ε (a noise
// 10% too small, a wrong Δ or λ, would show above ε): bags of k = 4 with
// confident members make the other counts nearly known. Every exact IEAdv
// is ≤ IEAdvBoundC (else a *BoundViolation) and EAdv ≤ EAdvBound.
func TestRunCDP(t *testing.T) {
	for _, c := range []int{3, 10} {
		const n = 2000
		eta := mcAuditSet(n, c, 17)
		prior := mcAuditSet(n, c, 18)
		r := rand.New(rand.NewPCG(19, 20))
		for i := range n / 3 { // a third of the examples nearly one-hot
			e := eta[i*c : (i+1)*c]
			clear(e)
			e[r.IntN(c)] = 1
		}
		for _, p := range []pets.Params{
			{Kind: pets.RR, Epsilon: 0.5}, {Kind: pets.RR, Epsilon: 3}, {Kind: pets.RRPrior, Epsilon: 1}, {Kind: pets.RRPrior, Epsilon: 3},
			{Kind: pets.LLPGeom, K: 4, Epsilon: 1}, {Kind: pets.LLPGeom, K: 4, Epsilon: 4}, {Kind: pets.LLPLap, K: 4, Epsilon: 2},
		} {
			m := mcMech(p, c)
			o := OptionsC{Seed: 3, LabelDraws: 4, BagDraws: 8}
			if p.Kind == pets.RRPrior {
				o.Prior = prior
			}
			res, err := RunC(eta, m, o)
			if err != nil {
				t.Fatalf("%v: %v", m, err)
			}
			s := res.Summary
			eps := p.Epsilon
			if !(s.MAMax <= eps+DPTolerance) || s.MAInfFrac != 0 {
				t.Fatalf("%v: max |MA| %v, ∞ %v", m, s.MAMax, s.MAInfFrac)
			}
			if !(s.MAMax >= 0.9*eps) {
				t.Errorf("%v: max |MA| %v does not come within 10%% of ε", m, s.MAMax)
			}
			if !(s.EAdv <= s.EAdvBound) {
				t.Errorf("%v: EAdv %v above the bound %v", m, s.EAdv, s.EAdvBound)
			}
			t.Logf("%v: EAdv %.5f ± %.5f (estimated %v) bound %.5f |MA| p50 %.3f max %.3f", m, s.EAdv, s.EAdvSE, s.EAdvEstimated, s.EAdvBound, s.MAP50, s.MAMax)
		}
	}
}

// TestRunCViolations: RunC fails with a *DPViolation naming the mechanism
// and the example of smallest index when the claimed ε is lowered to 0.9ε
// (rr, llp_geom, llp_lap at C = 4, whatever the workers), and with a
// *BoundViolation when the bound's ε is: rr_prior whose public prior is
// the attacker's η attains IEAdvBoundC(η, ε) (multiclass.go's proof), so it
// passes at ε and exceeds IEAdvBoundC(η, 0.9ε); the estimated members of
// llp_lap pass the pooled Hoeffding check at ε and fail it at ε/20.
func TestRunCViolations(t *testing.T) {
	const c, n = 4, 800
	eta := mcAuditSet(n, c, 21)
	for _, p := range []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLPGeom, K: 4, Epsilon: 0.5}, {Kind: pets.LLPLap, K: 4, Epsilon: 1}} {
		m := mcMech(p, c)
		opts := OptionsC{Seed: 3, LabelDraws: 1, MaxSamples: n, BagDraws: 4}
		honest, err := RunC(eta, m, opts)
		if err != nil {
			t.Fatal(err)
		}
		claim := 0.9 * p.Epsilon
		want := DPViolation{Mechanism: m.String(), Epsilon: p.Epsilon, Index: -1}
		for _, s := range honest.Samples {
			if s.AbsMA > claim+DPTolerance {
				want.Index, want.MA = s.Index, s.AbsMA
				break
			}
		}
		if want.Index < 0 {
			t.Fatalf("%v: no example exceeds 0.9ε", m)
		}
		for _, workers := range []int{1, 3} {
			opts.Workers = workers
			r, err := newRunnerC(eta, m, opts)
			if err != nil {
				t.Fatal(err)
			}
			r.maxMA = claim + DPTolerance
			var v *DPViolation
			if err := r.run(); !errors.As(err, &v) || !errors.Is(err, ErrDPViolation) || *v != want {
				t.Fatalf("%v workers=%d: %v, want %+v", m, workers, err, want)
			}
		}
	}
	m := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: 1}, c)
	for _, f := range []float64{1, 0.9} {
		r, err := newRunnerC(eta, m, OptionsC{Seed: 1, LabelDraws: 1, Prior: eta})
		if err != nil {
			t.Fatal(err)
		}
		r.eps *= f // the bound's ε; |MA| is still checked against 1
		err = r.run()
		var bv *BoundViolation
		switch {
		case f == 1 && err != nil:
			t.Fatalf("rr_prior with prior η: %v", err)
		case f < 1 && (!errors.As(err, &bv) || !errors.Is(err, ErrDPViolation) || bv.Estimated != 0 || len(bv.EtaC) != c || !strings.Contains(err.Error(), m.String())):
			t.Fatalf("rr_prior with prior η against the bound at 0.9ε: %v", err)
		}
	}
	// The pooled check resolves a mean excess of √(ln(1/GuardAlpha)·k/(2·D·n))
	// = 0.028 here; llp_lap's EAdv at ε = 2 is ~0.05 above the bound at
	// ε = 0.1.
	ml := mcMech(pets.Params{Kind: pets.LLPLap, K: 4, Epsilon: 2}, c)
	for _, f := range []float64{1, 0.05} {
		r, err := newRunnerC(eta, ml, OptionsC{Seed: 1, LabelDraws: 1, BagDraws: 64})
		if err != nil {
			t.Fatal(err)
		}
		r.eps *= f
		err = r.run()
		var bv *BoundViolation
		switch {
		case f == 1 && err != nil:
			t.Fatalf("honest llp_lap: %v", err)
		case f < 1 && (!errors.As(err, &bv) || bv.Estimated != n || !strings.Contains(err.Error(), "estimated")):
			t.Fatalf("llp_lap against the bound at ε/20: %v", err)
		}
		t.Log(err)
	}
}

// TestRunCErrors: each bad input is refused before any work with an error
// naming it: a *ParamError (wrapping ErrInvalidInput) for a parameter, an
// *EtaError for a value of η outside [0, 1].
func TestRunCErrors(t *testing.T) {
	const c = 3
	eta := mcAuditSet(40, c, 1)
	prior := mcAuditSet(40, c, 2)
	rr := mcMech(pets.Params{Kind: pets.RR, Epsilon: 1}, c)
	rp := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: 1}, c)
	lg := mcMech(pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 1}, c)
	big := mcMech(pets.Params{Kind: pets.LLP, K: 14}, 10) // past the exact count-vector audit at C = 10 (k ≤ 13)
	off := slices.Clone(eta)
	off[4] += 0.01 // example 1 sums to 1.01
	neg := slices.Clone(eta)
	neg[5] = -0.1
	badPrior := slices.Clone(prior)
	badPrior[7] = 2
	other, _ := llp.Partition(41, 4, rand.NewPCG(1, 1), false)
	for _, tc := range []struct {
		name, param string
		eta         []float64
		m           *pets.Mechanism
		o           OptionsC
	}{
		{"nil mechanism", "mechanism", eta, nil, OptionsC{LabelDraws: 1}},
		{"row sums to 1.01", "eta", off, rr, OptionsC{LabelDraws: 1}},
		{"length not a multiple of C", "eta", eta[:100], rr, OptionsC{LabelDraws: 1}},
		{"empty", "eta", nil, rr, OptionsC{LabelDraws: 1}},
		{"fewer examples than k", "eta", eta[:9], lg, OptionsC{LabelDraws: 1}},
		{"label draws", "label_draws", eta, rr, OptionsC{}},
		{"max samples", "max_samples", eta, rr, OptionsC{LabelDraws: 1, MaxSamples: -1}},
		{"one bag draw", "bag_draws", eta, lg, OptionsC{LabelDraws: 1, BagDraws: 1}},
		{"no draws with a sampler", "draws", eta, rr, OptionsC{LabelDraws: 1, Sampler: mcSampler{}}},
		{"negative canaries", "canaries", eta, rr, OptionsC{LabelDraws: 1, Sampler: mcSampler{}, Draws: 1, Canaries: -1}},
		{"prior for rr", "prior", eta, rr, OptionsC{LabelDraws: 1, Prior: prior}},
		{"rr_prior without prior", "prior", eta, rp, OptionsC{LabelDraws: 1}},
		{"prior of wrong length", "prior", eta, rp, OptionsC{LabelDraws: 1, Prior: prior[:117]}},
		{"prior of probability 2", "prior", eta, rp, OptionsC{LabelDraws: 1, Prior: badPrior}},
		{"bags for rr", "bags", eta, rr, OptionsC{LabelDraws: 1, Bags: other}},
		{"bags of other rows", "bags", eta, lg, OptionsC{LabelDraws: 1, Bags: other}},
		{"bag too large for the exact audit", "k", mcAuditSet(40, 10, 3), big, OptionsC{LabelDraws: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RunC(tc.eta, tc.m, tc.o)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("err %v, want a ParamError naming %q", err, tc.param)
			}
			if !strings.Contains(err.Error(), tc.param) {
				t.Errorf("message %q does not name %q", err, tc.param)
			}
		})
	}
	var ee *EtaError
	if _, err := RunC(neg, rr, OptionsC{LabelDraws: 1}); !errors.As(err, &ee) || ee.Index != 5 || !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative η: %v", err)
	}
	// C > 64 cannot reach RunC: pets refuses the mechanism, and CheckEtaC
	// the class count, both naming "classes".
	_, err := pets.New(pets.Params{Kind: pets.RR, Epsilon: 1, Classes: 65})
	var pe *pets.ParamError
	if !errors.As(err, &pe) || pe.Param != "classes" {
		t.Errorf("C = 65 mechanism: %v", err)
	}
	if err := CheckEtaC(make([]float64, 65), 65); !errors.As(err, &pe) || pe.Param != "classes" {
		t.Errorf("C = 65 η: %v", err)
	}
}

// TestRunCEstimate: where llp_geom's release space can be enumerated (C =
// 4, k = 8: 9^3 releases per bag), RunC's exact EAdv and its estimate
// (ExactWork < 0, BagDraws = 16) on the same given bags agree: over 12
// seeds the estimates' mean is within 4 of its SEs of the exact value
// (unbiased; normal approximation, false-failure rate 6e-5), their spread
// over the seeds (the sampling error alone: the bags are fixed) stays below
// the EAdvSE the estimate reports (which adds the spread between bags),
// and that EAdvSE is at least the exact audit's. EAdvEstimated and BagDraws
// say which is which.
func TestRunCEstimate(t *testing.T) {
	const c, k, n = 4, 8, 2000
	eta := mcAuditSet(n, c, 61)
	bags, err := llp.Partition(n, k, rand.NewPCG(1, 1), false)
	if err != nil {
		t.Fatal(err)
	}
	m := mcMech(pets.Params{Kind: pets.LLPGeom, K: k, Epsilon: 2}, c)
	exact, err := RunC(eta, m, OptionsC{Seed: 1, LabelDraws: 1, Bags: bags})
	if err != nil {
		t.Fatal(err)
	}
	if exact.EAdvEstimated || exact.BagDraws != 0 {
		t.Fatalf("exact audit flagged estimated: %+v", exact.Summary)
	}
	var ests, ses []float64
	for seed := range 12 {
		res, err := RunC(eta, m, OptionsC{Seed: uint64(seed), LabelDraws: 1, Bags: bags, BagDraws: 16, ExactWork: -1})
		if err != nil {
			t.Fatal(err)
		}
		if !res.EAdvEstimated || res.BagDraws != 16 {
			t.Fatalf("estimate not flagged: %+v", res.Summary)
		}
		ests, ses = append(ests, res.EAdv), append(ses, res.EAdvSE)
	}
	mean, se := meanSE(ests)
	spread := se * math.Sqrt(float64(len(ests)))
	seMean, _ := meanSE(ses)
	t.Logf("exact %.6f ± %.6f; estimates %.6f ± %.6f (spread over seeds %.6f, reported SE %.6f)", exact.EAdv, exact.EAdvSE, mean, se, spread, seMean)
	if math.Abs(mean-exact.EAdv) > 4*se {
		t.Errorf("estimates' mean %v, exact %v (SE %v)", mean, exact.EAdv, se)
	}
	if !(spread < seMean) || !(seMean >= exact.EAdvSE) {
		t.Errorf("sampling spread %v, reported SE %v, exact SE %v", spread, seMean, exact.EAdvSE)
	}
}

// TestRunCGivenBags: with OptionsC.Bags (here random bags of 4 with the
// remainder of 3 kept, as curated bags may keep one), each bag is audited
// exactly at its size (every member's IEAdv equals brute force over its
// C^size label vectors, to 1e-12), no example is dropped, EAdv is the mean
// over all examples and EAdvSE the ratio estimator over bags,
// √(Σ_b (T_b − EAdv·n_b)²/(B(B−1)))/n̄, recomputed here (relative 1e-9).
func TestRunCGivenBags(t *testing.T) {
	const c, k, n = 3, 4, 63
	eta := mcAuditSet(n, c, 33)
	bags, err := llp.Partition(n, k, rand.NewPCG(3, 4), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []pets.Params{{Kind: pets.LLP, K: k}, {Kind: pets.LLPGeom, K: k, Epsilon: 1}} {
		m := mcMech(p, c)
		res, err := RunC(eta, m, OptionsC{Seed: 1, LabelDraws: 1, MaxSamples: n, Bags: bags})
		if err != nil {
			t.Fatal(err)
		}
		s := res.Summary
		if s.NExamples != n || s.NDropped != 0 || s.NBags != 16 || len(res.Samples) != n {
			t.Fatalf("%v: %+v", m, s)
		}
		tot := make([]float64, bags.NumBags)
		all := 0.0
		for _, x := range res.Samples {
			b := int(bags.BagOf[x.Index])
			if x.Bag != b {
				t.Fatalf("sample %d in bag %d, partition says %d", x.Index, x.Bag, b)
			}
			idx := bags.Members(b)
			bag := make([]float64, 0, len(idx)*c)
			pos := -1
			for j, i := range idx {
				bag = append(bag, eta[int(i)*c:(int(i)+1)*c]...)
				if int(i) == x.Index {
					pos = j
				}
			}
			joint, nz := mcBrute(bag, c, len(idx), m.BagLaw().NoiseRate())
			want := channelIEAdv(bag[pos*c:(pos+1)*c], nz, func(z, y int) float64 {
				if bag[pos*c+y] == 0 {
					return 0
				}
				return joint[pos][y][z] / bag[pos*c+y]
			})
			if math.Abs(x.IEAdv-want) > 1e-12 {
				t.Fatalf("%v example %d (bag of %d): IEAdv %v, brute force %v", m, x.Index, len(idx), x.IEAdv, want)
			}
			tot[b] += want
			all += want
		}
		eadv := all / n
		B := float64(bags.NumBags)
		ss := 0.0
		for b, tb := range tot {
			d := tb - eadv*float64(bags.Size(b))
			ss += d * d
		}
		se := math.Sqrt(ss/(B*(B-1))) / (n / B)
		if math.Abs(s.EAdv-eadv) > 1e-12 || !closeRel(s.EAdvSE, se, 0, 1e-9) {
			t.Fatalf("%v: EAdv %v ± %v, want %v ± %v", m, s.EAdv, s.EAdvSE, eadv, se)
		}
	}
}

// TestRunCRowSumWithinTolerance: CheckEtaC accepts a row whose sum is
// within EtaTolerance of 1 (a float32 softmax's sums to 1 within ~1e-7), so
// RunC must audit such a row without a false *BoundViolation: rr on
// uniform rows and rr_prior whose prior is η both attain IEAdvBoundC, and
// rows scaled to sum to 1 − 2e-7 (and 1 + 2e-7) once failed the
// IEAdv ≤ bound check by ~1e-7 (IEAdvBoundC's tail form takes Σ η = 1).
// Every figure is that of the probability vector the row rounds: the
// Result equals RunC's on the rows divided by their sums, bit for bit
// (printed with %+v; rows a caller normalized keep their bits), and the
// caller's η is left as it was. llp_geom's bags (~25 ms each on 2 loaded
// cores) take the first 100 rows, 50 bags: a row left unnormalized
// changes the figures of any of them.
func TestRunCRowSumWithinTolerance(t *testing.T) {
	const c, n = 10, 400
	uniform := make([]float64, n*c)
	for i := range uniform {
		uniform[i] = 1.0 / c
	}
	mixed := mcAuditSet(n, c, 31)
	for _, tc := range []struct {
		name string
		p    pets.Params
		eta  []float64
	}{
		{"rr uniform", pets.Params{Kind: pets.RR, Epsilon: 1}, uniform},
		{"rr_prior prior=eta", pets.Params{Kind: pets.RRPrior, Epsilon: 1}, mixed},
		{"llp_geom", pets.Params{Kind: pets.LLPGeom, K: 2, Epsilon: 1}, mixed[:100*c]},
	} {
		for _, scale := range []float64{1 - 2e-7, 1 + 2e-7} {
			t.Run(fmt.Sprintf("%s sum %v", tc.name, scale), func(t *testing.T) {
				m := mcMech(tc.p, c)
				eta, norm := make([]float64, len(tc.eta)), make([]float64, len(tc.eta))
				for i, v := range tc.eta {
					eta[i] = v * scale
				}
				for i := 0; i < len(eta); i += c {
					s := 0.0
					for _, v := range eta[i : i+c] {
						s += v
					}
					if math.Abs(s-scale) > 1e-12 {
						t.Fatalf("row %d sums to %v", i/c, s)
					}
					for j := i; j < i+c; j++ {
						norm[j] = eta[j] / s
					}
				}
				in := slices.Clone(eta)
				o := OptionsC{Seed: 2, LabelDraws: 2, MaxSamples: 20}
				if tc.p.Kind == pets.RRPrior {
					o.Prior = in // the mechanism's public prior, as given
				}
				got, err := RunC(eta, m, o)
				if err != nil {
					t.Fatalf("rows summing to %v: %v", scale, err)
				}
				if !slices.Equal(eta, in) {
					t.Fatal("RunC changed its input")
				}
				want, err := RunC(norm, m, o)
				if err != nil {
					t.Fatal(err)
				}
				if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
					t.Fatalf("rows summing to %v\n%s\nnormalized rows\n%s", scale, g, w)
				}
			})
		}
	}
}
