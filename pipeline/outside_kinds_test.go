package pipeline

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"labelprivacy/pets"
)

// Three kinds of mechanism registered from this test file only, each taken
// through the whole program by TestOutsideKind… (outside_test.go) with no
// production code knowing them.

// alibi is ALIBI-like Laplace soft labels (Malek et al., "Antipodes of
// label differential privacy: PATE and ALIBI", NeurIPS 2021), a kind
// released per example with no bag (pets.ReleaseCounts): each label's
// one-hot counts of classes 1..C−1 get Laplace noise of rate λ = ε/Δ (Δ = 1
// on two classes, 2 on more: one label moves two counts), and the model
// trains on the Bayes posterior of the label given them under a uniform
// prior, its soft label. ε-label-DP as llp_lap with bags of one, composed
// through the Laplace PLD.
type alibiScheme struct{}

func (alibiScheme) Spec() pets.Spec {
	return pets.Spec{Name: "alibi", Takes: pets.Takes{Epsilon: true, Classes: true}, Privacy: pets.DPLaplace,
		Release: pets.ReleaseCounts, Train: pets.Train{Loss: pets.LossBCE, Target: pets.TargetSoft},
		Look: pets.Look{Name: "ALIBI", Color: pets.RGB{R: 0x17, G: 0xbe, B: 0xcf}, Marker: pets.MarkerPyramid}}
}

func (alibiScheme) Law(p pets.Params) (pets.Law, error) {
	c := max(p.Classes, 2)
	delta := 1
	if c >= 3 {
		delta = 2
	}
	return alibiLaw{c: c, delta: delta, lambda: p.Epsilon / float64(delta)}, nil
}

type alibiLaw struct {
	c, delta int
	lambda   float64 // per count
}

func (l alibiLaw) Classes() int          { return l.c }
func (alibiLaw) SumNoise() pets.SumNoise { return pets.SumLaplace }
func (l alibiLaw) NoiseRate() float64    { return l.lambda }
func (l alibiLaw) Sensitivity() int      { return l.delta }
func (l alibiLaw) posteriorWeight(a float64) float64 {
	return math.Exp(-l.lambda * (math.Abs(a-1) - math.Abs(a)))
}

func (l alibiLaw) ReleaseBag(dst []float64, counts []int, r pets.Rand) {
	n := 0
	for _, v := range counts {
		n += v
	}
	for c := 1; c < l.c; c++ {
		dst[c-1] = float64(counts[c])/float64(n) + pets.Laplace(r, 1/(float64(n)*l.lambda))
	}
}

// Target is the posterior of the label of a bag of one given its noisy
// counts, under the uniform prior: P(y | α) ∝ Π_c e^{−λ|α_c − 1{y=c}|}, so
// class y ≥ 1 has weight e^{−λ(|α_y − 1| − |α_y|)} against class 0's 1.
func (l alibiLaw) Target(dst, alpha []float64, n int) {
	if n != 1 {
		panic(fmt.Sprintf("alibi: a bag of %d", n))
	}
	s := 1.0
	for i, a := range alpha {
		dst[i] = l.posteriorWeight(a)
		s += dst[i]
	}
	for i := range dst {
		dst[i] /= s
	}
}

// rr_temper is randomized response tempered by a public prior: the
// exponential mechanism over the released class with the prior as its
// base measure, P(z | y) ∝ w_z·e^{(ε/2)·1{z = y}}, w_z = √q_z, q the prior
// quantized to 1/63 (at least 1/63, so that every class may be released;
// six bits a class, the channel's key, hence at most 10 classes). Its
// normalizer N_y = Σ_z w_z + w_y(e^{ε/2} − 1) lies in [S, e^{ε/2}·S], so
// every likelihood ratio is at most e^{ε/2}·e^{ε/2}: ε-label-DP, composed as
// rr. It declares no closed form (pets.FormTable): the audit computes from
// its tables, the trainer takes the posterior under the row's prior, and
// its prior model trains on the posterior under the uniform prior.
type temperScheme struct{}

func (temperScheme) Spec() pets.Spec {
	return pets.Spec{Name: "rr_temper", Takes: pets.Takes{Epsilon: true, Classes: true}, Privacy: pets.DPRR,
		Release: pets.ReleaseLabelsWithPrior, Train: pets.Train{Loss: pets.LossBCE, Target: pets.TargetSoft},
		Look: pets.Look{Name: "RR tempered", Family: "rr", Color: pets.RGB{R: 0x8c, G: 0x56, B: 0x4b}, Marker: pets.MarkerCross}}
}

func (temperScheme) Law(p pets.Params) (pets.Law, error) {
	c := max(p.Classes, 2)
	if c > 10 {
		return nil, &pets.ParamError{Param: "classes", Msg: fmt.Sprintf("rr_temper keys a prior by 6 bits a class: at most 10 classes, got %d", c)}
	}
	return temperLaw{c: c, e: math.Exp(p.Epsilon / 2)}, nil
}

type temperLaw struct {
	c int
	e float64 // e^{ε/2}
}

func (l temperLaw) Classes() int { return l.c }

