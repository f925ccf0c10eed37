package audit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/oracle"
	"labelprivacy/pets"
)

func mcMech(p pets.Params, c int) *pets.Mechanism {
	p.Classes = c
	m, err := pets.New(p)
	if err != nil {
		panic(err)
	}
	return m
}

// mcEta draws a class-probability vector over c classes: Dirichlet(α) by
// normalized Gamma(α) draws (α < 1 gives confident vectors), with a few
// classes set exactly to 0 when zeros is set.
func mcEta(r *rand.Rand, c int, alpha float64, zeros bool) []float64 {
	e := make([]float64, c)
	s := 0.0
	for i := range e {
		e[i] = gammaDraw(r, alpha)
		if zeros && r.IntN(4) == 0 {
			e[i] = 0
		}
		s += e[i]
	}
	if s == 0 {
		e[r.IntN(c)], s = 1, 1
	}
	for i := range e {
		e[i] /= s
	}
	return e
}

// gammaDraw is a Gamma(α, 1) variate (Marsaglia–Tsang, with the α < 1 boost).
func gammaDraw(r *rand.Rand, alpha float64) float64 {
	if alpha < 1 {
		return gammaDraw(r, alpha+1) * math.Pow(r.Float64(), 1/alpha)
	}
	d := alpha - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := r.Float64(); math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}

// channelIEAdv is the oracle Σ_z max_y η_y·P(z|y) − max_y η_y for a channel
// with nz releases.
func channelIEAdv(eta []float64, nz int, lik func(z, y int) float64) float64 {
	tot := 0.0
	for z := range nz {
		best := 0.0
		for y, e := range eta {
			best = max(best, e*lik(z, y))
		}
		tot += best
	}
	m := 0.0
	for _, e := range eta {
		m = max(m, e)
	}
	return tot - m
}

// TestIEAdvBoundC: at C = 2 the bound is IEAdvBound (Theorem 3.5's
// worst case) to 1e-15; RRWithPrior with the prior η attains it (its IEAdv
// by the channel oracle equals the bound to 1e-12); random ε-DP channels
// (Q(z|y) ∝ base_z·e^{ε·s_zy}, s ∈ [0, ½], so every ratio is ≤ e^ε) never
// exceed it; ε = 0 gives 0 and ε = +Inf gives 1 − max η.
func TestIEAdvBoundC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, eps := range []float64{0, 0.1, 0.5, 1, 2, 4, 8} {
		for i := 0; i <= 200; i++ {
			e := float64(i) / 200
			if got, want := IEAdvBoundC([]float64{1 - e, e}, eps), IEAdvBound(e, eps); math.Abs(got-want) > 1e-15 {
				t.Fatalf("C=2 ε=%v η=%v: bound %v, binary %v", eps, e, got, want)
			}
		}
	}
	checked := 0
	for _, c := range []int{2, 3, 4, 10, 64} {
		for _, eps := range []float64{0.1, 0.5, 1, 2, 4, 8} {
			for range 100 {
				eta := mcEta(r, c, []float64{0.2, 1, 5}[r.IntN(3)], r.IntN(2) == 0)
				b := IEAdvBoundC(eta, eps)
				m := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: eps}, c)
				s := chanOf(m, eta)
				got := channelIEAdv(eta, c, func(z, y int) float64 { return s.Prob(uint8(z), uint8(y)) })
				if math.Abs(got-b) > 1e-12 {
					t.Fatalf("C=%d ε=%v η=%v: RRWithPrior IEAdv %.17g, bound %.17g", c, eps, eta, got, b)
				}
				if fast := IEAdvChannelC(eta, s); math.Abs(fast-b) > 1e-12 {
					t.Fatalf("C=%d ε=%v: IEAdvRRPriorC %.17g, bound %.17g", c, eps, fast, b)
				}
				// A random ε-DP channel with c+2 releases.
				nz := c + 2
				base := make([]float64, nz)
				for z := range base {
					base[z] = r.ExpFloat64()
				}
				q := make([]float64, nz*c)
				for y := range c {
					tot := 0.0
					for z := range nz {
						q[z*c+y] = base[z] * math.Exp(eps*0.5*r.Float64())
						tot += q[z*c+y]
					}
					for z := range nz {
						q[z*c+y] /= tot
					}
				}
				if v := channelIEAdv(eta, nz, func(z, y int) float64 { return q[z*c+y] }); v > b+1e-12 {
					t.Fatalf("C=%d ε=%v: a random ε-DP channel has IEAdv %v above the bound %v", c, eps, v, b)
				}
				if IEAdvBoundC(eta, 0) != 0 {
					t.Fatalf("ε = 0 bound %v", IEAdvBoundC(eta, 0))
				}
				_, m1 := argmax(eta)
				if got := IEAdvBoundC(eta, math.Inf(1)); math.Abs(got-(1-m1)) > 1e-12 {
					t.Fatalf("ε = Inf bound %v, want %v", got, 1-m1)
				}
				checked++
			}
		}
	}
	t.Logf("%d examples", checked)
}

