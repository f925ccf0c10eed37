package pets

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"labelprivacy/internal/oracle"
)

func TestNewValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name      string
		p         Params
		wantParam string // "" means valid
	}{
		{"none ok", Params{Kind: None}, ""},
		{"bot ok", Params{Kind: Bot}, ""},
		{"rr ok", Params{Kind: RR, Epsilon: 1}, ""},
		{"rr secure ok", Params{Kind: RR, Epsilon: 1, Secure: true}, ""},
		{"llp ok", Params{Kind: LLP, K: 64}, ""},
		{"llp_lap ok", Params{Kind: LLPLap, K: 8, Epsilon: 0.5}, ""},
		{"llp_lap secure ok", Params{Kind: LLPLap, K: 8, Epsilon: 0.5, Secure: true}, ""},
		{"llp_geom ok", Params{Kind: LLPGeom, K: 1, Epsilon: 32}, ""},
		{"invalid kind", Params{Kind: Kind(250)}, "kind"},
		{"laplace ok", Params{Kind: LaplaceValue, Epsilon: 1, Values: Grid{Max: 400, Step: 1}}, ""},
		{"laplace on classes", Params{Kind: LaplaceValue, Epsilon: 1}, "values"},
		{"rr on values", Params{Kind: RR, Epsilon: 1, Values: Grid{Max: 400, Step: 1}}, "values"},
		{"laplace B ≤ 0", Params{Kind: LaplaceValue, Epsilon: 1, Values: Grid{Max: -4, Step: 1}}, "value_max"},
		{"laplace step off B", Params{Kind: LaplaceValue, Epsilon: 1, Values: Grid{Max: 10, Step: 3}}, "value_step"},
		{"value_bags exact ok", Params{Kind: ValueBags, K: 8, Values: Grid{Max: 400, Step: 1}}, ""},
		{"value_bags exact secure", Params{Kind: ValueBags, K: 8, Values: Grid{Max: 400, Step: 1}, Secure: true}, "secure"},
		{"rr_bins private ok", Params{Kind: RRBins, Epsilon: 1, PriorEpsilon: 0.1, Values: Grid{Max: 400, Step: 1}}, ""},
		{"rr_bins grid too fine", Params{Kind: RRBins, Epsilon: 1, Values: Grid{Max: 400, Step: 0.1}}, "value_step"},
		{"laplace private prior", Params{Kind: LaplaceValue, Epsilon: 1, PriorEpsilon: 0.1, Values: Grid{Max: 400, Step: 1}}, "prior_epsilon"},
		{"none on values ok", Params{Kind: None, Values: Grid{Max: 400, Step: 1}}, ""},
		{"values with classes", Params{Kind: None, Classes: 3, Values: Grid{Max: 400, Step: 1}}, "classes"},
		{"none with epsilon", Params{Kind: None, Epsilon: 1}, "epsilon"},
		{"none with k", Params{Kind: None, K: 4}, "k"},
		{"none secure", Params{Kind: None, Secure: true}, "secure"},
		{"bot with epsilon", Params{Kind: Bot, Epsilon: 1}, "epsilon"},
		{"rr missing epsilon", Params{Kind: RR}, "epsilon"},
		{"rr negative epsilon", Params{Kind: RR, Epsilon: -1}, "epsilon"},
		{"rr NaN epsilon", Params{Kind: RR, Epsilon: nan}, "epsilon"},
		{"rr inf epsilon", Params{Kind: RR, Epsilon: inf}, "epsilon"},
		{"rr with k", Params{Kind: RR, Epsilon: 1, K: 1}, "k"},
		{"llp missing k", Params{Kind: LLP}, "k"},
		{"llp negative k", Params{Kind: LLP, K: -3}, "k"},
		{"llp with epsilon", Params{Kind: LLP, K: 8, Epsilon: 1}, "epsilon"},
		{"llp secure", Params{Kind: LLP, K: 8, Secure: true}, "secure"},
		{"llp_lap missing epsilon", Params{Kind: LLPLap, K: 8}, "epsilon"},
		{"llp_lap zero k", Params{Kind: LLPLap, Epsilon: 1}, "k"},
		{"llp_geom inf epsilon", Params{Kind: LLPGeom, K: 8, Epsilon: inf}, "epsilon"},
		{"llp_geom zero k", Params{Kind: LLPGeom, Epsilon: 1}, "k"},
		{"rr_prior ok", Params{Kind: RRPrior, Epsilon: 2}, ""},
		{"rr_prior missing epsilon", Params{Kind: RRPrior}, "epsilon"},
		{"rr_prior with k", Params{Kind: RRPrior, Epsilon: 1, K: 8}, "k"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.p)
			if tc.wantParam == "" {
				if err != nil || m == nil {
					t.Fatalf("New(%+v) = %v, %v; want success", tc.p, m, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("New(%+v) succeeded; want error naming %q", tc.p, tc.wantParam)
			}
			if !errors.Is(err, ErrInvalidParam) {
				t.Errorf("error %v does not wrap ErrInvalidParam", err)
			}
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.wantParam {
				t.Errorf("error %v: param %v, want %q", err, pe, tc.wantParam)
			}
			if !strings.HasPrefix(err.Error(), "pets: ") || !strings.Contains(err.Error(), " "+tc.wantParam+":") {
				t.Errorf("error %q does not name %q", err, tc.wantParam)
			}
		})
	}
}

