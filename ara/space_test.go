package ara

import (
	"errors"
	"slices"
	"testing"
)

// enumerate lists every state of n cells and at most r reports in the
// numbering Space promises, by brute force: grade by grade (0 reports, 1,
// …), each grade's sorted cell tuples in lexicographic order.
func enumerate(n, r int) [][]int {
	var out [][]int
	for j := 0; j <= r; j++ {
		var walk func(prefix []int, lo int)
		walk = func(prefix []int, lo int) {
			if len(prefix) == j {
				out = append(out, slices.Clone(prefix))
				return
			}
			for a := lo; a < n; a++ {
				walk(append(prefix, a), a)
			}
		}
		walk(nil, 0)
	}
	return out
}

// TestSpaceBruteForce checks the numbering against enumeration on small
// spaces: K is the count of states (and the stars-and-bars k), Decode and
// Index are inverse and follow the graded order, the classes are the
// states of one report or none, class 1 + t·W + w is one report of t in w.
func TestSpaceBruteForce(t *testing.T) {
	cases := []struct {
		name    string
		t, w, r int
	}{
		{"binary conversion", 1, 1, 1},
		{"event default", 2, 1, 1},
		{"two reports", 2, 1, 2},
		{"windows", 2, 3, 2},
		{"three reports", 3, 2, 3},
		{"navigation default", 8, 3, 3},
		{"no report", 3, 2, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSpace(tc.t, tc.w, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			all := enumerate(tc.t*tc.w, tc.r)
			if s.K != uint64(len(all)) || s.Config().States().Uint64() != s.K {
				t.Fatalf("K = %d, enumeration %d, States %v", s.K, len(all), s.Config().States())
			}
			for i, cells := range all {
				if got := s.Decode(nil, uint64(i)); !slices.Equal(got, cells) {
					t.Fatalf("Decode(%d) = %v, want %v", i, got, cells)
				}
				rev := slices.Clone(cells)
				slices.Reverse(rev)
				if got := s.Index(rev); got != uint64(i) {
					t.Fatalf("Index(%v) = %d, want %d", rev, got, i)
				}
				c, ok := s.Class(uint64(i))
				if ok != (len(cells) <= 1) || ok && c != i {
					t.Fatalf("state %d (%v): Class %d, %v", i, cells, c, ok)
				}
			}
			for tv := range tc.t {
				for w := range tc.w {
					if tc.r > 0 && s.Index([]int{s.Cell(tv, w)}) != uint64(1+tv*tc.w+w) {
						t.Errorf("one report of %d in window %d is state %d, not class 1 + t·W + w", tv, w, s.Index([]int{s.Cell(tv, w)}))
					}
				}
			}
		})
	}
}

// TestSpaceLarge numbers a space past 2^32 states (32 values × 5 windows,
// 6 reports: C(166, 6)) at its ends and refuses one past 2^63.
func TestSpaceLarge(t *testing.T) {
	s, err := NewSpace(32, 5, 6)
	if err != nil {
		t.Fatal(err)
	}
	if s.K != Uniform(32, 5, 6).States().Uint64() || s.K < 1<<32 {
		t.Fatalf("K = %d", s.K)
	}
	last := s.Decode(nil, s.K-1)
	if !slices.Equal(last, []int{159, 159, 159, 159, 159, 159}) || s.Index(last) != s.K-1 {
		t.Errorf("the last state is %v (index %d)", last, s.Index(last))
	}
	mid := []int{3, 17, 17, 40, 100, 158}
	if got := s.Decode(nil, s.Index(mid)); !slices.Equal(got, mid) {
		t.Errorf("Decode(Index(%v)) = %v", mid, got)
	}
	var pe *ParamError
	if _, err := NewSpace(32, 5, 20); !errors.As(err, &pe) || pe.Param != "reports" {
		t.Errorf("a space of C(180, 20) states: %v", err)
	}
}
