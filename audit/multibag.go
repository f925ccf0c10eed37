package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"labelprivacy/pets"
)

// The exact audit of a bag of n labels over C classes (llp, llp_geom,
// llp_lap (their pets.BagLaw): the bag releases its counts of classes
// 1..C−1, exactly or with independent noise of rate λ = ε/Δ on each).
//
// Member i's view. The other n−1 labels are independent with laws η_j, so
// their count vector m (Σm = n−1) has the law Q_i(m) = P(Σ_{j≠i} e_{y_j} = m),
// computed by a dynamic program over count vectors: starting from the
// empty bag, each other member j moves the mass of every state s to s + e_y
// with weight η_jy. The bag's count vector is m + e_{y_i}, so
//
//	P(z | y_i = y) = Σ_m Q_i(m)·L(z | m + e_y),
//
// L the mechanism's law of the release given the counts: 1{z = counts}
// for llp; Π_{c≥1} g(z_c | n_c) for llp_geom, g the clipped two-sided
// geometric pmf with a = e^{−λ} (pets.BagLaw.ReleaseBag); Π_{c≥1}
// (λ/2)e^{−λ|z_c − n_c|} for llp_lap (z in count units, z_c = α_c·n).
//
// States. The count vectors of j labels over C classes number
// S(j) = C(j+C−1, C−1); each level j = 0..n is listed in lexicographic
// order and indexed by its rank (the combinatorial number system:
// rank(v) = Σ_{i<C−1} [N(r_i, C−i) − N(r_i − v_i, C−i)], N(r, p) = C(r+p−1, p−1)
// compositions of r into p parts, r_i = j − Σ_{i'<i} v_{i'}); up[j][s·C+y] is the
// rank of state s + e_y at level j+1. The tables are built once per (C, n)
// and shared by every bag of that size.
//
// Cost. The n leave-one-out programs take n·C·Σ_{j<n−1} S(j) multiply-adds and
// one pass over all members' (m, y) pairs takes n·C·S(n−1); BagWorkC is their
// sum. NewBagAuditorC refuses a (C, n) whose BagWorkC exceeds MaxBagWork
// (2^27 ≈ 1.3e8, of the order of 0.1 s per bag on one core): the largest bags
// accepted (TestBagAuditorLimits) are C = 2: n ≤ 511, C = 3: n ≤ 127,
// C = 4: n ≤ 59, C = 5: n ≤ 36, C = 10: n ≤ 13, C = 20: n ≤ 7,
// C = 64: n ≤ 4. At C = 2 the binary audit (O(n) per member) is the tool;
// this one agrees with it to 1e-12.
//
// Exact or estimated. For llp the release space is the S(n) count vectors
// and IEAdv_i = Σ_{N: ΣN = n} max_y η_iy·Q_i(N − e_y) − max_y η_iy exactly. For
// llp_geom it is {0..n}^{C−1}: enumerated exactly when the enumeration costs
// at most BagOptionsC.ExactWork operations ((n+1)^{C−1} releases, each
// S(n)·(C−1) + n·C·S(n−1)); llp_lap at C = 2 is exact too (a closed-form
// integral between the atoms). Otherwise (llp_geom beyond that, llp_lap at
// C ≥ 3, a continuous release in C−1 dimensions) E_z[max_y P(y_i = y | z)] is
// estimated by drawing Draws releases z from the bag's exact law (labels
// from η, the release from pets' own sampler) and averaging the exact
// posterior's maximum: an unbiased estimate of IEAdv_i + max η_i with its
// standard error; BagResultC.Exact says which.

// MaxBagWork is the largest BagWorkC a BagAuditorC accepts.
const MaxBagWork = 1 << 27

// DefaultExactWork is the default BagOptionsC.ExactWork: llp_geom bags whose
// release space can be enumerated in at most this many operations are
// audited exactly.
const DefaultExactWork = 1 << 26

// stateCount returns S(j) = C(j+c−1, c−1) as a float64 (exact below 2^53).
func stateCount(j, c int) float64 {
	s := 1.0
	for i := 1; i < c; i++ {
		s = s * float64(j+i) / float64(i)
	}
	return math.Round(s)
}

