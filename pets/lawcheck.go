package pets

import (
	"fmt"
	"math"
)

// CheckLaw checks that m's law answers what the rest of the program asks of
// it, for the registry test and for tests of kinds registered from
// outside: a law of m.Classes() classes of the shape its release says;
// for an ExampleLaw, at a few priors (none for a kind without one; else
// the uniform prior and priors confident in each of three classes), a
// channel that is a probability law declaring only the structure it has
// (Channel.Check) and a sampler that follows it: the frequency of every
// release z among draws releases of each label y within 6 binomial SE of
// P(z | y) (plus 1e-9), a false failure below 2e-9 per frequency; for a
// BagLaw, releases of bags of 4 (of one for ReleaseCounts) that lie on the
// grid of a discrete noise law, finite targets and a sensitivity of 1 or
// more.
func CheckLaw(m *Mechanism, draws int, r Rand) error {
	c := m.Classes()
	if m.spec.Release.Proportions() {
		n := 4
		if !m.spec.Release.PerBag() {
			n = 1
		}
		return checkBagLaw(m.bag, c, n, r)
	}
	ex := m.ex
	if ex == nil || m.bag != nil || ex.Classes() != c {
		return fmt.Errorf("%s: a kind released per example without an ExampleLaw of %d classes", m, c)
	}
	priors := [][]float64{nil}
	if m.spec.Release.WithPrior() {
		priors = [][]float64{UniformPrior(c)}
		for _, a := range []int{0, 1, c - 1} {
			p := make([]float64, c)
			for y := range p {
				p[y] = 0.03 / float64(c-1)
			}
			p[a] = 0.97
			priors = append(priors, p)
		}
	}
	labels, dst, counts := make([]uint8, draws), make([]uint8, draws), make([]int, 256)
	for _, prior := range priors {
		ch := ex.Channel(ex.ChannelOf(prior))
		if ch.C != c {
			return fmt.Errorf("%s: the channel of prior %v has %d classes", m, prior, ch.C)
		}
		if err := ch.Check(); err != nil {
			return fmt.Errorf("%s: the channel of prior %v: %w", m, prior, err)
		}
		var rows []float64
		if prior != nil {
			rows = make([]float64, draws*c)
			for i := range draws {
				copy(rows[i*c:], prior)
			}
		}
		for y := range uint8(c) {
			for i := range labels {
				labels[i] = y
			}
			ex.Release(dst, labels, rows, r)
			clear(counts)
			for _, z := range dst {
				counts[z]++
			}
			for z := range 256 {
				want := 0.0
				if z < ch.Z {
					want = ch.Prob(uint8(z), y)
				}
				got := float64(counts[z]) / float64(draws)
				if se := math.Sqrt(want*(1-want)/float64(draws)) + 1e-9; math.Abs(got-want) > 6*se {
					return fmt.Errorf("%s, prior %v, label %d: release %d drawn at frequency %v, its channel says %v", m, prior, y, z, got, want)
				}
			}
		}
	}
	return nil
}

// checkBagLaw is CheckLaw for a BagLaw of c classes on bags of n.
func checkBagLaw(b BagLaw, c, n int, r Rand) error {
	if b == nil || b.Classes() != c {
		return fmt.Errorf("a kind released as proportions without a BagLaw of %d classes", c)
	}
	if b.Sensitivity() < 1 || !(b.NoiseRate() >= 0) || (b.SumNoise() != SumExact) != (b.NoiseRate() > 0) {
		return fmt.Errorf("sensitivity %d, noise %v at rate %v", b.Sensitivity(), b.SumNoise(), b.NoiseRate())
	}
	counts, alpha, target := make([]int, c), make([]float64, c-1), make([]float64, c-1)
	for i := range 1000 {
		clear(counts)
		for j := range n {
			counts[(i+j*i/3)%c]++
		}
		b.ReleaseBag(alpha, counts, r)
		b.Target(target, alpha, n)
		for j, a := range alpha {
			if b.SumNoise().Discrete() && (a < 0 || a > 1 || a*float64(n) != math.Round(a*float64(n))) {
				return fmt.Errorf("released proportion %v of class %d for a discrete noise law", a, j+1)
			}
			if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(target[j]) || math.IsInf(target[j], 0) {
				return fmt.Errorf("released proportion %v, target %v of class %d", a, target[j], j+1)
			}
		}
	}
	return nil
}