func TestEpsilonAndFlipProb(t *testing.T) {
	tests := []struct {
		name     string
		p        Params
		eps, pi  float64
		mechName string
	}{
		{"none", Params{Kind: None}, math.Inf(1), 0, "none"},
		{"bot", Params{Kind: Bot}, 0, 0, "bot"},
		{"llp", Params{Kind: LLP, K: 4}, math.Inf(1), 0, "llp(k=4)"},
		{"rr", Params{Kind: RR, Epsilon: 1}, 1, 1 / (1 + math.E), "rr(ε=1)"},
		{"rr eps 0.0625", Params{Kind: RR, Epsilon: 0.0625}, 0.0625, 1 / (1 + math.Exp(0.0625)), "rr(ε=0.0625)"},
		{"llp_lap", Params{Kind: LLPLap, K: 2, Epsilon: 3}, 3, 0, "llp_lap(k=2, ε=3)"},
		{"llp_geom", Params{Kind: LLPGeom, K: 2, Epsilon: 3}, 3, 0, "llp_geom(k=2, ε=3)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustNew(tc.p)
			if got := m.Epsilon(); got != tc.eps {
				t.Errorf("Epsilon() = %v, want %v", got, tc.eps)
			}
			if got := m.FlipProb(); math.Abs(got-tc.pi) > 1e-15 {
				t.Errorf("FlipProb() = %v, want %v", got, tc.pi)
			}
			if got := m.String(); got != tc.mechName {
				t.Errorf("String() = %q, want %q", got, tc.mechName)
			}
		})
	}
}

