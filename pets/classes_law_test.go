package pets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"labelprivacy/internal/oracle"
)

func mustMulti(p Params, c int) *mcView {
	m, err := newView(p, c)
	if err != nil {
		panic(err)
	}
	return m
}

// TestMulticlassValidation: classes outside [2, 64] and every parameter New
// rejects are refused with a *ParamError naming the field; the grid Laplace
// sampler is refused when its spacing at scale Δ/ε would exceed 1.
func TestMulticlassValidation(t *testing.T) {
	cases := []struct {
		name    string
		p       Params
		classes int
		param   string
	}{
		{"one class", Params{Kind: RR, Epsilon: 1}, 1, "classes"},
		{"65 classes", Params{Kind: RR, Epsilon: 1}, 65, "classes"},
		{"zero classes", Params{Kind: LLP, K: 4}, 0, "classes"},
		{"bad epsilon", Params{Kind: RR, Epsilon: -1}, 3, "epsilon"},
		{"bag size on rr", Params{Kind: RR, Epsilon: 1, K: 3}, 3, "k"},
		{"secure grid too coarse", Params{Kind: LLPLap, K: 4, Epsilon: 0x1.8p-40, Secure: true}, 3, "epsilon"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newView(tc.p, tc.classes)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param || !errors.Is(err, ErrInvalidParam) {
				t.Fatalf("got %v, want a ParamError on %q", err, tc.param)
			}
		})
	}
	// The same ε is fine for the grid sampler at C = 2 (Δ = 1).
	if _, err := newView(Params{Kind: LLPLap, K: 4, Epsilon: 0x1.8p-40, Secure: true}, 2); err != nil {
		t.Fatalf("C=2: %v", err)
	}
	for _, c := range []int{2, 64} {
		if _, err := newView(Params{Kind: RRPrior, Epsilon: 1}, c); err != nil {
			t.Fatalf("C=%d: %v", c, err)
		}
	}
	m := mustMulti(Params{Kind: LLPGeom, K: 8, Epsilon: 2}, 10)
	if got := m.String(); got != "llp_geom(k=8, ε=2, C=10)" {
		t.Errorf("String = %q", got)
	}
	if got := mustMulti(Params{Kind: Bot}, 3).String(); got != "bot(C=3)" {
		t.Errorf("String = %q", got)
	}
	if m.Sensitivity() != 2 || m.NoiseRate() != 1 || mustMulti(Params{Kind: LLPGeom, K: 8, Epsilon: 2}, 2).Sensitivity() != 1 {
		t.Errorf("sensitivity/noise rate wrong")
	}
}

