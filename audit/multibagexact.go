package audit

import (
	"math"
	"math/rand/v2"
	"slices"
)

// The exact engines of BagAuditorC.Audit (multibag.go), by the noise law of
// the bag's counts, and the sampled estimate where none applies.

// geomExactWork is the cost of enumerating llp_geom's release space.
func (a *BagAuditorC) geomExactWork() float64 {
	pts := math.Pow(float64(a.n+1), float64(a.c-1))
	return pts * (float64(a.x.size[a.n])*float64(a.c-1) + float64(a.n*a.c)*float64(a.x.size[a.n-1]))
}

// exactLLP: IEAdv_i = Σ_N max_y η_iy·Q_i(N − e_y) − max_y η_iy, gathering
// for each count vector N of the bag its (m, y) pairs m + e_y = N.
func (a *BagAuditorC) exactLLP(out []float64) {
	a.buildDown()
	n := a.n
	clear(out)
	best := a.best[:n]
	for N := range a.x.size[n] {
		clear(best)
		for k := a.downOff[N]; k < a.downOff[N+1]; k++ {
			m, y := int(a.downM[k]), int(a.downY[k])
			qm, ey := a.q[m*n:m*n+n], a.etaT[y*n:y*n+n]
			ey, bs := ey[:len(qm)], best[:len(qm)] // no bounds checks below
			for i, qv := range qm {
				bs[i] = max(bs[i], ey[i]*qv)
			}
		}
		for i, b := range best {
			out[i] += b
		}
	}
	for i := range out {
		out[i] = max(0, out[i]-a.maxEta[i])
	}
}

// buildDown inverts up[n−1] into the per-state lists of exactLLP.
func (a *BagAuditorC) buildDown() {
	if a.downOff != nil {
		return
	}
	c, n := a.c, a.n
	up := a.x.up[n-1]
	off := make([]int32, a.x.size[n]+1)
	for _, ix := range up {
		off[ix+1]++
	}
	for N := range a.x.size[n] {
		off[N+1] += off[N]
	}
	pos := slices.Clone(off[:len(off)-1])
	a.downM, a.downY = make([]int32, len(up)), make([]uint8, len(up))
	for k, ix := range up {
		a.downM[pos[ix]], a.downY[pos[ix]] = int32(k/c), uint8(k%c)
		pos[ix]++
	}
	a.downOff = off
}

// exactGeom enumerates every release z ∈ {0..n}^{C−1}.
func (a *BagAuditorC) exactGeom(out []float64) {
	c, n, n1 := a.c, a.n, a.n+1
	clear(out)
	z := make([]int, c-1)
	for cl := 1; cl < c; cl++ {
		copy(a.tab[(cl-1)*n1:cl*n1], a.gtab[:n1])
	}
	for {
		a.fillW()
		a.memberLik()
		best := a.best[:n]
		clear(best)
		for y := range c {
			ey, l := a.etaT[y*n:y*n+n], a.lik[y*n:y*n+n]
			for i, e := range ey {
				best[i] = max(best[i], e*l[i])
			}
		}
		for i, b := range best {
			out[i] += b
		}
		// Next z (mixed radix n+1), refreshing the changed rows of tab.
		d := 0
		for ; d < c-1; d++ {
			z[d]++
			if z[d] <= n {
				break
			}
			z[d] = 0
		}
		if d == c-1 {
			break
		}
		for k := 0; k <= d; k++ {
			copy(a.tab[k*n1:(k+1)*n1], a.gtab[z[k]*n1:(z[k]+1)*n1])
		}
	}
	for i := range out {
		out[i] = max(0, out[i]-a.maxEta[i])
	}
}