func (l temperLaw) ChannelOf(prior []float64) uint64 {
	var key uint64
	for z, p := range prior {
		q := min(63, max(1, math.Round(63*p)))
		key |= uint64(q) << (6 * z)
	}
	return key
}

func (l temperLaw) Channel(key uint64) pets.Channel {
	c := l.c
	w, s := make([]float64, c), 0.0
	for z := range c {
		w[z] = math.Sqrt(float64(key >> (6 * z) & 63))
		s += w[z]
	}
	ch := pets.Channel{C: c, Z: c, P: make([]float64, c*c)}
	for y := range c {
		n := s + w[y]*(l.e-1)
		for z := range c {
			p := w[z] / n
			if z == y {
				p *= l.e
			}
			ch.P[z*c+y] = p
		}
	}
	return ch
}

// Release draws each row's class from its channel by the inverse CDF of a
// 53-bit uniform.
func (l temperLaw) Release(dst, labels []uint8, prior []float64, r pets.Rand) {
	c := l.c
	for i, y := range labels {
		ch := l.Channel(l.ChannelOf(prior[i*c : (i+1)*c]))
		u := float64(r.Uint64()>>11) * 0x1p-53
		z := c - 1
		for x := range c {
			if u -= ch.Prob(uint8(x), y); u < 0 {
				z = x
				break
			}
		}
		dst[i] = uint8(z)
	}
}

// rr_top3 is RR-Top-k with a fixed k = 3 (Ghazi et al. 2021, the RRWithPrior
// of a fixed set size): randomized response within the prior's top
// min(3, C) classes Y (ties by class index), a label outside Y replaced by
// a uniform member of Y. ε-label-DP (the likelihoods e^ε/(e^ε+k−1),
// 1/(e^ε+k−1) and 1/k, pairwise within e^ε), composed as rr; its channels
// are pets.FormSetRR, keyed by Y's bit mask.
type topScheme struct{}

func (topScheme) Spec() pets.Spec {
	return pets.Spec{Name: "rr_top3", Takes: pets.Takes{Epsilon: true, Classes: true}, Privacy: pets.DPRR,
		Release: pets.ReleaseLabelsWithPrior, Train: pets.Train{Loss: pets.LossBCE, Target: pets.TargetSoft},
		Look: pets.Look{Name: "RR-Top-3", Family: "rr", Color: pets.RGB{R: 0xe3, G: 0x77, B: 0xc2}, Marker: pets.MarkerCircle}}
}

func (topScheme) Law(p pets.Params) (pets.Law, error) {
	c := max(p.Classes, 2)
	return topLaw{c: c, k: min(3, c), e: math.Exp(p.Epsilon)}, nil
}

type topLaw struct {
	c, k int
	e    float64 // e^ε
}

func (l topLaw) Classes() int { return l.c }

func (l topLaw) ChannelOf(prior []float64) uint64 {
	order := make([]int, l.c)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return prior[order[a]] > prior[order[b]] })
	var mask uint64
	for _, y := range order[:l.k] {
		mask |= 1 << y
	}
	return mask
}

func (l topLaw) Channel(mask uint64) pets.Channel {
	c, k := l.c, l.k
	keep, other := l.e/(l.e+float64(k-1)), 1/(l.e+float64(k-1))
	ch := pets.Channel{C: c, Z: c, P: make([]float64, c*c), Flip: float64(k-1) / (l.e + float64(k-1)), Form: pets.FormSetRR}
	for z := range c {
		if mask>>z&1 == 0 {
			continue
		}
		for y := range c {
			switch {
			case mask>>y&1 == 0:
				ch.P[z*c+y] = 1 / float64(k)
			case z == y:
				ch.P[z*c+y] = keep
			default:
				ch.P[z*c+y] = other
			}
		}
	}
	return ch
}

// Release keeps a label in Y with probability e^ε/(e^ε+k−1), else draws
// another member of Y; a label outside Y draws a member of Y, uniformly.
func (l topLaw) Release(dst, labels []uint8, prior []float64, r pets.Rand) {
	c, k := l.c, l.k
	u := func() float64 { return float64(r.Uint64()>>11) * 0x1p-53 }
	for i, y := range labels {
		mask := l.ChannelOf(prior[i*c : (i+1)*c])
		var members []uint8
		for m := mask; m != 0; m &= m - 1 {
			members = append(members, uint8(bits.TrailingZeros64(m)))
		}
		switch {
		case mask>>y&1 == 0:
			dst[i] = members[int(u()*float64(k))]
		case u() < l.e/(l.e+float64(k-1)):
			dst[i] = y
		default:
			j := int(u() * float64(k-1))
			others := make([]uint8, 0, k-1)
			for _, m := range members {
				if m != y {
					others = append(others, m)
				}
			}
			dst[i] = others[j]
		}
	}
}

// The kinds, registered once per test binary from this file.
var alibiKind, temperKind, topKind = mustRegister(alibiScheme{}), mustRegister(temperScheme{}), mustRegister(topScheme{})

func mustRegister(s pets.Scheme) pets.Kind {
	k, err := pets.Register(s)
	if err != nil {
		panic(err)
	}
	return k
}
