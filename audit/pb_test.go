package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/oracle"
	"labelprivacy/pets"
)

// bruteBag enumerates all 2^k label vectors of a bag and returns, for every
// member i and bag sum s, joint[b][i][s] = P(y_i = b, S = s) (k ≤ 16). Each
// entry is a sum of non-negative products, accurate to a relative ~k·2^-53.
func bruteBag(eta []float64) (joint [2][][]float64) {
	k := len(eta)
	for b := range 2 {
		joint[b] = make([][]float64, k)
		for i := range joint[b] {
			joint[b][i] = make([]float64, k+1)
		}
	}
	for mask := 0; mask < 1<<k; mask++ {
		p, s := 1.0, 0
		for j, e := range eta {
			if mask>>j&1 == 1 {
				p *= e
				s++
			} else {
				p *= 1 - e
			}
		}
		for i := range eta {
			joint[mask>>i&1][i][s] += p
		}
	}
	return joint
}

// directLOO is the leave-one-out law by direct convolution of the others
// (no deconvolution): an independent O(k²) reference.
func directLOO(eta []float64, i int) []float64 {
	others := make([]float64, 0, len(eta)-1)
	others = append(others, eta[:i]...)
	others = append(others, eta[i+1:]...)
	q := make([]float64, len(eta))
	pbPMF(q, others)
	return q
}

// testBags are the bags of the exactness tests: random η, η at and near
// 0 and 1, and homogeneous bags.
func testBags() [][]float64 {
	r := rand.New(rand.NewPCG(7, 8))
	bags := [][]float64{
		{0.5},
		{0, 1},
		{1e-15, 1 - 1e-15, 0.5},
		{0, 0, 0.3, 1, 1},
		{1e-300, 0.2, 0.999999999999, 1e-9, 0.5, 0.7},
		{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5},
		{0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01},
		{0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 0.99, 1e-6},
	}
	for k := 1; k <= 12; k++ {
		eta := make([]float64, k)
		for i := range eta {
			switch r.IntN(6) {
			case 0:
				eta[i] = r.Float64() * 1e-6
			case 1:
				eta[i] = 1 - r.Float64()*1e-6
			default:
				eta[i] = r.Float64()
			}
		}
		bags = append(bags, eta)
	}
	return bags
}

// closeRel reports |got − want| ≤ abs or ≤ rel·|want|.
func closeRel(got, want, abs, rel float64) bool {
	d := math.Abs(got - want)
	return d <= abs || d <= rel*math.Abs(want)
}

// TestLeaveOneOutBrute checks the bag-sum law and every member's
// leave-one-out law against enumeration of all 2^k label vectors (k ≤ 12):
// absolute error ≤ 1e-12 everywhere, and relative error ≤ 1e-10 for every
// entry above 1e-250 (the far tails included: this is what the
// forward/backward switch of leaveOneOut buys).
func TestLeaveOneOutBrute(t *testing.T) {
	for bi, eta := range testBags() {
		k := len(eta)
		joint := bruteBag(eta)
		p := make([]float64, k+1)
		pbPMF(p, eta)
		for s := range p {
			want := joint[0][0][s] + joint[1][0][s]
			if !closeRel(p[s], want, 1e-300, 1e-12) || math.Abs(p[s]-want) > 1e-12 {
				t.Errorf("bag %d: P(S=%d) = %.17g, brute %.17g", bi, s, p[s], want)
			}
		}
		q := make([]float64, k)
		for i, e := range eta {
			leaveOneOut(q, p, e)
			for j := range q {
				// P(S₋ᵢ = j) = P(y_i=0, S=j)/(1−e) = P(y_i=1, S=j+1)/e; take the
				// better conditioned of the two brute-force forms.
				var want float64
				if e <= 0.5 {
					want = joint[0][i][j] / (1 - e)
				} else {
					want = joint[1][i][j+1] / e
				}
				if math.Abs(q[j]-want) > 1e-12 || (want > 1e-250 && !closeRel(q[j], want, 0, 1e-10)) {
					t.Errorf("bag %d (η=%v) member %d: P(S−i=%d) = %.17g, brute %.17g", bi, eta, i, j, q[j], want)
				}
			}
		}
	}
}

