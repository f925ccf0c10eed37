package llp

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// RuleKind is how rows are grouped into bags.
type RuleKind uint8

const (
	// RuleRandom: a uniform random partition (Partition; the paper's bags).
	RuleRandom RuleKind = iota
	// RuleSorted: rows sorted by one dense feature and cut into consecutive
	// bags of k (bags of similar rows, as in LLP-Bench's feature-bagged
	// datasets).
	RuleSorted
	// RuleKey: bags of k within the groups of an integer key column (an
	// aggregate report per campaign, Chen et al. 2023).
	RuleKey
)

// Rule is a parsed bag rule: random, sorted:<feature> or key:<column>.
// The zero value is random.
type Rule struct {
	Kind   RuleKind
	Column string // the feature (sorted) or key column (key); "" for random
}

// ParseRule parses "random" (or ""), "sorted:<feature>" or
// "key:<column>"; the column name is kept as written (surrounding space
// trimmed). Errors wrap ErrInvalid and name the bad value.
func ParseRule(s string) (Rule, error) {
	t := strings.TrimSpace(s)
	if t == "" || t == "random" {
		return Rule{}, nil
	}
	kind, col, ok := strings.Cut(t, ":")
	col = strings.TrimSpace(col)
	var r Rule
	switch {
	case !ok:
	case kind == "sorted":
		r = Rule{Kind: RuleSorted, Column: col}
	case kind == "key":
		r = Rule{Kind: RuleKey, Column: col}
	default:
		ok = false
	}
	if !ok || col == "" || strings.ContainsAny(col, "/\\\x00") {
		return Rule{}, fmt.Errorf("%w: bag rule %q (want random, sorted:<feature> or key:<column>)", ErrInvalid, s)
	}
	return r, nil
}

// String is the rule as ParseRule reads it: "random", "sorted:x3",
// "key:campaign".
func (r Rule) String() string {
	switch r.Kind {
	case RuleSorted:
		return "sorted:" + r.Column
	case RuleKey:
		return "key:" + r.Column
	}
	return "random"
}

// IDSuffix is the rule's part of a setting id: "" for random (ids of the
// paper's settings are unchanged), "sorted-x3", "key-campaign".
func (r Rule) IDSuffix() string {
	if r.Kind == RuleRandom {
		return ""
	}
	return strings.Replace(r.String(), ":", "-", 1)
}

// MarshalText implements encoding.TextMarshaler.
func (r Rule) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler via ParseRule.
func (r *Rule) UnmarshalText(b []byte) error {
	v, err := ParseRule(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Partitioner forms bags of rows 0..n−1: the same rule for a release and
// for the audit of its mechanism.
type Partitioner interface {
	// Partition splits n rows into bags of k, drawing every random choice
	// from r (the same source gives the same bags). keepRemainder keeps
	// leftover rows as smaller bags instead of dropping them.
	Partition(n, k int, r rand.Source, keepRemainder bool) (*Bags, error)
	// Rule is the bag rule the partitioner implements.
	Rule() Rule
}

// Random is the paper's uniform random partition (Partition).
type Random struct{}

// Partition calls Partition.
func (Random) Partition(n, k int, r rand.Source, keep bool) (*Bags, error) {
	return Partition(n, k, r, keep)
}

// Rule returns the random rule.
func (Random) Rule() Rule { return Rule{} }

// Sorted bags rows by the order of one dense feature: rows are put in a
// seeded random order (ties stay in it), sorted stably by Values
// ascending and cut into consecutive bags of k. The n mod k leftover rows
// are the last of that order (the largest values): dropped, or kept as one
// smaller last bag.
type Sorted struct {
	Feature string    // the feature's name
	Values  []float32 // its value on each row (len n; finite)
}

// Rule returns sorted:<Feature>.
func (s Sorted) Rule() Rule { return Rule{Kind: RuleSorted, Column: s.Feature} }

// Partition implements Partitioner.
func (s Sorted) Partition(n, k int, r rand.Source, keep bool) (*Bags, error) {
	if err := checkArgs(n, k, r, keep); err != nil {
		return nil, err
	}
	if len(s.Values) != n {
		return nil, fmt.Errorf("%w: sorted:%s: %d values for %d rows", ErrInvalid, s.Feature, len(s.Values), n)
	}
	for i, v := range s.Values {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("%w: sorted:%s: row %d has value %v (must be finite)", ErrInvalid, s.Feature, i, v)
		}
	}
	order := permutation(n, r)
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(s.Values[a], s.Values[b]) })
	return cut(n, k, order, keep), nil
}

