package llp

import (
	"errors"
	"slices"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   Rule
		str    string
		suffix string
	}{
		{"", Rule{}, "random", ""},
		{"random", Rule{}, "random", ""},
		{" sorted:x3 ", Rule{RuleSorted, "x3"}, "sorted:x3", "sorted-x3"},
		{"sorted: m_bb", Rule{RuleSorted, "m_bb"}, "sorted:m_bb", "sorted-m_bb"},
		{"key:campaign", Rule{RuleKey, "campaign"}, "key:campaign", "key-campaign"},
	} {
		r, err := ParseRule(tc.in)
		if err != nil || r != tc.want || r.String() != tc.str || r.IDSuffix() != tc.suffix {
			t.Errorf("ParseRule(%q) = %+v (%q, %q), %v; want %+v (%q, %q)", tc.in, r, r.String(), r.IDSuffix(), err, tc.want, tc.str, tc.suffix)
		}
		var u Rule
		if err := u.UnmarshalText([]byte(r.String())); err != nil || u != r {
			t.Errorf("round trip of %q: %+v, %v", r, u, err)
		}
	}
	for _, bad := range []string{"sorted", "sorted:", "key: ", "bykey:x", "Random", "sorted:a/b", "feature:x1"} {
		if _, err := ParseRule(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseRule(%q): error %v, want ErrInvalid", bad, err)
		}
	}
}

// checkLayout asserts the invariants of any partition: every row is in
// exactly one bag or dropped, BagOf agrees with Members, and Kept + Dropped
// = N.
func checkLayout(t *testing.T, b *Bags) {
	t.Helper()
	seen := make([]int, b.N)
	total := 0
	for i := range b.NumBags {
		mem := b.Members(i)
		if len(mem) != b.Size(i) || b.Size(i) < 1 || b.Size(i) > b.K {
			t.Fatalf("bag %d: %d members, size %d, k %d", i, len(mem), b.Size(i), b.K)
		}
		for _, row := range mem {
			seen[row]++
			if b.BagOf[row] != int32(i) {
				t.Fatalf("row %d in bag %d, BagOf %d", row, i, b.BagOf[row])
			}
		}
		total += len(mem)
	}
	for _, row := range b.Order[b.Kept():] {
		seen[row]++
		if b.BagOf[row] != -1 {
			t.Fatalf("dropped row %d has BagOf %d", row, b.BagOf[row])
		}
	}
	if total != b.Kept() || total+b.Dropped != b.N {
		t.Fatalf("kept %d + dropped %d != %d", total, b.Dropped, b.N)
	}
	for row, c := range seen {
		if c != 1 {
			t.Fatalf("row %d appears %d times", row, c)
		}
	}
}

// TestSortedBags: bags are consecutive runs of the sorted feature (every
// value of bag b ≤ every value of bag b+1), the remainder is the largest
// values, ties are broken by the seeded order (constant values give exactly
// Partition's random bags for the same source), and a non-finite value is
// refused naming its row.
func TestSortedBags(t *testing.T) {
	const n, k = 1003, 8
	r := seeded(4)
	vals := make([]float32, n)
	for i := range vals {
		vals[i] = float32(r.IntN(50)) // many ties
	}
	for _, keep := range []bool{false, true} {
		b, err := Sorted{Feature: "x", Values: vals}.Partition(n, k, seeded(9), keep)
		if err != nil {
			t.Fatal(err)
		}
		checkLayout(t, b)
		wantBags, wantDrop := n/k, n%k
		if keep {
			wantBags, wantDrop = n/k+1, 0
		}
		if b.NumBags != wantBags || b.Dropped != wantDrop {
			t.Fatalf("keep=%v: %d bags, %d dropped; want %d, %d", keep, b.NumBags, b.Dropped, wantBags, wantDrop)
		}
		for i := 0; i+1 < b.NumBags; i++ {
			hi := slices.Max(valuesOf(vals, b.Members(i)))
			lo := slices.Min(valuesOf(vals, b.Members(i+1)))
			if hi > lo {
				t.Fatalf("bag %d reaches %v, bag %d starts at %v: not sorted", i, hi, i+1, lo)
			}
		}
		if !keep {
			minDropped := slices.Min(valuesOf(vals, b.Order[b.Kept():]))
			if last := slices.Max(valuesOf(vals, b.Members(b.NumBags-1))); last > minDropped {
				t.Fatalf("dropped rows (from %v) are not the largest values (bag up to %v)", minDropped, last)
			}
		}
	}
	// Ties follow the seeded order: constant values give Partition's bags.
	flat := make([]float32, n)
	a, _ := Sorted{Feature: "x", Values: flat}.Partition(n, k, seeded(3), false)
	p, _ := Partition(n, k, seeded(3), false)
	if !slices.Equal(a.Order, p.Order) {
		t.Fatal("a constant feature does not give the seeded random order")
	}
	c, _ := Sorted{Feature: "x", Values: flat}.Partition(n, k, seeded(4), false)
	if slices.Equal(a.Order, c.Order) {
		t.Fatal("ties do not depend on the seed")
	}
	bad := slices.Clone(vals)
	bad[17] = float32(nan())
	if _, err := (Sorted{Feature: "x", Values: bad}).Partition(n, k, seeded(1), false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("NaN value: %v", err)
	}
	if _, err := (Sorted{Feature: "x", Values: vals[:5]}).Partition(n, k, seeded(1), false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("short values: %v", err)
	}
}

