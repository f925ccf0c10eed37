package pets

import (
	"fmt"
	"math"
)

// Exact likelihoods P(release | true labels) for the audit (Section 3): no
// simulation. Log versions avoid underflow, e.g. llp_geom with k = 512 and
// ε = 32 has probabilities down to e^{−16384}.

// RRLikelihood returns P(released = rel | true label = y) for rr
// (1−π if equal, π otherwise) and none (1 if equal, 0 otherwise). Panics for
// other kinds or labels outside {0, 1}.
func (m *Mechanism) RRLikelihood(rel, y uint8) float64 {
	if rel > 1 || y > 1 {
		panic(fmt.Sprintf("pets: RRLikelihood: labels must be 0/1, got %d, %d", rel, y))
	}
	switch m.p.Kind {
	case None:
		if rel == y {
			return 1
		}
		return 0
	case RR:
		if rel == y {
			return 1 / (1 + math.Exp(-m.p.Epsilon)) // 1 − π, stable for large ε
		}
		return m.pi
	}
	panic("pets: RRLikelihood on " + m.p.Kind.String())
}

// GeomPMF returns P(released clipped sum = r | true sum = s) for r = 0..n,
// for llp_geom on a bag of n ≥ 1 rows (0 ≤ s ≤ n). With a = e^{−ε}:
//
//	0 < r < n: (1−a)/(1+a)·a^|r−s|   (two-sided geometric pmf at r−s)
//	r = 0:     a^s/(1+a)             (= P(Z ≤ −s))
//	r = n:     a^(n−s)/(1+a)         (= P(Z ≥ n−s))
//
// computed as exp of GeomLogPMF (stable; far cells may underflow to 0). The
// entries sum to 1. With n = 1 it is RR(ε): P(r = s) = 1/(1+a) = 1−π.
func (m *Mechanism) GeomPMF(n, s int) []float64 {
	return m.GeomPMFInto(make([]float64, n+1), n, s)
}

// GeomPMFInto is GeomPMF writing into dst (len ≥ n+1), returned resliced.
func (m *Mechanism) GeomPMFInto(dst []float64, n, s int) []float64 {
	m.checkGeom(n, s)
	dst = dst[:n+1]
	for r := range dst {
		dst[r] = math.Exp(m.geomLogProb(n, s, r))
	}
	return dst
}

// GeomLogPMF returns log P(released clipped sum = r | true sum = s) for
// llp_geom (see GeomPMF); 0 ≤ r, s ≤ n.
func (m *Mechanism) GeomLogPMF(n, s, r int) float64 {
	m.checkGeom(n, s)
	if r < 0 || r > n {
		panic(fmt.Sprintf("pets: GeomLogPMF: release %d outside [0, %d]", r, n))
	}
	return m.geomLogProb(n, s, r)
}

func (m *Mechanism) checkGeom(n, s int) {
	if m.p.Kind != LLPGeom {
		panic("pets: GeomPMF on " + m.p.Kind.String())
	}
	if n < 1 || s < 0 || s > n {
		panic(fmt.Sprintf("pets: GeomPMF: need 0 ≤ s ≤ n, n ≥ 1; got s=%d n=%d", s, n))
	}
}

func (m *Mechanism) geomLogProb(n, s, r int) float64 {
	eps := m.p.Epsilon
	switch r {
	case 0:
		return -eps*float64(s) - m.log1pA
	case n:
		return -eps*float64(n-s) - m.log1pA
	}
	d := r - s
	if d < 0 {
		d = -d
	}
	return m.logInterior - eps*float64(d)
}

// LapDensity returns the density of the released proportion α of
// llp_lap for a bag of n ≥ 1 rows with true sum s (0 ≤ s ≤ n):
// α ~ s/n + Lap(1/(nε)), density (nε/2)·e^{−ε|nα − s|} (per unit of α).
// With Secure the release lives on the grid (s + gℤ)/n, g ≤ 2^-40·(1/ε)
// rounded up to a power of two; its pmf at a grid point is this density
// times g/n up to a relative error < 2^-39, and likelihood ratios are
// identical.
func (m *Mechanism) LapDensity(n, s int, alpha float64) float64 {
	return math.Exp(m.LapLogDensity(n, s, alpha))
}

// LapLogDensity is log LapDensity.
func (m *Mechanism) LapLogDensity(n, s int, alpha float64) float64 {
	if m.p.Kind != LLPLap {
		panic("pets: LapDensity on " + m.p.Kind.String())
	}
	if n < 1 || s < 0 || s > n {
		panic(fmt.Sprintf("pets: LapDensity: need 0 ≤ s ≤ n, n ≥ 1; got s=%d n=%d", s, n))
	}
	eps, fn := m.p.Epsilon, float64(n)
	return math.Log(fn*eps/2) - eps*math.Abs(fn*alpha-float64(s))
}

// Likelihood returns P(release | true sum s) for one release of the
// mechanism on a unit of n rows: a probability for discrete releases, a
// density (per unit of proportion) for llp_lap.
//   - none, rr: n must be 1, release ∈ {0, 1} is the released label, s the
//     true label (RRLikelihood).
//   - bot: 1 (⊥ does not depend on the labels).
//   - llp: 1 if release is the proportion s/n (round(release·n) == s), else 0.
//   - llp_lap: LapDensity(n, s, release).
//   - llp_geom: GeomPMF(n, s)[round(release·n)].
func (m *Mechanism) Likelihood(release float64, n, s int) float64 {
	return math.Exp(m.LogLikelihood(release, n, s))
}

// LogLikelihood is log Likelihood (−Inf for impossible releases).
func (m *Mechanism) LogLikelihood(release float64, n, s int) float64 {
	if n < 1 || s < 0 || s > n {
		panic(fmt.Sprintf("pets: Likelihood: need 0 ≤ s ≤ n, n ≥ 1; got s=%d n=%d", s, n))
	}
	switch m.p.Kind {
	case None, RR:
		if n != 1 || (release != 0 && release != 1) {
			panic(fmt.Sprintf("pets: Likelihood: %s releases one 0/1 label per row; got n=%d release=%v", m.p.Kind, n, release))
		}
		return math.Log(m.RRLikelihood(uint8(release), uint8(s)))
	case Bot:
		return 0
	case LLP:
		if math.Round(release*float64(n)) == float64(s) {
			return 0
		}
		return math.Inf(-1)
	case LLPLap:
		return m.LapLogDensity(n, s, release)
	case LLPGeom:
		r := math.Round(release * float64(n))
		if r < 0 || r > float64(n) {
			return math.Inf(-1)
		}
		return m.GeomLogPMF(n, s, int(r))
	}
	panic("pets: Likelihood on " + m.p.Kind.String())
}
