package pets

import (
	"strings"
	"testing"
)

// TestChannelCheck: a channel that is no probability law, or declares a
// structure (Form, Flip) its table does not have, is refused, naming what
// is wrong.
func TestChannelCheck(t *testing.T) {
	rr := newFlipLaw(1).ch
	set := (&setPriorLaw{t: newRRTables(1, 4)}).Channel(0b0111)
	for _, tc := range []struct {
		name string
		ch   Channel
		bad  string // "": valid
	}{
		{"rr", rr, ""},
		{"rr_prior's set of 3 of 4", set, ""},
		{"a column not summing to 1", Channel{C: 2, Z: 2, P: []float64{0.5, 0.5, 0.4, 0.5}}, "sums to"},
		{"a negative probability", Channel{C: 2, Z: 2, P: []float64{1.5, 0.5, -0.5, 0.5}}, "P(0 | 0)"},
		{"FormRR on an asymmetric table", Channel{C: 2, Z: 2, P: []float64{0.7, 0.4, 0.3, 0.6}, Form: FormRR}, "FormRR but"},
		{"FormSetRR on k-ary RR with a wrong entry", func() Channel {
			c := set
			c.P = append([]float64(nil), set.P...)
			c.P[3*4+0], c.P[0] = 0.01, c.P[0]-0.01 // class 3 released for label 0
			return c
		}(), "FormSetRR but"},
		{"a flip on a plain table", Channel{C: 2, Z: 2, P: []float64{0.7, 0.4, 0.3, 0.6}, Flip: 0.3}, "no RR form"},
		{"too few probabilities", Channel{C: 2, Z: 2, P: []float64{1, 0, 1}}, "3 probabilities"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ch.Check()
			if tc.bad == "" && err != nil || tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)) {
				t.Fatalf("Check: %v, want %q", err, tc.bad)
			}
		})
	}
}

// lyingLaw states rr(ε)'s channel and releases through rr(2ε).
type lyingLaw struct{ stated, actual *flipLaw }

func (l lyingLaw) Classes() int                                     { return 2 }
func (l lyingLaw) ChannelOf([]float64) uint64                       { return 0 }
func (l lyingLaw) Channel(uint64) Channel                           { return l.stated.ch }
func (l lyingLaw) Release(dst, labels []uint8, _ []float64, r Rand) { l.actual.flip(dst, labels, r) }

// TestCheckLawCatchesALyingSampler: CheckLaw fails a law whose sampler
// keeps labels as RR at 2ε does while its channel states ε (keep
// probability 0.88 against 0.73, hundreds of binomial SE at 20,000
// draws), and passes the honest one.
func TestCheckLawCatchesALyingSampler(t *testing.T) {
	m := mustNew(Params{Kind: RR, Epsilon: 1})
	if err := CheckLaw(m, 20_000, newRand(2)); err != nil {
		t.Fatalf("the honest law: %v", err)
	}
	m.ex = lyingLaw{stated: newFlipLaw(1), actual: newFlipLaw(2)}
	if err := CheckLaw(m, 20_000, newRand(2)); err == nil || !strings.Contains(err.Error(), "its channel says") {
		t.Fatalf("a lying sampler: %v", err)
	}
}