func nan() float64 { var z float64; return z / z }

func valuesOf[T any](vals []T, rows []int32) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = vals[r]
	}
	return out
}

// TestKeyedBags: no bag mixes keys; each group of size m gives ⌊m/k⌋ bags of
// k and its m mod k leftovers are dropped (counted) or kept as one smaller
// bag of that group; bags come in key order; one key gives exactly
// Partition's bags; no group of k rows with leftovers dropped is an error.
func TestKeyedBags(t *testing.T) {
	const k = 4
	// Group sizes: key 7 → 9 rows, key −2 → 4, key 3 → 3, key 40 → 10.
	sizes := map[int64]int{7: 9, -2: 4, 3: 3, 40: 10}
	var keys []int64
	for key, m := range sizes {
		for range m {
			keys = append(keys, key)
		}
	}
	r := seeded(2)
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	n := len(keys)
	for _, keep := range []bool{false, true} {
		b, err := Keyed{Column: "g", Keys: keys}.Partition(n, k, seeded(5), keep)
		if err != nil {
			t.Fatal(err)
		}
		checkLayout(t, b)
		perKey := map[int64][]int{} // bag sizes per key
		prev := int64(-1 << 62)
		for i := range b.NumBags {
			mem := b.Members(i)
			key := keys[mem[0]]
			for _, row := range mem {
				if keys[row] != key {
					t.Fatalf("bag %d mixes keys %d and %d", i, key, keys[row])
				}
			}
			if key < prev {
				t.Fatalf("bag %d (key %d) after key %d: not in key order", i, key, prev)
			}
			prev = key
			perKey[key] = append(perKey[key], len(mem))
		}
		dropped := 0
		for key, m := range sizes {
			want := slices.Repeat([]int{k}, m/k)
			if rem := m % k; rem > 0 {
				if keep {
					want = append(want, rem)
				} else {
					dropped += rem
				}
			}
			if !slices.Equal(perKey[key], want) && !(len(want) == 0 && perKey[key] == nil) {
				t.Errorf("keep=%v key %d (%d rows): bag sizes %v, want %v", keep, key, m, perKey[key], want)
			}
		}
		if b.Dropped != dropped {
			t.Errorf("keep=%v: dropped %d, want %d", keep, b.Dropped, dropped)
		}
	}
	// One key: exactly the random partition of the same source.
	one := make([]int64, 1001)
	for _, keep := range []bool{false, true} {
		a, _ := Keyed{Column: "g", Keys: one}.Partition(1001, 8, seeded(6), keep)
		p, _ := Partition(1001, 8, seeded(6), keep)
		if !slices.Equal(a.Order, p.Order) || !slices.Equal(a.BagOf, p.BagOf) || a.NumBags != p.NumBags || a.Dropped != p.Dropped {
			t.Fatalf("keep=%v: a single key group is not Partition's bags", keep)
		}
	}
	small := []int64{1, 2, 3, 1, 2, 3}
	if _, err := (Keyed{Column: "g", Keys: small}).Partition(6, 3, seeded(1), false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("no full group: %v", err)
	}
	if b, err := (Keyed{Column: "g", Keys: small}).Partition(6, 3, seeded(1), true); err != nil || b.NumBags != 3 {
		t.Fatalf("no full group, kept: %v bags, %v", b, err)
	}
}
