package pets

import (
	crand "crypto/rand"
	"encoding/binary"
	"math"
	"math/bits"
)

// Rand is the noise source of every sampler: 64 uniformly random bits per
// call. *math/rand/v2.Rand, rand.PCG, rand.ChaCha8 and *SecureRand satisfy
// it. Samplers consume a deterministic number of words for a given
// sequence of words, so a seeded source gives reproducible releases.
type Rand interface {
	Uint64() uint64
}

// SecureRand is a Rand backed by crypto/rand (the operating system CSPRNG),
// buffered 512 bytes at a time. It also implements math/rand/v2.Source, so
// rand.New(NewSecureRand()) works. Not safe for concurrent use: give each
// goroutine its own.
type SecureRand struct {
	buf [512]byte
	i   int
}

// NewSecureRand returns a crypto/rand-backed Rand for deployment releases.
func NewSecureRand() *SecureRand { return &SecureRand{i: 512} }

// Uint64 returns 64 bits from crypto/rand.
func (s *SecureRand) Uint64() uint64 {
	if s.i+8 > len(s.buf) {
		// Since Go 1.24 Read never returns an error (it crashes the program
		// if the OS generator fails); the check is defensive.
		if _, err := crand.Read(s.buf[:]); err != nil {
			panic("pets: crypto/rand failed: " + err.Error())
		}
		s.i = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.i:])
	s.i += 8
	return v
}

// uniform returns a full-precision uniform variate in the open interval
// (0, 1): the value is the lower end of a cell of relative width ≤ 2^-52 in
// its binade, and each cell has probability exactly its width. Hence
// P(uniform < p) = p·(1 ± 2^-52) for every p in (2^-1000, 1], including tiny
// p — unlike a 53-bit Float64, whose absolute resolution 2^-53 makes P(U < 1e-14)
// wrong by ~1%. Consumes one word, rarely (probability 2^-12) more.
func uniform(r Rand) float64 { return uniformFrom(r.Uint64(), r) }

// uniformFrom is uniform with its first word x already drawn.
func uniformFrom(x uint64, r Rand) float64 {
	z := bits.LeadingZeros64(x)
	if z <= 11 {
		s := uint(11 - z) // keep the 53 leading significant bits
		return float64(x>>s<<s) * 0x1p-64
	}
	exp := -64
	for x == 0 { // probability 2^-64 per word
		x = r.Uint64()
		exp -= 64
		if exp < -1000 {
			return 0x1p-1000
		}
	}
	z = bits.LeadingZeros64(x)
	if z <= 11 {
		s := uint(11 - z)
		return math.Ldexp(float64(x>>s<<s), exp)
	}
	need := uint(z - 11) // significant bits still missing, from the next word
	m := x<<need | r.Uint64()>>(64-need)
	return math.Ldexp(float64(m), exp-int(need))
}