// TestIEAdvRRC: k-ary RR's closed form equals the channel oracle
// Σ_z max_y η_y·P(z|y) − max_y η_y with P(z|y) written from its definition
// (keep e^ε/(e^ε+C−1), each other class 1/(e^ε+C−1)) to 1e-12, averaged
// over an audit set too (EAdv), and at C = 2 equals Theorem 3.5 (thm35) to
// 1e-15; it never exceeds IEAdvBoundC.
func TestIEAdvRRC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []int{2, 3, 5, 10, 64} {
		for _, eps := range []float64{0.05, 0.5, 1, 3, 8} {
			m := mcMech(pets.Params{Kind: pets.RR, Epsilon: eps}, c)
			E := math.Exp(eps)
			lik := func(z, y int) float64 {
				if z == y {
					return E / (E + float64(c-1))
				}
				return 1 / (E + float64(c-1))
			}
			var sumFast, sumOracle float64
			for range 200 {
				eta := mcEta(r, c, []float64{0.3, 1, 10}[r.IntN(3)], r.IntN(3) == 0)
				fast := IEAdvRRC(eta, chanOf(m, nil))
				want := channelIEAdv(eta, c, lik)
				if math.Abs(fast-want) > 1e-12 {
					t.Fatalf("C=%d ε=%v η=%v: closed form %.17g, oracle %.17g", c, eps, eta, fast, want)
				}
				if b := IEAdvBoundC(eta, eps); fast > b+1e-12 {
					t.Fatalf("C=%d ε=%v: IEAdv %v above the bound %v", c, eps, fast, b)
				}
				sumFast += fast
				sumOracle += want
			}
			if math.Abs(sumFast-sumOracle)/200 > 1e-13 {
				t.Fatalf("C=%d ε=%v: EAdv %v vs %v", c, eps, sumFast/200, sumOracle/200)
			}
		}
	}
	for _, eps := range []float64{0.1, 1, 4} {
		m := mcMech(pets.Params{Kind: pets.RR, Epsilon: eps}, 2)
		for i := 0; i <= 400; i++ {
			e := float64(i) / 400
			if got, want := IEAdvRRC([]float64{1 - e, e}, chanOf(m, nil)), thm35(e, flipProb(eps)); math.Abs(got-want) > 1e-15 {
				t.Fatalf("C=2 ε=%v η=%v: %v, Theorem 3.5 %v", eps, e, got, want)
			}
		}
	}
}

// TestIEAdvRRPriorC: rr_prior's IEAdv equals the channel oracle for random
// priors and attacker's η that differ (to 1e-12); at C = 2 it is the
// binary audit's: 0 on the argmax branch, Theorem 3.5 on the RR branch.
func TestIEAdvRRPriorC(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []int{2, 3, 10, 64} {
		for _, eps := range []float64{0.2, 1, 4} {
			m := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: eps}, c)
			for range 200 {
				prior := mcEta(r, c, []float64{0.1, 0.5, 3}[r.IntN(3)], false)
				eta := mcEta(r, c, []float64{0.3, 1, 10}[r.IntN(3)], r.IntN(3) == 0)
				s := chanOf(m, prior)
				got := IEAdvChannelC(eta, s)
				want := channelIEAdv(eta, c, func(z, y int) float64 { return s.Prob(uint8(z), uint8(y)) })
				if math.Abs(got-want) > 1e-12 {
					t.Fatalf("C=%d ε=%v: %.17g, oracle %.17g", c, eps, got, want)
				}
				if got > IEAdvBoundC(eta, eps)+1e-12 {
					t.Fatalf("C=%d ε=%v: IEAdv %v above the bound", c, eps, got)
				}
			}
		}
	}
	for _, eps := range []float64{0.3, 1, 4} {
		m := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: eps}, 2)
		bin := pets.Params{Kind: pets.RRPrior, Epsilon: eps}
		bm, _ := pets.New(bin)
		for i := 0; i <= 100; i++ {
			p := float64(i) / 100
			for j := 0; j <= 20; j++ {
				e := float64(j) / 20
				s := chanOf(m, []float64{1 - p, p})
				want := thm35(e, flipProb(eps))
				if !chanOf(bm, []float64{1 - p, p}).Informative() {
					want = 0
				}
				if got := IEAdvChannelC([]float64{1 - e, e}, s); math.Abs(got-want) > 1e-12 {
					t.Fatalf("C=2 ε=%v p=%v η=%v: %v, binary %v", eps, p, e, got, want)
				}
			}
		}
	}
}

