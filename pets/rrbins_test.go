package pets

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// lossOf is the noisy-label error of RR on the bins given by a bin index
// per grid point (any partition, contiguous or not: nonempty bins
// 0..m−1), each bin released as its best value, computed the long way:
// ŷ_j minimises Σ_y p(y)w_j(y)(y − ŷ)², w_j(y) = e^ε if y ∈ j else 1,
// and E[(y − M(y))²] = Σ_y p(y) Σ_j P(ŷ_j | y)(y − ŷ_j)².
func lossOf(p, v []float64, bin []int, m int, eps float64) float64 {
	yhat := make([]float64, m)
	for j := range m {
		var num, den float64
		for i := range p {
			w := 1.0
			if bin[i] == j {
				w = math.Exp(eps)
			}
			num += p[i] * w * v[i]
			den += p[i] * w
		}
		yhat[j] = num / den
	}
	d := math.Exp(eps) + float64(m-1)
	var loss float64
	for i := range p {
		for j := range m {
			pz := 1 / d
			if bin[i] == j {
				pz = math.Exp(eps) / d
			}
			loss += p[i] * pz * (v[i] - yhat[j]) * (v[i] - yhat[j])
		}
	}
	return loss
}

// setPartitions calls f with every partition of n points into nonempty
// bins, as restricted growth strings (bin[0] = 0, bin[i] ≤ 1 + max so
// far): Bell(n) of them.
func setPartitions(n int, f func(bin []int, m int)) {
	bin := make([]int, n)
	var rec func(i, m int)
	rec = func(i, m int) {
		if i == n {
			f(bin, m)
			return
		}
		for b := 0; b <= m; b++ {
			bin[i] = b
			rec(i+1, max(m, b+1))
		}
	}
	rec(0, 0)
}

// testPriors are small-grid priors: uniform, skewed, zero-inflated, with
// an empty point and with two modes.
func testPriors(n int, r *rand.Rand) [][]float64 {
	norm := func(w []float64) []float64 {
		s := 0.0
		for _, x := range w {
			s += x
		}
		for i := range w {
			w[i] /= s
		}
		return w
	}
	var out [][]float64
	out = append(out, UniformPrior(n))
	skew, zero, gap, two, rnd := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		skew[i] = math.Pow(0.6, float64(i))
		zero[i] = 0.02
		gap[i] = 1 + float64(i%3)
		two[i] = math.Exp(-math.Pow(float64(i)-1, 2)) + math.Exp(-math.Pow(float64(i-n+2), 2))
		rnd[i] = r.ExpFloat64()
	}
	zero[0] = 1
	gap[n/2] = 0
	return append(out, norm(skew), norm(zero), norm(gap), norm(two), norm(rnd))
}

// OptimalBins's partition is the best of every partition of the grid into
// bins, contiguous or not (Bell(G) of them, G ≤ 8), and of every
// contiguous one (2^(G−1), G ≤ 13), on six priors at ε from 0.1 to 8: its
// loss equals the exhaustive minimum within 1e-12 relative, its own loss
// computed the long way (lossOf) is its MSE, and no partition beats it.
func TestOptimalBinsExhaustive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 7))
	for _, n := range []int{2, 3, 5, 8, 11, 13} {
		g := Grid{Max: float64(n-1) * 0.5, Step: 0.5}
		v := g.Values()
		for pi, p := range testPriors(n, r) {
			for _, eps := range []float64{0.1, 0.5, 1, 2, 4, 8} {
				b := OptimalBins(p, g, eps)
				bin := make([]int, n)
				for i := range n {
					bin[i] = b.Bin(i)
				}
				own := lossOf(p, v, bin, b.Len(), eps)
				if math.Abs(own-b.MSE) > 1e-12*math.Max(own, 1e-300)+1e-15 {
					t.Fatalf("G=%d prior %d ε=%v: MSE %v, the long way %v", n, pi, eps, b.MSE, own)
				}
				best := math.Inf(1)
				if n <= 8 {
					setPartitions(n, func(bin []int, m int) { best = min(best, lossOf(p, v, bin, m, eps)) })
				} else {
					for mask := range 1 << (n - 1) { // a cut after point i where bit i is set
						j := 0
						for i := range n {
							bin[i] = j
							if mask>>i&1 == 1 {
								j++
							}
						}
						best = min(best, lossOf(p, v, bin, j+1, eps))
					}
				}
				if own > best*(1+1e-12)+1e-15 {
					t.Fatalf("G=%d prior %d ε=%v: bins %v lose %v, the best partition %v", n, pi, eps, b.Edges, own, best)
				}
				if !slices.IsSorted(b.Values) {
					t.Errorf("G=%d prior %d ε=%v: bin values %v not increasing", n, pi, eps, b.Values)
				}
			}
		}
	}
}