// TestRRFlipRate checks the sampled flip rate against π = 1/(1+e^ε): the
// flips among N labels are Binomial(N, π), checked within zBound = 6 SEs
// (false-failure rate 2e-9 per ε, 8e-9 for the test). N is chosen per ε so
// that Nπ ≥ 6400 (N ≥ 2^20, released 2^20 labels at a time): then a 10%
// error in π moves the count by 0.1·Nπ ≥ 8 SEs and fails, which the test
// asserts. At ε = 8 (π = 3.4e-4, the slow uniform path) N ≈ 19M. Also
// checks none copies exactly.
func TestRRFlipRate(t *testing.T) {
	const chunk = 1 << 20
	labels := make([]uint8, chunk)
	r := newRand(1)
	for i := range labels {
		labels[i] = uint8(r.Uint64() & 1)
	}
	dst := make([]uint8, chunk)
	for _, eps := range []float64{0.0625, 1, 4, 8} {
		m := mustNew(Params{Kind: RR, Epsilon: eps})
		t.Run(m.String(), func(t *testing.T) {
			pi := m.FlipProb()
			chunks := max(1, int(math.Ceil(6400/pi/chunk)))
			n := float64(chunks * chunk)
			se := math.Sqrt(pi * (1 - pi) / n)
			if 0.1*pi < (zBound+2)*se {
				t.Fatalf("N = %v cannot see a 10%% error in π", n)
			}
			rnd := newRand(uint64(eps * 1000))
			flips := 0
			for range chunks {
				releaseRR(m, dst, labels, rnd)
				for i := range dst {
					if dst[i] > 1 {
						t.Fatalf("released label %d", dst[i])
					}
					if dst[i] != labels[i] {
						flips++
					}
				}
			}
			checkMean(t, "flip rate", float64(flips)/n, pi, se)
		})
	}
	t.Run("none copies", func(t *testing.T) {
		releaseRR(mustNew(Params{Kind: None}), dst, labels, newRand(2))
		if !slices.Equal(dst, labels) {
			t.Fatal("none changed labels")
		}
	})
}

// TestGeomReleaseFrequencies compares sampled llp_geom releases with
// GeomPMF cell by cell (z-bounds, see stat_test.go; ≤ 70 cells per case, 6
// cases).
func TestGeomReleaseFrequencies(t *testing.T) {
	tests := []struct {
		n, s int
		eps  float64
	}{
		{1, 0, 1}, {3, 3, 0.0625}, {8, 3, 0.5}, {64, 10, 0.25}, {64, 60, 2}, {5, 2, 32},
	}
	const draws = 100_000
	for i, tc := range tests {
		m := mustNew(Params{Kind: LLPGeom, K: tc.n, Epsilon: tc.eps})
		t.Run(m.String(), func(t *testing.T) {
			r := newRand(uint64(100 + i))
			counts := make([]int, tc.n+1)
			for range draws {
				alpha := m.ReleaseBag(tc.s, tc.n, r)
				c := alpha * float64(tc.n)
				if c != math.Round(c) || c < 0 || c > float64(tc.n) {
					t.Fatalf("release %v is not a clipped proportion of %d", alpha, tc.n)
				}
				counts[int(c)]++
			}
			checkCounts(t, "release", counts, oracle.GeomPMF(tc.eps, tc.n, tc.s), draws)
		})
	}
}

// TestTwoSidedGeometricFrequencies checks the sampler's law
// (1−a)/(1+a)·a^|z| on z ∈ [−15, 15] plus the two tails (z-bounds).
func TestTwoSidedGeometricFrequencies(t *testing.T) {
	const draws = 200_000
	for i, lambda := range []float64{0.3, 1.5, 1e-3} {
		t.Run("", func(t *testing.T) {
			r := newRand(uint64(7 + i))
			a := math.Exp(-lambda)
			const w = 15
			counts := make([]int, 2*w+3) // [−∞,−w−1], −w..w, [w+1, ∞]
			p := make([]float64, len(counts))
			for z := -w; z <= w; z++ {
				p[z+w+1] = (1 - a) / (1 + a) * math.Pow(a, math.Abs(float64(z)))
			}
			tail := math.Pow(a, w+1) / (1 + a) // P(Z ≥ w+1)
			p[0], p[len(p)-1] = tail, tail
			for range draws {
				z := TwoSidedGeometric(r, lambda)
				counts[min(max(z+w+1, 0), int64(len(counts)-1))]++
			}
			checkCounts(t, "two-sided geometric", counts, p, draws)
		})
	}
}

