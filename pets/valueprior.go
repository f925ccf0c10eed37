package pets

import (
	"fmt"
	"math"
)

// value_prior is rr_bins's private prior: one noisy histogram of a
// dataset's values over the grid, each count plus two-sided geometric
// noise of rate ε₁/2, clipped at 0 and normalized (uniform when every
// count clips to 0). Label DP changes one person's value, which moves one
// count down by one and another up by one: the count vector's L1
// sensitivity is 2 (every count is released; none is implied), so rate
// ε₁/2 makes the histogram ε₁-label-DP (the pmf ratio is at most
// e^{(ε₁/2)·2}), and a person with r rows is charged r·ε₁ (one draw:
// Step.Group). Pure ε₁-DP, it composes as RR(ε₁) (Kairouz, Oh &
// Viswanath). It is never a setting of its own: rr_bins with
// prior_epsilon releases it first (Mechanism.PriorStage), and the ledger
// charges it to every person as a step of its own.
type valuePriorScheme struct{}

// ValuePrior is the noisy histogram of values, rr_bins's private prior.
const ValuePrior Kind = 12

var _ = builtin(ValuePrior, valuePriorScheme{})

func (valuePriorScheme) Spec() Spec {
	return Spec{Name: "value_prior", Takes: Takes{Epsilon: true, Values: true}, Privacy: DPRR, Release: ReleaseHistogram,
		Look: Look{Name: "value prior", Plain: "", Family: "rr_bins", Color: RGB{0x17, 0xbe, 0xcf}, Marker: MarkerTriangle}}
}

func (valuePriorScheme) Law(p Params) (Law, error) {
	g, err := valueGrid(p, "value_prior")
	if err != nil {
		return nil, err
	}
	return &histogramValues{valueBase: valueBase{g}, rate: p.Epsilon / HistogramSensitivity}, nil
}

// HistogramSensitivity is the L1 sensitivity of a histogram of values when
// one label changes: 2 (one count down by one, one up by one).
const HistogramSensitivity = 2

// histogramValues draws value_prior's noisy histogram.
type histogramValues struct {
	valueBase
	rate float64 // ε₁/2 per count
}

func (*histogramValues) Form() ValueForm { return ValueHistogram }

func (l *histogramValues) Release([]float64, []float64, *Bins, Rand) { l.notPerExample(ValueHistogram) }
func (l *histogramValues) ReleaseBag(float64, int, Rand) float64 {
	l.notPerBag(ValueHistogram)
	return 0
}

// Histogram returns value_prior's release of the values (grid points):
// max(count_i + Z_i, 0) normalized, Z_i independent two-sided geometric of
// rate ε₁/2, drawn in grid order; the uniform prior when every noisy count
// is 0. Panics for another kind or a value off the grid.
func (m *Mechanism) Histogram(values []float64, r Rand) []float64 {
	l, ok := m.vl.(*histogramValues)
	if !ok {
		panic("pets: Histogram of " + m.String())
	}
	g := l.g
	counts := make([]float64, g.Points())
	for _, i := range g.Indices(values) {
		counts[i]++
	}
	l.noisy(counts, r)
	var total float64
	for i, c := range counts {
		counts[i] = math.Max(c, 0)
		total += counts[i]
	}
	if total == 0 {
		return UniformPrior(len(counts))
	}
	for i := range counts {
		counts[i] /= total
	}
	return counts
}

// PriorStage returns the first stage of rr_bins with a private prior: the
// value_prior release of the training values at ε₁ (nil for a public
// prior). BinsStage returns its second, the bins at ε − ε₁ for the prior
// the first released (the setting's ε splits by basic composition; the
// ledger records each stage as a step of its own). Both panic for another
// kind.
func (m *Mechanism) PriorStage() *Mechanism {
	m.mustBins()
	if m.p.PriorEpsilon == 0 {
		return nil
	}
	p, err := New(Params{Kind: ValuePrior, Epsilon: m.p.PriorEpsilon, Values: m.p.Values})
	if err != nil {
		panic(fmt.Sprintf("pets: the prior stage of %s: %v", m, err))
	}
	return p
}

// BinsStage: see PriorStage. For a public prior it is m itself.
func (m *Mechanism) BinsStage() *Mechanism {
	m.mustBins()
	if m.p.PriorEpsilon == 0 {
		return m
	}
	p := m.p
	p.Epsilon, p.PriorEpsilon = p.Epsilon-p.PriorEpsilon, 0
	b, err := New(p)
	if err != nil {
		panic(fmt.Sprintf("pets: the bins stage of %s: %v", m, err))
	}
	return b
}

func (m *Mechanism) mustBins() {
	if _, ok := m.vl.(*binsLaw); !ok {
		panic("pets: a stage of " + m.String() + ", which is not rr_bins")
	}
}

// noisy adds the histogram's noise to each count, in order: two-sided
// geometric of rate ε₁/HistogramSensitivity.
func (l *histogramValues) noisy(counts []float64, r Rand) {
	for i := range counts {
		counts[i] += float64(TwoSidedGeometric(r, l.rate))
	}
}