// TestMulticlassBinaryBitIdentical: at C = 2 every release of the C-class laws (mcView: rr_prior by its set rule) is
// the binary Mechanism's bit for bit given the same Rand stream, and both
// leave the stream in the same state (the next word agrees): rr (fast and
// slow flip paths), rr_prior (priors on a grid and at the floats next to the
// branch boundary; set size 1 ⇔ argmax branch), and one bag at a time for
// llp, llp_lap (textbook and grid sampler) and llp_geom, with Debias.
func TestMulticlassBinaryBitIdentical(t *testing.T) {
	const n = 20_000
	src := newRand(41)
	labels := make([]uint8, n)
	for i := range labels {
		labels[i] = uint8(src.Uint64() & 1)
	}
	for _, eps := range []float64{0.01, 0.5, 1, 4, 7.7, 9, 30, 100} {
		// rr.
		bin := mustNew(Params{Kind: RR, Epsilon: eps})
		mc := mustMulti(Params{Kind: RR, Epsilon: eps}, 2)
		a, b := make([]uint8, n), make([]uint8, n)
		r1, r2 := newRand(uint64(eps*1000)+1), newRand(uint64(eps*1000)+1)
		releaseRR(bin, a, labels, r1)
		mc.ReleaseRR(b, labels, r2)
		if !slices.Equal(a, b) || r1.Uint64() != r2.Uint64() {
			t.Fatalf("rr ε=%v: releases or stream differ", eps)
		}

		// rr_prior.
		binP := mustNew(Params{Kind: RRPrior, Epsilon: eps})
		mcP := mustMulti(Params{Kind: RRPrior, Epsilon: eps}, 2)
		pi := binP.FlipProb()
		prior := make([]float64, n)
		special := []float64{0, 1, 0.5, pi, 1 - pi, math.Nextafter(pi, 0), math.Nextafter(pi, 1),
			math.Nextafter(1-pi, 0), math.Nextafter(1-pi, 1)}
		for i := range prior {
			if i < len(special) {
				prior[i] = special[i]
			} else {
				prior[i] = src.Float64()
			}
		}
		vec := make([]float64, 2*n)
		for i, p := range prior {
			vec[2*i], vec[2*i+1] = 1-p, p
		}
		am := make([]bool, n)
		sets := make([]PriorSet, n)
		r1, r2 = newRand(uint64(eps*1000)+2), newRand(uint64(eps*1000)+2)
		releaseRRPrior(binP, a, labels, prior, am, r1)
		mcP.ReleaseRRPrior(b, labels, vec, sets, r2)
		if !slices.Equal(a, b) || r1.Uint64() != r2.Uint64() {
			t.Fatalf("rr_prior ε=%v: releases or stream differ", eps)
		}
		for i := range am {
			lab, arg := priorBranch(binP, prior[i])
			if (sets[i].K == 1) != am[i] || (sets[i].K == 1) != arg || (arg && !sets[i].Contains(lab)) {
				t.Fatalf("rr_prior ε=%v p=%v: set %+v, binary branch argmax=%v label %d", eps, prior[i], sets[i], arg, lab)
			}
		}

		// Bags.
		for _, kind := range []Params{
			{Kind: LLP, K: 64}, {Kind: LLPLap, K: 64, Epsilon: eps},
			{Kind: LLPLap, K: 64, Epsilon: eps, Secure: true}, {Kind: LLPGeom, K: 64, Epsilon: eps},
		} {
			if kind.Kind == LLP && eps != 1 {
				continue
			}
			bm, mm := mustNew(kind), mustMulti(kind, 2)
			r1, r2 = newRand(uint64(eps*1000)+3), newRand(uint64(eps*1000)+3)
			var dst, deb [1]float64
			for bag := range 2000 {
				size := 1 + bag%64
				sum := int(src.Uint64() % uint64(size+1))
				alpha := bm.ReleaseBag(sum, size, r1)
				mm.ReleaseBag(dst[:], []int{size - sum, sum}, r2)
				if math.Float64bits(alpha) != math.Float64bits(dst[0]) {
					t.Fatalf("%v bag %d (sum %d of %d): binary α = %v, multiclass %v", bm, bag, sum, size, alpha, dst[0])
				}
				mm.Debias(deb[:], dst[:], size)
				if math.Float64bits(debias(bm, alpha, size)) != math.Float64bits(deb[0]) {
					t.Fatalf("%v: Debias differs at α = %v, n = %d", bm, alpha, size)
				}
			}
			if r1.Uint64() != r2.Uint64() {
				t.Fatalf("%v: streams differ after the bags", bm)
			}
		}
	}
}

