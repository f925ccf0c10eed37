package ara

import (
	"math"
	"math/big"
)

// FlipProbability is p = k/(k + e^ε − 1): the probability that the browser
// replaces a source's true output by one drawn uniformly from all k ≥ 1
// states (k-ary randomized response, ε-DP over the states; the draw may
// give the true output back, so the output changes with probability
// p·(k−1)/k). It is computed as 1/(1 + e^(ln(e^ε − 1) − ln k)), which
// neither overflows nor loses digits at any k and finite ε > 0. NaN for
// k < 1 or ε not finite and > 0.
func FlipProbability(k *big.Int, epsilon float64) float64 {
	if !validChannel(k, epsilon) {
		return math.NaN()
	}
	return 1 / (1 + math.Exp(lnExpm1(epsilon)-lnBig(k)))
}

// InformationGain is the information gain in bits of a source whose k
// output states go through k-ary randomized response at ε: the capacity of
// the k-ary symmetric channel that keeps its input with probability 1 − q
// and otherwise gives one of the k − 1 others uniformly, q = p·(k−1)/k —
// flexible_event_privacy.py's max_information_gain,
// log2 k − h(q) − q·log2(k−1) with h the binary entropy. With
// q = (k−1)/(k + e^ε − 1) that is, in nats,
//
//	C = ε·(1 − q) − ln(1 + (e^ε − 1)/k),  1 − q = 1/(1 + (k−1)·e^−ε),
//
// computed here from ln k, ln(k−1) and ln(e^ε − 1), rearranged where
// e^ε − 1 > k so that no term of size ε cancels. That keeps it within a
// few ulps at any k and ε (0 at k = 1, as the spec says; → log2 k as
// ε → ∞; ≈ ε²(k−1)/(2k²·ln 2) as ε → 0, where the two terms cancel and
// the relative error grows like 4e-15/ε), where the repository's
// expression, a difference of terms of size log2 k, loses up to 5 digits
// at k = 2^32 (tests: against 60-digit values). The result is clamped to
// [0, log2 k]. NaN for k < 1 or ε not finite and > 0.
func InformationGain(k *big.Int, epsilon float64) float64 {
	if !validChannel(k, epsilon) {
		return math.NaN()
	}
	if k.Cmp(big.NewInt(1)) == 0 {
		return 0
	}
	lnK := lnBig(k)
	lnK1 := lnBig(new(big.Int).Sub(k, big.NewInt(1)))
	var nats float64
	if x := lnExpm1(epsilon) - lnK; x > 0 {
		// e^ε − 1 > k (so ε > ln 3 > 1 and ln(e^ε − 1) = ε + ln(1 − e^−ε)):
		// ln k − ε·q − ln(1 − e^−ε) − ln(1 + e^−x), each term but ln k small,
		// so that nothing of size ε cancels.
		q := 1 / (1 + math.Exp(epsilon-lnK1))
		nats = lnK - epsilon*q - math.Log1p(-math.Exp(-epsilon)) - math.Log1p(math.Exp(-x))
	} else {
		keep := 1 / (1 + math.Exp(lnK1-epsilon)) // 1 − q
		nats = epsilon*keep - math.Log1p(math.Exp(x))
	}
	return min(max(nats/math.Ln2, 0), lnK/math.Ln2)
}

func validChannel(k *big.Int, epsilon float64) bool {
	return k != nil && k.Sign() > 0 && epsilon > 0 && !math.IsInf(epsilon, 1)
}

// lnExpm1 is ln(e^x − 1) for x > 0, without overflow for large x.
func lnExpm1(x float64) float64 {
	if x > 1 {
		return x + math.Log1p(-math.Exp(-x))
	}
	return math.Log(math.Expm1(x))
}

// lnBig is ln k for k ≥ 0 (−Inf at 0), to float64 precision at any size:
// the top 64 bits of k as a float64, plus the bits shifted out times ln 2.
func lnBig(k *big.Int) float64 {
	if k.Sign() == 0 {
		return math.Inf(-1)
	}
	if k.IsUint64() {
		return math.Log(float64(k.Uint64()))
	}
	shift := uint(k.BitLen() - 64)
	top := new(big.Int).Rsh(k, shift).Uint64()
	return math.Log(float64(top)) + float64(shift)*math.Ln2
}