// Keyed bags rows within the groups of an integer key: rows are put in a
// seeded random order, grouped by key (ascending; the random order kept
// within a group) and each group is cut into bags of k, so no bag mixes
// keys. A group's size mod k leftover rows are dropped, or kept as one
// smaller bag of that group; a group smaller than k yields no full bag.
// Bags come in key order.
type Keyed struct {
	Column string  // the key column's name
	Keys   []int64 // its value on each row (len n)
}

// Rule returns key:<Column>.
func (s Keyed) Rule() Rule { return Rule{Kind: RuleKey, Column: s.Column} }

// Partition implements Partitioner. It fails (ErrInvalid) when no group
// fills a bag and leftovers are dropped.
func (s Keyed) Partition(n, k int, r rand.Source, keep bool) (*Bags, error) {
	if n < 1 || k < 1 || n > math.MaxInt32 || r == nil {
		return nil, checkArgs(n, k, r, true)
	}
	if len(s.Keys) != n {
		return nil, fmt.Errorf("%w: key:%s: %d keys for %d rows", ErrInvalid, s.Column, len(s.Keys), n)
	}
	order := permutation(n, r)
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(s.Keys[a], s.Keys[b]) })
	b := &Bags{N: n, K: k, BagOf: make([]int32, n), starts: []int32{0}}
	kept := make([]int32, 0, n)
	var dropped []int32
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && s.Keys[order[hi]] == s.Keys[order[lo]] {
			hi++
		}
		full := lo + (hi-lo)/k*k
		for at := lo; at < full; at += k {
			kept = append(kept, order[at:at+k]...)
			b.starts = append(b.starts, int32(len(kept)))
		}
		if full < hi {
			if keep {
				kept = append(kept, order[full:hi]...)
				b.starts = append(b.starts, int32(len(kept)))
			} else {
				dropped = append(dropped, order[full:hi]...)
			}
		}
		lo = hi
	}
	b.NumBags = len(b.starts) - 1
	if b.NumBags == 0 {
		return nil, fmt.Errorf("%w: key:%s: no key group has k = %d rows (the largest has fewer) and leftovers are dropped: no bag",
			ErrInvalid, s.Column, k)
	}
	b.Dropped = len(dropped)
	b.Order = append(kept, dropped...)
	for bag := range b.NumBags {
		for _, row := range b.Order[b.starts[bag]:b.starts[bag+1]] {
			b.BagOf[row] = int32(bag)
		}
	}
	for _, row := range dropped {
		b.BagOf[row] = -1
	}
	return b, nil
}

// checkArgs validates Partition's common arguments (see Partition).
func checkArgs(n, k int, r rand.Source, keep bool) error {
	switch {
	case n < 1:
		return fmt.Errorf("%w: n (rows) must be ≥ 1, got %d", ErrInvalid, n)
	case k < 1:
		return fmt.Errorf("%w: k (bag size) must be ≥ 1, got %d", ErrInvalid, k)
	case n > math.MaxInt32:
		return fmt.Errorf("%w: n (rows) must be ≤ %d, got %d", ErrInvalid, math.MaxInt32, n)
	case r == nil:
		return fmt.Errorf("%w: nil random source", ErrInvalid)
	case n < k && !keep:
		return fmt.Errorf("%w: n = %d rows < k = %d with the remainder dropped: no bag", ErrInvalid, n, k)
	}
	return nil
}

// permutation is Partition's seeded Fisher–Yates permutation of 0..n−1.
func permutation(n int, r rand.Source) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	for i := n - 1; i > 0; i-- {
		j := uintn(r, uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	return order
}

// cut makes bags of k from consecutive entries of order (Partition's
// layout): the n mod k last entries are dropped or form a last bag.
func cut(n, k int, order []int32, keep bool) *Bags {
	b := &Bags{N: n, K: k, Order: order, BagOf: make([]int32, n)}
	b.NumBags = n / k
	if rem := n % k; rem != 0 {
		if keep {
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
	return b
}