// TestKaryRRFrequencies checks k-ary RR's released classes against
// RRLikelihood for C ∈ {3, 5, 10, 64}, ε ∈ {0.5, 2, 4} and three true
// labels each: one Pearson χ² over all cells (C−1 degrees of freedom per
// (C, ε, y)), rejected above its 1 − 10⁻⁶ quantile (false-failure rate
// 10⁻⁶). It asserts its own power: a 10% error in the flip probability
// would push the expected statistic over 3 times the threshold.
func TestKaryRRFrequencies(t *testing.T) {
	const n = 60_000
	var stat, nonCentral float64
	df := 0
	rnd := newRand(12)
	labels := make([]uint8, n)
	dst := make([]uint8, n)
	counts := make([]int, MaxClasses)
	for _, c := range []int{3, 5, 10, 64} {
		for _, eps := range []float64{0.5, 2, 4} {
			m := mustMulti(Params{Kind: RR, Epsilon: eps}, c)
			for _, y := range []uint8{0, uint8(c / 2), uint8(c - 1)} {
				for i := range labels {
					labels[i] = y
				}
				m.ReleaseRR(dst, labels, rnd)
				clear(counts)
				for _, z := range dst {
					counts[z]++
				}
				flip := 1 - m.RRLikelihood(y, y)
				for z := range c {
					p := m.RRLikelihood(uint8(z), y)
					e := n * p
					d := float64(counts[z]) - e
					stat += d * d / e
					shift := 0.1 * flip * n / float64(c-1) // a flip probability 1.1·flip
					if uint8(z) == y {
						shift = 0.1 * flip * n
					}
					nonCentral += shift * shift / e
				}
				df += c - 1
			}
		}
	}
	limit := chi2Upper(df, zUpper1e6)
	if stat > limit {
		t.Errorf("χ² = %.1f on %d df, above the 1−10⁻⁶ quantile %.1f", stat, df, limit)
	}
	if nonCentral+float64(df) < 3*limit {
		t.Fatalf("the test cannot see a 10%% error in the flip probability: non-centrality %.0f, threshold %.0f", nonCentral, limit)
	}
	t.Logf("χ² = %.1f on %d df (threshold %.1f; a 10%% error adds ≈ %.0f)", stat, df, limit, nonCentral)
}

// priorSetBrute is RRWithPrior's set by direct evaluation of
// g(k) = M_k·e^ε/(e^ε+k−1) on a sorted copy of the prior (ranked by
// decreasing prior, ties by class index), with its best and runner-up
// values (for skipping numerical near-ties).
func priorSetBrute(prior []float64, eps float64) (mask uint64, k int, best, second float64) {
	c := len(prior)
	idx := make([]int, c)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return prior[idx[a]] > prior[idx[b]] })
	E := math.Exp(eps)
	best, second = -1, -1
	mass := 0.0
	for j := 1; j <= c; j++ {
		mass += prior[idx[j-1]]
		g := mass * E / (E + float64(j-1))
		switch {
		case g > best:
			second, best, k = best, g, j
		case g > second:
			second = g
		}
	}
	for _, i := range idx[:k] {
		mask |= 1 << i
	}
	return mask, k, best, second
}

