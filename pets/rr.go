package pets

import "math"

// rr is randomized response (Definition 2.1 and the text after it,
// Section 2): each binary label flipped independently with probability
// π = 1/(1+e^ε); ε-label-DP. On C ≥ 3 classes it is k-ary randomized
// response (k-RR of Kairouz, Oh and Viswanath): keep the label with
// probability e^ε/(e^ε+C−1), otherwise release one of the C−1 other
// classes uniformly, P(z|y) = e^ε/(e^ε+C−1) if z = y and 1/(e^ε+C−1)
// otherwise; every likelihood ratio is 1 or e^{±ε}, so it is ε-label-DP,
// and at C = 2 it is the binary release bit for bit. The model trains on
// the released labels with train.rr_loss (BCE, or BCE debiased with π;
// forward_ce with the flip probability (C−1)/(e^ε+C−1) on C classes); the
// audit has Theorem 3.5's closed form (IEAdvRRC on C classes).
type rrScheme struct{}

// RR is randomized response.
const RR Kind = 2

var _ = builtin(RR, rrScheme{})

func (rrScheme) Spec() Spec {
	return Spec{Name: "rr", Takes: Takes{Epsilon: true, Classes: true}, Privacy: DPRR, Release: ReleaseLabels,
		Train: Train{Loss: LossFlipped, Target: TargetLabelRR},
		Look:  Look{Name: "RR", Color: RGB{0x55, 0x55, 0x55}, Marker: MarkerCircle}} // grey, as in the paper
}

func (rrScheme) Law(p Params) (Law, error) {
	if c := max(p.Classes, 2); c >= 3 {
		t := newRRTables(p.Epsilon, c)
		return &karyLaw{t: t, ch: t.channel(c)}, nil
	}
	return newFlipLaw(p.Epsilon), nil
}

// flipLaw is RR(ε) on binary labels: one channel, P(z | y) = 1−π for
// z = y and π otherwise.
type flipLaw struct {
	pi     float64 // flip probability 1/(1+e^ε)
	piWord uint64  // π·2^64 when ≥ 2^53 (π ≥ 2^-11), else 0; see flipWith
	ch     Channel
}

func newFlipLaw(eps float64) *flipLaw {
	l := &flipLaw{pi: 1 / (1 + math.Exp(eps))}
	l.piWord = flipWord(l.pi)
	keep := 1 - l.pi
	l.ch = Channel{C: 2, Z: 2, P: []float64{keep, l.pi, l.pi, keep}, Flip: l.pi, Form: FormRR}
	return l
}

func (l *flipLaw) Classes() int                                     { return 2 }
func (l *flipLaw) ChannelOf([]float64) uint64                       { return 0 }
func (l *flipLaw) Channel(uint64) Channel                           { return l.ch }
func (l *flipLaw) Release(dst, labels []uint8, _ []float64, r Rand) { l.flip(dst, labels, r) }

// flip is RR(ε) on every label (rr, and rr_prior's RR branch): one word of
// r per label (rarely more when π < 2^-11, i.e. ε > 7.62).
func (l *flipLaw) flip(dst, labels []uint8, r Rand) {
	checkLabels(labels, 2)
	for i, y := range labels {
		if flipWith(r, l.pi, l.piWord) {
			y ^= 1
		}
		dst[i] = y
	}
}

// flipWord is p·2^64 when that is ≥ 2^53 (then "uniform < p" is exactly
// "first word < p·2^64", see flipWith), else 0.
func flipWord(p float64) uint64 {
	if t := p * 0x1p64; t >= 0x1p53 {
		return uint64(t) // exact: an integer-valued float64 < 2^64
	}
	return 0
}

// flipWith reports whether uniform(r) < p, with t = flipWord(p). When
// t ≠ 0 this is exactly "first word < t": t is then a multiple of the
// truncation step of every word ≥ t, so truncating the word to 53
// significant bits (as uniform does) cannot cross t. Otherwise
// (p < 2^-11) a first word ≥ 2^53 already gives uniform ≥ 2^-11 > p. It
// consumes one word, rarely more when t = 0.
func flipWith(r Rand, p float64, t uint64) bool {
	x := r.Uint64()
	if t != 0 {
		return x < t
	}
	return x < 1<<53 && uniformFrom(x, r) < p
}

// rrTables are k-ary randomized response's probabilities over a set of
// j = 1..C classes (rr over all C, rr_prior over the prior's top k):
// keep[j] = e^ε/(e^ε+j−1) and other[j] = 1/(e^ε+j−1) (P(z|y) for z = y
// and z ≠ y inside the set), flip[j] = (j−1)/(e^ε+j−1) = 1 − keep[j] and
// flipWord[j] its 2^64-scaled threshold; index 0 unused. At j = 2 flip is
// the binary π = 1/(1+e^ε) bit for bit.
type rrTables struct {
	c                 int
	expEps            float64 // e^ε
	keep, other, flip []float64
	flipWord          []uint64
}

func newRRTables(eps float64, c int) *rrTables {
	t := &rrTables{c: c, expEps: math.Exp(eps)}
	n := c + 1
	t.keep, t.other, t.flip, t.flipWord = make([]float64, n), make([]float64, n), make([]float64, n), make([]uint64, n)
	for j := 1; j <= c; j++ {
		d := t.expEps + float64(j-1) // for j = 2: e^ε + 1, the bits of the binary 1 + e^ε
		t.keep[j] = t.expEps / d
		t.other[j] = 1 / d
		t.flip[j] = float64(j-1) / d
		t.flipWord[j] = flipWord(t.flip[j])
	}
	return t
}

// channel is k-ary RR over all C classes (rr's channel).
func (t *rrTables) channel(c int) Channel {
	ch := Channel{C: c, Z: c, P: make([]float64, c*c), Flip: t.flip[c], Form: FormRR}
	for z := range c {
		for y := range c {
			ch.P[z*c+y] = t.other[c]
			if z == y {
				ch.P[z*c+y] = t.keep[c]
			}
		}
	}
	return ch
}

// karyLaw is rr on C ≥ 3 classes.
type karyLaw struct {
	t  *rrTables
	ch Channel
}

func (l *karyLaw) Classes() int               { return l.t.c }
func (l *karyLaw) ChannelOf([]float64) uint64 { return 0 }
func (l *karyLaw) Channel(uint64) Channel     { return l.ch }

// Release is k-ary RR of each label: one word of r for the keep/flip
// decision, exactly as the binary release (rarely more when the flip
// probability is below 2^-11), and, when it flips, the words of an exact
// uniform draw among the C−1 other classes.
func (l *karyLaw) Release(dst, labels []uint8, _ []float64, r Rand) {
	c := l.t.c
	checkLabels(labels, c)
	p, w := l.t.flip[c], l.t.flipWord[c]
	for i, y := range labels {
		if flipWith(r, p, w) {
			j := uint8(uniformIntn(r, uint64(c-1)))
			if j >= y {
				j++
			}
			y = j
		}
		dst[i] = y
	}
}
