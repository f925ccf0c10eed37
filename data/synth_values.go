package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Kind values: conversion values with a known law per row, the values
// analogue of η, shaped like conversion logs (most rows zero): x ~ N(0,
// I_D),
//
//	P(y = 0 | x) = p0(x) = σ(u·x + b),  ‖u‖ = ValueZeroNorm,
//	y | y ≠ 0    = Snap(exp(N(mu(x), sigma²))), mu(x) = w·x + ValueMuBias, ‖w‖ = ValueMuNorm,
//
// clipped to [0, B] and rounded to the grid (ValueGrid.Snap; a rounding to
// 0 is a zero too). u and w are drawn from the seed; b is set so that the
// expected share of p0 over x is SynthOptions.ZeroRate (DefaultZeroRate),
// by bisection on the exact one-dimensional integral (u·x ~ N(0, ‖u‖²)).
// Each file has the columns label, p0, mu and sigma.

// Defaults of kind values.
const (
	DefaultZeroRate   = 0.9
	ValueZeroNorm     = 1.5
	ValueMuNorm       = 0.6
	ValueSigma        = 1.0
	valuePriorDraws   = 20_000
	valueQuadratureN  = 4_001
	valueQuadratureSD = 8.0
)

// ValueMuBias is mu's intercept, ln 30: a typical purchase of 30.
var ValueMuBias = math.Log(30)

// valueModel draws kind values' rows.
type valueModel struct {
	g     ValueGrid
	u, w  []float64
	b     float64
	sigma float64
}

// zeroRate is o's share of zeros, the default for 0.
func (o SynthOptions) zeroRate() float64 {
	if o.ZeroRate == 0 {
		return DefaultZeroRate
	}
	return o.ZeroRate
}

// valueGrid is o's grid, the defaults for zeros.
func (o SynthOptions) valueGrid() ValueGrid {
	g := ValueGrid{Max: o.ValueMax, Step: o.ValueStep}
	if g.Max == 0 {
		g.Max = DefaultValueMax
	}
	if g.Step == 0 {
		g.Step = DefaultValueStep
	}
	return g
}

// checkValues refuses kind values' options out of range, and those
// options on another kind.
func (o SynthOptions) checkValues() error {
	if o.Kind != SynthValues {
		if o.ValueMax != 0 || o.ValueStep != 0 || o.ZeroRate != 0 {
			return fmt.Errorf("%w: kind %s takes no value_max, value_step or zero_rate (kind values does)", ErrInvalid, o.Kind)
		}
		return nil
	}
	if o.Classes != 0 {
		return fmt.Errorf("%w: kind values has conversion values, not %s", ErrInvalid, MetaClasses)
	}
	if !(o.ZeroRate >= 0 && o.ZeroRate < 1) {
		return fmt.Errorf("%w: zero_rate must be in (0, 1) (0: the default %v), got %v", ErrInvalid, DefaultZeroRate, o.ZeroRate)
	}
	return o.valueGrid().Check()
}

func newValueModel(o SynthOptions) *valueModel {
	r := rand.New(rand.NewPCG(o.Seed, streamSynthParams))
	dir := func(norm float64) []float64 {
		v := make([]float64, o.Features)
		var s float64
		for j := range v {
			v[j] = r.NormFloat64()
			s += v[j] * v[j]
		}
		for j := range v {
			v[j] *= norm / math.Sqrt(s)
		}
		return v
	}
	m := &valueModel{g: o.valueGrid(), u: dir(ValueZeroNorm), w: dir(ValueMuNorm), sigma: ValueSigma}
	m.b = zeroBias(o.zeroRate(), ValueZeroNorm)
	return m
}