// TestPriorSetRule: PriorSet picks argmax_k M_k·e^ε/(e^ε+k−1) (smallest k
// on ties) and the prior's top-k classes (ties by class index), against a
// direct evaluation on random priors with many exactly tied entries
// (integer weights 0..4); draws whose best two values of k are within a
// relative 1e-9 are skipped (both are optimal up to rounding). The uniform
// prior picks every class, a one-hot prior its class alone. At C = 2 the
// set is Mechanism.PriorBranch's rule exactly, on a grid of priors and the
// floats next to the boundary π and 1 − π.
func TestPriorSetRule(t *testing.T) {
	rnd := newRand(13)
	checked := 0
	for _, c := range []int{2, 3, 4, 7, 10, 64} {
		for _, eps := range []float64{0.1, 0.5, 1, 2, 4, 8} {
			m := mustMulti(Params{Kind: RRPrior, Epsilon: eps}, c)
			prior := make([]float64, c)
			for range 300 {
				for {
					s := 0.0
					for i := range prior {
						prior[i] = float64(rnd.IntN(5))
						s += prior[i]
					}
					if s > 0 {
						for i := range prior {
							prior[i] /= s
						}
						break
					}
				}
				if m.CheckPrior(prior) != nil {
					continue // rounding left the sum just outside tolerance: impossible here
				}
				mask, k, best, second := priorSetBrute(prior, eps)
				if best-second <= 1e-9*best {
					continue
				}
				checked++
				if s := m.PriorSet(prior); s.Mask != mask || s.K != k {
					t.Fatalf("C=%d ε=%v prior %v: set %b (k=%d), want %b (k=%d)", c, eps, prior, s.Mask, s.K, mask, k)
				}
			}
			uni := make([]float64, c)
			for i := range uni {
				uni[i] = 1 / float64(c)
			}
			if s := m.PriorSet(uni); s.K != c {
				t.Fatalf("C=%d ε=%v: uniform prior gives k=%d", c, eps, s.K)
			}
			one := make([]float64, c)
			one[c-1] = 1
			if s := m.PriorSet(one); s.K != 1 || !s.Contains(uint8(c-1)) {
				t.Fatalf("C=%d ε=%v: one-hot prior gives %+v", c, eps, s)
			}
		}
	}
	if checked < 5000 {
		t.Fatalf("only %d priors checked", checked)
	}
	for _, eps := range []float64{1e-6, 0.01, 0.5, 1, 2, 8, 36, 100} {
		bin := mustNew(Params{Kind: RRPrior, Epsilon: eps})
		m := mustMulti(Params{Kind: RRPrior, Epsilon: eps}, 2)
		pi := bin.FlipProb()
		grid := []float64{pi, 1 - pi, math.Nextafter(pi, 0), math.Nextafter(pi, 1), math.Nextafter(1-pi, 0), math.Nextafter(1-pi, 1), 0.5}
		for i := 0; i <= 1000; i++ {
			grid = append(grid, float64(i)/1000)
		}
		for _, p := range grid {
			lab, am := priorBranch(bin, p)
			s := m.PriorSet([]float64{1 - p, p})
			if (s.K == 1) != am || (am && !s.Contains(lab)) || (!am && s.K != 2) {
				t.Fatalf("ε=%v p=%v: set %+v, binary argmax=%v label=%d", eps, p, s, am, lab)
			}
		}
	}
}

// TestRRPriorMulticlassFrequencies checks rr_prior's released classes
// against RRPriorLikelihood for C ∈ {4, 10}, ε ∈ {0.5, 2}, priors giving
// every set size from 1 to C and every true label (inside and outside the
// set): releases outside the set must never occur (exact); the others form
// one Pearson χ² over all cells, rejected above its 1 − 10⁻⁶ quantile
// (false-failure rate 10⁻⁶).
func TestRRPriorMulticlassFrequencies(t *testing.T) {
	const n = 20_000
	rnd := newRand(14)
	var stat float64
	df, sizes := 0, map[int]bool{}
	labels := make([]uint8, n)
	dst := make([]uint8, n)
	sets := make([]PriorSet, n)
	for _, c := range []int{4, 10} {
		for _, eps := range []float64{0.5, 2} {
			m := mustMulti(Params{Kind: RRPrior, Epsilon: eps}, c)
			// Geometric priors p_j ∝ ρ^j: ρ → 0 is one-hot (k = 1), ρ = 1
			// uniform (k = C), between them every size.
			for _, rho := range []float64{0.001, 0.05, 0.2, 0.4, 0.6, 0.8, 0.9, 1} {
				one := make([]float64, c)
				s := 0.0
				for j := range one {
					one[(j+3)%c] = math.Pow(rho, float64(j)) // top class 3, not 0
					s += math.Pow(rho, float64(j))
				}
				for j := range one {
					one[j] /= s
				}
				prior := make([]float64, 0, n*c)
				for range n {
					prior = append(prior, one...)
				}
				set := m.PriorSet(one)
				sizes[set.K] = true
				for y := range uint8(c) {
					for i := range labels {
						labels[i] = y
					}
					m.ReleaseRRPrior(dst, labels, prior, sets, rnd)
					counts := make([]int, c)
					for _, z := range dst {
						counts[z]++
					}
					cells := 0
					for z := range c {
						p := m.RRPriorLikelihood(set, uint8(z), y)
						if p == 0 {
							if counts[z] != 0 {
								t.Fatalf("C=%d ε=%v ρ=%v y=%d: class %d outside the set released %d times", c, eps, rho, y, z, counts[z])
							}
							continue
						}
						e := n * p
						d := float64(counts[z]) - e
						stat += d * d / e
						cells++
					}
					df += cells - 1
				}
			}
		}
	}
	limit := chi2Upper(df, zUpper1e6)
	if stat > limit {
		t.Errorf("χ² = %.1f on %d df, above the 1−10⁻⁶ quantile %.1f", stat, df, limit)
	}
	for _, k := range []int{1, 2, 3, 4} {
		if !sizes[k] {
			t.Errorf("no prior gave a set of size %d (sizes seen %v)", k, sizes)
		}
	}
	t.Logf("χ² = %.1f on %d df (threshold %.1f), set sizes %v", stat, df, limit, sizes)
}