// conversionPrior is a conversion-shaped prior on [0, 400] step 1: 90%
// zeros, the rest a discretized log-normal around 30.
func conversionPrior() ([]float64, Grid) {
	g := Grid{Max: 400, Step: 1}
	return ZeroInflatedLogNormal(g, 0.9, math.Log(30), 1), g
}

// RR-on-Bins's noisy labels are closer to the values than Laplace's at
// every ε ≤ 8 on a conversion-shaped prior (the paper's claim for its
// mechanism), and its error falls with ε.
func TestBinsBeatLaplace(t *testing.T) {
	p, g := conversionPrior()
	prev := math.Inf(1)
	for _, eps := range []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 6, 8} {
		b := OptimalBins(p, g, eps)
		lap := LaplaceLabelMSE(g.Max, eps)
		if !(b.MSE < lap) {
			t.Errorf("ε=%v: RR-on-Bins MSE %v (m=%d), Laplace %v", eps, b.MSE, b.Len(), lap)
		}
		if b.MSE > prev*(1+1e-12) {
			t.Errorf("ε=%v: MSE %v above the smaller ε's %v", eps, b.MSE, prev)
		}
		prev = b.MSE
		t.Logf("ε=%v: m=%d MSE %.2f (Laplace %.0f)", eps, b.Len(), b.MSE, lap)
	}
}

// The bins' metadata: m+1 edges from 0 to one step past B, values of the
// weighted means, the prior kept; a release through them draws only bin
// values at their probabilities (CheckValueLaw covers the uniform prior).
func TestBinsShape(t *testing.T) {
	p, g := conversionPrior()
	m, err := New(Params{Kind: RRBins, Epsilon: 2, Values: g})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Bins(p)
	if err != nil {
		t.Fatal(err)
	}
	e := b.EdgeValues()
	if len(e) != b.Len()+1 || e[0] != 0 || e[len(e)-1] != 401 || !slices.IsSorted(e) {
		t.Fatalf("edges %v for %d bins", e, b.Len())
	}
	if CheckLaw := CheckValueLaw(m, 20_000, newRand(9)); CheckLaw != nil {
		t.Fatal(CheckLaw)
	}
	for _, bad := range [][]float64{p[:400], append(slices.Clone(p[:400]), -0.1), UniformPrior(401)[:400]} {
		if _, err := m.Bins(bad); err == nil {
			t.Errorf("a prior of %d entries accepted", len(bad))
		}
	}
}

// rr_bins with a private prior splits its ε: the prior stage is
// value_prior at ε₁, the bins stage rr_bins at ε − ε₁ with a public
// (released) prior, and the setting's ε is their sum.
func TestBinsStages(t *testing.T) {
	g := Grid{Max: 10, Step: 1}
	m, err := New(Params{Kind: RRBins, Epsilon: 2, PriorEpsilon: 0.5, Values: g})
	if err != nil {
		t.Fatal(err)
	}
	ps, bs := m.PriorStage(), m.BinsStage()
	if ps.Kind() != ValuePrior || ps.Epsilon() != 0.5 || bs.Kind() != RRBins || bs.Epsilon() != 1.5 || bs.Params().PriorEpsilon != 0 {
		t.Fatalf("stages %s, %s", ps, bs)
	}
	if m.Epsilon() != ps.Epsilon()+bs.Epsilon() {
		t.Fatalf("ε %v ≠ %v + %v", m.Epsilon(), ps.Epsilon(), bs.Epsilon())
	}
	pub, _ := New(Params{Kind: RRBins, Epsilon: 2, Values: g})
	if pub.PriorStage() != nil || pub.BinsStage() != pub {
		t.Fatal("a public prior has stages")
	}
	for _, e1 := range []float64{2, 3, -1, math.NaN()} {
		if _, err := New(Params{Kind: RRBins, Epsilon: 2, PriorEpsilon: e1, Values: g}); err == nil {
			t.Errorf("ε₁ = %v of ε = 2 accepted", e1)
		}
	}
}