// TestGeometric checks the binary-search sampler: frequencies of G = g
// against (1−a)a^g for g < 40 plus the tail a^40 (500k draws per λ,
// z-bounds), the mean 1/(e^λ−1) at λ = 2^-40 (the SecureLaplace regime) and
// 1e-3 (z-bound with SD √a/(1−a)), and λ = 32 never leaving 0 in 10k draws
// (P(G ≥ 1) = e^-32).
func TestGeometric(t *testing.T) {
	for i, lambda := range []float64{3, 0.7, 0.05} {
		t.Run(fmt.Sprintf("pmf lambda=%g", lambda), func(t *testing.T) {
			const draws, w = 500_000, 40
			r := newRand(uint64(60 + i))
			a := math.Exp(-lambda)
			p := make([]float64, w+1)
			for g := range w {
				p[g] = (1 - a) * math.Pow(a, float64(g))
			}
			p[w] = math.Pow(a, w)
			counts := make([]int, w+1)
			for range draws {
				counts[min(Geometric(r, lambda), w)]++
			}
			checkCounts(t, "geometric", counts, p, draws)
		})
	}
	for i, lambda := range []float64{0x1p-40, 1e-3} {
		t.Run(fmt.Sprintf("mean lambda=%g", lambda), func(t *testing.T) {
			const draws = 40_000
			r := newRand(uint64(40 + i))
			sum := 0.0
			for range draws {
				sum += float64(Geometric(r, lambda))
			}
			a := math.Exp(-lambda)
			sd := math.Sqrt(a) / -math.Expm1(-lambda)
			checkMean(t, "mean/SD", sum/draws/sd, 1/math.Expm1(lambda)/sd, 1/math.Sqrt(draws))
		})
	}
	r := newRand(3)
	for range 10_000 {
		if g := Geometric(r, 32); g != 0 {
			t.Fatalf("Geometric(32) = %d", g)
		}
	}
}

// TestDebiasExact: for llp_geom, Σ_r GeomPMF(n,s)[r]·Debias(r/n, n) = s/n
// exactly (1e-9) on a grid of n, s, ε: the debiased proportion is unbiased
// (Appendix C). Also checks the other kinds' Debias is the identity and
// that at n = 1 Debias equals the paper's formula.
func TestDebiasExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 64, 512} {
		for e := -4; e <= 5; e++ {
			eps := math.Ldexp(1, e)
			m := mustNew(Params{Kind: LLPGeom, K: n, Epsilon: eps})
			for s := 0; s <= n; s++ {
				pmf := oracle.GeomPMF(eps, n, s)
				mean := 0.0
				for r, p := range pmf {
					mean += p * debias(m, float64(r)/float64(n), n)
				}
				if d := math.Abs(mean - float64(s)/float64(n)); d > 1e-9 {
					t.Fatalf("%v n=%d s=%d: E[Debias] = %.15g, want %.15g", m, n, s, mean, float64(s)/float64(n))
				}
			}
			if n == 1 { // paper's formula (Appendix C) is right at k = 1
				if got, want := debias(m, 0, 1), -1/(math.Exp(eps)-1); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
					t.Errorf("ε=%g Debias(0,1) = %v, paper %v", eps, got, want)
				}
				if got, want := debias(m, 1, 1), 1+1/(math.Exp(eps)-1); math.Abs(got-want) > 1e-12*math.Max(1, want) {
					t.Errorf("ε=%g Debias(1,1) = %v, paper %v", eps, got, want)
				}
			}
		}
	}
	for _, p := range []Params{{Kind: LLP, K: 4}, {Kind: LLPLap, K: 4, Epsilon: 1}} {
		if got := debias(mustNew(p), 0.25, 4); got != 0.25 {
			t.Errorf("%v: Debias(0.25) = %v, want identity", p.Kind, got)
		}
	}
}