// TestRRPriorMulticlassDP: for every set size k and every pair of labels,
// the likelihoods of every release are both 0 or within a factor e^ε
// (relative slack 1e-12), and the largest ratio is e^ε for k ≥ 2.
func TestRRPriorMulticlassDP(t *testing.T) {
	for _, c := range []int{2, 3, 10, 64} {
		for _, eps := range []float64{0.1, 1, 5} {
			m := mustMulti(Params{Kind: RRPrior, Epsilon: eps}, c)
			for k := 1; k <= c; k += 1 + c/16 {
				s := PriorSet{K: k}
				for j := range k {
					s.Mask |= 1 << ((j * 7) % c) // a scattered set (7 is coprime with these C)
				}
				if bits := s.Members(); len(bits) != k {
					t.Fatalf("bad test set %b", s.Mask)
				}
				worst := 0.0
				ch := m.setLaw().Channel(s.Mask)
				for z := range uint8(c) {
					for a := range uint8(c) {
						for b := range uint8(c) {
							la, lb := ch.Prob(z, a), ch.Prob(z, b)
							if la == 0 && lb == 0 {
								continue
							}
							if la == 0 || lb == 0 {
								t.Fatalf("C=%d ε=%v k=%d z=%d: likelihoods %v, %v", c, eps, k, z, la, lb)
							}
							worst = max(worst, math.Log(la/lb))
						}
					}
				}
				if worst > eps*(1+1e-12) || (k >= 2 && math.Abs(worst-eps) > 1e-12*eps) {
					t.Fatalf("C=%d ε=%v k=%d: largest log ratio %v", c, eps, k, worst)
				}
			}
		}
	}
}

// productGeom returns the exact pmf of the released clipped counts
// (t_1..t_{C−1}) given counts (len C) from oracle.GeomPMF at rate λ, indexed
// by Σ_c t_c·(n+1)^{c−1}.
func productGeom(lambda float64, counts []int) []float64 {
	n := 0
	for _, v := range counts {
		n += v
	}
	out := []float64{1}
	for c := 1; c < len(counts); c++ {
		g := oracle.GeomPMF(lambda, n, counts[c])
		next := make([]float64, len(out)*(n+1))
		for i, v := range out {
			for r, w := range g {
				next[r*len(out)+i] = v * w
			}
		}
		out = next
	}
	return out
}

// TestMulticlassBagSensitivity: the exact likelihood ratio of the llp_geom
// release between neighbouring bags (one label changed) never exceeds e^ε
// and reaches it, for every count vector of bags of n ≤ 4 with C ∈ {2, 3,
// 4}: the noise rate ε/Δ with Δ of Sensitivity is neither too small (not
// DP) nor too large (wasted noise).
func TestMulticlassBagSensitivity(t *testing.T) {
	for _, c := range []int{2, 3, 4} {
		for _, eps := range []float64{0.5, 2} {
			m := mustMulti(Params{Kind: LLPGeom, K: 4, Epsilon: eps}, c)
			worst := 0.0
			for n := 1; n <= 4; n++ {
				for _, cnt := range compositions(n, c) {
					base := productGeom(m.NoiseRate(), cnt)
					for a := range c {
						for b := range c {
							if a == b || cnt[a] == 0 {
								continue
							}
							nb := slices.Clone(cnt)
							nb[a]--
							nb[b]++
							other := productGeom(m.NoiseRate(), nb)
							for i := range base {
								worst = max(worst, math.Log(base[i]/other[i]))
							}
						}
					}
				}
			}
			if worst > eps*(1+1e-12) || worst < eps*(1-1e-9) {
				t.Errorf("C=%d ε=%v: largest log likelihood ratio %v, want ε", c, eps, worst)
			}
		}
	}
}

