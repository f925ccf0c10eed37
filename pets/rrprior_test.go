package pets

import (
	"math"
	"slices"
	"testing"

	"labelprivacy/internal/oracle"
)

// chi2Upper returns the upper quantile of χ²(df) at a one-sided normal
// quantile z (Wilson–Hilferty: relative error < 1% for df ≥ 3 out to
// z = 5, well inside the margins used here).
func chi2Upper(df int, z float64) float64 {
	d := float64(df)
	c := 1 - 2/(9*d) + z*math.Sqrt(2/(9*d))
	return d * c * c * c
}

// zUpper1e6 is the one-sided standard-normal quantile of 1 − 10⁻⁶.
const zUpper1e6 = 4.7534

// TestRRPriorFrequencies checks rr_prior's released labels against the
// closed form (oracle.RRPrior) for every (ε, prior, true label) cell: on
// the argmax branch the release must be the prior's argmax in every draw
// (exact); the RR-branch cells together form one Pearson χ² test with one
// degree of freedom per cell, rejected above the χ² quantile of 1 − 10⁻⁶
// (false-failure rate 10⁻⁶). The test also asserts its own power: had the
// mechanism flipped with 1.1π instead of π, the expected statistic (its
// non-centrality plus df) would exceed the threshold at least 3-fold.
func TestRRPriorFrequencies(t *testing.T) {
	const n = 100_000 // draws per cell
	priors := []float64{0, 0.03, 0.15, 0.3, 0.45, 0.5, 0.55, 0.7, 0.85, 0.97, 1}
	var stat, nonCentral float64
	df := 0
	rnd := newRand(11)
	labels := make([]uint8, n)
	prior := make([]float64, n)
	dst := make([]uint8, n)
	argmax := make([]bool, n)
	for _, eps := range []float64{0.5, 1, 2, 4} {
		m := mustNew(Params{Kind: RRPrior, Epsilon: eps})
		for _, p := range priors {
			for y := range uint8(2) {
				for i := range labels {
					labels[i], prior[i] = y, p
				}
				releaseRRPrior(m, dst, labels, prior, argmax, rnd)
				ones := 0
				for _, v := range dst {
					ones += int(v)
				}
				want := oracle.RRPrior(eps, p, 1, y) // P(release 1 | y)
				if want == 0 || want == 1 {
					if float64(ones) != want*n || slices.Contains(argmax, false) {
						t.Errorf("ε=%v p=%v y=%d: argmax branch released %d ones of %d, want %v (argmax flags %v…)",
							eps, p, y, ones, n, want*n, argmax[0])
					}
					continue
				}
				if slices.Contains(argmax, true) {
					t.Errorf("ε=%v p=%v y=%d: RR-branch row flagged argmax", eps, p, y)
				}
				e := n * want
				v := n * want * (1 - want)
				stat += (float64(ones) - e) * (float64(ones) - e) / v
				df++
				// Power: a flip probability 1.1π moves the mean by 0.1π·n.
				pi := m.FlipProb()
				nonCentral += (0.1 * pi * n) * (0.1 * pi * n) / v
			}
		}
	}
	limit := chi2Upper(df, zUpper1e6)
	if stat > limit {
		t.Errorf("χ² = %.1f on %d cells, above the 1−10⁻⁶ quantile %.1f", stat, df, limit)
	}
	if df < 20 || nonCentral+float64(df) < 3*limit {
		t.Fatalf("the test cannot see a 10%% error in π: df %d, non-centrality %.0f, threshold %.0f", df, nonCentral, limit)
	}
	t.Logf("χ² = %.1f on %d RR-branch cells (threshold %.1f; a 10%% error in π adds ≈ %.0f)", stat, df, limit, nonCentral)
}

