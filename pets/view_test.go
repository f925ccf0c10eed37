package pets

import (
	"fmt"
	"math/bits"
	"strings"
)

// mcView is a view of a Mechanism on C classes for the tests of the C-class
// laws: every method reads the mechanism's law (ExampleLaw, BagLaw), or
// rr_prior's set rule of rrprior.go.
type mcView struct{ m *Mechanism }

// newView is New(p) with p.Classes = classes, seen as an mcView.
func newView(p Params, classes int) (*mcView, error) {
	if classes < 2 || classes > MaxClasses {
		return nil, &ParamError{Param: "classes", Msg: fmt.Sprintf("must be in [2, %d], got %d", MaxClasses, classes)}
	}
	p.Classes = classes
	m, err := New(p)
	if err != nil {
		return nil, err
	}
	return &mcView{m}, nil
}

// view returns the mechanism seen as an mcView.
func view(m *Mechanism) *mcView { return &mcView{m} }

func (m *mcView) Classes() int          { return m.m.Classes() }
func (m *mcView) Mechanism() *Mechanism { return m.m }
func (m *mcView) FlipProb() float64     { return m.m.FlipProb() }
func (m *mcView) Kind() Kind            { return m.m.Kind() }
func (m *mcView) Epsilon() float64      { return m.m.Epsilon() }

func (m *mcView) String() string {
	s := m.m.String()
	if m.m.p.Classes >= 3 {
		return s
	}
	if strings.HasSuffix(s, ")") {
		return fmt.Sprintf("%s, C=2)", strings.TrimSuffix(s, ")"))
	}
	return s + "(C=2)"
}

func (m *mcView) Sensitivity() int {
	if m.m.bag != nil {
		return m.m.bag.Sensitivity()
	}
	return countSensitivity(m.Classes())
}

func (m *mcView) NoiseRate() float64 {
	if m.m.bag != nil {
		return m.m.bag.NoiseRate()
	}
	return 0
}

func (m *mcView) RRLikelihood(z, y uint8) float64 {
	ch := m.m.ex.Channel(m.m.ex.ChannelOf(nil))
	return ch.Prob(z, y)
}

func (m *mcView) Likelihood(s PriorSet, z, y uint8) float64 {
	if m.m.spec.Release.WithPrior() {
		return m.RRPriorLikelihood(s, z, y)
	}
	return m.RRLikelihood(z, y)
}

func (m *mcView) ReleaseRR(dst, labels []uint8, r Rand) { m.m.ex.Release(dst, labels, nil, r) }

func (m *mcView) CheckPrior(prior []float64) error { return CheckPrior(prior, m.Classes()) }

// PriorSet is RRWithPrior's choice for one row (the tests' name for it):
// the set of the prior's top-k classes as a bit mask, and k.
type PriorSet struct {
	Mask uint64
	K    int
}

func (s PriorSet) Contains(y uint8) bool { return y < 64 && s.Mask>>y&1 == 1 }
func (s PriorSet) Members() []uint8      { return setMembers(s.Mask) }

func (m *mcView) setLaw() *setPriorLaw {
	if l, ok := m.m.ex.(*setPriorLaw); ok {
		return l
	}
	return &setPriorLaw{t: newRRTables(m.m.p.Epsilon, m.Classes())}
}

func (m *mcView) PriorSet(prior []float64) PriorSet {
	if !m.m.spec.Release.WithPrior() {
		panic("pets: PriorSet on " + m.Kind().String())
	}
	mask := m.setLaw().priorSet(prior)
	return PriorSet{Mask: mask, K: bits.OnesCount64(mask)}
}

func (m *mcView) RRPriorLikelihood(s PriorSet, z, y uint8) float64 {
	if !m.m.spec.Release.WithPrior() {
		panic("pets: RRPriorLikelihood on " + m.Kind().String())
	}
	ch := m.setLaw().Channel(s.Mask)
	return ch.Prob(z, y)
}

func (m *mcView) ReleaseRRPrior(dst, labels []uint8, prior []float64, sets []PriorSet, r Rand) {
	l := m.setLaw()
	c := m.Classes()
	for i, y := range labels {
		mask := l.priorSet(prior[i*c : (i+1)*c])
		sets[i] = PriorSet{Mask: mask, K: bits.OnesCount64(mask)}
		dst[i] = releaseInSet(l.t, mask, y, r)
	}
}

func (m *mcView) ReleaseBag(dst []float64, counts []int, r Rand) {
	m.m.bag.ReleaseBag(dst, counts, r)
}
func (m *mcView) Debias(dst, alpha []float64, n int) { m.m.bag.Target(dst, alpha, n) }
