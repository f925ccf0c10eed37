package audit

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/internal/oracle"
	"labelprivacy/pets"
)

// simpson integrates f over [a, b] with n (even) panels.
func simpson(f func(float64) float64, a, b float64, n int) float64 {
	h := (b - a) / float64(n)
	s := f(a) + f(b)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(a+float64(i)*h)
	}
	return s * h / 3
}

// quadLost integrates min(J1, J0) over the release t = k·α by brute force:
// J_b(t) = Σ_s P(y_i=b, S=s)·LapDensity(k, s, t/k)/k from pets, on [−L, 0],
// each [j, j+1] (split where J1 − J0 changes sign on a 64-point grid, the
// crossing located by bisection, so every Simpson piece is smooth) and
// [k, k+L], L = 40/ε (the mass beyond is < e^{-40}).
func quadLost(j1, j0 []float64, eps float64) float64 {
	k := len(j1) - 1
	dens := func(t float64) (float64, float64) {
		var a, b float64
		for s := 0; s <= k; s++ {
			d := oracle.LapDensity(eps, k, s, t/float64(k)) / float64(k)
			a += j1[s] * d
			b += j0[s] * d
		}
		return a, b
	}
	minf := func(t float64) float64 { a, b := dens(t); return math.Min(a, b) }
	diff := func(t float64) float64 { a, b := dens(t); return a - b }
	const panels = 2000
	L := 40 / eps
	tot := simpson(minf, -L, 0, panels) + simpson(minf, float64(k), float64(k)+L, panels)
	for j := 0; j < k; j++ {
		cuts := []float64{float64(j)}
		const grid = 64
		prev := diff(float64(j))
		for g := 1; g <= grid; g++ {
			x := float64(j) + float64(g)/grid
			cur := diff(x)
			if (prev < 0 && cur > 0) || (prev > 0 && cur < 0) {
				lo, hi := x-1.0/grid, x
				for range 100 {
					mid := (lo + hi) / 2
					if (diff(mid) < 0) == (prev < 0) {
						lo = mid
					} else {
						hi = mid
					}
				}
				cuts = append(cuts, (lo+hi)/2)
			}
			prev = cur
		}
		cuts = append(cuts, float64(j+1))
		for c := 1; c < len(cuts); c++ {
			tot += simpson(minf, cuts[c-1], cuts[c], panels)
		}
	}
	return tot
}

// TestLapIntegral checks the closed-form piecewise-exponential integral of
// llp_lap (lapLost) against brute-force quadrature of pets' LapDensity:
// |error| ≤ 1e-6 (the requirement; observed errors are ~1e-12), and the
// likelihood ratio at random releases against pets' LapDensity sums
// (relative 1e-12).
func TestLapIntegral(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	bags := [][]float64{
		{0.3},
		{0.5, 0.5},
		{0.02, 0.9, 0.4, 0.6, 1e-7},
		{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
		{0, 1, 0.5, 0.05, 0.95, 0.5},
	}
	worst := 0.0
	for _, eps := range []float64{0.0625, 0.5, 1, 4, 32} {
		for bi, eta := range bags {
			k := len(eta)
			joint := bruteBag(eta)
			w := newBagWork(k, eps)
			copy(w.eta, eta)
			pbPMF(w.p, w.eta)
			for i, e := range eta {
				got := w.member(pets.SumLaplace, e)
				want := math.Min(e, 1-e) - quadLost(joint[1][i], joint[0][i], eps)
				d := math.Abs(got - want)
				worst = math.Max(worst, d)
				if d > 1e-6 {
					t.Errorf("ε=%v bag %d member %d: IEAdv %.12g, quadrature %.12g (|diff| %.3g)", eps, bi, i, got, want, d)
				}
				// Likelihood ratio at random releases, inside and outside [0, k].
				for range 20 {
					tt := (r.Float64()*1.4 - 0.2) * float64(k)
					l1, l0 := w.likelihoods(pets.SumLaplace, tt)
					var w1, w0 float64
					for s := 0; s <= k; s++ {
						d := oracle.LapDensity(eps, k, s, tt/float64(k))
						w1 += joint[1][i][s] * d
						w0 += joint[0][i][s] * d
					}
					// joint = η·q[s−1] and (1−η)·q[s]: compare ratios of the
					// posterior odds.
					if e == 0 || e == 1 {
						continue
					}
					gotOdds := e * l1 / ((1 - e) * l0)
					if !closeRel(gotOdds, w1/w0, 0, 1e-11) {
						t.Errorf("ε=%v bag %d member %d t=%v: odds %.17g, LapDensity %.17g", eps, bi, i, tt, gotOdds, w1/w0)
					}
				}
			}
		}
	}
	t.Logf("largest |closed form − quadrature| = %.3g", worst)
}