// TestMultAdvC: the multiplicative advantage of every release of rr is ε
// exactly (to 1e-12) at C ∈ {2, 3, 10}, of rr_prior 0 on a set of size 1
// and ε otherwise; at C = 2 it is the binary |log l1/l0|; a class with
// likelihood 0 gives +Inf unless its η is 0 (then it is ignored), and
// PosteriorC is Bayes' rule.
func TestMultAdvC(t *testing.T) {
	for _, c := range []int{2, 3, 10} {
		for _, eps := range []float64{0.5, 2, 9} {
			m := mcMech(pets.Params{Kind: pets.RR, Epsilon: eps}, c)
			p := mcMech(pets.Params{Kind: pets.RRPrior, Epsilon: eps}, c)
			lik := make([]float64, c)
			for z := range uint8(c) {
				ExampleLikelihoodsC(lik, chanOf(m, nil), z)
				if ma := MultAdvC(nil, lik); math.Abs(ma-eps) > 1e-12*eps {
					t.Fatalf("rr C=%d ε=%v z=%d: MA %v", c, eps, z, ma)
				}
				for k := 1; k <= c; k++ {
					if z >= uint8(k) {
						continue
					}
					ExampleLikelihoodsC(lik, setChan(p, 1<<k-1), z)
					want := eps
					if k == 1 {
						want = 0
					}
					if ma := MultAdvC(nil, lik); math.Abs(ma-want) > 1e-12*eps {
						t.Fatalf("rr_prior C=%d ε=%v k=%d z=%d: MA %v, want %v", c, eps, k, z, ma, want)
					}
				}
			}
		}
	}
	if got, want := MultAdvC(nil, []float64{0.2, 0.7}), math.Abs(logLR(0.7, 0.2)); got != want {
		t.Fatalf("C=2: %v, binary %v", got, want)
	}
	if !math.IsInf(MultAdvC(nil, []float64{0, 0.3, 0.1}), 1) || math.Abs(MultAdvC([]float64{0, 0.5, 0.5}, []float64{0, 0.3, 0.1})-math.Log(3)) > 1e-15 {
		t.Fatal("zero likelihoods handled wrongly")
	}
	if MultAdvC(nil, []float64{0, 0}) != 0 {
		t.Fatal("all-zero likelihoods")
	}
	post := make([]float64, 3)
	PosteriorC(post, []float64{0.5, 0.3, 0.2}, []float64{0.1, 0.2, 0.4})
	want := []float64{0.05 / 0.19, 0.06 / 0.19, 0.08 / 0.19}
	for i := range post {
		if math.Abs(post[i]-want[i]) > 1e-15 {
			t.Fatalf("posterior %v, want %v", post, want)
		}
	}
}

// TestCountIndex: every level's enumeration order is the rank order, the
// up tables agree with ranks computed directly, and level sizes are
// C(j+C−1, C−1), for shapes from (2, 9) to (64, 2).
func TestCountIndex(t *testing.T) {
	for _, sh := range [][2]int{{2, 9}, {3, 10}, {4, 6}, {10, 4}, {64, 2}, {7, 1}} {
		c, n := sh[0], sh[1]
		x := newCountIndex(c, n)
		for j := 0; j <= n; j++ {
			if float64(x.size[j]) != stateCount(j, c) {
				t.Fatalf("C=%d level %d: %d states, want %v", c, j, x.size[j], stateCount(j, c))
			}
			s := 0
			v := make([]int, c)
			x.each(j, func(u []uint16) {
				for i := range u {
					v[i] = int(u[i])
				}
				if got := x.rank(v); got != s {
					t.Fatalf("C=%d level %d: state %d %v has rank %d", c, j, s, v, got)
				}
				if j < n {
					for y := range c {
						v[y]++
						if got, want := int(x.up[j][s*c+y]), x.rank(v); got != want {
							t.Fatalf("C=%d level %d state %d class %d: up %d, rank %d", c, j, s, y, got, want)
						}
						v[y]--
					}
				}
				s++
			})
			if s != x.size[j] {
				t.Fatalf("C=%d level %d: enumerated %d of %d", c, j, s, x.size[j])
			}
		}
	}
}

