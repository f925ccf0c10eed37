package pets

import (
	"fmt"
	"math"
	"math/big"

	"labelprivacy/ara"
)

// ara_event is Chrome's Attribution Reporting event-level reports, exactly
// (package ara; WICG/attribution-reporting-api): an attribution source of
// T trigger-data values, W reporting windows and at most R reports has
// k = C(T·W + R, R) output states (ara.Space numbers them), and the
// browser replaces the source's true output, with probability
// p = k/(k + e^ε − 1), by one drawn uniformly from all k (k-ary randomized
// response over the state space; ε-DP, Chromium's ε at most 14).
//
// A source's label is its conversion outcome, one of the C = 1 + T·W
// classes of data synth --kind conversions (0: no report; 1 + t·W + w: one
// report of trigger data t in window w), which are the states 0 … T·W of
// the space. The release is the state the browser sends, an index in
// [0, k) (StateLaw.ReleaseStates), and what it shows of the label is its
// projection: the state itself when it is a class, else one release C
// that shows no class — a state of two reports or more, which no source
// with one conversion outcome sends but the noise may. Every state that
// is no class has the same probability p/k whatever the label, so the
// projection loses nothing: P(z | y) = (1 − p)·1{z = y} + p/k for z < C
// and P(C | y) = p·(k − C)/k, pets.FormRRErased (FormRR when R = 1: then
// every state is a class and ara_event is rr over the C classes).
//
// Given a release other than C the channel is rr(ε) over the C classes —
// keep e^ε/(e^ε + C − 1), each other class 1/(e^ε + C − 1) — and the
// release C, whose probability does not depend on the label, says nothing,
// so the model trains as rr's does (train.rr_loss: debiased_bce, the
// unbiased inversion, on two classes; forward_ce, the forward correction
// through the channel, or backward_ce, its unbiased inversion, on C) on the
// rows not released C, dropped without bias. Privacy: every likelihood
// ratio of the state release is 1 or e^{±ε}, so ε-label-DP, composed as
// rr's.
type araEventScheme struct{}

// ARAEvent is Attribution Reporting's event-level reports.
const ARAEvent Kind = 7

var _ = builtin(ARAEvent, araEventScheme{})

func (araEventScheme) Spec() Spec {
	return Spec{Name: "ara_event", Takes: Takes{Epsilon: true, Classes: true, Source: true}, Privacy: DPRR, Release: ReleaseLabels,
		Train: Train{Loss: LossFlipped, Target: TargetLabelRR},
		Look:  Look{Name: "ARA event", Color: RGB{0xbc, 0xbd, 0x22}, Marker: MarkerTriangle}} // olive
}

// ARASource is the navigation source type whose caps ara_event's
// configurations are held to (Chromium's larger information-gain cap,
// 11.46173 bits: a source registered on a click).
const ARASource = ara.Navigation

func (araEventScheme) Law(p Params) (Law, error) {
	c := max(p.Classes, 2)
	if err := checkARASource(p, c); err != nil {
		return nil, err
	}
	s, err := ara.NewSpace(p.TriggerData, p.Windows, p.Reports)
	if err != nil {
		return nil, araParamError(err)
	}
	return newARAEventLaw(s, p.Epsilon), nil
}

// checkARASource validates an ara_event source of labels of c classes
// against ara's arithmetic and Chromium's limits (ε at most 14, at most
// 20 reports, 5 windows, 32 trigger-data values, 2^32 − 1 states, a
// navigation source's information gain), naming the parameter.
func checkARASource(p Params, c int) error {
	cfg := ara.Uniform(p.TriggerData, p.Windows, p.Reports)
	if err := cfg.Validate(); err != nil {
		return araParamError(err)
	}
	switch {
	case p.Reports < 1:
		return &ParamError{Param: "reports", Msg: fmt.Sprintf("must be ≥ 1 (a source that never reports has one state and shows no conversion), got %d", p.Reports)}
	case p.Epsilon > ara.Chromium.MaxEpsilon:
		return &ParamError{Param: "epsilon", Msg: fmt.Sprintf("%v is above Chromium's largest event-level ε, %v", p.Epsilon, ara.Chromium.MaxEpsilon)}
	}
	if n := int64(p.TriggerData) * int64(p.Windows); n+1 != int64(c) {
		param, more := "windows", "more"
		if int64(p.TriggerData) > int64(c-1) {
			param = "trigger_data" // more trigger-data values than the labels have classes
		}
		if n+1 < int64(c) {
			more = "fewer"
		}
		return &ParamError{Param: param, Msg: fmt.Sprintf("%d trigger-data values × %d windows + no report = %d conversion outcomes, %s than the %d classes of the labels (data synth --kind conversions --trigger-data T --windows W makes 1 + T·W)",
			p.TriggerData, p.Windows, n+1, more, c)}
	}
	if c+1 > MaxClasses {
		return &ParamError{Param: "trigger_data", Msg: fmt.Sprintf("%d conversion outcomes and the release that shows none need %d releases, more than the %d a channel holds", c, c+1, MaxClasses)}
	}
	r, err := ara.Evaluate(cfg, ARASource, p.Epsilon)
	if err != nil {
		return araParamError(err)
	}
	if ex := ara.Chromium.Exceeded(cfg, r); len(ex) > 0 {
		return &ParamError{Param: ex[0].Param, Msg: ex[0].Msg}
	}
	return nil
}

