package pets

import (
	"fmt"
	"math"
)

// Params configures a mechanism. Fields a kind does not take must be left
// zero: New rejects them rather than silently ignoring them.
type Params struct {
	Kind Kind
	// K is the bag size (llp, llp_lap, llp_geom), ≥ 1.
	K int
	// Epsilon is the label-DP parameter ε (rr, llp_lap, llp_geom,
	// rr_prior), in (0, MaxEpsilon].
	Epsilon float64
	// Secure selects, for llp_lap, the grid Laplace sampler SecureLaplace
	// (robust to the floating-point attack) instead of the textbook Laplace.
	// rr and llp_geom always use exact samplers, so it changes nothing for
	// them; it is rejected for none, bot and llp, which add no noise. Pair it
	// with NewSecureRand for deployment.
	Secure bool
}

// Mechanism is a validated, immutable PET; safe for concurrent use (the
// Rand passed to the release methods is not).
type Mechanism struct {
	p Params

	pi        float64 // rr, rr_prior: flip probability 1/(1+e^ε)
	piWord    uint64  // rr, rr_prior: π·2^64 when ≥ 2^53 (π ≥ 2^-11), else 0; see ReleaseRR
	overshoot float64 // llp_geom: E[overshoot past a clip, in sum units] = 1/(e^ε−1)
}

// MaxEpsilon is the largest ε a mechanism accepts: up to about 709 the
// flip probability 1/(1+e^ε), e^{−ε} and the audit's likelihood ratios are
// representable, and beyond it they underflow, so that a correct mechanism
// would be reported as violating its ε. 100 leaves a wide margin (e^{−100}
// ≈ 3.7e-44) and is far past any privacy: RR(100) flips one label in 10^43.
const MaxEpsilon = 100

// New validates p and returns the mechanism. Errors wrap ErrInvalidParam
// (as *ParamError) and name the parameter: "kind", "k", "epsilon" or
// "secure".
func New(p Params) (*Mechanism, error) {
	k := p.Kind
	if !k.Valid() {
		return nil, &ParamError{Param: "kind", Msg: fmt.Sprintf("invalid kind %d", uint8(k))}
	}
	if k.NeedsK() {
		if p.K < 1 {
			return nil, &ParamError{Param: "k", Msg: fmt.Sprintf("bag size must be ≥ 1 for %s, got %d", k, p.K)}
		}
	} else if p.K != 0 {
		return nil, &ParamError{Param: "k", Msg: fmt.Sprintf("%s takes no bag size, got %d", k, p.K)}
	}
	if k.NeedsEpsilon() {
		if !(p.Epsilon > 0 && p.Epsilon <= MaxEpsilon) { // also NaN
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("must be in (0, %d] for %s, got %v", MaxEpsilon, k, p.Epsilon)}
		}
	} else if p.Epsilon != 0 {
		return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%s takes no epsilon (its ε is fixed), got %v", k, p.Epsilon)}
	}
	if p.Secure && !k.NeedsEpsilon() {
		return nil, &ParamError{Param: "secure", Msg: fmt.Sprintf("%s adds no noise", k)}
	}
	m := &Mechanism{p: p}
	eps := p.Epsilon
	switch k {
	case RR, RRPrior:
		m.pi = 1 / (1 + math.Exp(eps))
		if t := m.pi * 0x1p64; t >= 0x1p53 {
			m.piWord = uint64(t) // exact: an integer-valued float64 < 2^63
		}
	case LLPLap:
		// Noise on the integer sum has scale 1/ε whatever the bag size;
		// SecureLaplace is exact when every sum lies on its grid, which
		// needs a spacing ≤ 1 (true for every ε ≥ 2^-40, far below the
		// accepted range).
		if g := LaplaceGranularity(1 / eps); p.Secure && g > 1 {
			return nil, &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is too small for the grid Laplace sampler (spacing %v > 1)", eps, g)}
		}
	case LLPGeom:
		m.overshoot = 1 / math.Expm1(eps)
	}
	return m, nil
}

// Params returns the parameters the mechanism was built from.
func (m *Mechanism) Params() Params { return m.p }

// Kind returns the mechanism kind.
func (m *Mechanism) Kind() Kind { return m.p.Kind }

// K returns the bag size (0 outside the LLP family).
func (m *Mechanism) K() int { return m.p.K }

