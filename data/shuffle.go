package data

import (
	"math/bits"
	"math/rand/v2"
)

// shuffleUnits permutes order exactly as
//
//	rand.New(p).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
//
// does (math/rand/v2's Fisher–Yates shuffle, each j drawn by
// Rand.Uint64N), faster: the swap is inlined instead of called through a
// closure, the draws come straight from the PCG instead of through the
// Source interface, and each block of draws is computed before its swaps,
// so that their random loads overlap (a 10M-row order is 40 MB: nearly
// every swap misses the cache). TestShuffleUnitsMatchesRand pins the
// equality. On a 32-bit platform, where math/rand/v2 draws small bounds
// with 32-bit arithmetic, it calls Shuffle itself. It returns a sum of the
// early loads, for the caller to keep so that they are not optimized away.
func shuffleUnits(order []int32, p *rand.PCG) int32 {
	if bits.UintSize != 64 {
		rand.New(p).Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		return 0
	}
	const block = 16
	var js [block]uint64
	var touch int32
	i := len(order) - 1
	for ; i >= block; i -= block {
		for k := range block {
			js[k] = uint64n(p, uint64(i-k+1))
		}
		for _, j := range js { // loads only: the swaps below find their lines in cache
			touch += order[j]
		}
		for k, j := range js {
			order[i-k], order[j] = order[j], order[i-k]
		}
	}
	for ; i > 0; i-- {
		j := uint64n(p, uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	return touch
}

// uint64n is math/rand/v2's Rand.Uint64N(n) on a 64-bit platform: a
// uniform value in [0, n) by Lemire's multiply-and-reject method.
func uint64n(p *rand.PCG, n uint64) uint64 {
	if n&(n-1) == 0 { // a power of two: mask
		return p.Uint64() & (n - 1)
	}
	hi, lo := bits.Mul64(p.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(p.Uint64(), n)
		}
	}
	return hi
}