// compositions lists every count vector of n labels over c classes.
func compositions(n, c int) [][]int {
	if c == 1 {
		return [][]int{{n}}
	}
	var out [][]int
	for v := 0; v <= n; v++ {
		for _, rest := range compositions(n-v, c-1) {
			out = append(out, append([]int{v}, rest...))
		}
	}
	return out
}

// TestMulticlassGeomFrequencies: the joint law of llp_geom's released
// clipped counts at C = 3 (and C = 4, n = 3) is the product of
// oracle.GeomPMF at rate ε/2 over classes 1..C−1 (independent coordinates,
// each clipped to [0, n]), cell by cell (z-bounds of stat_test.go,
// false-failure rate < 1e-6). llp releases the exact proportions.
func TestMulticlassGeomFrequencies(t *testing.T) {
	const draws = 200_000
	rnd := newRand(15)
	for _, tc := range []struct {
		counts []int
		eps    float64
	}{{[]int{1, 3, 2}, 1}, {[]int{0, 0, 5}, 2}, {[]int{1, 0, 1, 1}, 1}} {
		c := len(tc.counts)
		n := 0
		for _, v := range tc.counts {
			n += v
		}
		m := mustMulti(Params{Kind: LLPGeom, K: n, Epsilon: tc.eps}, c)
		want := productGeom(m.NoiseRate(), tc.counts)
		got := make([]int, len(want))
		dst := make([]float64, c-1)
		for range draws {
			m.ReleaseBag(dst, tc.counts, rnd)
			idx, mul := 0, 1
			for _, a := range dst {
				idx += int(math.Round(a*float64(n))) * mul
				mul *= n + 1
			}
			got[idx]++
		}
		checkCounts(t, fmt.Sprintf("llp_geom counts %v ε=%v", tc.counts, tc.eps), got, want, draws)
		llp := mustMulti(Params{Kind: LLP, K: n}, c)
		llp.ReleaseBag(dst, tc.counts, rnd)
		for i, a := range dst {
			if a != float64(tc.counts[i+1])/float64(n) {
				t.Fatalf("llp released %v for counts %v", dst, tc.counts)
			}
		}
	}
}

// TestMulticlassLapMoments: llp_lap's released proportions at C = 3 have
// the mean count_c/n, the variance 2(Δ/(nε))² of Laplace(Δ/(nε)) with
// Δ = 2, and uncorrelated coordinates, for the textbook and the grid
// sampler (z-bounds at 6 SE: false-failure rate < 1e-7 over the 12 checks;
// a 10% error in the scale moves the variance by 21%, ≥ 10 SE here).
func TestMulticlassLapMoments(t *testing.T) {
	rnd := newRand(16)
	counts := []int{2, 1, 4}
	n := 7.0
	for _, secure := range []bool{false, true} {
		draws := 100_000
		if secure {
			draws = 30_000 // ~42 geometric steps a draw
		}
		eps := 1.5
		m := mustMulti(Params{Kind: LLPLap, K: 7, Epsilon: eps, Secure: secure}, 3)
		b := 2 / (n * eps)
		var s1, s2, q1, q2, cross float64
		dst := make([]float64, 2)
		for range draws {
			m.ReleaseBag(dst, counts, rnd)
			d1, d2 := dst[0]-1/n, dst[1]-4/n
			s1 += d1
			s2 += d2
			q1 += d1 * d1
			q2 += d2 * d2
			cross += d1 * d2
		}
		N := float64(draws)
		v := 2 * b * b
		checkMean(t, "mean class 1", s1/N, 0, math.Sqrt(v/N))
		checkMean(t, "mean class 2", s2/N, 0, math.Sqrt(v/N))
		seVar := math.Sqrt(20 * b * b * b * b / N) // Var(X²) = 24b⁴ − 4b⁴
		checkMean(t, "variance class 1", q1/N, v, seVar)
		checkMean(t, "variance class 2", q2/N, v, seVar)
		checkMean(t, "covariance", cross/N, 0, v/math.Sqrt(N))
		if 0.21*v < 10*seVar {
			t.Fatalf("the variance check cannot see a 10%% scale error")
		}
	}
}