// zeroBias returns b with E[σ(b + s·Z)] = rate, Z ~ N(0, 1), by bisection
// on a midpoint rule over ±8 SD (error below 1e-12).
func zeroBias(rate, s float64) float64 {
	mean := func(b float64) float64 {
		var sum, wsum float64
		h := 2 * valueQuadratureSD / valueQuadratureN
		for k := range valueQuadratureN {
			z := -valueQuadratureSD + (float64(k)+0.5)*h
			w := math.Exp(-z * z / 2)
			sum += w / (1 + math.Exp(-(b + s*z)))
			wsum += w
		}
		return sum / wsum
	}
	lo, hi := -50.0, 50.0
	for range 100 {
		mid := (lo + hi) / 2
		if mean(mid) < rate {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// law returns p0, mu of a row.
func (m *valueModel) law(x []float32) (p0, mu float64) {
	var a, c float64
	for j, v := range x {
		a += m.u[j] * float64(v)
		c += m.w[j] * float64(v)
	}
	return 1 / (1 + math.Exp(-(a + m.b))), c + ValueMuBias
}

// frame draws n rows: features, then per row one uniform for the zero and
// one normal for the log-value.
func (m *valueModel) frame(names []string, n int, r *rand.Rand, groups int) *Frame {
	d := len(names)
	f := &Frame{Rows: n, Features: names, X: make([]float32, n*d), Value: make([]float64, n),
		P0: make([]float64, n), Mu: make([]float64, n), Sigma: make([]float64, n)}
	for i := range n {
		x := f.X[i*d : (i+1)*d]
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		p0, mu := m.law(x)
		f.P0[i], f.Mu[i], f.Sigma[i] = p0, mu, m.sigma
		u, z := r.Float64(), r.NormFloat64()
		if u >= p0 {
			f.Value[i], _, _ = m.g.Snap(math.Exp(mu + m.sigma*z))
		}
	}
	addGroups(f, groups)
	return f
}

// ValuePMF writes into dst (len g.Points()) the law over the grid of a
// row of kind values: p0 at 0 plus (1 − p0) times the log-normal's mass
// on each point's cell under Snap (pets.ZeroInflatedLogNormal is the
// same law).
func ValuePMF(g ValueGrid, p0, mu, sigma float64, dst []float64) {
	n := g.Points()
	cdf := func(t float64) float64 { return 0.5 * math.Erfc(-(math.Log(t)-mu)/(sigma*math.Sqrt2)) }
	prev := 0.0
	for i := range n - 1 {
		c := cdf((float64(i) + 0.5) * g.Step)
		dst[i] = (1 - p0) * (c - prev)
		prev = c
	}
	dst[n-1] = (1 - p0) * (1 - prev)
	dst[0] += p0
}

// valueMoments returns the mean and variance of the law of ValuePMF.
func valueMoments(g ValueGrid, pmf []float64) (mean, variance float64) {
	var m2 float64
	for i, p := range pmf {
		v := g.Value(i)
		mean += p * v
		m2 += p * v * v
	}
	return mean, max(m2-mean*mean, 0)
}

// populationPrior is the mean law over valuePriorDraws draws of x from
// the calibration stream (no label drawn).
func (m *valueModel) populationPrior(d int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, streamSynthCalib))
	n := m.g.Points()
	out, pmf, x := make([]float64, n), make([]float64, n), make([]float32, d)
	for range valuePriorDraws {
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		p0, mu := m.law(x)
		ValuePMF(m.g, p0, mu, m.sigma, pmf)
		for i, p := range pmf {
			out[i] += p / valuePriorDraws
		}
	}
	return out
}

// bayesMSE returns the Bayes predictor's expected and empirical test MSE
// on a frame of kind values.
func (m *valueModel) bayesMSE(f *Frame) (expected, empirical float64) {
	pmf := make([]float64, m.g.Points())
	for i := range f.Rows {
		ValuePMF(m.g, f.P0[i], f.Mu[i], f.Sigma[i], pmf)
		mean, v := valueMoments(m.g, pmf)
		expected += v
		empirical += (f.Value[i] - mean) * (f.Value[i] - mean)
	}
	return expected / float64(f.Rows), empirical / float64(f.Rows)
}