// String formats the mechanism, e.g. "llp_geom(k=64, ε=1)".
func (m *Mechanism) String() string {
	switch {
	case m.p.Kind.NeedsK() && m.p.Kind.NeedsEpsilon():
		return fmt.Sprintf("%s(k=%d, ε=%g)", m.p.Kind, m.p.K, m.p.Epsilon)
	case m.p.Kind.NeedsK():
		return fmt.Sprintf("%s(k=%d)", m.p.Kind, m.p.K)
	case m.p.Kind.NeedsEpsilon():
		return fmt.Sprintf("%s(ε=%g)", m.p.Kind, m.p.Epsilon)
	}
	return m.p.Kind.String()
}

// Epsilon returns the label-DP ε of one release (Definition 2.1):
// math.Inf(1) for none and llp (not DP), 0 for bot, Params.Epsilon otherwise.
func (m *Mechanism) Epsilon() float64 {
	switch m.p.Kind {
	case None, LLP:
		return math.Inf(1)
	case Bot:
		return 0
	}
	return m.p.Epsilon
}

// FlipProb returns RR's flip probability π = 1/(1+e^ε) ∈ (0, 1/2) (Section
// 2), also rr_prior's on its RR branch; 0 for every other kind (no
// per-label flipping).
func (m *Mechanism) FlipProb() float64 { return m.pi }

// ReleaseRR writes the released per-example labels into dst: for rr each
// label flipped independently with probability π, for none a copy. Labels
// must be 0 or 1 and len(dst) == len(labels); dst may alias labels. It
// consumes one word of r per label (rarely more when π < 2^-11, i.e.
// ε > 7.62). Panics for other kinds.
func (m *Mechanism) ReleaseRR(dst, labels []uint8, r Rand) {
	if len(dst) != len(labels) {
		panic(fmt.Sprintf("pets: ReleaseRR: len(dst)=%d != len(labels)=%d", len(dst), len(labels)))
	}
	switch m.p.Kind {
	case None:
		for i, y := range labels {
			if y > 1 {
				panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
			}
		}
		copy(dst, labels)
	case RR:
		m.flipAll(dst, labels, r)
	default:
		panic("pets: ReleaseRR on " + m.p.Kind.String())
	}
}

// flipAll is RR(ε) on every label (rr, and rr_prior's RR branch).
func (m *Mechanism) flipAll(dst, labels []uint8, r Rand) {
	// A label flips iff uniform(r) < π. When T = π·2^64 ≥ 2^53 this is
	// exactly "first word < T": T is then a multiple of the truncation
	// step of every word ≥ T, so truncating the word to 53 significant
	// bits (as uniform does) cannot cross T. Otherwise (π < 2^-11) a
	// first word ≥ 2^53 already gives uniform ≥ 2^-11 > π.
	pi, t := m.pi, m.piWord
	for i, y := range labels {
		if y > 1 {
			panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
		}
		x := r.Uint64()
		if t != 0 {
			if x < t {
				y ^= 1
			}
		} else if x < 1<<53 && uniformFrom(x, r) < pi {
			y ^= 1
		}
		dst[i] = y
	}
}

// PriorBranch is rr_prior's rule for one row whose public prior is
// p = P(y = 1 | x) ∈ [0, 1] (RRWithPrior of Ghazi et al. 2021 with two
// classes): it compares the prior's top-1 mass max(p, 1−p) with the top-2
// mass 1 times RR's keep probability q = e^ε/(1+e^ε) = 1 − π. If
// max(p, 1−p) ≥ q (computed as min(p, 1−p) ≤ π, exact near 0 and 1) the
// row takes the argmax branch: argmax is true and label the prior's argmax
// (1 iff p > ½), released whatever the true label. Otherwise it takes the
// RR branch (argmax false, label 0): RR(ε) of the true label. The branch
// depends on p only, so a prior that does not depend on the row's own
// label keeps the release ε-label-DP: the likelihood ratio is 1 on the
// argmax branch and e^{±ε} on the RR branch. p = ½ (no information)
// always takes the RR branch, so rr_prior with a uniform prior is rr.
// Panics for other kinds or a p outside [0, 1] (NaN included).
func (m *Mechanism) PriorBranch(p float64) (label uint8, argmax bool) {
	if m.p.Kind != RRPrior {
		panic("pets: PriorBranch on " + m.p.Kind.String())
	}
	if !(p >= 0 && p <= 1) {
		panic(fmt.Sprintf("pets: prior %v is not in [0, 1]", p))
	}
	if min(p, 1-p) > m.pi {
		return 0, false
	}
	if p > 0.5 {
		return 1, true
	}
	return 0, true
}

