package oracle

import (
	"math"
	"testing"
)

// TestGeomPMFBruteForce compares the closed form GeomPMF with a brute-force
// sum of the two-sided geometric pmf (1−a)/(1+a)·a^|z| over z, clipping
// s+z to [0, n], truncated where a^|z| < 1e-18 (to 1e-12 absolute), and
// checks that it sums to 1.
func TestGeomPMFBruteForce(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8, 64} {
		for _, eps := range []float64{0.0625, 0.5, 1, 4, 32} {
			a := math.Exp(-eps)
			zmax := int(math.Ceil(18*math.Ln10/eps)) + n + 1
			for s := 0; s <= n; s++ {
				brute := make([]float64, n+1)
				for z := -zmax; z <= zmax; z++ {
					p := (1 - a) / (1 + a) * math.Pow(a, math.Abs(float64(z)))
					brute[min(max(s+z, 0), n)] += p
				}
				got := GeomPMF(eps, n, s)
				sum := 0.0
				for r := range got {
					sum += got[r]
					if math.Abs(got[r]-brute[r]) > 1e-12 {
						t.Fatalf("n=%d ε=%v s=%d r=%d: GeomPMF %.17g, brute force %.17g", n, eps, s, r, got[r], brute[r])
					}
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("n=%d ε=%v s=%d: pmf sums to %.17g", n, eps, s, sum)
				}
			}
		}
	}
}

// TestGeomK1IsRR: llp_geom(k=1, ε) ≡ rr(ε) in distribution (Appendix C):
// the pmfs agree to 1e-12 for every ε of the paper's grid.
func TestGeomK1IsRR(t *testing.T) {
	for e := -4; e <= 5; e++ {
		eps := math.Ldexp(1, e)
		for y := range uint8(2) {
			pmf := GeomPMF(eps, 1, int(y))
			for rel := range uint8(2) {
				if d := math.Abs(pmf[rel] - RR(eps, rel, y)); d > 1e-12 {
					t.Errorf("ε=%v y=%d released=%d: geom %.17g, rr %.17g", eps, y, rel, pmf[rel], RR(eps, rel, y))
				}
			}
		}
	}
}

// TestLikelihoodRatioBound verifies ε-label-DP of the laws exactly, without
// sampling: for every release, P(release | s)/P(release | s±1) ≤ e^ε
// (log-ratio ≤ ε + 1e-9) for rr, llp_geom (every clipped sum) and llp_lap
// (densities on a grid of α in [−1, 2] plus every s/n), for
// k ∈ {1,2,3,8,64,512} and ε ∈ {2^-4, …, 2^5}; and that the bound is
// attained (tight to 1e-9).
func TestLikelihoodRatioBound(t *testing.T) {
	const slack = 1e-9
	for e := -4; e <= 5; e++ {
		eps := math.Ldexp(1, e)
		maxLR := math.Inf(-1)
		for rel := range uint8(2) {
			for y := range uint8(2) {
				maxLR = max(maxLR, math.Log(RR(eps, rel, y))-math.Log(RR(eps, rel, 1-y)))
			}
		}
		if maxLR > eps+slack || maxLR < eps-slack {
			t.Errorf("rr ε=%g: max log-ratio %v", eps, maxLR)
		}
		for _, k := range []int{1, 2, 3, 8, 64, 512} {
			maxGeom, maxLap := math.Inf(-1), math.Inf(-1)
			alphas := make([]float64, 0, 301+k+1)
			for i := range 301 {
				alphas = append(alphas, -1+float64(i)/100)
			}
			for s := 0; s <= k; s++ {
				alphas = append(alphas, float64(s)/float64(k))
			}
			for s := 0; s <= k; s++ {
				for _, s2 := range []int{s - 1, s + 1} {
					if s2 < 0 || s2 > k {
						continue
					}
					for r := 0; r <= k; r++ {
						lr := GeomLogPMF(eps, k, s, r) - GeomLogPMF(eps, k, s2, r)
						if lr > eps+slack {
							t.Fatalf("geom k=%d ε=%v: r=%d s=%d s'=%d log-ratio %v > ε", k, eps, r, s, s2, lr)
						}
						maxGeom = max(maxGeom, lr)
					}
					for _, a := range alphas {
						lr := LapLogDensity(eps, k, s, a) - LapLogDensity(eps, k, s2, a)
						if lr > eps+slack {
							t.Fatalf("lap k=%d ε=%v: α=%v s=%d s'=%d log-ratio %v > ε", k, eps, a, s, s2, lr)
						}
						maxLap = max(maxLap, lr)
					}
				}
			}
			if maxGeom < eps-slack || maxLap < eps-slack {
				t.Errorf("k=%d ε=%v: max log-ratios geom %v lap %v < ε (bound not tight)", k, eps, maxGeom, maxLap)
			}
		}
	}
}

// TestLapDensityByHand pins LapDensity and RR to values worked by hand.
func TestLapDensityByHand(t *testing.T) {
	tests := []struct {
		name      string
		got, want float64
	}{
		{"lap n=8 s=2 α=0.3 ε=1", LapDensity(1, 8, 2, 0.3), 4 * math.Exp(-math.Abs(8*0.3-2))},
		{"lap n=1 s=0 α=0 ε=2", LapDensity(2, 1, 0, 0), 1},
		{"rr same ε=1", RR(1, 1, 1), math.E / (1 + math.E)},
		{"rr flipped ε=1", RR(1, 0, 1), 1 / (1 + math.E)},
		{"none same", RR(math.Inf(1), 0, 0), 1},
		{"none flipped", RR(math.Inf(1), 1, 0), 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if math.Abs(tc.got-tc.want) > 1e-14 {
				t.Fatalf("got %.17g, want %.17g", tc.got, tc.want)
			}
		})
	}
}