// uniformIntn returns an exactly uniform integer in [0, n), n ≥ 1, by
// Lemire's multiply-and-reject method: one word, another with probability
// < n/2^64 each time. n = 1 consumes one word (callers skip it).
func uniformIntn(r Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n // 2^64 mod n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Geometric returns G ≥ 0, the number of failures before the first success
// of Bernoulli trials with success probability 1 − e^{−λ}:
// P(G = g) = (1 − e^{−λ})·e^{−λg}, mean 1/(e^λ − 1). λ must be > 0.
//
// Sampling is exact up to floating-point rounding of the branch
// probabilities: it is the binary search of google/differential-privacy
// (go/noise/laplace_noise.go, geometric): the support of the trial count
// X = G+1 is halved at its conditional median, the half being kept with its
// conditional probability q, computed in closed form with expm1. We decide
// the branch by comparing a full-precision uniform with min(q, 1−q) (1−q in
// its own closed form), so even tiny branch probabilities (e.g. e^{−32} for
// ε = 32) are honoured to relative precision ~1e-15. Expected iterations
// ≈ log2(1/λ) + 2. X is truncated at 2^63−1 (probability e^{−λ(2^63−1)},
// zero in float64 for λ ≥ 1e-16).
func Geometric(r Rand, lambda float64) int64 {
	if !(lambda > 0) {
		panic("pets: Geometric needs lambda > 0")
	}
	if t := math.Exp(-lambda * math.MaxInt64); t > 0 && uniform(r) < t {
		return math.MaxInt64 - 1
	}
	left, right := int64(0), int64(math.MaxInt64) // X ∈ (left, right]
	for left+1 < right {
		dl := float64(right - left)
		// Offset of the conditional median of X − left.
		step := math.Floor((math.Ln2 - math.Log1p(math.Exp(-lambda*dl))) / lambda)
		var mid int64
		switch {
		case !(step >= 1): // also NaN
			mid = left + 1
		case step >= float64(right-left):
			mid = right - 1
		default:
			mid = left + int64(step)
			if mid >= right {
				mid = right - 1
			}
		}
		d1, d2 := float64(mid-left), float64(right-mid)
		den := -math.Expm1(-lambda * dl)
		q := -math.Expm1(-lambda*d1) / den // P(X ≤ mid | left < X ≤ right)
		if q <= 0.5 {
			if uniform(r) < q {
				right = mid
			} else {
				left = mid
			}
		} else {
			qc := math.Exp(-lambda*d1) * -math.Expm1(-lambda*d2) / den // 1 − q
			if uniform(r) < qc {
				left = mid
			} else {
				right = mid
			}
		}
	}
	return right - 1
}

// TwoSidedGeometric returns Z with P(Z = z) = (1−a)/(1+a)·a^|z|, a = e^{−λ}:
// the law of G⁺ − G⁻ for independent G± ~ Geometric(λ) (Appendix C,
// "Training with LLP+Geom"). It draws one geometric G and a random sign and
// rejects (G = 0, sign −), the method of google/differential-privacy, which
// gives the same law as G⁺ − G⁻ with ~1 instead of 2 geometric draws
// (acceptance probability (1+a)/2 ≥ 1/2).
func TwoSidedGeometric(r Rand, lambda float64) int64 {
	for {
		g := Geometric(r, lambda)
		neg := r.Uint64()&1 == 1
		if !neg {
			return g
		}
		if g != 0 {
			return -g
		}
	}
}

// Laplace returns a textbook floating-point Laplace(0, scale) variate
// (density e^{−|x|/scale}/(2·scale), variance 2·scale²): a random sign times
// scale·(−ln U), U a full-precision uniform in (0,1) (the inverse CDF of the
// exponential magnitude). Fast and fine for seeded experiments; its
// floating-point outputs are vulnerable to Mironov's (2012) attack, so
// deployment should use SecureLaplace (Params.Secure).
func Laplace(r Rand, scale float64) float64 {
	e := -math.Log(uniform(r)) * scale
	if r.Uint64()&1 == 1 {
		return -e
	}
	return e
}

// granularityParam is 2^40, the resolution of SecureLaplace relative to its
// scale, as granularityParam in google/differential-privacy's Go library.
const granularityParam = 0x1p40

// LaplaceGranularity returns the grid spacing g used by SecureLaplace for
// the given scale: the smallest power of two ≥ scale·2^-40 (ceilPowerOfTwo
// of google/differential-privacy, go/noise/laplace_noise.go), so g/scale ∈
// [2^-40, 2^-39): the grid is ~12 decimal digits finer than the noise.
func LaplaceGranularity(scale float64) float64 {
	x := scale / granularityParam
	frac, exp := math.Frexp(x) // x = frac·2^exp, frac ∈ [0.5, 1)
	if frac == 0.5 {
		return x
	}
	return math.Ldexp(1, exp)
}

// SecureLaplace returns g·Z with g = LaplaceGranularity(scale) and Z a
// TwoSidedGeometric(g/scale) variate: a discrete Laplace on the grid gℤ whose
// pmf ∝ e^{−|gZ|/scale} matches Laplace(scale) at every grid point. Exact
// ε-DP holds for x + SecureLaplace(r, Δ/ε) when x moves on the grid (x and
// its neighbours are multiples of g, e.g. integers when g ≤ 1): the pmf
// ratio of a shift by Δ is exactly e^{ε}, and float64 rounding of x + g·Z
// (and any later division) is post-processing of the exact value, so the
// Mironov attack (which exploits the irregular set of floats produced by
// x + scale·ln(U)) does not apply. Cost ≈ 42 binary-search steps per draw.
func SecureLaplace(r Rand, scale float64) float64 {
	g := LaplaceGranularity(scale)
	return float64(TwoSidedGeometric(r, g/scale)) * g
}