// BagWorkC returns the multiply-adds of the leave-one-out count-vector
// programs of one bag of n labels over c classes plus one pass over every
// member's (state, class) pairs: n·c·(Σ_{j ≤ n−2} S(j) + S(n−1)).
func BagWorkC(c, n int) float64 {
	s := 0.0
	for j := 0; j <= n-1; j++ {
		s += stateCount(j, c)
	}
	return float64(n) * float64(c) * s
}

// countIndex lists the count vectors of j = 0..n labels over c classes.
type countIndex struct {
	c, n int
	size []int     // size[j] = S(j)
	up   [][]int32 // up[j][s·c+y] = rank of state s + e_y at level j+1, j < n
	nb   [][]int64 // nb[p][r] = N(r, p), p = 1..c, r = 0..n
}

func newCountIndex(c, n int) *countIndex {
	x := &countIndex{c: c, n: n, size: make([]int, n+1), up: make([][]int32, n)}
	x.nb = make([][]int64, c+1)
	for p := 1; p <= c; p++ {
		x.nb[p] = make([]int64, n+2)
		for r := 0; r <= n+1; r++ {
			if p == 1 || r == 0 {
				x.nb[p][r] = 1
			} else {
				x.nb[p][r] = x.nb[p-1][r] + x.nb[p][r-1] // last part 0, or ≥ 1
			}
		}
	}
	for j := range x.size {
		x.size[j] = int(x.nb[c][j])
	}
	pre := make([]int64, c+1) // pre[y] = Σ_{i<y} T'_i
	suf := make([]int64, c+1) // suf[y] = Σ_{i>y} T_i
	for j := 0; j < n; j++ {
		up := make([]int32, x.size[j]*c)
		s := 0
		x.each(j, func(v []uint16) {
			// rank(v + e_y) at level j+1: positions before y see one more
			// label remaining (T'), position y its count plus one, positions
			// after y are unchanged (T).
			r := j
			pre[0] = 0
			for i := 0; i < c; i++ {
				vi := int(v[i])
				if i < c-1 {
					p := c - i
					pre[i+1] = pre[i] + x.nb[p][r+1] - x.nb[p][r+1-vi]
				}
				r -= vi
			}
			suf[c-1] = 0
			r = 0 // labels at positions ≥ i
			for i := c - 1; i >= 0; i-- {
				vi := int(v[i])
				r += vi
				if i > 0 {
					t := int64(0)
					if i < c-1 {
						p := c - i
						t = x.nb[p][r] - x.nb[p][r-vi]
					}
					suf[i-1] = suf[i] + t
				}
			}
			r = j
			for y := 0; y < c; y++ {
				mid := int64(0)
				if y < c-1 {
					p := c - y
					mid = x.nb[p][r+1] - x.nb[p][r-int(v[y])]
				}
				up[s*c+y] = int32(pre[y] + mid + suf[y])
				r -= int(v[y])
			}
			s++
		})
		x.up[j] = up
	}
	return x
}

// each calls fn with every count vector of j labels, in lexicographic order
// (rank 0, 1, …); fn must not keep v.
func (x *countIndex) each(j int, fn func(v []uint16)) {
	c := x.c
	v := make([]uint16, c)
	var rec func(i, r int)
	rec = func(i, r int) {
		if i == c-1 {
			v[i] = uint16(r)
			fn(v)
			return
		}
		for a := 0; a <= r; a++ {
			v[i] = uint16(a)
			rec(i+1, r-a)
		}
	}
	rec(0, j)
}

// rank returns the index of count vector v within its level.
func (x *countIndex) rank(v []int) int {
	r := 0
	for _, a := range v {
		r += a
	}
	idx := int64(0)
	for i := 0; i < x.c-1; i++ {
		p := x.c - i
		idx += x.nb[p][r] - x.nb[p][r-v[i]]
		r -= v[i]
	}
	return int(idx)
}

