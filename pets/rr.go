package pets

import (
	"fmt"
	"math"
)

// rr is randomized response (Definition 2.1 and the text after it,
// Section 2): each binary label flipped independently with probability
// π = 1/(1+e^ε); ε-label-DP. The model trains on the released labels with
// train.rr_loss (BCE, or BCE debiased with π); the audit has Theorem 3.5's
// closed form.
type rrScheme struct{}

// RR is randomized response.
const RR Kind = 2

var _ = builtin(RR, rrScheme{})

func (rrScheme) Spec() Spec {
	return Spec{Name: "rr", Takes: Takes{Epsilon: true, Classes: true}, Privacy: DPRR, Release: ReleaseLabels,
		Train: Train{Loss: LossFlipped, Target: TargetLabelRR},
		Look:  Look{Name: "RR", Color: RGB{0x55, 0x55, 0x55}, Marker: MarkerCircle}} // grey, as in the paper
}

func (rrScheme) Law(p Params) (Law, error) { return newFlipLaw(p.Epsilon), nil }

// flipLaw is RR(ε) on binary labels: one channel, P(z | y) = 1−π for
// z = y and π otherwise.
type flipLaw struct {
	pi     float64 // flip probability 1/(1+e^ε)
	piWord uint64  // π·2^64 when ≥ 2^53 (π ≥ 2^-11), else 0; see flip
	ch     []Channel
}

func newFlipLaw(eps float64) *flipLaw {
	l := &flipLaw{pi: 1 / (1 + math.Exp(eps))}
	if t := l.pi * 0x1p64; t >= 0x1p53 {
		l.piWord = uint64(t) // exact: an integer-valued float64 < 2^63
	}
	keep := 1 - l.pi
	l.ch = []Channel{{C: 2, Z: 2, P: []float64{keep, l.pi, l.pi, keep}, Flip: l.pi}}
	return l
}

func (l *flipLaw) Classes() int          { return 2 }
func (l *flipLaw) Channels() []Channel   { return l.ch }
func (l *flipLaw) ChannelOf(float64) int { return 0 }

func (l *flipLaw) Release(dst, labels []uint8, _ []float64, r Rand) { l.flip(dst, labels, r) }

// flip is RR(ε) on every label (rr, and rr_prior's RR branch).
func (l *flipLaw) flip(dst, labels []uint8, r Rand) {
	// A label flips iff uniform(r) < π. When T = π·2^64 ≥ 2^53 this is
	// exactly "first word < T": T is then a multiple of the truncation
	// step of every word ≥ T, so truncating the word to 53 significant
	// bits (as uniform does) cannot cross T. Otherwise (π < 2^-11) a
	// first word ≥ 2^53 already gives uniform ≥ 2^-11 > π.
	pi, t := l.pi, l.piWord
	for i, y := range labels {
		if y > 1 {
			panic(fmt.Sprintf("pets: label %d at row %d is not 0/1", y, i))
		}
		x := r.Uint64()
		if t != 0 {
			if x < t {
				y ^= 1
			}
		} else if x < 1<<53 && uniformFrom(x, r) < pi {
			y ^= 1
		}
		dst[i] = y
	}
}
