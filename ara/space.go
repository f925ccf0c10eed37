package ara

import (
	"fmt"
	"math"
	"math/big"
)

// Space is the output state space of a source of Uniform shape — T
// trigger-data values, W reporting windows each, at most R reports — with
// every state numbered: the state index in [0, K) is what the browser's
// output is, before and after its randomized response replaces it by a
// uniform index.
//
// A state is a multiset of at most R reports over the N = T·W cells, cell
// t·W + w holding the reports of trigger-data value t in window w (the
// order of data synth --kind conversions' classes). The numbering is
// graded: first the empty state (index 0), then the N states of one
// report (index 1 + cell), then the C(N+1, 2) states of two reports, and
// so on up to R, each grade in lexicographic order of its sorted cells. So
// the states a conversion outcome of one report or none can be — class c
// of 1 + T·W classes (0: no report; 1 + t·W + w: one report of t in w) —
// are exactly the indices c < 1 + N, state c; every state from 1 + N on
// holds two reports or more and is no class.
type Space struct {
	T, W, R int
	N       int    // cells, T·W
	K       uint64 // states, C(N + R, R)
	// grade[j] is the index of the first state of j reports (j = 0..R+1;
	// grade[R+1] = K).
	grade []uint64
}

// MaxSpaceStates bounds the states of a numbered Space: indices are
// uint64, and below 2^63 every count here is exact in them.
const MaxSpaceStates = 1 << 63

// NewSpace numbers the states of Uniform(t, w, r). It refuses (a
// *ParamError naming trigger_data, windows or reports) what Validate
// refuses, and a space of MaxSpaceStates states or more.
func NewSpace(t, w, r int) (*Space, error) {
	c := Uniform(t, w, r)
	if err := c.Validate(); err != nil {
		return nil, err
	}
	k := c.States()
	if k.Cmp(new(big.Int).SetUint64(MaxSpaceStates)) >= 0 {
		return nil, &ParamError{Param: "reports", Msg: fmt.Sprintf("%s: %s states, more than a numbered state space holds (2^63)", c, Thousands(k))}
	}
	s := &Space{T: t, W: w, R: r, N: t * w, K: k.Uint64(), grade: make([]uint64, r+2)}
	for j := 0; j <= r; j++ {
		s.grade[j+1] = s.grade[j] + multichoose(s.N, j)
	}
	if s.grade[r+1] != s.K {
		panic(fmt.Sprintf("ara: the grades of %s sum to %d, not its %d states", c, s.grade[r+1], s.K))
	}
	return s, nil
}

// multichoose is the number of multisets of j cells out of n, C(n+j−1, j)
// (1 for j = 0); callers keep it below 2^63 (NewSpace's bound on K, which
// every such count of a Space is at most).
func multichoose(n, j int) uint64 {
	if j == 0 {
		return 1
	}
	if n == 0 {
		return 0
	}
	b := binomial(int64(n+j-1), int64(j))
	if !b.IsUint64() || b.Uint64() >= math.MaxInt64 {
		panic(fmt.Sprintf("ara: multichoose(%d, %d) = %v overflows", n, j, b))
	}
	return b.Uint64()
}

// Classes is the number of conversion outcomes a state of one report or
// none stands for, 1 + N: the states 0 … N.
func (s *Space) Classes() int { return 1 + s.N }

// Class returns the class of state i (i itself when i < Classes()) and
// whether it is one: a state of two reports or more is no class.
func (s *Space) Class(i uint64) (int, bool) {
	if i < uint64(s.Classes()) {
		return int(i), true
	}
	return 0, false
}

// Cell is the cell of trigger-data value t in window w: t·W + w.
func (s *Space) Cell(t, w int) int { return t*s.W + w }

// Decode appends the cells of state i's reports, sorted (at most R, each
// in [0, N)), to dst. i must be below K.
func (s *Space) Decode(dst []int, i uint64) []int {
	if i >= s.K {
		panic(fmt.Sprintf("ara: state %d of %d", i, s.K))
	}
	j := 0
	for s.grade[j+1] <= i {
		j++
	}
	rank := i - s.grade[j]
	lo := 0 // the smallest cell the next report may take
	for left := j; left > 0; left-- {
		// The multisets of left cells from [a, N) number
		// multichoose(N − a, left); those starting at a, multichoose(N − a,
		// left − 1).
		for a := lo; ; a++ {
			n := multichoose(s.N-a, left-1)
			if rank < n {
				dst = append(dst, a)
				lo = a
				break
			}
			rank -= n
		}
	}
	return dst
}

// Index returns the state of the reports in cells (any order; each in
// [0, N), at most R of them). It panics on cells that are no state.
func (s *Space) Index(cells []int) uint64 {
	if len(cells) > s.R {
		panic(fmt.Sprintf("ara: %d reports, at most %d", len(cells), s.R))
	}
	sorted := append([]int(nil), cells...)
	for i := 1; i < len(sorted); i++ { // insertion sort: at most R cells
		for k := i; k > 0 && sorted[k] < sorted[k-1]; k-- {
			sorted[k], sorted[k-1] = sorted[k-1], sorted[k]
		}
	}
	j := len(sorted)
	idx := s.grade[j]
	lo := 0
	for pos, c := range sorted {
		if c < 0 || c >= s.N {
			panic(fmt.Sprintf("ara: cell %d of %d", c, s.N))
		}
		left := j - pos
		for a := lo; a < c; a++ {
			idx += multichoose(s.N-a, left-1)
		}
		lo = c
	}
	return idx
}

// Config is the space's configuration, Uniform(T, W, R).
func (s *Space) Config() Config { return Uniform(s.T, s.W, s.R) }