// BagOptionsC configures BagAuditorC.Audit.
type BagOptionsC struct {
	// Draws R ≥ 2: releases sampled from the bag's law when IEAdv is
	// estimated (ignored when it is exact). The SE falls as 1/√R.
	Draws int
	// ExactWork caps the operations of an exact enumeration of llp_geom's
	// release space: 0 means DefaultExactWork, a negative value forces
	// estimation (also for llp_lap at C = 2). llp is always exact.
	ExactWork float64
}

// BagResultC is the audit of one bag.
type BagResultC struct {
	// IEAdv[i] is member i's individual expected advantage (Definition
	// 3.1), exact or estimated; IEAdvSE[i] its standard error (0 when
	// exact).
	IEAdv, IEAdvSE []float64
	// EAdv is the mean of IEAdv over the members; EAdvSE its standard error
	// over the draws (members of one draw share the release, so it is
	// sd(per-draw member mean)/√R), 0 when exact.
	EAdv, EAdvSE float64
	// Exact is true when every value is an exact finite sum or closed-form
	// integral, false when estimated from Draws sampled releases.
	Exact bool
	Draws int
	// Degenerate counts (member, draw) pairs whose likelihoods all
	// underflowed to 0 (the posterior is then taken to be the prior);
	// 0 unless the noise is extremely small relative to the bag.
	Degenerate int
}

// BagAuditorC audits bags of n labels over C classes for one mechanism of
// the LLP family. Not safe for concurrent use: give each goroutine its own
// (they may share nothing else).
type BagAuditorC struct {
	m      *pets.Mechanism
	law    pets.BagLaw
	noise  pets.SumNoise
	c, n   int
	x      *countIndex
	lambda float64
	gtab   []float64 // llp_geom: gtab[t·(n+1)+v] = P(clip(v+Z, 0, n) = t)

	// The layouts put the n members innermost, so that the loops over
	// states and classes run over contiguous rows of n values.
	eta     []float64 // the prepared bag (n·c, member-major), nil until Prepare
	etaT    []float64 // the same, class-major: etaT[y·n+i] = η_iy
	q       []float64 // S(n−1)·n: q[m·n+i] = Q_i(m)
	b0, b1  []float64 // program buffers, S(n−1)
	w       []float64 // S(n): L(z | N) for the current release
	tab     []float64 // (c−1)·(n+1): per-coordinate factors of the current release
	suf0    []float64 // c+1: suf0[i] = Π_{c' ≥ i} tab_{c'}[0] (fillW)
	widx    int       // fillW's cursor
	lik     []float64 // c·n: lik[y·n+i] ∝ P(z | y_i = y)
	best    []float64 // n
	counts  []int     // c
	rel     []float64 // c−1
	maxEta  []float64 // n
	tcounts []int     // c

	// llp: for each level-n state N, the pairs (m, y) with m + e_y = N:
	// downM[downOff[N]:downOff[N+1]] and downY likewise (built on first use).
	downOff []int32
	downM   []int32
	downY   []uint8
}