// mcBrute enumerates all C^n label vectors of a bag and returns, for each
// member i, class y and release z, the joint probability
// P(y_i = y, z) = Σ_{labels: y_i = y} Π_j η_{j,y_j}·L(z | counts), with the
// release index z = Σ_c t_c·(n+1)^{c−1} over classes c = 1..C−1 and L from
// oracle.GeomPMF at rate λ (λ = 0: llp, L = 1{t = counts}).
func mcBrute(eta []float64, c, n int, lambda float64) (joint [][][]float64, nz int) {
	nz = 1
	for range c - 1 {
		nz *= n + 1
	}
	joint = make([][][]float64, n)
	for i := range joint {
		joint[i] = make([][]float64, c)
		for y := range joint[i] {
			joint[i][y] = make([]float64, nz)
		}
	}
	lab := make([]int, n)
	counts := make([]int, c)
	law := make([]float64, nz)
	for {
		p := 1.0
		clear(counts)
		for j, y := range lab {
			p *= eta[j*c+y]
			counts[y]++
		}
		if p > 0 {
			// The release law of these counts.
			law = law[:1]
			law[0] = 1
			for cl := 1; cl < c; cl++ {
				var g []float64
				if lambda == 0 {
					g = make([]float64, n+1)
					g[counts[cl]] = 1
				} else {
					g = oracle.GeomPMF(lambda, n, counts[cl])
				}
				next := make([]float64, len(law)*(n+1))
				for a, v := range law {
					for t, w := range g {
						next[t*len(law)+a] = v * w
					}
				}
				law = next
			}
			for i, y := range lab {
				for z, v := range law {
					joint[i][y][z] += p * v
				}
			}
		}
		k := 0
		for ; k < n; k++ {
			lab[k]++
			if lab[k] < c {
				break
			}
			lab[k] = 0
		}
		if k == n {
			break
		}
	}
	return joint, nz
}

// mcBag draws a bag of n class-probability vectors (flat), mixing diffuse,
// confident and one-hot members.
func mcBag(r *rand.Rand, c, n int) []float64 {
	eta := make([]float64, 0, n*c)
	for range n {
		switch r.IntN(4) {
		case 0:
			e := make([]float64, c)
			e[r.IntN(c)] = 1
			eta = append(eta, e...)
		default:
			eta = append(eta, mcEta(r, c, []float64{0.2, 1, 5}[r.IntN(3)], r.IntN(2) == 0)...)
		}
	}
	return eta
}

