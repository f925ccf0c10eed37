package pets

import (
	"fmt"
	"math"
)

// Conversion values (Takes.Values): labels that are non-negative reals on a
// public grid 0, s, 2s, …, B (Grid: B = Max, s = Step), as conversion
// logs measure them (a purchase clipped to 400 euros, a count). Every
// value a dataset holds is clipped to [0, B] and rounded to the grid when
// it is read, so that every audit is a finite sum over the grid's points.
// A mechanism on values has a ValueLaw; its release is one of the
// ValueForm shapes.

// Grid is the public grid of conversion values: the Points() values
// 0, Step, 2·Step, …, Max (point i is i·Step; the last is Max exactly).
type Grid struct {
	Max  float64 // B > 0, a whole number of steps
	Step float64 // s > 0
}

// MaxValuePoints is the most points a grid may have: the exact audit sums
// over the grid per example (per bag member, over the grid times the
// bag-mates' sums), and rr_bins's dynamic program is cubic in it
// (MaxBinsPoints).
const MaxValuePoints = 100_001

// DefaultValueStep is the grid step when a dataset does not say (value_step).
const DefaultValueStep = 1

// UnitGrid is the grid [0, 1] step 1: what a ledger row, which records a
// mechanism's kind, bag size and ε but no grid, rebuilds a kind on values
// on (its privacy, and so its accounting, does not depend on the grid).
var UnitGrid = Grid{Max: 1, Step: 1}

// IsZero reports whether g is the zero Grid (no values: classes).
func (g Grid) IsZero() bool { return g == Grid{} }

// Points returns the number of grid points round(Max/Step) + 1 (0 for a
// grid Check refuses).
func (g Grid) Points() int {
	if g.Check() != nil {
		return 0
	}
	return int(math.Round(g.Max/g.Step)) + 1
}

// Value returns grid point i's value: i·Step, and Max exactly at the last.
func (g Grid) Value(i int) float64 {
	if i == g.Points()-1 {
		return g.Max
	}
	return float64(i) * g.Step
}

// Values returns every grid point's value, in order.
func (g Grid) Values() []float64 {
	v := make([]float64, g.Points())
	for i := range v {
		v[i] = g.Value(i)
	}
	return v
}

// Check returns an error (a *ParamError naming "value_max" or
// "value_step") unless 0 < Max and 0 < Step are finite, Max is a whole
// number of steps (within 1e-9 of one) and the grid has at most
// MaxValuePoints points.
func (g Grid) Check() error {
	switch {
	case !(g.Max > 0) || math.IsInf(g.Max, 0):
		return &ParamError{Param: "value_max", Msg: fmt.Sprintf("B must be finite and > 0, got %v", g.Max)}
	case !(g.Step > 0) || math.IsInf(g.Step, 0):
		return &ParamError{Param: "value_step", Msg: fmt.Sprintf("must be finite and > 0, got %v", g.Step)}
	}
	n := g.Max / g.Step
	if math.Abs(n-math.Round(n)) > 1e-9*math.Max(1, n) || math.Round(n) < 1 {
		return &ParamError{Param: "value_step", Msg: fmt.Sprintf("B = %v is not a whole number of steps of %v", g.Max, g.Step)}
	}
	if n >= MaxValuePoints {
		return &ParamError{Param: "value_step", Msg: fmt.Sprintf("a grid of %v steps up to %v has %.0f points, more than %d", g.Step, g.Max, math.Round(n)+1, MaxValuePoints)}
	}
	return nil
}

// Index returns the grid point of a value that is one (within 1e-9 of a
// step), and false for any other value (NaN included).
func (g Grid) Index(v float64) (int, bool) {
	if !(v >= 0 && v <= g.Max+1e-9*g.Step) {
		return 0, false
	}
	i := int(math.Round(v / g.Step))
	if n := g.Points(); i >= n {
		i = n - 1
	}
	if math.Abs(v-g.Value(i)) > 1e-9*g.Step {
		return 0, false
	}
	return i, true
}

// Snap clips a finite v ≥ 0 to [0, Max] and rounds it to the nearest grid
// point (halves up), returning the point and whether it clipped or
// rounded it. The caller refuses NaN, ±Inf and negative values first.
func (g Grid) Snap(v float64) (i int, clipped, rounded bool) {
	n := g.Points()
	if v > g.Max {
		return n - 1, true, false
	}
	i = min(int(math.Floor(v/g.Step+0.5)), n-1)
	return i, false, math.Abs(v-g.Value(i)) > 1e-9*g.Step
}

// String is "[0, 400] step 1".
func (g Grid) String() string { return fmt.Sprintf("[0, %g] step %g", g.Max, g.Step) }

// Indices maps values on the grid to their points; a value that is not a
// grid point is a programmer bug (values are snapped when read).
func (g Grid) Indices(values []float64) []int32 {
	out := make([]int32, len(values))
	for r, v := range values {
		i, ok := g.Index(v)
		if !ok {
			panic(fmt.Sprintf("pets: value %v at row %d is not a point of the grid %s", v, r, g))
		}
		out[r] = int32(i)
	}
	return out
}