// TestDebiasSampled: the sample mean of debiased llp_geom releases is s/n
// within zBound standard errors, the SE computed exactly from GeomPMF.
func TestDebiasSampled(t *testing.T) {
	tests := []struct {
		n, s int
		eps  float64
	}{{8, 0, 0.5}, {64, 63, 1}, {3, 1, 0.0625}, {1, 1, 2}}
	const draws = 100_000
	for i, tc := range tests {
		m := mustNew(Params{Kind: LLPGeom, K: tc.n, Epsilon: tc.eps})
		t.Run(m.String(), func(t *testing.T) {
			mu := float64(tc.s) / float64(tc.n)
			v := 0.0
			for r, p := range oracle.GeomPMF(tc.eps, tc.n, tc.s) {
				d := debias(m, float64(r)/float64(tc.n), tc.n) - mu
				v += p * d * d
			}
			rnd := newRand(uint64(300 + i))
			sum := 0.0
			for range draws {
				sum += debias(m, m.ReleaseBag(tc.s, tc.n, rnd), tc.n)
			}
			checkMean(t, "debiased mean", sum/draws, mu, math.Sqrt(v/draws))
		})
	}
}

// TestLaplaceMoments: both Laplace samplers (textbook and secure grid, and
// the llp_lap release built on each) have mean 0 and variance 2/(nε)² for
// scale 1/(nε) (Appendix C). Checks E[X] with SE √2·b/√N and E[X²] = 2b²
// with SE √20·b²/√N (Laplace: E[X⁴] = 24b⁴).
func TestLaplaceMoments(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		eps    float64
		secure bool
		draws  int
	}{
		{"textbook n=1 eps=1", 1, 1, false, 200_000},
		{"textbook n=64 eps=0.0625", 64, 0.0625, false, 200_000},
		{"textbook n=3 eps=32", 3, 32, false, 200_000},
		{"secure n=1 eps=1", 1, 1, true, 40_000},
		{"secure n=64 eps=0.0625", 64, 0.0625, true, 40_000},
		{"secure n=3 eps=32", 3, 32, true, 40_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := 1 / (float64(tc.n) * tc.eps)
			for _, via := range []string{"sampler", "release"} {
				r := newRand(uint64(500 + 2*i))
				m := mustNew(Params{Kind: LLPLap, K: tc.n, Epsilon: tc.eps, Secure: tc.secure})
				s := tc.n / 2
				sum, sum2 := 0.0, 0.0
				for range tc.draws {
					var x float64
					switch {
					case via == "release":
						x = m.ReleaseBag(s, tc.n, r) - float64(s)/float64(tc.n)
					case tc.secure:
						x = SecureLaplace(r, b)
					default:
						x = Laplace(r, b)
					}
					sum += x
					sum2 += x * x
				}
				fn := float64(tc.draws)
				checkMean(t, via+" mean/b", sum/fn/b, 0, math.Sqrt(2/fn))
				checkMean(t, via+" E[X²]/b²", sum2/fn/(b*b), 2, math.Sqrt(20/fn))
			}
		})
	}
}

// TestSecureLaplaceGrid: SecureLaplace outputs lie on the grid g·ℤ with g
// the power of two in [scale·2^-40, scale·2^-39); secure llp_lap releases
// are (s + g·Z)/n with g ≤ 1.
func TestSecureLaplaceGrid(t *testing.T) {
	tests := []struct {
		scale, gran float64
	}{
		{1, 0x1p-40}, {0.75, 0x1p-40}, {1.5, 0x1p-39}, {16, 0x1p-36}, {1.0 / 3, 0x1p-41},
	}
	for _, tc := range tests {
		if g := LaplaceGranularity(tc.scale); g != tc.gran {
			t.Errorf("LaplaceGranularity(%v) = %v, want %v", tc.scale, g, tc.gran)
		}
		r := newRand(11)
		for range 1000 {
			x := SecureLaplace(r, tc.scale)
			if q := x / tc.gran; q != math.Trunc(q) {
				t.Fatalf("scale %v: %v is not a multiple of %v", tc.scale, x, tc.gran)
			}
		}
	}
	m := mustNew(Params{Kind: LLPLap, K: 8, Epsilon: 0.25, Secure: true}) // sum-scale 4 → g = 2^-38
	r := newRand(12)
	for range 1000 {
		noise := m.ReleaseBag(5, 8, r)*8 - 5
		if q := noise / 0x1p-38; math.Abs(q-math.Round(q)) > 1e-3 {
			t.Fatalf("secure release noise %v off the 2^-38 grid", noise)
		}
	}
}

