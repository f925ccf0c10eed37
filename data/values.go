package data

import (
	"fmt"
	"math"
)

// Conversion values (LabelsValues): a label is a real value on a public
// grid 0, s, 2s, …, B (ValueGrid; meta.json's value_max B and value_step
// s), the float64 `label` column. Every value is clipped to [0, B] and
// rounded to the grid when a dataset is made, so that every audit is a
// finite sum over the grid's points; an import counts what it clipped and
// rounded (Meta.ClippedValues, RoundedValues) and refuses NaN, ±Inf and
// negative values, naming the file and line. The columns of values:
//
//	label     float64 the value (raw)
//	p0        float64 synthetic: P(y = 0 | x) (raw)
//	mu, sigma float64 synthetic: y | y > 0 is exp(N(mu, sigma²)) clipped and rounded (raw)
//	value_rr  float64 a release: one released value per row (laplace, rr_bins)
//	bag_mean  float64 a release: the bag's released mean value (value_bags), with bag_id

// Column names of conversion values (besides label and bag_id).
const (
	ColP0      = "p0"
	ColMu      = "mu"
	ColSigma   = "sigma"
	ColValueRR = "value_rr"
	ColBagMean = "bag_mean"
)

// meta.json keys of conversion values.
const (
	MetaValueMax  = "value_max"
	MetaValueStep = "value_step"
)

// ValueGrid is the grid of a dataset's values: Points() values 0, Step, …,
// Max (point i is i·Step, the last Max exactly). It is pets.Grid's
// arithmetic (the two are tested to agree).
type ValueGrid struct {
	Max, Step float64
}

// MaxValuePoints is the most points a grid may have (pets.MaxValuePoints).
const MaxValuePoints = 100_001

// DefaultValueMax and DefaultValueStep are synth --kind values' grid: B =
// 400 (a conversion value clipped at 400 euros) and step 1.
const (
	DefaultValueMax  = 400
	DefaultValueStep = 1
)

// Check returns an error wrapping ErrInvalid and naming value_max or
// value_step unless 0 < Max and 0 < Step are finite, Max is a whole
// number of steps and the grid has at most MaxValuePoints points.
func (g ValueGrid) Check() error {
	switch {
	case !(g.Max > 0) || math.IsInf(g.Max, 0):
		return fmt.Errorf("%w: %s (B) must be finite and > 0, got %v", ErrInvalid, MetaValueMax, g.Max)
	case !(g.Step > 0) || math.IsInf(g.Step, 0):
		return fmt.Errorf("%w: %s must be finite and > 0, got %v", ErrInvalid, MetaValueStep, g.Step)
	}
	n := g.Max / g.Step
	if math.Abs(n-math.Round(n)) > 1e-9*math.Max(1, n) || math.Round(n) < 1 {
		return fmt.Errorf("%w: %s %v is not a whole number of %s %v", ErrInvalid, MetaValueMax, g.Max, MetaValueStep, g.Step)
	}
	if n >= MaxValuePoints {
		return fmt.Errorf("%w: %s %v up to %s %v makes %.0f grid points, more than %d", ErrInvalid, MetaValueStep, g.Step, MetaValueMax, g.Max, math.Round(n)+1, MaxValuePoints)
	}
	return nil
}

// Points is the number of grid points.
func (g ValueGrid) Points() int { return int(math.Round(g.Max/g.Step)) + 1 }

// Value is grid point i's value.
func (g ValueGrid) Value(i int) float64 {
	if i == g.Points()-1 {
		return g.Max
	}
	return float64(i) * g.Step
}

// Snap clips a finite v ≥ 0 to [0, Max] and rounds it to the nearest grid
// point (halves up): its value, and whether it clipped or rounded it.
func (g ValueGrid) Snap(v float64) (snapped float64, clipped, rounded bool) {
	if v > g.Max {
		return g.Max, true, false
	}
	i := min(int(math.Floor(v/g.Step+0.5)), g.Points()-1)
	s := g.Value(i)
	return s, false, math.Abs(v-s) > 1e-9*g.Step
}

// OnGrid reports whether v is a grid point (within 1e-9 of a step).
func (g ValueGrid) OnGrid(v float64) bool {
	if !(v >= 0 && v <= g.Max+1e-9*g.Step) {
		return false
	}
	i := min(int(math.Round(v/g.Step)), g.Points()-1)
	return math.Abs(v-g.Value(i)) <= 1e-9*g.Step
}

// ValueGrid returns the dataset's grid (the zero grid for labels that are
// not values).
func (m *Meta) ValueGrid() ValueGrid {
	if m.LabelKind() != LabelsValues {
		return ValueGrid{}
	}
	return ValueGrid{Max: m.ValueMax, Step: m.ValueStep}
}

// snapValue checks one value read from a file (refusing NaN, ±Inf and a
// negative value with ErrLabel) and snaps it to the grid, counting what it
// clipped and rounded.
func (g ValueGrid) snapValue(v float64, clipped, rounded *int64) (float64, error) {
	switch {
	case math.IsNaN(v):
		return 0, fmt.Errorf("%w: the value is NaN", ErrLabel)
	case math.IsInf(v, 0):
		return 0, fmt.Errorf("%w: the value is %v", ErrLabel, v)
	case v < 0:
		return 0, fmt.Errorf("%w: the value %v is negative (values are ≥ 0)", ErrLabel, v)
	}
	s, c, r := g.Snap(v)
	if c {
		*clipped++
	}
	if r {
		*rounded++
	}
	return s, nil
}

// validateValues checks the value columns of a frame: label, p0, mu,
// sigma, value_rr and bag_mean; a frame holds class labels or values,
// never both.
func (f *Frame) validateValues() error {
	if f.Value != nil && (f.Label != nil || f.Classes != 0) {
		return fmt.Errorf("%w: a frame holds values or classes, not both", ErrSchema)
	}
	for i, v := range f.Value {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: row %d has the value %v (values are finite and ≥ 0)", ErrLabel, i, v)
		}
	}
	for i, p := range f.P0 {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("%w: row %d has %s=%v outside [0,1]", ErrInvalid, i, ColP0, p)
		}
	}
	for i, s := range f.Sigma {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: row %d has %s=%v (want finite and > 0)", ErrInvalid, i, ColSigma, s)
		}
	}
	for _, c := range []struct {
		name string
		v    []float64
	}{{ColMu, f.Mu}, {ColValueRR, f.ValueRR}, {ColBagMean, f.BagMean}} {
		for i, x := range c.v {
			if !finite(x) {
				return fmt.Errorf("%w: row %d has %s=%v", ErrInvalid, i, c.name, x)
			}
		}
	}
	return nil
}

// CheckValues returns an error naming the first row whose value is not a
// point of g.
func (f *Frame) CheckValues(g ValueGrid) error {
	for i, v := range f.Value {
		if !g.OnGrid(v) {
			return fmt.Errorf("%w: row %d has the value %v, not a point of the grid [0, %v] step %v", ErrLabel, i, v, g.Max, g.Step)
		}
	}
	return nil
}
