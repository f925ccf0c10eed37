package pets

import (
	"fmt"
	"math/bits"
	"strings"
)

// Multiclass is a thin view of a Mechanism on C classes, kept while the
// packages above move to the mechanism's laws (ExampleLaw, BagLaw), which
// own the C classes: every method reads the law.
type Multiclass struct{ m *Mechanism }

// NewMulticlass is New(p) with p.Classes = classes, seen as a Multiclass.
func NewMulticlass(p Params, classes int) (*Multiclass, error) {
	if classes < 2 || classes > MaxClasses {
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("must be in [2, %d], got %d", MaxClasses, classes)}
	}
	p.Classes = classes
	m, err := New(p)
	if err != nil {
		return nil, err
	}
	return &Multiclass{m}, nil
}

// Multiclass returns the mechanism seen as a Multiclass.
func (m *Mechanism) Multiclass() *Multiclass { return &Multiclass{m} }

func (m *Multiclass) Classes() int          { return m.m.Classes() }
func (m *Multiclass) Mechanism() *Mechanism { return m.m }
func (m *Multiclass) FlipProb() float64     { return m.m.FlipProb() }
func (m *Multiclass) Kind() Kind            { return m.m.Kind() }
func (m *Multiclass) Epsilon() float64      { return m.m.Epsilon() }

func (m *Multiclass) String() string {
	s := m.m.String()
	if m.m.p.Classes >= 3 {
		return s
	}
	if strings.HasSuffix(s, ")") {
		return fmt.Sprintf("%s, C=2)", strings.TrimSuffix(s, ")"))
	}
	return s + "(C=2)"
}

func (m *Multiclass) Sensitivity() int {
	if m.m.bag != nil {
		return m.m.bag.Sensitivity()
	}
	return countSensitivity(m.Classes())
}

func (m *Multiclass) NoiseRate() float64 {
	if m.m.bag != nil {
		return m.m.bag.NoiseRate()
	}
	return 0
}

func (m *Multiclass) RRLikelihood(z, y uint8) float64 {
	ch := m.m.ex.Channel(m.m.ex.ChannelOf(nil))
	return ch.Prob(z, y)
}

func (m *Multiclass) Likelihood(s PriorSet, z, y uint8) float64 {
	if m.m.spec.Release.WithPrior() {
		return m.RRPriorLikelihood(s, z, y)
	}
	return m.RRLikelihood(z, y)
}

func (m *Multiclass) ReleaseRR(dst, labels []uint8, r Rand) { m.m.ex.Release(dst, labels, nil, r) }

func (m *Multiclass) CheckPrior(prior []float64) error { return CheckPrior(prior, m.Classes()) }

// PriorSet is RRWithPrior's choice for one row: the set of the prior's
// top-k classes as a bit mask, and k.
type PriorSet struct {
	Mask uint64
	K    int
}

func (s PriorSet) Contains(y uint8) bool { return y < 64 && s.Mask>>y&1 == 1 }
func (s PriorSet) Members() []uint8      { return setMembers(s.Mask) }

func (m *Multiclass) setLaw() *setPriorLaw {
	if l, ok := m.m.ex.(*setPriorLaw); ok {
		return l
	}
	return &setPriorLaw{t: newRRTables(m.m.p.Epsilon, m.Classes())}
}

func (m *Multiclass) PriorSet(prior []float64) PriorSet {
	if !m.m.spec.Release.WithPrior() {
		panic("pets: PriorSet on " + m.Kind().String())
	}
	mask := m.setLaw().priorSet(prior)
	return PriorSet{Mask: mask, K: bits.OnesCount64(mask)}
}

func (m *Multiclass) RRPriorLikelihood(s PriorSet, z, y uint8) float64 {
	if !m.m.spec.Release.WithPrior() {
		panic("pets: RRPriorLikelihood on " + m.Kind().String())
	}
	ch := m.setLaw().Channel(s.Mask)
	return ch.Prob(z, y)
}

func (m *Multiclass) ReleaseRRPrior(dst, labels []uint8, prior []float64, sets []PriorSet, r Rand) {
	l := m.setLaw()
	c := m.Classes()
	for i, y := range labels {
		mask := l.priorSet(prior[i*c : (i+1)*c])
		sets[i] = PriorSet{Mask: mask, K: bits.OnesCount64(mask)}
		dst[i] = releaseInSet(l.t, mask, y, r)
	}
}

func (m *Multiclass) ReleaseBag(dst []float64, counts []int, r Rand) {
	m.m.bag.ReleaseBag(dst, counts, r)
}
func (m *Multiclass) Debias(dst, alpha []float64, n int) { m.m.bag.Target(dst, alpha, n) }