// TestUniformSlowPath checks the full-precision uniform on hand-made words:
// a first word with more than 11 leading zeros takes its missing mantissa
// bits from the next word, and an all-zero word shifts the exponent by 64.
func TestUniformSlowPath(t *testing.T) {
	tests := []struct {
		name  string
		words []uint64
		want  float64
	}{
		{"fast", []uint64{1 << 63}, 0.5},
		{"fast truncates", []uint64{1<<63 | 1<<11 | 1<<10 | 1}, 0.5 + 0x1p-53},
		{"slow", []uint64{1 << 40, 1<<63 | 1<<52 | 1<<51}, 0x1p-24 + 0x1p-65 + 0x1p-76},
		{"zero word", []uint64{0, 1 << 63}, 0x1p-65},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &wordRand{words: tc.words}
			if got := uniform(w); got != tc.want {
				t.Fatalf("uniform = %g (%x), want %g", got, math.Float64bits(got), tc.want)
			}
		})
	}
	// Tiny probabilities are honoured. Sampling P(U < p) directly cannot see
	// a 10% error at p = 2^-40 (it needs ~6400/p draws), so the first word
	// is conditioned on its top d bits being zero (shifted right by d, the
	// exact conditional law of a uniform word given word < 2^(64−d), i.e.
	// given U < 2^-d); continuation words stay unconditioned. Then
	// P(U < c·2^-d | U < 2^-d) must be c. d = 20 takes up to 9 bits, d = 40
	// up to 29 bits of U from the second word. 200k draws per (d, c):
	// SE ≤ 0.0011, tolerance zBound SEs (false-failure rate 2e-9 per check,
	// 6 checks); a 10% error in P(U < p) moves the fraction by ≥ 0.03 ≥ 27
	// SEs and fails.
	const draws = 200_000
	for _, d := range []uint{20, 40} {
		for _, c := range []float64{0.3, 0.5, 0.9} {
			src := &condRand{r: newRand(uint64(13 + d)), shift: d}
			hits := 0
			for range draws {
				src.first = true
				if uniform(src) < c*math.Ldexp(1, -int(d)) {
					hits++
				}
			}
			checkCell(t, fmt.Sprintf("P(U < %v·2^-%d | U < 2^-%d)", c, d, d), 0, hits, c, draws)
		}
	}
}

// condRand shifts the first word drawn after first is set right by shift
// bits (conditioning it below 2^(64−shift)); later words pass unchanged.
type condRand struct {
	r     *rand.Rand
	shift uint
	first bool
}

func (c *condRand) Uint64() uint64 {
	x := c.r.Uint64()
	if c.first {
		c.first = false
		x >>= c.shift
	}
	return x
}

type wordRand struct {
	words []uint64
	i     int
}

func (w *wordRand) Uint64() uint64 { v := w.words[w.i]; w.i++; return v }

