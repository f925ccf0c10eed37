package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// DefaultConversionRate is the share of rows of kind conversions that
// convert (send a report) unless SynthOptions.ConversionRate says
// otherwise: most sources never convert.
const DefaultConversionRate = 0.05

// conversionCalibrationRows is the number of feature draws (their own
// stream) over which the no-report logit is set: the data's expected
// conversion rate is then within sd(1 − η_0)/256 (one SD) of the rate
// asked for — ±0.0008 at the default rate, where sd(1 − η_0) ≈ 0.2 —
// for about 0.1 s of arithmetic at 25 classes and 16 features.
const conversionCalibrationRows = 1 << 16

// conversionRate is o's conversion rate, the default for 0.
func (o SynthOptions) conversionRate() float64 {
	if o.ConversionRate == 0 {
		return DefaultConversionRate
	}
	return o.ConversionRate
}

// classes is the number of label classes o's dataset has (0 for the
// binary kinds).
func (o SynthOptions) classes() int {
	switch o.Kind {
	case SynthMulticlass:
		return o.Classes
	case SynthConversions:
		return 1 + o.TriggerData*o.Windows
	}
	return 0
}

// checkConversions refuses kind conversions' options out of range, and
// those options on another kind.
func (o SynthOptions) checkConversions() error {
	if o.Kind != SynthConversions {
		if o.TriggerData != 0 || o.Windows != 0 || o.ConversionRate != 0 {
			return fmt.Errorf("%w: kind %s takes no trigger_data, windows or conversion_rate (kind conversions does)", ErrInvalid, o.Kind)
		}
		return nil
	}
	switch {
	case o.TriggerData < 1:
		return fmt.Errorf("%w: trigger_data must be ≥ 1 for kind conversions, got %d", ErrInvalid, o.TriggerData)
	case o.Windows < 1:
		return fmt.Errorf("%w: windows must be ≥ 1 for kind conversions, got %d", ErrInvalid, o.Windows)
	case o.TriggerData > MaxClasses || o.Windows > MaxClasses || 1+o.TriggerData*o.Windows > MaxClasses:
		return fmt.Errorf("%w: trigger_data %d × windows %d: kind conversions has 1 + trigger_data·windows classes, at most %d", ErrInvalid, o.TriggerData, o.Windows, MaxClasses)
	case o.Classes != 0 && o.Classes != o.classes():
		return fmt.Errorf("%w: %s %d: kind conversions with trigger_data %d and windows %d has 1 + %d·%d = %d", ErrInvalid, MetaClasses, o.Classes, o.TriggerData, o.Windows, o.TriggerData, o.Windows, o.classes())
	case !(o.ConversionRate >= 0 && o.ConversionRate < 1):
		return fmt.Errorf("%w: conversion_rate must be in (0, 1) (0: the default %v), got %v", ErrInvalid, DefaultConversionRate, o.ConversionRate)
	}
	return nil
}

// newConversionModel is SynthConversions' η: SynthMulticlass's softmax
// over C = 1 + T·W classes (the same weights for the same seed and C),
// with the no-report logit b added to class 0's, set by bisection so that
// the mean η_0 over conversionCalibrationRows draws of x (stream
// streamSynthCalib) is 1 − the conversion rate.
func newConversionModel(o SynthOptions) *multiclassModel {
	m := newMulticlassModel(o.classes(), o.Features, o.Seed)
	a := calibrationGaps(m, o.Seed)
	target := 1 - o.conversionRate()
	lo, hi := -200.0, 200.0
	for range 60 { // 400/2^60 < 1e-15
		b := (lo + hi) / 2
		if meanNoReport(a, b) < target {
			lo = b
		} else {
			hi = b
		}
	}
	m.bias = make([]float64, m.c)
	m.bias[0] = (lo + hi) / 2
	return m
}

// meanNoReport is the mean of η_0 = σ(b + a_i) over the gaps a.
func meanNoReport(a []float64, b float64) float64 {
	var sum float64
	for _, ai := range a {
		sum += 1 / (1 + math.Exp(-(b + ai)))
	}
	return sum / float64(len(a))
}

// calibrationGaps draws conversionCalibrationRows feature rows from the
// seed's calibration stream and returns each one's gap
// a = z_0(x) − ln Σ_{c≥1} e^{z_c(x)}, z = W·x: with the no-report logit b,
// η_0(x) = σ(b + a).
func calibrationGaps(m *multiclassModel, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, streamSynthCalib))
	a := make([]float64, conversionCalibrationRows)
	z := make([]float64, m.c)
	for i := range a {
		for c := range z {
			z[c] = 0
		}
		for j := range m.d {
			v := float64(float32(r.NormFloat64())) // as frame draws x
			for c := range z {
				z[c] += m.w[c*m.d+j] * v
			}
		}
		mx := math.Inf(-1)
		for _, t := range z[1:] {
			mx = max(mx, t)
		}
		var sum float64
		for _, t := range z[1:] {
			sum += math.Exp(t - mx)
		}
		a[i] = z[0] - mx - math.Log(sum)
	}
	return a
}