// TestMulticlassDebiasExact: for llp_geom at C = 3 the debiased proportion
// is exactly unbiased: Σ_t P(t | count)·Debias(t) = count/n (to 1e-12) for
// every count of bags of n ≤ 8 and ε ∈ {0.3, 1, 4}, with the law from
// oracle.GeomPMF at rate ε/2.
func TestMulticlassDebiasExact(t *testing.T) {
	for _, eps := range []float64{0.3, 1, 4} {
		m := mustMulti(Params{Kind: LLPGeom, K: 8, Epsilon: eps}, 3)
		for n := 1; n <= 8; n++ {
			for s := 0; s <= n; s++ {
				pmf := oracle.GeomPMF(m.NoiseRate(), n, s)
				mean := 0.0
				var a, d [2]float64
				for r, p := range pmf {
					a[0], a[1] = float64(r)/float64(n), 0.5
					m.Debias(d[:], a[:], n)
					mean += p * d[0]
				}
				if math.Abs(mean-float64(s)/float64(n)) > 1e-12 {
					t.Fatalf("ε=%v n=%d count %d: E[debiased] = %v, want %v", eps, n, s, mean, float64(s)/float64(n))
				}
			}
		}
	}
}

// TestMulticlassPanics: labels ≥ C, counts of the wrong length, priors that
// are not distributions and kinds without the method panic (programmer
// errors; CheckPrior reports a bad prior as an error first).
func TestMulticlassPanics(t *testing.T) {
	rr := mustMulti(Params{Kind: RR, Epsilon: 1}, 3)
	pr := mustMulti(Params{Kind: RRPrior, Epsilon: 1}, 3)
	bag := mustMulti(Params{Kind: LLPGeom, K: 4, Epsilon: 1}, 3)
	r := newRand(1)
	for name, f := range map[string]func(){
		"label ≥ C":       func() { rr.ReleaseRR(make([]uint8, 1), []uint8{3}, r) },
		"rr on a bag":     func() { bag.ReleaseRR(make([]uint8, 1), []uint8{0}, r) },
		"short prior":     func() { pr.PriorSet([]float64{0.5, 0.5}) },
		"prior sum 0.9":   func() { pr.PriorSet([]float64{0.3, 0.3, 0.3}) },
		"negative prior":  func() { pr.PriorSet([]float64{-0.1, 0.6, 0.5}) },
		"counts length":   func() { bag.ReleaseBag(make([]float64, 2), []int{1, 2}, r) },
		"negative count":  func() { bag.ReleaseBag(make([]float64, 2), []int{1, -1, 2}, r) },
		"empty bag":       func() { bag.ReleaseBag(make([]float64, 2), []int{0, 0, 0}, r) },
		"bag on rr":       func() { rr.ReleaseBag(make([]float64, 2), []int{1, 1, 1}, r) },
		"prior set on rr": func() { rr.PriorSet([]float64{0.2, 0.3, 0.5}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	if err := pr.CheckPrior([]float64{0.3, 0.3, math.NaN()}); err == nil || !errors.Is(err, ErrInvalidParam) {
		t.Errorf("CheckPrior accepted NaN: %v", err)
	}
}