// TestReleaseBagRemainder: a bag smaller than k uses its own size n for the
// proportion, the noise scale and the clipping.
func TestReleaseBagRemainder(t *testing.T) {
	r := newRand(21)
	if got := mustNew(Params{Kind: LLP, K: 64}).ReleaseBag(2, 3, r); got != 2.0/3 {
		t.Errorf("llp k=64 bag of 3: %v, want 2/3", got)
	}
	geom := mustNew(Params{Kind: LLPGeom, K: 64, Epsilon: 0.5})
	for range 1000 {
		a := geom.ReleaseBag(1, 3, r)
		if c := a * 3; c != math.Round(c) || c < 0 || c > 3 {
			t.Fatalf("geom bag of 3 released %v", a)
		}
	}
	// llp_lap: variance of the remainder bag's release is 2/(3ε)², not 2/(64ε)².
	lap := mustNew(Params{Kind: LLPLap, K: 64, Epsilon: 0.5})
	const draws = 100_000
	sum2 := 0.0
	for range draws {
		d := lap.ReleaseBag(1, 3, r) - 1.0/3
		sum2 += d * d
	}
	b := 1 / (3 * 0.5)
	checkMean(t, "remainder E[X²]/b²", sum2/draws/(b*b), 2, math.Sqrt(20.0/draws))
}

// TestReleaseDeterminism: the same seed gives byte-identical releases; a
// different seed gives different ones (noisy kinds).
func TestReleaseDeterminism(t *testing.T) {
	const rows, k = 4096, 8
	labels := make([]uint8, rows)
	lr := newRand(31)
	for i := range labels {
		labels[i] = uint8(lr.Uint64() & 1)
	}
	release := func(m *Mechanism, seed uint64) []byte {
		r := newRand(seed)
		var out []byte
		if m.Kind() == RR {
			dst := make([]uint8, rows)
			releaseRR(m, dst, labels, r)
			return dst
		}
		for b := 0; b < rows; b += k {
			s := 0
			for _, y := range labels[b : b+k] {
				s += int(y)
			}
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(m.ReleaseBag(s, k, r)))
		}
		return out
	}
	for _, p := range []Params{
		{Kind: RR, Epsilon: 1},
		{Kind: LLP, K: k},
		{Kind: LLPLap, K: k, Epsilon: 1},
		{Kind: LLPLap, K: k, Epsilon: 1, Secure: true},
		{Kind: LLPGeom, K: k, Epsilon: 1},
	} {
		m := mustNew(p)
		t.Run(m.String()+map[bool]string{true: " secure"}[p.Secure], func(t *testing.T) {
			a, b, c := release(m, 42), release(m, 42), release(m, 43)
			if !slices.Equal(a, b) {
				t.Fatal("same seed gave different releases")
			}
			if p.Kind != LLP && slices.Equal(a, c) {
				t.Fatal("different seeds gave identical releases")
			}
		})
	}
}

// TestRRFastFlipRule: ReleaseRR's one-word rule "word < π·2^64" decides
// exactly as uniform < π, on words around the threshold and random words.
func TestRRFastFlipRule(t *testing.T) {
	for _, eps := range []float64{0.0625, 1, 4, 7.6} {
		m := mustNew(Params{Kind: RR, Epsilon: eps}).ex.(*flipLaw)
		if m.piWord == 0 {
			t.Fatalf("ε=%g: expected the one-word rule", eps)
		}
		words := []uint64{0, 1, 1<<52 - 1, 1 << 52, 1<<53 - 1, m.piWord - 1, m.piWord, m.piWord + 1, 1<<64 - 1}
		r := newRand(17)
		for range 100_000 {
			words = append(words, r.Uint64(), m.piWord+r.Uint64()%4096-2048)
		}
		for _, x := range words {
			rest := &wordRand{words: []uint64{r.Uint64()}}
			if fast, ref := x < m.piWord, uniformFrom(x, rest) < m.pi; fast != ref {
				t.Fatalf("ε=%g word %#x: one-word rule %v, uniform rule %v", eps, x, fast, ref)
			}
		}
	}
	if m := mustNew(Params{Kind: RR, Epsilon: 8}).ex.(*flipLaw); m.piWord != 0 {
		t.Fatalf("ε=8 (π < 2^-11) should use the uniform rule")
	}
}

// mustNew is New for parameters a test knows to be valid.
func mustNew(p Params) *Mechanism {
	m, err := New(p)
	if err != nil {
		panic(err)
	}
	return m
}