// exactLap2 is llp_lap at C = 2 in closed form. Member i's joint density
// of (y_i = y, t), t the released count of class 1, is
// η_y·Σ_x w_y(x)·(λ/2)e^{−λ|t−x|}, w_y(x) = P(N_1 = x | y_i = y) over the
// atoms x = 0..n. Between atoms j and j+1 (u = t − j ∈ [0,1]) it is
// (λ/2)(a_y e^{−λu} + b_y e^{−λ(1−u)}) with a_y = η_y·Σ_{x≤j} w_y(x)e^{−λ(j−x)},
// b_y = η_y·Σ_{x>j} w_y(x)e^{−λ(x−j−1)}; the two classes' densities cross at
// most once, at u* = (ln(−Δa/Δb) + λ)/(2λ), and each piece integrates to
// ½[a(e^{−λu₀} − e^{−λu₁}) + b(e^{−λ(1−u₁)} − e^{−λ(1−u₀)})]. Left of 0 and
// right of n each density is one exponential, integrating to
// ½η_y·Σ_x w_y(x)e^{−λx} and ½η_y·Σ_x w_y(x)e^{−λ(n−x)}.
func (a *BagAuditorC) exactLap2(out []float64) {
	n, lam := a.n, a.lambda
	up := a.x.up[n-1]
	var w [2][]float64
	w[0], w[1] = make([]float64, n+1), make([]float64, n+1)
	ex := make([]float64, n+1) // e^{−λd}
	for d := range ex {
		ex[d] = math.Exp(-lam * float64(d))
	}
	piece := func(av, bv, u0, u1 float64) float64 {
		return 0.5 * (av*math.Exp(-lam*u0)*-math.Expm1(-lam*(u1-u0)) +
			bv*math.Exp(-lam*(1-u1))*-math.Expm1(-lam*(u1-u0)))
	}
	for i := range n {
		clear(w[0])
		clear(w[1])
		for m := range a.x.size[n-1] {
			p := a.q[m*n+i]
			for y := range 2 {
				w[y][n-int(up[m*2+y])] += p // the state of rank N is (N, n−N)
			}
		}
		e := a.eta[i*2 : i*2+2]
		var tot float64
		var left, right [2]float64
		for y := range 2 {
			for x, v := range w[y] {
				left[y] += v * ex[x]
				right[y] += v * ex[n-x]
			}
		}
		tot += 0.5 * (max(e[0]*left[0], e[1]*left[1]) + max(e[0]*right[0], e[1]*right[1]))
		for j := 0; j < n; j++ {
			var av, bv [2]float64
			for y := range 2 {
				for x := 0; x <= j; x++ {
					av[y] += w[y][x] * ex[j-x]
				}
				for x := j + 1; x <= n; x++ {
					bv[y] += w[y][x] * ex[x-j-1]
				}
				av[y] *= e[y]
				bv[y] *= e[y]
			}
			da, db := av[1]-av[0], bv[1]-bv[0]
			if (da > 0 && db < 0) || (da < 0 && db > 0) {
				us := min(1, max(0, (math.Log(-da/db)+lam)/(2*lam)))
				// Before the crossing the e^{−λu} terms dominate: class 1 is
				// the larger on [0, u*] iff Δa > 0 (u* is clamped to [0, 1],
				// so this holds whichever side of the interval it falls).
				first := 0
				if da > 0 {
					first = 1
				}
				tot += piece(av[first], bv[first], 0, us) + piece(av[1-first], bv[1-first], us, 1)
				continue
			}
			y := 0
			if da+db > 0 {
				y = 1
			}
			tot += piece(av[y], bv[y], 0, 1)
		}
		out[i] = max(0, tot-a.maxEta[i])
	}
}

// estimate averages max_y P(y_i = y | z) over R releases z drawn from the
// bag's law.
func (a *BagAuditorC) estimate(res *BagResultC, R int, rng *rand.Rand) {
	c, n := a.c, a.n
	res.Exact, res.Draws = false, R
	mean, m2 := make([]float64, n), make([]float64, n) // Welford per member
	var bmean, bm2 float64                             // Welford of the per-draw member mean
	for r := range R {
		clear(a.counts)
		for i := range n {
			a.counts[drawClass(a.eta[i*c:(i+1)*c], rng)]++
		}
		a.law.ReleaseBag(a.rel, a.counts, rng)
		a.setRelease(a.rel)
		a.memberLik()
		dm := 0.0
		for i := range n {
			s, best := 0.0, 0.0
			for y := range c {
				v := a.etaT[y*n+i] * a.lik[y*n+i]
				s += v
				best = max(best, v)
			}
			x := a.maxEta[i]
			if s > 0 {
				x = best / s
			} else {
				res.Degenerate++
			}
			dm += x
			d := x - mean[i]
			mean[i] += d / float64(r+1)
			m2[i] += d * (x - mean[i])
		}
		dm /= float64(n)
		d := dm - bmean
		bmean += d / float64(r+1)
		bm2 += d * (dm - bmean)
	}
	fr := float64(R)
	for i := range n {
		res.IEAdv[i] = mean[i] - a.maxEta[i]
		res.IEAdvSE[i] = math.Sqrt(m2[i] / (fr - 1) / fr)
		res.EAdv += res.IEAdv[i]
	}
	res.EAdv /= float64(n)
	res.EAdvSE = math.Sqrt(bm2 / (fr - 1) / fr)
}

// drawClass draws y with P(y) = e[y] from a 53-bit uniform (the audit's
// label draws), never a class of probability 0.
func drawClass(e []float64, rng *rand.Rand) int {
	u := rng.Float64()
	last := -1
	cum := 0.0
	for y, p := range e {
		if p <= 0 {
			continue
		}
		cum += p
		last = y
		if u < cum {
			return y
		}
	}
	return last
}
