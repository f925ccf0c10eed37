package llp

import (
	"errors"
	"fmt"
	"math"
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
	// Order[b·K : min((b+1)·K, N−Dropped)]; the last Dropped entries are the
	// dropped rows.
	Order []int32
	// BagOf maps each row to its bag id in [0, NumBags), or −1 if dropped.
	BagOf []int32
}

// Partition splits n rows into bags of k using a uniform random permutation
// drawn from r (a *rand.Rand or any rand.Source; the same seed gives the
// same bags). With keepRemainder false the n mod k leftover rows are
// dropped and counted in Dropped; with true they form one last bag of
// n mod k rows. Errors (wrapping ErrInvalid): n < 1, k < 1, n > 2^31−1,
// nil r, or n < k with the remainder dropped (no bag at all).
func Partition(n, k int, r rand.Source, keepRemainder bool) (*Bags, error) {
	switch {
	case n < 1:
		return nil, fmt.Errorf("%w: n (rows) must be ≥ 1, got %d", ErrInvalid, n)
	case k < 1:
		return nil, fmt.Errorf("%w: k (bag size) must be ≥ 1, got %d", ErrInvalid, k)
	case n > math.MaxInt32:
		return nil, fmt.Errorf("%w: n (rows) must be ≤ %d, got %d", ErrInvalid, math.MaxInt32, n)
	case r == nil:
		return nil, fmt.Errorf("%w: nil random source", ErrInvalid)
	case n < k && !keepRemainder:
		return nil, fmt.Errorf("%w: n = %d rows < k = %d with the remainder dropped: no bag", ErrInvalid, n, k)
	}
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- { // Fisher–Yates
		j := uintn(r, uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	b := &Bags{N: n, K: k, Order: order, BagOf: make([]int32, n)}
	b.NumBags = n / k
	if rem := n % k; rem != 0 {
		if keepRemainder {
			b.NumBags++
		} else {
			b.Dropped = rem
		}
	}
	kept := n - b.Dropped
	for pos, row := range order {
		if pos < kept {
			b.BagOf[row] = int32(pos / k)
		} else {
			b.BagOf[row] = -1
		}
	}
	return b, nil
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

// Size returns the number of rows of bag i: K, except a kept remainder bag.
func (b *Bags) Size(i int) int {
	lo, hi := b.bounds(i)
	return hi - lo
}

func (b *Bags) bounds(i int) (lo, hi int) {
	if i < 0 || i >= b.NumBags {
		panic(fmt.Sprintf("llp: bag %d out of range [0, %d)", i, b.NumBags))
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