// NewBagAuditorC returns an auditor for bags of n ≥ 1 labels under m, a
// mechanism released as proportions on C classes (its BagLaw: llp,
// llp_geom, llp_lap; a bag of one per example for ReleaseCounts). It
// refuses, with a *ParamError naming "k", a (C, n) whose BagWorkC exceeds
// MaxBagWork.
func NewBagAuditorC(m *pets.Mechanism, n int) (*BagAuditorC, error) {
	if m.BagLaw() == nil {
		return nil, paramErr("mechanism", fmt.Sprintf("%v is not released as proportions", m))
	}
	c := m.Classes()
	if n < 1 {
		return nil, paramErr("k", fmt.Sprintf("bag size must be ≥ 1, got %d", n))
	}
	if w := BagWorkC(c, n); w > MaxBagWork {
		return nil, paramErr("k", fmt.Sprintf(
			"bags of %d labels over %d classes need %.3g operations per bag in the exact count-vector audit (%.0f count vectors; limit %d): use smaller bags or fewer classes",
			n, c, w, stateCount(n, c), MaxBagWork))
	}
	law := m.BagLaw()
	a := &BagAuditorC{m: m, law: law, noise: law.SumNoise(), c: c, n: n, x: newCountIndex(c, n), lambda: law.NoiseRate()}
	s1, s := a.x.size[n-1], a.x.size[n]
	a.q = make([]float64, n*s1)
	a.b0, a.b1 = make([]float64, s1), make([]float64, s1)
	a.w = make([]float64, s)
	a.tab = make([]float64, (c-1)*(n+1))
	a.suf0 = make([]float64, c+1)
	a.lik = make([]float64, n*c)
	a.etaT = make([]float64, n*c)
	a.best = make([]float64, n)
	a.counts, a.tcounts = make([]int, c), make([]int, c)
	a.rel = make([]float64, c-1)
	a.maxEta = make([]float64, n)
	if a.noise == pets.SumGeometric {
		// The clipped two-sided geometric pmf (pets' release): interior
		// (1−a)/(1+a)·a^|t−v|, P(t = 0) = a^v/(1+a), P(t = n) = a^(n−v)/(1+a).
		al := math.Exp(-a.lambda)
		in, edge := -math.Expm1(-a.lambda)/(1+al), 1/(1+al)
		a.gtab = make([]float64, (n+1)*(n+1))
		for t := 0; t <= n; t++ {
			for v := 0; v <= n; v++ {
				var p float64
				switch t {
				case 0:
					p = math.Exp(-a.lambda*float64(v)) * edge
				case n:
					p = math.Exp(-a.lambda*float64(n-v)) * edge
				default:
					p = in * math.Exp(-a.lambda*math.Abs(float64(t-v)))
				}
				a.gtab[t*(n+1)+v] = p
			}
		}
	}
	return a, nil
}

// BagSize returns n.
func (a *BagAuditorC) BagSize() int { return a.n }

// States returns S(n), the number of count vectors of a bag.
func (a *BagAuditorC) States() int { return a.x.size[a.n] }

// Prepare computes the leave-one-out count laws Q_i of the bag whose members
// have class probabilities eta (flat, eta[i·C+y] = η_iy, n·C entries,
// checked by CheckEtaC). Audit and Likelihoods call it; it does nothing when
// eta equals the bag prepared last.
func (a *BagAuditorC) Prepare(eta []float64) error {
	if len(eta) != a.n*a.c {
		return paramErr("eta", fmt.Sprintf("%d values for a bag of %d over %d classes", len(eta), a.n, a.c))
	}
	if a.eta != nil && slices.Equal(a.eta, eta) {
		return nil
	}
	if err := CheckEtaC(eta, a.c); err != nil {
		return err
	}
	a.eta = append(a.eta[:0], eta...)
	c, n := a.c, a.n
	for i := range n {
		for y := range c {
			a.etaT[y*n+i] = eta[i*c+y]
		}
	}
	for i := range n {
		_, a.maxEta[i] = argmax(eta[i*c : (i+1)*c])
		cur := a.b0[:1]
		cur[0] = 1
		level := 0
		for j := range n {
			if j == i {
				continue
			}
			ej := eta[j*c : (j+1)*c]
			nxt := a.b1[:a.x.size[level+1]]
			if &nxt[0] == &cur[0] {
				nxt = a.b0[:a.x.size[level+1]]
			}
			clear(nxt)
			up := a.x.up[level]
			for s, p := range cur {
				if p == 0 {
					continue
				}
				row := up[s*c : s*c+c]
				row = row[:len(ej)]
				for y, e := range ej {
					if e != 0 {
						nxt[row[y]] += p * e
					}
				}
			}
			cur = nxt
			level++
		}
		for m, v := range cur {
			a.q[m*n+i] = v
		}
	}
	return nil
}

// memberLik writes P(z | y_i = y) (up to a factor common to all members and
// classes) into a.lik[y·n+i] from the release factors a.w over level n.
func (a *BagAuditorC) memberLik() {
	c, n := a.c, a.n
	up, w, lik := a.x.up[n-1], a.w, a.lik
	clear(lik)
	for m := range a.x.size[n-1] {
		qm := a.q[m*n : m*n+n]
		for y, ix := range up[m*c : m*c+c] {
			wv := w[ix]
			l := lik[y*n : y*n+n]
			l = l[:len(qm)]
			for i, qv := range qm {
				l[i] += qv * wv
			}
		}
	}
}