// TestBagAuditCBruteForce: for llp and llp_geom, every member's exact
// IEAdv equals the brute-force sum over all C^n label vectors and all
// releases (to 1e-12), and Likelihoods equal the brute-force P(z | y_i = y)
// up to one common factor per release (relative 1e-12), for (C, n) from
// (2, 6) to (5, 3); the exact IEAdv never exceeds IEAdvBoundC for
// llp_geom.
func TestBagAuditCBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range [][2]int{{2, 6}, {3, 4}, {3, 5}, {4, 3}, {5, 3}, {3, 1}} {
		c, n := sh[0], sh[1]
		for _, p := range []pets.Params{
			{Kind: pets.LLP, K: n}, {Kind: pets.LLPGeom, K: n, Epsilon: 0.7}, {Kind: pets.LLPGeom, K: n, Epsilon: 3},
		} {
			m := mcMech(p, c)
			a, err := NewBagAuditorC(m, n)
			if err != nil {
				t.Fatal(err)
			}
			for range 4 {
				eta := mcBag(r, c, n)
				res, err := a.Audit(eta, BagOptionsC{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Exact {
					t.Fatalf("%v n=%d: not exact", m, n)
				}
				joint, nz := mcBrute(eta, c, n, m.BagLaw().NoiseRate())
				for i := range n {
					lik := func(z, y int) float64 {
						if eta[i*c+y] == 0 {
							return 0
						}
						return joint[i][y][z] / eta[i*c+y]
					}
					want := channelIEAdv(eta[i*c:(i+1)*c], nz, lik)
					if math.Abs(res.IEAdv[i]-want) > 1e-12 {
						t.Fatalf("%v n=%d member %d: IEAdv %.17g, brute force %.17g", m, n, i, res.IEAdv[i], want)
					}
					if p.Kind == pets.LLPGeom && res.IEAdv[i] > IEAdvBoundC(eta[i*c:(i+1)*c], p.Epsilon)+1e-12 {
						t.Fatalf("%v: IEAdv %v above the bound", m, res.IEAdv[i])
					}
				}
				// Likelihoods of a few releases, against brute force.
				dst := make([]float64, n*c)
				rel := make([]float64, c-1)
				for range 5 {
					z := r.IntN(nz)
					for cl, zz := 1, z; cl < c; cl++ {
						rel[cl-1] = float64(zz%(n+1)) / float64(n)
						zz /= n + 1
					}
					err := a.Likelihoods(dst, eta, rel)
					if p.Kind == pets.LLP {
						s := 0.0
						for _, v := range rel {
							s += v
						}
						if s > 1+1e-9 {
							if err == nil {
								t.Fatalf("llp release %v with counts above n accepted", rel)
							}
							continue
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					scale := math.NaN()
					for i := range n {
						for y := range c {
							want := joint[i][y][z]
							if eta[i*c+y] == 0 {
								continue
							}
							want /= eta[i*c+y]
							got := dst[i*c+y]
							if want == 0 || got == 0 {
								if want != got {
									t.Fatalf("%v member %d class %d release %v: %v, brute %v", m, i, y, rel, got, want)
								}
								continue
							}
							if math.IsNaN(scale) {
								scale = got / want
							}
							if !closeRel(got/want, scale, 0, 1e-12) {
								t.Fatalf("%v member %d class %d release %v: ratio %v, first ratio %v", m, i, y, rel, got/want, scale)
							}
						}
					}
				}
			}
		}
	}
}

// binaryBag runs the binary audit (bagWork) on a bag with P(y=1) = e1 and
// returns every member's IEAdv.
func binaryBag(kind pets.SumNoise, e1 []float64, eps float64) []float64 {
	w := newBagWork(len(e1), eps)
	copy(w.eta, e1)
	pbPMF(w.p, w.eta)
	out := make([]float64, len(e1))
	for i, e := range e1 {
		out[i] = w.member(kind, e)
	}
	return out
}

// TestBagAuditCBinary: at C = 2 the count-vector audit equals the binary
// bag audit (bag.go) member by member to 1e-12 for llp, llp_geom and
// llp_lap (closed-form integral) on random bags of 1 to 40, ε from 0.1 to
// 8; so do the likelihood ratios of random releases (relative 1e-10).
func TestBagAuditCBinary(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	worst := 0.0
	for _, n := range []int{1, 2, 5, 13, 40} {
		for _, eps := range []float64{0.1, 1, 3, 8} {
			for _, tc := range []struct {
				p    pets.Params
				kind pets.SumNoise
			}{
				{pets.Params{Kind: pets.LLP, K: n}, pets.SumExact},
				{pets.Params{Kind: pets.LLPGeom, K: n, Epsilon: eps}, pets.SumGeometric},
				{pets.Params{Kind: pets.LLPLap, K: n, Epsilon: eps}, pets.SumLaplace},
			} {
				if tc.kind == pets.SumExact && eps != 1 {
					continue
				}
				m := mcMech(tc.p, 2)
				a, err := NewBagAuditorC(m, n)
				if err != nil {
					t.Fatal(err)
				}
				for range 3 {
					e1 := make([]float64, n)
					eta := make([]float64, 2*n)
					for i := range e1 {
						switch r.IntN(5) {
						case 0:
							e1[i] = float64(r.IntN(2))
						default:
							e1[i] = r.Float64()
						}
						eta[2*i], eta[2*i+1] = 1-e1[i], e1[i]
					}
					res, err := a.Audit(eta, BagOptionsC{}, nil)
					if err != nil {
						t.Fatal(err)
					}
					want := binaryBag(tc.kind, e1, tc.p.Epsilon)
					for i := range n {
						d := math.Abs(res.IEAdv[i] - want[i])
						worst = max(worst, d)
						if d > 1e-12 || !res.Exact {
							t.Fatalf("%v n=%d member %d (η=%v): %.17g, binary %.17g (exact %v)", m, n, i, e1[i], res.IEAdv[i], want[i], res.Exact)
						}
					}
					// Likelihood ratios of sampled releases.
					w := newBagWork(n, tc.p.Epsilon)
					copy(w.eta, e1)
					pbPMF(w.p, w.eta)
					rel := make([]float64, 1)
					dst := make([]float64, 2*n)
					counts := make([]int, 2)
					for range 3 {
						clear(counts)
						for i := range n {
							counts[drawClass(eta[2*i:2*i+2], r)]++
						}
						m.BagLaw().ReleaseBag(rel, counts, r)
						if err := a.Likelihoods(dst, eta, rel); err != nil {
							t.Fatal(err)
						}
						tt := rel[0] * float64(n)
						if tc.kind != pets.SumLaplace {
							tt = math.Round(tt)
						}
						for i, e := range e1 {
							w.member(tc.kind, e)
							l1, l0 := w.likelihoods(tc.kind, tt)
							g1, g0 := dst[2*i+1], dst[2*i]
							if (l1 == 0) != (g1 == 0) || (l0 == 0) != (g0 == 0) {
								t.Fatalf("%v member %d: zero pattern (%v, %v) vs binary (%v, %v)", m, i, g1, g0, l1, l0)
							}
							if l1 > 0 && l0 > 0 && !closeRel(g1/g0, l1/l0, 0, 1e-10) {
								t.Fatalf("%v member %d release %v: ratio %.17g, binary %.17g", m, i, tt, g1/g0, l1/l0)
							}
							if got, want := MultAdvC(nil, dst[2*i:2*i+2]), math.Abs(logLR(l1, l0)); got != want && !closeRel(got, want, 1e-12, 1e-10) {
								t.Fatalf("%v member %d: MA %v, binary %v", m, i, got, want)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("largest |C-class − binary| IEAdv difference: %.3g", worst)
}

// TestBagAuditCEstimate: the sampled estimate of IEAdv agrees with the
// exact value where both exist: llp_geom at C = 3 (n = 4) and llp_lap at
// C = 2 (n = 6) with estimation forced. Each member's |estimate − exact|
// must be ≤ 5 SE (normal approximation with R = 4000 draws; per check
// false-failure rate 5.7e-7, 10 checks: < 1e-5), the bag's EAdv likewise,
// and the SE must be small enough (< 0.01) to see a 10% error in an
// advantage of 0.1.
func TestBagAuditCEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		p pets.Params
		c int
	}{
		{pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 2}, 3},
		{pets.Params{Kind: pets.LLPLap, K: 6, Epsilon: 2}, 2},
	} {
		m := mcMech(tc.p, tc.c)
		a, err := NewBagAuditorC(m, tc.p.K)
		if err != nil {
			t.Fatal(err)
		}
		eta := mcBag(r, tc.c, tc.p.K)
		exact, err := a.Audit(eta, BagOptionsC{}, nil)
		if err != nil || !exact.Exact {
			t.Fatalf("exact: %v %v", err, exact)
		}
		est, err := a.Audit(eta, BagOptionsC{Draws: 4000, ExactWork: -1}, r)
		if err != nil || est.Exact || est.Draws != 4000 {
			t.Fatalf("estimate: %v %+v", err, est)
		}
		for i := range exact.IEAdv {
			if d := math.Abs(est.IEAdv[i] - exact.IEAdv[i]); d > 5*est.IEAdvSE[i] || est.IEAdvSE[i] > 0.01 {
				t.Errorf("%v member %d: estimate %v ± %v, exact %v", m, i, est.IEAdv[i], est.IEAdvSE[i], exact.IEAdv[i])
			}
		}
		if d := math.Abs(est.EAdv - exact.EAdv); d > 5*est.EAdvSE {
			t.Errorf("%v: EAdv estimate %v ± %v, exact %v", m, est.EAdv, est.EAdvSE, exact.EAdv)
		}
		t.Logf("%v: EAdv exact %.5f, estimate %.5f ± %.5f", m, exact.EAdv, est.EAdv, est.EAdvSE)
		if est.Degenerate != 0 {
			t.Errorf("%d degenerate draws", est.Degenerate)
		}
	}
}

// TestBagAuditCLapQuadrature: llp_lap at C = 3 (a continuous release in
// two dimensions, always estimated) against a midpoint-rule integral of
// Σ_y max η_y·p(t | y_i = y) over [−12, n+12]² (the tails beyond
// carry < e^{−12λ}) with the densities from brute force over the 3^n
// label vectors: the quadrature at steps 0.01 and 0.02 must agree within
// 2e-4 (its error is O(h²)); their Richardson extrapolation must be within
// 5 SE + |difference| of the estimate (false-failure rate ~1e-6 for the
// two members). Skipped with -short.
func TestBagAuditCLapQuadrature(t *testing.T) {
	if testing.Short() {
		t.Skip("quadrature over a 2-D grid")
	}
	const n, c, eps = 2, 3, 4.0
	r := rand.New(rand.NewPCG(13, 14))
	m := mcMech(pets.Params{Kind: pets.LLPLap, K: n, Epsilon: eps}, c)
	lam := m.BagLaw().NoiseRate()
	a, err := NewBagAuditorC(m, n)
	if err != nil {
		t.Fatal(err)
	}
	eta := []float64{0.6, 0.3, 0.1, 0.2, 0.2, 0.6}
	est, err := a.Audit(eta, BagOptionsC{Draws: 20000}, r)
	if err != nil || est.Exact {
		t.Fatalf("%v %+v", err, est)
	}
	joint, _ := mcBrute(eta, c, n, 0) // P(y_i = y, counts) at the count index
	quad := func(h float64) []float64 {
		out := make([]float64, n)
		lo, hi := -12.0, float64(n)+12
		steps := int((hi - lo) / h)
		dens := make([]float64, (n+1)*steps) // (λ/2)e^{−λ|t−v|} at the midpoints
		for v := 0; v <= n; v++ {
			for s := range steps {
				tt := lo + (float64(s)+0.5)*h
				dens[v*steps+s] = lam / 2 * math.Exp(-lam*math.Abs(tt-float64(v)))
			}
		}
		for s1 := range steps {
			for s2 := range steps {
				for i := range n {
					best := 0.0
					for y := range c {
						p := 0.0
						for v1 := 0; v1 <= n; v1++ {
							for v2 := 0; v2 <= n-v1; v2++ {
								p += joint[i][y][v1+(n+1)*v2] * dens[v1*steps+s1] * dens[v2*steps+s2]
							}
						}
						best = max(best, p)
					}
					out[i] += best * h * h
				}
			}
		}
		for i := range out {
			_, m1 := argmax(eta[i*c : (i+1)*c])
			out[i] -= m1
		}
		return out
	}
	fine, coarse := quad(0.01), quad(0.02)
	for i := range n {
		d := math.Abs(fine[i] - coarse[i])
		if d > 2e-4 {
			t.Fatalf("member %d: quadrature not converged (%v vs %v)", i, fine[i], coarse[i])
		}
		q := fine[i] + (fine[i]-coarse[i])/3
		if e := math.Abs(est.IEAdv[i] - q); e > 5*est.IEAdvSE[i]+d {
			t.Errorf("member %d: estimate %v ± %v, quadrature %v", i, est.IEAdv[i], est.IEAdvSE[i], q)
		}
		t.Logf("member %d: estimate %.5f ± %.5f, quadrature %.5f (steps 0.01, 0.02 differ by %.1e)", i, est.IEAdv[i], est.IEAdvSE[i], q, d)
	}
}

// TestMulticlassRealizedDP: the realized multiplicative advantage of every
// member of releases drawn through pets' samplers is ≤ ε + DPTolerance for
// rr, rr_prior, llp_geom and llp_lap at C ∈ {2, 3, 10}, and the largest
// one comes within 5% of ε for the bag kinds (so noise 10% too small, i.e.
// a wrong Δ or λ, is seen): the bags mix one-hot members (which make the
// other labels almost known) with diffuse ones. Every exact or estimated
// IEAdv is ≤ IEAdvBoundC (+1e-12, + 5 SE when estimated).
func TestMulticlassRealizedDP(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, c := range []int{2, 3, 10} {
		for _, eps := range []float64{0.5, 2} {
			// Per example.
			for _, kind := range []pets.Kind{pets.RR, pets.RRPrior} {
				m := mcMech(pets.Params{Kind: kind, Epsilon: eps}, c)
				lik := make([]float64, c)
				labels, dst := make([]uint8, 1), make([]uint8, 1)
				for range 500 {
					eta := mcEta(r, c, 0.5, false)
					labels[0] = uint8(drawClass(eta, r))
					var prior []float64
					if kind == pets.RRPrior {
						prior = mcEta(r, c, 0.5, false)
					}
					m.ExampleLaw().Release(dst, labels, prior, r)
					ExampleLikelihoodsC(lik, chanOf(m, prior), dst[0])
					if ma := MultAdvC(nil, lik); ma > eps+DPTolerance {
						t.Fatalf("%v: realized MA %v > ε", m, ma)
					}
				}
			}
			// Bags.
			n := 4
			for _, kind := range []pets.Kind{pets.LLPGeom, pets.LLPLap} {
				m := mcMech(pets.Params{Kind: kind, K: n, Epsilon: eps}, c)
				a, err := NewBagAuditorC(m, n)
				if err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				dst := make([]float64, n*c)
				rel := make([]float64, c-1)
				counts := make([]int, c)
				for b := range 150 {
					eta := mcBag(r, c, n)
					if b%2 == 0 { // members 1.. one-hot: the others' counts known
						for i := 1; i < n; i++ {
							clear(eta[i*c : (i+1)*c])
							eta[i*c+r.IntN(c)] = 1
						}
					}
					for range 10 {
						clear(counts)
						for i := range n {
							counts[drawClass(eta[i*c:(i+1)*c], r)]++
						}
						m.BagLaw().ReleaseBag(rel, counts, r)
						if err := a.Likelihoods(dst, eta, rel); err != nil {
							t.Fatal(err)
						}
						for i := range n {
							ma := MultAdvC(nil, dst[i*c:(i+1)*c])
							if ma > eps+DPTolerance {
								t.Fatalf("%v: member %d of release %v has MA %v > ε", m, i, rel, ma)
							}
							worst = max(worst, ma)
						}
					}
					if b%10 == 0 {
						res, err := a.Audit(eta, BagOptionsC{Draws: 50}, r)
						if err != nil {
							t.Fatal(err)
						}
						for i := range n {
							if res.IEAdv[i] > IEAdvBoundC(eta[i*c:(i+1)*c], eps)+1e-12+5*res.IEAdvSE[i] {
								t.Fatalf("%v member %d: IEAdv %v ± %v above the bound", m, i, res.IEAdv[i], res.IEAdvSE[i])
							}
						}
					}
				}
				if worst < 0.95*eps {
					t.Errorf("%v: the largest realized MA %v is not within 5%% of ε", m, worst)
				}
			}
		}
	}
}

// TestBagAuditorLimits: the refusal beyond MaxBagWork names the bag size
// and wraps ErrInvalidInput; the largest accepted bag per C is the table
// of the package comment; non-bag mechanisms and bad inputs are refused.
func TestBagAuditorLimits(t *testing.T) {
	largest := map[int]int{}
	for _, c := range []int{2, 3, 4, 5, 10, 20, 64} {
		n := 1
		for BagWorkC(c, n+1) <= MaxBagWork {
			n++
		}
		largest[c] = n
		m := mcMech(pets.Params{Kind: pets.LLP, K: n + 1}, c)
		_, err := NewBagAuditorC(m, n+1)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != "k" || !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("C=%d n=%d: %v", c, n+1, err)
		}
		t.Logf("C=%d: n ≤ %d (%.0f count vectors, work %.3g)", c, n, stateCount(n, c), BagWorkC(c, n))
	}
	want := map[int]int{2: 511, 3: 127, 4: 59, 5: 36, 10: 13, 20: 7, 64: 4}
	for c, n := range want {
		if largest[c] != n {
			t.Errorf("C=%d: largest bag %d, the package comment says %d", c, largest[c], n)
		}
	}
	if _, err := NewBagAuditorC(mcMech(pets.Params{Kind: pets.RR, Epsilon: 1}, 3), 4); err == nil {
		t.Error("rr accepted as a bag mechanism")
	}
	a, err := NewBagAuditorC(mcMech(pets.Params{Kind: pets.LLPLap, K: 3, Epsilon: 1}, 3), 3)
	if err != nil {
		t.Fatal(err)
	}
	bad := []float64{0.5, 0.5, 0, 0.2, 0.2, 0.2, 1, 0, 0} // second sums to 0.6
	if _, err := a.Audit(bad, BagOptionsC{Draws: 10}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("bad η accepted: %v", err)
	}
	good := []float64{0.5, 0.5, 0, 0.2, 0.2, 0.6, 1, 0, 0}
	if _, err := a.Audit(good, BagOptionsC{Draws: 1}, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("one draw accepted: %v", err)
	}
	if err := CheckEtaC([]float64{0.5, math.NaN()}, 2); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("NaN η accepted: %v", err)
	}
}

func ExampleBagAuditorC_Audit() {
	m, _ := pets.New(pets.Params{Kind: pets.LLP, K: 3, Classes: 3})
	a, _ := NewBagAuditorC(m, 3)
	// Three members; the first is unsure between classes 0 and 1, the
	// others are certain of class 2: the released counts reveal the first.
	eta := []float64{
		0.5, 0.5, 0,
		0, 0, 1,
		0, 0, 1,
	}
	res, _ := a.Audit(eta, BagOptionsC{}, nil)
	fmt.Printf("%.2f %.2f %.2f exact=%v\n", res.IEAdv[0], res.IEAdv[1], res.IEAdv[2], res.Exact)
	// Output: 0.50 0.00 0.00 exact=true
}

// denseBag is a bag whose members give every class a positive probability
// (the count-vector programs' worst case: no zero to skip).
func denseBag(r *rand.Rand, c, n int) []float64 {
	eta := make([]float64, 0, n*c)
	for range n {
		eta = append(eta, mcEta(r, c, 1, false)...)
	}
	return eta
}

// BenchmarkBagAuditC times one bag at C = 10, k = 8 with dense η: the exact
// llp audit (the n leave-one-out count-vector programs plus the exact sum),
// the programs alone (Prepare), and one sampled release of the estimate
// (llp_geom; its release space 9^9 is far past exact enumeration).
func BenchmarkBagAuditC(b *testing.B) {
	const c, n = 10, 8
	r := rand.New(rand.NewPCG(1, 2))
	eta := denseBag(r, c, n)
	for _, p := range []pets.Params{{Kind: pets.LLP, K: n}, {Kind: pets.LLPGeom, K: n, Epsilon: 2}} {
		m := mcMech(p, c)
		a, err := NewBagAuditorC(m, n)
		if err != nil {
			b.Fatal(err)
		}
		if p.Kind == pets.LLP {
			b.Run("prepare", func(b *testing.B) {
				for range b.N {
					a.eta = nil // defeat the cache
					if err := a.Prepare(eta); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("llp_exact", func(b *testing.B) {
				for range b.N {
					a.eta = nil
					if _, err := a.Audit(eta, BagOptionsC{}, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
			continue
		}
		b.Run("llp_geom_per_draw", func(b *testing.B) {
			if err := a.Prepare(eta); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				a.estimate(&BagResultC{IEAdv: make([]float64, n), IEAdvSE: make([]float64, n)}, 2, r)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/draw")
		})
	}
}

// BenchmarkBagAuditCGrid times the exact llp audit of one bag with dense η
// over a grid of (C, k), to find the largest that runs in about a
// millisecond.
func BenchmarkBagAuditCGrid(b *testing.B) {
	for _, sh := range [][2]int{{2, 64}, {2, 128}, {3, 16}, {3, 24}, {3, 32}, {4, 12}, {4, 16}, {5, 8}, {5, 10}, {5, 12},
		{10, 5}, {10, 6}, {10, 7}, {10, 8}, {20, 3}, {20, 4}, {64, 2}, {64, 3}} {
		c, n := sh[0], sh[1]
		b.Run(fmt.Sprintf("C=%d/k=%d", c, n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			eta := denseBag(r, c, n)
			a, err := NewBagAuditorC(mcMech(pets.Params{Kind: pets.LLP, K: n}, c), n)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				a.eta = nil // defeat the cache
				if _, err := a.Audit(eta, BagOptionsC{}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