// araParamError is an ara.ParamError as this package's, naming the same
// parameter.
func araParamError(err error) error {
	if pe, ok := err.(*ara.ParamError); ok {
		return &ParamError{Param: pe.Param, Msg: pe.Msg}
	}
	return &ParamError{Param: "trigger_data", Msg: err.Error()}
}

// StateLaw is the law of a kind whose release is a state of a space larger
// than its classes (ara_event: the state an attribution source's browser
// sends), the ExampleLaw's releases being their projections: ReleaseStates
// draws the states from the randomness Release draws (one state a label,
// Project(state) the release Release writes), States is the number of
// states.
type StateLaw interface {
	ExampleLaw
	States() uint64
	ReleaseStates(dst []uint64, labels []uint8, r Rand)
	Project(state uint64) uint8
}

// araEventLaw is ara_event on its space's classes.
type araEventLaw struct {
	s     *ara.Space
	c     int
	p     float64 // k/(k + e^ε − 1): the probability of a uniform state
	pWord uint64  // flipWord(p)
	ch    Channel
}

var _ StateLaw = (*araEventLaw)(nil)

func newARAEventLaw(s *ara.Space, eps float64) *araEventLaw {
	c, k := s.Classes(), s.K
	l := &araEventLaw{s: s, c: c, p: ara.FlipProbability(new(big.Int).SetUint64(k), eps)}
	l.pWord = flipWord(l.p)
	// P(z | y) from d = k + e^ε − 1: e^ε/d for z = y, 1/d for another
	// class, (k − C)/d erased; e^ε − 1 = expm1(ε) keeps the small-ε digits.
	d := float64(k) + math.Expm1(eps)
	keep, other, erased := math.Exp(eps)/d, 1/d, float64(k-uint64(c))/d
	z := c
	l.ch = Channel{C: c, Form: FormRR}
	if k > uint64(c) {
		z, l.ch.Form = c+1, FormRRErased
	}
	l.ch.Z, l.ch.P = z, make([]float64, z*c)
	for zi := range z {
		for y := range c {
			v := other
			switch {
			case zi == c:
				v = erased
			case zi == y:
				v = keep
			}
			l.ch.P[zi*c+y] = v
		}
	}
	l.ch.Flip = float64(c-1) * other
	if l.ch.Form == FormRRErased {
		l.ch.Flip /= 1 - erased
	}
	return l
}

func (l *araEventLaw) Classes() int               { return l.c }
func (l *araEventLaw) ChannelOf([]float64) uint64 { return 0 }
func (l *araEventLaw) Channel(uint64) Channel     { return l.ch }
func (l *araEventLaw) States() uint64             { return l.s.K }

// Space is the numbered state space.
func (l *araEventLaw) Space() *ara.Space { return l.s }

// state draws the browser's output for a source whose true output is
// state y: y itself, or, with probability p, a uniform state of [0, k)
// (one word of r for the decision, rarely more when p < 2^-11, and the
// words of an exact uniform integer).
func (l *araEventLaw) state(y uint8, r Rand) uint64 {
	if flipWith(r, l.p, l.pWord) {
		return uniformIntn(r, l.s.K)
	}
	return uint64(y)
}

// Project is a state's release: its class, or C for a state that is none.
func (l *araEventLaw) Project(state uint64) uint8 {
	if c, ok := l.s.Class(state); ok {
		return uint8(c)
	}
	return uint8(l.c)
}

// ReleaseStates writes the state the browser sends for each label.
func (l *araEventLaw) ReleaseStates(dst []uint64, labels []uint8, r Rand) {
	checkLabels(labels, l.c)
	for i, y := range labels {
		dst[i] = l.state(y, r)
	}
}

// Release writes the projection of each label's state.
func (l *araEventLaw) Release(dst, labels []uint8, _ []float64, r Rand) {
	checkLabels(labels, l.c)
	for i, y := range labels {
		dst[i] = l.Project(l.state(y, r))
	}
}
