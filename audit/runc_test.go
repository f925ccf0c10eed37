package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/llp"
	"labelprivacy/pets"
)

// mcSampler is a SamplerC over pets.Multiclass's own release functions (the
// pipeline's implements it over the release package): rr and none
// ReleaseRR, rr_prior ReleaseRRPrior with the audit's priors, the LLP
// family a random partition (llp.Partition, the remainder dropped unless
// keep) and ReleaseBag per bag, bot rows only. epsScale ≠ 0 is the
// test-only hook that makes it release at epsScale·ε while the audit is
// told ε.
type mcSampler struct {
	prior    []float64
	epsScale float64
	keep     bool
}

func (s mcSampler) ReleaseC(labels []uint8, m *pets.Multiclass, seed uint64) (*ReleasedC, error) {
	if s.epsScale != 0 && m.Kind().NeedsEpsilon() {
		p := m.Mechanism().Params()
		p.Epsilon *= s.epsScale
		m = mcMech(p, m.Classes())
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	n, c := len(labels), m.Classes()
	sp := m.Mechanism().Spec()
	out := &ReleasedC{Row: make([]int, 0, n)}
	switch {
	case sp.Release.PerBag():
		bags, err := llp.Partition(n, m.Mechanism().K(), rng, s.keep)
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
			m.ReleaseBag(alpha, counts, rng)
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
			m.ReleaseRRPrior(out.Label, labels, s.prior, make([]pets.PriorSet, n), rng)
		} else {
			m.ReleaseRR(out.Label, labels, rng)
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

func (s lyingSamplerC) ReleaseC(labels []uint8, m *pets.Multiclass, seed uint64) (*ReleasedC, error) {
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
// partition and the same streams through pets.Mechanism's binary release
// functions, which pets documents as equal bit for bit to Multiclass's at
// C = 2.
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
			m.ReleaseRRPrior(out.Label, labels, s.prior, make([]bool, n), rng)
		} else {
			m.ReleaseRR(out.Label, labels, rng)
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
			want, err := Run(e1, m.Mechanism(), ob)
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
				joint, nz := mcBrute(bag, c, k, m.NoiseRate())
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