// fillW sets a.w[N] = Π_{c≥1} tab_c[N_c] over the level-n count vectors N,
// in rank (lexicographic) order, by prefix products along the enumeration
// tree; a prefix that has used all n labels ends in the precomputed product
// of the remaining classes' factors at count 0. No per-state count vectors
// are stored (at C = 64, n = 4 they would take 98 MB).
func (a *BagAuditorC) fillW() {
	c, n1 := a.c, a.n+1
	a.suf0[c] = 1
	for cl := c - 1; cl >= 1; cl-- {
		a.suf0[cl] = a.suf0[cl+1] * a.tab[(cl-1)*n1]
	}
	a.suf0[0] = a.suf0[1]
	a.widx = 0
	a.fillFrom(0, a.n, 1)
}

// fillFrom writes the states whose classes before i hold n − r labels with
// factor product prod.
func (a *BagAuditorC) fillFrom(i, r int, prod float64) {
	c := a.c
	switch {
	case r == 0:
		a.w[a.widx] = prod * a.suf0[i]
		a.widx++
		return
	case i == c-1:
		a.w[a.widx] = prod * a.tab[(c-2)*(a.n+1)+r]
		a.widx++
		return
	case i == c-2 && i >= 1:
		// The last two classes in one loop (most of the tree's nodes):
		// the same products as the two levels of recursion, (prod·t[v])·u[r−v].
		n1 := a.n + 1
		t, u := a.tab[(i-1)*n1:i*n1], a.tab[i*n1:(i+1)*n1]
		w := a.w[a.widx : a.widx+r+1]
		for v := range w {
			w[v] = prod * t[v] * u[r-v]
		}
		a.widx += r + 1
		return
	}
	if i == 0 { // class 0: no factor
		for v := 0; v <= r; v++ {
			a.fillFrom(1, r-v, prod)
		}
		return
	}
	t := a.tab[(i-1)*(a.n+1) : i*(a.n+1)]
	for v := 0; v <= r; v++ {
		a.fillFrom(i+1, r-v, prod*t[v])
	}
}

// setRelease fills a.tab (and a.w) from a release rel (proportions of
// classes 1..C−1 as pets.BagLaw.ReleaseBag wrote them). For llp it
// returns the released count vector in a.tcounts instead and ok = false if
// it is not a count vector of the bag.
func (a *BagAuditorC) setRelease(rel []float64) (ok bool) {
	c, n, n1 := a.c, a.n, a.n+1
	fn := float64(n)
	switch a.noise {
	case pets.SumExact, pets.SumGeometric:
		rest := n
		for cl := 1; cl < c; cl++ {
			t := math.Round(rel[cl-1] * fn)
			if !(t >= 0 && t <= fn) {
				return false
			}
			a.tcounts[cl] = int(t)
			rest -= int(t)
		}
		a.tcounts[0] = rest
		if a.noise == pets.SumExact {
			return rest >= 0
		}
		for cl := 1; cl < c; cl++ {
			copy(a.tab[(cl-1)*n1:cl*n1], a.gtab[a.tcounts[cl]*n1:(a.tcounts[cl]+1)*n1])
		}
	case pets.SumLaplace:
		for cl := 1; cl < c; cl++ {
			t := rel[cl-1] * fn
			if math.IsNaN(t) || math.IsInf(t, 0) {
				return false
			}
			// Scaled by e^{λ·dist(t, [0, n])}: a factor common to every
			// state, so posteriors and likelihood ratios are unchanged and
			// the nearest count has factor ≥ e^{−λ/2}.
			d0 := max(0, -t, t-fn)
			for v := 0; v <= n; v++ {
				a.tab[(cl-1)*n1+v] = math.Exp(-a.lambda * (math.Abs(t-float64(v)) - d0))
			}
		}
	}
	a.fillW()
	return true
}