// ValueForm is the shape of a release of values, what its ValueLaw says
// of it (the audit and the trainer serve each form).
type ValueForm uint8

const (
	// ValueIdentity: the value itself (none; never released as a file).
	ValueIdentity ValueForm = iota
	// ValueNothing: nothing (bot).
	ValueNothing
	// ValueLaplace: per example, z = y + Lap(b), b = Scale() = B/ε,
	// unclipped, so E[z | y] = y (laplace).
	ValueLaplace
	// ValueBins: per example, one of the m values of Bins made from a
	// prior over the grid (rr_bins: RR-on-Bins, Ghazi et al. 2023).
	ValueBins
	// ValueBagMean: per bag of n rows, (Σ y + Lap(b))/n, b = Scale() = B/ε,
	// or the exact mean when b = 0 (value_bags).
	ValueBagMean
	// ValueHistogram: one noisy histogram of a dataset's values over the
	// grid (value_prior: rr_bins's private prior).
	ValueHistogram
)

// ValueLaw is the law of a mechanism on conversion values: the grid its
// labels lie on, the shape of its release and how it draws one.
type ValueLaw interface {
	Law // Classes() is 0: values are not classes
	Grid() Grid
	Form() ValueForm
	// Scale is the Laplace noise scale b in value units of ValueLaplace (on
	// each value) and ValueBagMean (on each bag's sum), B/ε; 0 for an exact
	// release and the other forms.
	Scale() float64
	// Release writes the release of each label (a grid value) into dst for
	// a per-example form (ValueIdentity, ValueLaplace, ValueBins), drawing
	// from r; bins are the bins of a ValueBins law (Mechanism.Bins), nil
	// otherwise. dst may alias labels. Panics for a bag or histogram form.
	Release(dst, labels []float64, bins *Bins, r Rand)
	// ReleaseBag returns the release of a bag of n ≥ 1 rows whose values
	// sum to sum (ValueBagMean). Panics for the other forms.
	ReleaseBag(sum float64, n int, r Rand) float64
}

// valueBase holds what every value law has: its grid.
type valueBase struct{ g Grid }

func (valueBase) Classes() int   { return 0 }
func (b valueBase) Grid() Grid   { return b.g }
func (valueBase) Scale() float64 { return 0 }

func (b valueBase) notPerExample(f ValueForm) {
	panic(fmt.Sprintf("pets: a value law of form %d releases no value per example", f))
}

func (b valueBase) notPerBag(f ValueForm) {
	panic(fmt.Sprintf("pets: a value law of form %d releases no bag", f))
}

// checkValues panics on a label that is not a point of g (a programmer
// bug: values are snapped to the grid when read).
func checkValues(dst, labels []float64, g Grid) {
	if len(dst) != len(labels) {
		panic(fmt.Sprintf("pets: %d outputs for %d values", len(dst), len(labels)))
	}
	for r, v := range labels {
		if _, ok := g.Index(v); !ok {
			panic(fmt.Sprintf("pets: value %v at row %d is not a point of the grid %s", v, r, g))
		}
	}
}

// valueGrid returns the grid of a value kind's parameters, checked, or the
// error naming what is missing.
func valueGrid(p Params, name string) (Grid, error) {
	if p.Values.IsZero() {
		return Grid{}, &ParamError{Param: "values", Msg: fmt.Sprintf("%s releases conversion values; the labels are classes (a values dataset gives value_max and value_step)", name)}
	}
	return p.Values, p.Values.Check()
}

// identityValues is none on values: the value itself.
type identityValues struct{ valueBase }

func (identityValues) Form() ValueForm { return ValueIdentity }

func (l identityValues) Release(dst, labels []float64, _ *Bins, _ Rand) {
	checkValues(dst, labels, l.g)
	copy(dst, labels)
}

func (l identityValues) ReleaseBag(float64, int, Rand) float64 { l.notPerBag(ValueIdentity); return 0 }

// silentValues is bot on values: nothing.
type silentValues struct{ valueBase }

func (silentValues) Form() ValueForm { return ValueNothing }

func (l silentValues) Release(dst, labels []float64, _ *Bins, _ Rand) {
	checkValues(dst, labels, l.g)
	clear(dst)
}

func (l silentValues) ReleaseBag(float64, int, Rand) float64 { l.notPerBag(ValueNothing); return 0 }