// TestRRPriorLikelihoodRatio: for every prior on a fine grid (and the
// floats next to both branch boundaries) and every ε from 1e-6 to 100, the
// mechanism's likelihood ratio P(z | y=1)/P(z | y=0) lies in
// [e^{−ε}, e^{ε}] (relative slack 1e-12) for both releases z: on the
// argmax branch the release is the same whatever the label (same output
// and no randomness consumed, checked by running both labels on copies of
// one stream), on the RR branch the flip probability is 1/(1+e^ε). The
// branch itself must be the closed-form rule max(p, 1−p) ≥ e^ε/(1+e^ε) of
// oracle.RRPrior (except within 1e-12 of the boundary).
func TestRRPriorLikelihoodRatio(t *testing.T) {
	var ps []float64
	for i := 0; i <= 2000; i++ {
		ps = append(ps, float64(i)/2000)
	}
	for _, eps := range []float64{1e-6, 0.01, 0.1, 0.5, 1, 2, 4, 8, 16, 36, 50, 100} {
		m := mustNew(Params{Kind: RRPrior, Epsilon: eps})
		pi := m.FlipProb()
		grid := append(slices.Clone(ps), pi, 1-pi, math.Nextafter(pi, 0), math.Nextafter(pi, 1),
			math.Nextafter(1-pi, 0), math.Nextafter(1-pi, 1))
		bound := math.Exp(eps) * (1 + 1e-12)
		for _, p := range grid {
			if p < 0 || p > 1 {
				continue
			}
			lab, am := priorBranch(m, p)
			q := 1 / (1 + math.Exp(-eps))
			if want := math.Max(p, 1-p) >= q; am != want && math.Abs(math.Max(p, 1-p)-q) > 1e-12 {
				t.Fatalf("ε=%v p=%v: argmax branch %v, closed form says %v", eps, p, am, want)
			}
			var l [2][2]float64 // l[y][z] = P(z | y)
			if am {
				// Both labels on copies of one stream: same output, no word used.
				for y := range uint8(2) {
					r, fresh := newRand(uint64(1000*eps)+7), newRand(uint64(1000*eps)+7)
					var dst [1]uint8
					var a [1]bool
					releaseRRPrior(m, dst[:], []uint8{y}, []float64{p}, a[:], r)
					if dst[0] != lab || !a[0] || r.Uint64() != fresh.Uint64() {
						t.Fatalf("ε=%v p=%v y=%d: argmax branch released %d (want %d) or consumed randomness", eps, p, y, dst[0], lab)
					}
					l[y][lab] = 1
				}
			} else {
				for y := range 2 {
					for z := range 2 {
						l[y][z] = pi
						if y == z {
							l[y][z] = 1 - pi
						}
					}
				}
			}
			for z := range 2 {
				a, b := l[1][z], l[0][z]
				if a == 0 && b == 0 {
					continue
				}
				if a == 0 || b == 0 || a/b > bound || b/a > bound {
					t.Fatalf("ε=%v p=%v release %d: likelihoods %v (y=1) and %v (y=0): ratio beyond e^ε", eps, p, z, a, b)
				}
			}
		}
	}
}

// TestRRPriorUniformIsRR: with the uninformative prior ½ on every row,
// rr_prior is rr bit for bit (same stream, same releases), and PriorBranch
// rejects a prior outside [0, 1].
func TestRRPriorUniformIsRR(t *testing.T) {
	const n = 10_000
	labels := make([]uint8, n)
	r := newRand(3)
	for i := range labels {
		labels[i] = uint8(r.Uint64() & 1)
	}
	prior := make([]float64, n)
	for i := range prior {
		prior[i] = 0.5
	}
	for _, eps := range []float64{0.5, 9} { // fast and slow flip paths
		a, b := make([]uint8, n), make([]uint8, n)
		releaseRR(mustNew(Params{Kind: RR, Epsilon: eps}), a, labels, newRand(5))
		releaseRRPrior(mustNew(Params{Kind: RRPrior, Epsilon: eps}), b, labels, prior, make([]bool, n), newRand(5))
		if !slices.Equal(a, b) {
			t.Fatalf("ε=%v: rr_prior with prior ½ differs from rr", eps)
		}
	}
	m := mustNew(Params{Kind: RRPrior, Epsilon: 1})
	for _, p := range []float64{-0.1, 1.5, math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PriorBranch(%v) did not panic", p)
				}
			}()
			priorBranch(m, p)
		}()
	}
}