// ReleaseRRPrior writes rr_prior's released labels into dst and each row's
// branch into argmax (true: the prior's argmax label was released, see
// PriorBranch): prior[i] is row i's public prior P(y = 1 | x_i), which must
// not depend on labels[i]. Labels must be 0 or 1; dst, labels, prior and
// argmax have equal lengths (dst may alias labels). RR-branch rows consume
// the words of r that ReleaseRR would consume for them, in row order;
// argmax rows consume none. Panics for other kinds, bad labels or priors.
func (m *Mechanism) ReleaseRRPrior(dst, labels []uint8, prior []float64, argmax []bool, r Rand) {
	if len(dst) != len(labels) || len(prior) != len(labels) || len(argmax) != len(labels) {
		panic(fmt.Sprintf("pets: ReleaseRRPrior: lengths dst=%d labels=%d prior=%d argmax=%d differ",
			len(dst), len(labels), len(prior), len(argmax)))
	}
	var one [1]uint8
	for i, y := range labels {
		if y > 1 {
			panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
		}
		lab, am := m.PriorBranch(prior[i])
		argmax[i] = am
		if am {
			dst[i] = lab
			continue
		}
		one[0] = y
		m.flipAll(one[:], one[:], r)
		dst[i] = one[0]
	}
}

// ReleaseBag releases one bag of n ≥ 1 rows whose labels sum to sum
// (0 ≤ sum ≤ n) and returns the released proportion α:
//   - llp: the exact mean sum/n.
//   - llp_lap: sum/n + Lap(1/(nε)), unclipped (so E[α] = sum/n). With
//     Secure, (sum + g·Z)/n where g·Z = SecureLaplace noise of scale 1/ε in
//     units of the sum (same law up to the 2^-40 grid).
//   - llp_geom: clip(sum + Z, 0, n)/n, Z two-sided geometric with
//     a = e^{−ε} (integer, in units of the sum); α ∈ {0, 1/n, …, 1}.
//
// n is the bag's actual size (a kept remainder bag may be smaller than k);
// the noise is calibrated to n, so each bag is ε-label-DP. Panics for
// kinds outside the LLP family or invalid sum, n.
func (m *Mechanism) ReleaseBag(sum, n int, r Rand) float64 {
	if n < 1 || sum < 0 || sum > n {
		panic(fmt.Sprintf("pets: ReleaseBag: need 0 ≤ sum ≤ n, n ≥ 1; got sum=%d n=%d", sum, n))
	}
	fn := float64(n)
	switch m.p.Kind {
	case LLP:
		return float64(sum) / fn
	case LLPLap:
		if m.p.Secure {
			return (float64(sum) + SecureLaplace(r, 1/m.p.Epsilon)) / fn
		}
		return float64(sum)/fn + Laplace(r, 1/(fn*m.p.Epsilon))
	case LLPGeom:
		return float64(m.geomRelease(sum, n, r)) / fn
	}
	panic("pets: ReleaseBag on " + m.p.Kind.String())
}

// geomRelease returns the clipped noisy sum clip(sum+Z, 0, n) (no overflow:
// Z is compared with the distances to the clip points).
func (m *Mechanism) geomRelease(sum, n int, r Rand) int {
	z := TwoSidedGeometric(r, m.p.Epsilon)
	switch {
	case z >= int64(n-sum):
		return n
	case z <= -int64(sum):
		return 0
	}
	return sum + int(z)
}

// Debias maps a released proportion of a bag of size n to the training
// target of Appendix C. For llp_geom it is E[α_noise | α_clip], which is an
// unbiased estimate of the true proportion (E over the noise = sum/n): with
// c = α·n the clipped sum and a = e^{−ε}, memorylessness of the geometric
// tails gives, in units of the sum,
//
//	E[sum+Z | c] = c                       for 0 < c < n,
//	E[sum+Z | c] = −a/(1−a) = −1/(e^ε−1)   for c = 0,
//	E[sum+Z | c] = n + 1/(e^ε−1)           for c = n,
//
// independent of the true sum; Debias returns that divided by n. The
// paper's formula (Appendix C, "Training with LLP+Geom") gives −1/(e^ε−1)
// and 1 + 1/(e^ε−1) in units of the proportion: it omits the 1/k, since the
// noise Z/k lives on the grid of step 1/k. The two agree only at k = 1.
// For every other kind (llp: exact; llp_lap: already unbiased; none, rr)
// Debias is the identity.
func (m *Mechanism) Debias(alpha float64, n int) float64 {
	if m.p.Kind != LLPGeom {
		return alpha
	}
	fn := float64(n)
	c := math.Round(alpha * fn)
	switch {
	case c <= 0:
		return -m.overshoot / fn
	case c >= fn:
		return 1 + m.overshoot/fn
	}
	return alpha
}