// CheckValueLaw checks a value law against what it states, for the
// registry test and for tests of kinds registered from outside: the grid
// it was made for, its form and scale, and a sampler that follows its law.
// Per example: each release of each of three grid points (0, the middle,
// B) over draws: ValueIdentity returns it, ValueNothing 0, ValueLaplace
// a mean within 6 SE of the value and a variance within 6 SE of 2b²
// (fourth moment 24b⁴), ValueBins every bin value at its probability
// within 6 binomial SE; a bag (ValueBagMean) of 4 rows: the mean release
// within 6 SE of the bag's mean. False failure below 2e-9 per check.
func CheckValueLaw(m *Mechanism, draws int, r Rand) error {
	l := m.ValueLaw()
	if l == nil || m.ex != nil || m.bag != nil {
		return fmt.Errorf("%s: a kind on values without a ValueLaw", m)
	}
	g := l.Grid()
	if g != m.p.Values || g.Check() != nil {
		return fmt.Errorf("%s: its law's grid %s is not the one it was made for (%s)", m, g, m.p.Values)
	}
	n := g.Points()
	points := []int{0, n / 2, n - 1}
	switch f := l.Form(); f {
	case ValueIdentity, ValueNothing, ValueLaplace, ValueBins:
		if (f == ValueLaplace) != (l.Scale() > 0) {
			return fmt.Errorf("%s: form %d with noise scale %v", m, f, l.Scale())
		}
		var bins *Bins
		if f == ValueBins {
			var err error
			if bins, err = m.Bins(UniformPrior(n)); err != nil {
				return fmt.Errorf("%s: bins of the uniform prior: %w", m, err)
			}
		}
		labels, dst := make([]float64, draws), make([]float64, draws)
		for _, i := range points {
			y := g.Value(i)
			for k := range labels {
				labels[k] = y
			}
			l.Release(dst, labels, bins, r)
			if err := checkDraws(f, l.Scale(), bins, i, y, dst); err != nil {
				return fmt.Errorf("%s, value %v: %w", m, y, err)
			}
		}
	case ValueBagMean:
		if !m.spec.Release.PerBag() {
			return fmt.Errorf("%s: a bag law on a release that is not per bag", m)
		}
		b := l.Scale()
		sum := g.Value(0) + g.Value(n/2) + g.Value(n-1) + g.Value(n-1)
		var s float64
		for range draws {
			s += l.ReleaseBag(sum, 4, r)
		}
		mean, se := s/float64(draws), math.Sqrt(2)*b/4/math.Sqrt(float64(draws))
		if math.Abs(mean-sum/4) > 6*se+1e-9*g.Max {
			return fmt.Errorf("%s: bags of sum %v release a mean %v (want %v, SE %v)", m, sum, mean, sum/4, se)
		}
	case ValueHistogram:
	default:
		return fmt.Errorf("%s: form %d unknown", m, f)
	}
	return nil
}

// checkDraws checks the releases dst of the value y (grid point i) of a
// per-example form.
func checkDraws(f ValueForm, b float64, bins *Bins, i int, y float64, dst []float64) error {
	n := float64(len(dst))
	switch f {
	case ValueIdentity, ValueNothing:
		want := y
		if f == ValueNothing {
			want = 0
		}
		for _, z := range dst {
			if z != want {
				return fmt.Errorf("released %v, want %v", z, want)
			}
		}
	case ValueLaplace:
		var s, s2 float64
		for _, z := range dst {
			d := z - y
			s += d
			s2 += d * d
		}
		mean, v := s/n, s2/n
		if se := math.Sqrt(2) * b / math.Sqrt(n); math.Abs(mean) > 6*se {
			return fmt.Errorf("noise mean %v, SE %v", mean, se)
		}
		if se := math.Sqrt(24*b*b*b*b-4*b*b*b*b) / math.Sqrt(n); math.Abs(v-2*b*b) > 6*se {
			return fmt.Errorf("noise variance %v, want %v (SE %v)", v, 2*b*b, se)
		}
	case ValueBins:
		counts := make([]int, bins.Len())
		for _, z := range dst {
			j := bins.ValueIndex(z)
			if j < 0 {
				return fmt.Errorf("released %v, not a bin value of %v", z, bins.Values)
			}
			counts[j]++
		}
		for j, c := range counts {
			want := bins.Prob(j, i)
			got := float64(c) / n
			if se := math.Sqrt(want*(1-want)/n) + 1e-9; math.Abs(got-want) > 6*se {
				return fmt.Errorf("bin %d released at frequency %v, its law says %v", j, got, want)
			}
		}
	}
	return nil
}

// ZeroInflatedLogNormal returns the law over the grid of the synthetic
// conversion value (data synth --kind values): 0 with probability p0,
// else exp(N(mu, sigma²)) clipped to [0, B] and rounded to the nearest
// point as Grid.Snap does (halves up): point 0 takes e^X < s/2, point i
// takes [(i−½)s, (i+½)s), the last point everything from (G−1.5)s up.
// p0 ∈ [0, 1], sigma > 0.
func ZeroInflatedLogNormal(g Grid, p0, mu, sigma float64) []float64 {
	n := g.Points()
	out := make([]float64, n)
	cdf := func(t float64) float64 { // P(e^X < t)
		if t <= 0 {
			return 0
		}
		return 0.5 * math.Erfc(-(math.Log(t)-mu)/(sigma*math.Sqrt2))
	}
	prev := 0.0
	for i := range n - 1 {
		c := cdf((float64(i) + 0.5) * g.Step)
		out[i] = (1 - p0) * (c - prev)
		prev = c
	}
	out[n-1] = (1 - p0) * (1 - prev)
	out[0] += p0
	return out
}
