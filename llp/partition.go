package llp

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// ErrInvalid is wrapped by every argument error of this package.
var ErrInvalid = errors.New("llp: invalid argument")

// Bags is a partition of rows 0..N−1 into bags. Fields are read-only.
type Bags struct {
	N       int // rows partitioned
	K       int // nominal bag size
	NumBags int // bags, including a kept smaller remainder bag
	// Dropped is the number of rows in no bag: N mod K when the remainder is
	// dropped, 0 when it is kept.
	Dropped int
	// Order is the seeded permutation of 0..N−1. Bag b holds
	// Order[b·K : min((b+1)·K, N−Dropped)] (random and sorted bags) or
	// Order[Start(b) : Start(b)+Size(b)] (bags within key groups, whose sizes
	// vary); the last Dropped entries are the dropped rows.
	Order []int32
	// BagOf maps each row to its bag id in [0, NumBags), or −1 if dropped.
	BagOf []int32

	// starts[b] is where bag b begins in Order (len NumBags+1, the last
	// entry N−Dropped); nil when every bag but the last has K rows.
	starts []int32
}

// Partition splits n rows into bags of k using a uniform random permutation
// drawn from r (a *rand.Rand or any rand.Source; the same seed gives the
// same bags). With keepRemainder false the n mod k leftover rows are
// dropped and counted in Dropped; with true they form one last bag of
// n mod k rows. Errors (wrapping ErrInvalid): n < 1, k < 1, n > 2^31−1,
// nil r, or n < k with the remainder dropped (no bag at all).
func Partition(n, k int, r rand.Source, keepRemainder bool) (*Bags, error) {
	if err := checkArgs(n, k, r, keepRemainder); err != nil {
		return nil, err
	}
	return cut(n, k, permutation(n, r), keepRemainder), nil
}

// uintn returns a uniform integer in [0, n), n ≥ 1, by Lemire's multiply
// and reject method (unbiased; usually one word of r).
func uintn(r rand.Source, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Kept returns the number of rows in bags, N − Dropped.
func (b *Bags) Kept() int { return b.N - b.Dropped }

// Members returns the rows of bag i (a subslice of Order; do not modify).
func (b *Bags) Members(i int) []int32 {
	lo, hi := b.bounds(i)
	return b.Order[lo:hi]
}

// Size returns the number of rows of bag i: K, except a kept remainder bag
// (one per key group for bags within key groups).
func (b *Bags) Size(i int) int {
	lo, hi := b.bounds(i)
	return hi - lo
}

func (b *Bags) bounds(i int) (lo, hi int) {
	if i < 0 || i >= b.NumBags {
		panic(fmt.Sprintf("llp: bag %d out of range [0, %d)", i, b.NumBags))
	}
	if b.starts != nil {
		return int(b.starts[i]), int(b.starts[i+1])
	}
	lo = i * b.K
	return lo, min(lo+b.K, b.Kept())
}

// Sums returns, per bag, the number of positive labels (labels are 0/1,
// indexed by row, len N), reusing dst if it has capacity.
func (b *Bags) Sums(labels []uint8, dst []int) []int {
	if len(labels) != b.N {
		panic(fmt.Sprintf("llp: Sums: %d labels for %d rows", len(labels), b.N))
	}
	if cap(dst) < b.NumBags {
		dst = make([]int, b.NumBags)
	}
	dst = dst[:b.NumBags]
	clear(dst)
	for row, bag := range b.BagOf { // sequential read; bag counters stay in cache
		if bag >= 0 {
			dst[bag] += int(labels[row])
		}
	}
	return dst
}

// Singletons returns the n rows each in a bag of its own, in row order: the
// bags of a release of one value per row through a bag law (pets'
// ReleaseCounts). n must be ≥ 1.
func Singletons(n int) *Bags {
	if n < 1 || n > 1<<31-1 {
		panic(fmt.Sprintf("llp: Singletons(%d)", n))
	}
	b := &Bags{N: n, K: 1, NumBags: n, Order: make([]int32, n), BagOf: make([]int32, n)}
	for i := range b.Order {
		b.Order[i], b.BagOf[i] = int32(i), int32(i)
	}
	return b
}