// Likelihoods writes into dst (n·C) member i's likelihood of the release
// P(rel | y_i = y) at dst[i·C+y], up to a positive factor common to every
// member and class (for llp_lap a density in count units), for the bag
// whose members have class probabilities eta; rel holds the released
// proportions of classes 1..C−1 as pets.BagLaw.ReleaseBag writes
// them. Posteriors follow with PosteriorC and the multiplicative advantage
// with MultAdvC. An llp release that is not a count vector of the bag is
// an error.
func (a *BagAuditorC) Likelihoods(dst, eta, rel []float64) error {
	if err := a.Prepare(eta); err != nil {
		return err
	}
	if len(dst) != a.n*a.c || len(rel) != a.c-1 {
		return paramErr("release", fmt.Sprintf("%d outputs and %d released proportions for a bag of %d over %d classes", len(dst), len(rel), a.n, a.c))
	}
	if !a.setRelease(rel) {
		return paramErr("release", fmt.Sprintf("%v is not a release of %v on a bag of %d", rel, a.m, a.n))
	}
	if a.noise == pets.SumExact {
		a.llpLik(dst)
		return nil
	}
	a.memberLik()
	for y := range a.c {
		for i := range a.n {
			dst[i*a.c+y] = a.lik[y*a.n+i]
		}
	}
	return nil
}

// llpLik writes Q_i(N − e_y) for the released count vector N = a.tcounts.
func (a *BagAuditorC) llpLik(dst []float64) {
	c, n := a.c, a.n
	for y := range c {
		if a.tcounts[y] == 0 {
			for i := range a.n {
				dst[i*c+y] = 0
			}
			continue
		}
		a.tcounts[y]--
		r := a.x.rank(a.tcounts)
		a.tcounts[y]++
		for i := range a.n {
			dst[i*c+y] = a.q[r*n+i]
		}
	}
}

// Audit returns the IEAdv of every member of the bag whose members have
// class probabilities eta (flat n·C): exact for llp, for llp_geom when the
// release space is small enough (opts.ExactWork) and for llp_lap at C = 2;
// otherwise estimated from opts.Draws releases drawn with rng (labels from
// η, releases from pets.BagLaw.ReleaseBag). rng is not used when the
// result is exact.
func (a *BagAuditorC) Audit(eta []float64, opts BagOptionsC, rng *rand.Rand) (*BagResultC, error) {
	if err := a.Prepare(eta); err != nil {
		return nil, err
	}
	n := a.n
	res := &BagResultC{IEAdv: make([]float64, n), IEAdvSE: make([]float64, n), Exact: true}
	switch {
	case !a.exactFor(opts.ExactWork):
		if opts.Draws < 2 {
			return nil, paramErr("draws", fmt.Sprintf("%v on bags of %d needs an estimate from ≥ 2 sampled releases, got %d", a.m, n, opts.Draws))
		}
		if rng == nil {
			return nil, paramErr("rng", "an estimate needs a random source")
		}
		a.estimate(res, opts.Draws, rng)
		return res, nil
	case a.noise == pets.SumExact:
		a.exactLLP(res.IEAdv)
	case a.noise == pets.SumGeometric:
		a.exactGeom(res.IEAdv)
	default: // pets.SumLaplace at C = 2
		a.exactLap2(res.IEAdv)
	}
	for _, v := range res.IEAdv {
		res.EAdv += v
	}
	res.EAdv /= float64(n)
	return res, nil
}

// exactFor reports whether Audit computes IEAdv exactly with
// BagOptionsC.ExactWork ew (0: DefaultExactWork): always for llp, for
// llp_geom when enumerating its release space costs at most ew, for llp_lap
// at C = 2 unless ew < 0.
func (a *BagAuditorC) exactFor(ew float64) bool {
	if ew == 0 {
		ew = DefaultExactWork
	}
	switch a.noise {
	case pets.SumExact:
		return true
	case pets.SumGeometric:
		return ew >= a.geomExactWork()
	case pets.SumLaplace:
		return a.c == 2 && ew > 0
	}
	return false
}