// bruteIEAdv returns IEAdv_i for every member of a bag by enumeration, for
// a discrete release with likelihood lik(r, s) over releases r = 0..k.
func bruteIEAdv(eta []float64, lik func(r, s int) float64) []float64 {
	k := len(eta)
	joint := bruteBag(eta)
	out := make([]float64, k)
	for i, e := range eta {
		lost := 0.0
		for r := 0; r <= k; r++ {
			var j1, j0 float64
			for s := 0; s <= k; s++ {
				l := lik(r, s)
				j1 += joint[1][i][s] * l
				j0 += joint[0][i][s] * l
			}
			lost += math.Min(j1, j0)
		}
		out[i] = math.Min(e, 1-e) - lost
	}
	return out
}

// TestMemberBrute checks per-member IEAdv for llp and llp_geom (several ε)
// against enumeration of all label vectors and releases, with pets'
// GeomPMF as the likelihood, to 1e-12; and the geom likelihood tables to a
// relative 1e-12 against Σ_s P(y_i=b, S=s)·GeomPMF(k, s)[r].
func TestMemberBrute(t *testing.T) {
	for _, eps := range []float64{0, 0.0625, 1, 8, 32} {
		for bi, eta := range testBags() {
			k := len(eta)
			kind := pets.SumExact
			lik := func(r, s int) float64 {
				if r == s {
					return 1
				}
				return 0
			}
			if eps > 0 {
				kind = pets.SumGeometric
				pmf := make([][]float64, k+1)
				for s := range pmf {
					pmf[s] = oracle.GeomPMF(eps, k, s)
				}
				lik = func(r, s int) float64 { return pmf[s][r] }
			}
			want := bruteIEAdv(eta, lik)
			w := newBagWork(k, eps)
			copy(w.eta, eta)
			pbPMF(w.p, w.eta)
			for i, e := range eta {
				got := w.member(kind, e)
				if math.Abs(got-want[i]) > 1e-12 {
					t.Errorf("ε=%v bag %d member %d (η=%v): IEAdv %.17g, brute %.17g", eps, bi, i, e, got, want[i])
				}
				if kind != pets.SumGeometric {
					continue
				}
				q := directLOO(eta, i)
				for r := 0; r <= k; r++ {
					var w1, w0 float64
					for s := 0; s <= k; s++ {
						if s > 0 {
							w1 += q[s-1] * lik(r, s)
						}
						if s < k {
							w0 += q[s] * lik(r, s)
						}
					}
					if !closeRel(w.f1[r], w1, 1e-300, 1e-12) || !closeRel(w.f0[r], w0, 1e-300, 1e-12) {
						t.Errorf("ε=%v bag %d member %d r=%d: tables (%.17g, %.17g), brute (%.17g, %.17g)",
							eps, bi, i, r, w.f1[r], w.f0[r], w1, w0)
					}
				}
			}
		}
	}
}

// TestLeaveOneOutLargeK compares leaveOneOut with direct convolution of the
// other members (no deconvolution) in bags of 512 with uniform, skewed and
// extreme η: relative error ≤ 1e-9 for entries above 1e-150, absolute
// ≤ 1e-14. (Below ~1e-200 both computations lose relative precision: the
// partial sums of the recursion for the bag-sum law pass through the
// subnormal range when the final value does not.)
func TestLeaveOneOutLargeK(t *testing.T) {
	const k = 512
	r := rand.New(rand.NewPCG(31, 32))
	for trial := range 3 {
		eta := make([]float64, k)
		for i := range eta {
			switch {
			case trial == 1:
				eta[i] = r.Float64() * 0.1
			case i%17 == 0:
				eta[i] = float64(r.IntN(2)) // exact 0 or 1
			default:
				eta[i] = r.Float64()
			}
		}
		p := make([]float64, k+1)
		pbPMF(p, eta)
		q := make([]float64, k)
		worst := 0.0
		for i := 0; i < k; i += 8 {
			leaveOneOut(q, p, eta[i])
			want := directLOO(eta, i)
			for j := range q {
				if math.Abs(q[j]-want[j]) > 1e-14 || (want[j] > 1e-150 && !closeRel(q[j], want[j], 0, 1e-9)) {
					t.Fatalf("trial %d member %d (η=%v): q[%d] = %.17g, direct %.17g", trial, i, eta[i], j, q[j], want[j])
				}
				if want[j] > 1e-150 {
					worst = max(worst, math.Abs(q[j]-want[j])/want[j])
				}
			}
		}
		t.Logf("trial %d: worst relative error %.3g", trial, worst)
	}
}
