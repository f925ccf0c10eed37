package data

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"

	"labelprivacy/internal/enum"
	"labelprivacy/internal/stats"
)

// SynthKind is the family of synthetic data with known η(x) = P(y=1|x)
// (or, for SynthMulticlass, the known class probabilities η_c(x)).
type SynthKind uint8

const (
	// SynthLogistic: x ~ N(0, I_D), η(x) = σ(w·x + b) with ‖w‖ = LogisticNorm
	// (direction drawn from the seed) and b = LogisticBias.
	SynthLogistic SynthKind = iota + 1
	// SynthBeta: η ~ Beta(2, 30) marginally (the paper's skewed synthetic,
	// Section 4 / Figure 4): η(x) = F⁻¹_Beta(2,30)(Φ(u·x)) for a unit u.
	SynthBeta
	// SynthUniform: η ~ U[0, 1] marginally: η(x) = Φ(u·x) for a unit u.
	SynthUniform
	// SynthMulticlass: labels of C classes (SynthOptions.Classes),
	// x ~ N(0, I_D), η(x) = softmax(W·x), W's rows of norm
	// MulticlassLogitNorm (synth_multiclass.go).
	SynthMulticlass
	// SynthConversions: the conversion outcomes of attribution sources, as
	// an event-level report of Chrome's Attribution Reporting API sees
	// them: C = 1 + T·W classes for T trigger-data values
	// (SynthOptions.TriggerData) and W reporting windows
	// (SynthOptions.Windows), class 0 no report and class 1 + t·W + w one
	// report with trigger data t in window w. SynthMulticlass's η with a
	// no-report logit added to class 0, set so that about
	// SynthOptions.ConversionRate of the rows convert
	// (synth_conversions.go).
	SynthConversions
	// SynthValues: conversion values (labels values) with a known law per
	// row, a zero-inflated discretized log-normal (synth_values.go).
	SynthValues
)

// Logistic synthetic parameters: ‖w‖ = 2 gives a Bayes AUC ≈ 0.86 and
// b = −0.5 a positive rate ≈ 0.42.
const (
	LogisticNorm = 2.0
	LogisticBias = -0.5
)

var synthKinds = enum.New("synthetic kind", ErrInvalid, []string{"logistic", "beta", "uniform", "multiclass", "conversions", "values"},
	[]SynthKind{SynthLogistic, SynthBeta, SynthUniform, SynthMulticlass, SynthConversions, SynthValues})

func (k SynthKind) String() string { return synthKinds.String(k, "SynthKind") }

// ParseSynthKind parses logistic | beta | uniform | multiclass |
// conversions | values (case-insensitive).
func ParseSynthKind(s string) (SynthKind, error) { return synthKinds.Parse(s) }

// SynthOptions configures Synth.
type SynthOptions struct {
	Kind     SynthKind
	Rows     int    // training rows ≥ 1
	TestRows int    // test rows ≥ 1
	Features int    // dense features D ≥ 1
	Seed     uint64 // drives every random choice
	Out      string // dataset directory
	// Groups > 0 adds the integer key column `group` (SynthGroupColumn):
	// ⌊Groups·Φ(x0)⌋, the bin of the first feature among Groups bins of
	// equal probability — rows of one group are alike in x0, like the
	// campaigns of an aggregate report (bags: key:group). It draws nothing,
	// so the other columns do not change. 0: no key column.
	Groups int
	// Classes is the number of label classes of kind multiclass, 2..64
	// (MaxClasses; 2 writes a binary dataset: labels 0/1 and `eta` =
	// η_1). The binary kinds take 0 or 2; kind conversions 0 or its
	// 1 + TriggerData·Windows.
	Classes int
	// Kind conversions: TriggerData ≥ 1 trigger-data values and Windows ≥ 1
	// reporting windows, 1 + TriggerData·Windows ≤ MaxClasses; about
	// ConversionRate of the rows convert (in (0, 1); 0:
	// DefaultConversionRate). The other kinds take none.
	TriggerData, Windows int
	ConversionRate       float64
	// Kind values: the grid's B (ValueMax, 0: DefaultValueMax) and step
	// (ValueStep, 0: DefaultValueStep), and the expected share of zeros
	// ZeroRate in (0, 1) (0: DefaultZeroRate). The other kinds take none.
	ValueMax, ValueStep, ZeroRate float64
}

// Independent PCG streams of one seed (math/rand/v2): changing the number of
// test rows does not change the training rows and vice versa.
const (
	streamSynthParams = 0x5e11_0001
	streamSynthTrain  = 0x5e11_0002
	streamSynthTest   = 0x5e11_0003
	streamSynthCalib  = 0x5e11_0004 // kind conversions: the rows that set the no-report logit
)

// synthModel maps features to η.
type synthModel struct {
	kind SynthKind
	w    []float64 // logistic: weights; beta/uniform: unit direction
	b    float64
}

func newSynthModel(kind SynthKind, d int, seed uint64) *synthModel {
	r := rand.New(rand.NewPCG(seed, streamSynthParams))
	w := make([]float64, d)
	var norm float64
	for j := range w {
		w[j] = r.NormFloat64()
		norm += w[j] * w[j]
	}
	norm = math.Sqrt(norm)
	scale := 1 / norm
	if kind == SynthLogistic {
		scale = LogisticNorm / norm
	}
	for j := range w {
		w[j] *= scale
	}
	m := &synthModel{kind: kind, w: w}
	if kind == SynthLogistic {
		m.b = LogisticBias
	}
	return m
}

func (m *synthModel) eta(x []float32) float64 {
	var t float64
	for j, v := range x {
		t += m.w[j] * float64(v)
	}
	switch m.kind {
	case SynthLogistic:
		return 1 / (1 + math.Exp(-(t + m.b)))
	case SynthUniform:
		return normCDF(t)
	default:
		return betaInv2(normCDF(t), 30)
	}
}

func normCDF(t float64) float64 { return 0.5 * math.Erfc(-t/math.Sqrt2) }

// betaCDF2 is the Beta(2, b) CDF: 1 − (1−x)^b·(1 + b·x).
func betaCDF2(x, b float64) float64 { return 1 - math.Pow(1-x, b)*(1+b*x) }

// betaInv2 inverts betaCDF2 by bisection to full float64 precision (60 halvings
// of [0,1] reach 1e-18).
func betaInv2(p, b float64) float64 {
	lo, hi := 0.0, 1.0
	for range 60 {
		mid := (lo + hi) / 2
		if betaCDF2(mid, b) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// SynthGroupColumn is the key column of a synthetic dataset made with
// SynthOptions.Groups > 0.
const SynthGroupColumn = "group"

// synthGen draws the rows of a synthetic dataset.
type synthGen interface {
	// frame draws n rows from r (and their groups when groups > 0).
	frame(names []string, n int, r *rand.Rand, groups int) *Frame
}

// frame draws n rows from r (and their groups when groups > 0).
func (m *synthModel) frame(names []string, n int, r *rand.Rand, groups int) *Frame {
	d := len(names)
	f := &Frame{Rows: n, Features: names, X: make([]float32, n*d), Label: make([]uint8, n), Eta: make([]float64, n)}
	for i := range n {
		x := f.X[i*d : (i+1)*d]
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		e := m.eta(x)
		f.Eta[i] = e
		if r.Float64() < e {
			f.Label[i] = 1
		}
	}
	addGroups(f, groups)
	return f
}

// addGroups adds the `group` key column of groups bins (none for 0).
func addGroups(f *Frame, groups int) {
	if groups > 0 {
		d := f.Dim()
		g := make([]int64, f.Rows)
		for i := range g {
			g[i] = min(int64(float64(groups)*normCDF(float64(f.X[i*d]))), int64(groups-1))
		}
		f.Keys = []KeyColumn{{Name: SynthGroupColumn, Values: g}}
	}
}

// Synth writes a synthetic dataset directory with an `eta` column (kinds
// multiclass and conversions with C ≥ 3: eta_0 … eta_{C−1}) and meta.json
// holding the generating parameters and the Bayes-optimal test AUC
// (multiclass, conversions: the Bayes accuracy).
func Synth(ctx context.Context, o SynthOptions) (*Meta, error) {
	st, err := SynthStaged(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := st.Publish(); err != nil {
		return nil, err
	}
	return st.Meta, nil
}

// SynthStaged is Synth writing the dataset next to o.Out, not yet in place
// (StagedDataset): its caller checks it, then publishes or discards it.
func SynthStaged(ctx context.Context, o SynthOptions) (*StagedDataset, error) {
	if err := o.checkConversions(); err != nil {
		return nil, err
	}
	if err := o.checkValues(); err != nil {
		return nil, err
	}
	switch {
	case o.Kind < SynthLogistic || o.Kind > SynthValues:
		return nil, fmt.Errorf("%w: synthetic kind %d", ErrInvalid, o.Kind)
	case o.Kind == SynthMulticlass && (o.Classes < 2 || o.Classes > MaxClasses):
		return nil, fmt.Errorf("%w: %s must be in [2, %d] for kind multiclass, got %d", ErrInvalid, MetaClasses, MaxClasses, o.Classes)
	case o.Kind != SynthMulticlass && o.Kind != SynthConversions && o.Kind != SynthValues && o.Classes != 0 && o.Classes != 2:
		return nil, fmt.Errorf("%w: %s %d: kind %s is binary (2 classes); use kind multiclass", ErrInvalid, MetaClasses, o.Classes, o.Kind)
	case o.Rows < 1:
		return nil, fmt.Errorf("%w: rows must be ≥ 1, got %d", ErrInvalid, o.Rows)
	case o.TestRows < 1:
		return nil, fmt.Errorf("%w: test rows must be ≥ 1, got %d", ErrInvalid, o.TestRows)
	case o.Features < 1:
		return nil, fmt.Errorf("%w: features must be ≥ 1, got %d", ErrInvalid, o.Features)
	case o.Groups < 0:
		return nil, fmt.Errorf("%w: groups must be ≥ 0, got %d", ErrInvalid, o.Groups)
	case o.Out == "":
		return nil, fmt.Errorf("%w: no output directory", ErrInvalid)
	}
	if err := checkSpace(o.Out, synthBytes(o)); err != nil {
		return nil, err
	}
	dir, m, err := stageDataset(o.Out, func(dir string) (*Meta, error) { return synthInto(ctx, dir, o) })
	if err != nil {
		return nil, err
	}
	return &StagedDataset{Out: filepath.Clean(o.Out), Dir: dir, Meta: m}, nil
}

// synthInto is Synth writing into the (new, temporary) directory dir.
func synthInto(ctx context.Context, dir string, o SynthOptions) (*Meta, error) {
	names := SynthFeatureNames(o.Features)
	meta := &Meta{Source: "synth", Kind: o.Kind.String(), Features: names, Dims: o.Features, Seed: o.Seed, Groups: o.Groups}
	m, vm := meta.synthGenerator(o)
	test := m.frame(names, o.TestRows, rand.New(rand.NewPCG(o.Seed, streamSynthTest)), o.Groups)
	md := map[string]string{"source": "synth", "kind": o.Kind.String(), "seed": strconv.FormatUint(o.Seed, 10)}
	md["split"] = "test"
	tw, err := NewWriter(filepath.Join(dir, TestFile), test, md)
	if err != nil {
		return nil, err
	}
	defer tw.Abort()
	if err := tw.Write(test); err != nil {
		return nil, err
	}
	md["split"] = "train"
	trw, err := NewWriter(filepath.Join(dir, TrainFile), test, md)
	if err != nil {
		return nil, err
	}
	defer trw.Abort()
	tally, err := writeSynthTrain(ctx, trw, m, names, o)
	if err != nil {
		return nil, err
	}
	meta.setSynthStats(o, test, tally, vm)
	if err := tw.Commit(); err != nil {
		return nil, err
	}
	if err := trw.Commit(); err != nil {
		return nil, err
	}
	meta.setContent(trw.sum, tw.sum)
	if err := WriteMeta(dir, meta); err != nil {
		return nil, err
	}
	return meta, nil
}

// synthGenerator is the generator of o.Kind, whose law it records in
// meta (weights, biases, the value grid and prior, classes); vm is the
// value model of kind values, else nil.
func (meta *Meta) synthGenerator(o SynthOptions) (m synthGen, vm *valueModel) {
	switch o.Kind {
	case SynthValues:
		vm = newValueModel(o)
		g := vm.g
		meta.Labels, meta.ValueMax, meta.ValueStep = LabelsValues, g.Max, g.Step
		meta.ZeroWeights, meta.ZeroBias, meta.MuWeights, meta.MuBias, meta.Sigma = vm.u, vm.b, vm.w, ValueMuBias, vm.sigma
		meta.ZeroRate = o.zeroRate()
		meta.ValuePrior = vm.populationPrior(o.Features, o.Seed)
		return vm, vm
	case SynthMulticlass:
		mc := newMulticlassModel(o.Classes, o.Features, o.Seed)
		meta.Classes, meta.ClassWeights, meta.LogitNorm = o.Classes, mc.weightRows(), MulticlassLogitNorm
		return mc, nil
	case SynthConversions:
		mc := newConversionModel(o)
		meta.Classes, meta.ClassWeights, meta.LogitNorm = mc.c, mc.weightRows(), MulticlassLogitNorm
		meta.TriggerData, meta.Windows, meta.ConversionRate, meta.NoReportLogit = o.TriggerData, o.Windows, o.conversionRate(), mc.bias[0]
		return mc, nil
	default:
		bm := newSynthModel(o.Kind, o.Features, o.Seed)
		if o.Kind == SynthLogistic {
			meta.Weights, meta.Bias = bm.w, bm.b
		}
		return bm, nil
	}
}

// synthTally counts the training rows written: per class, and for values
// the zeros and the sum of the values.
type synthTally struct {
	counts   [MaxClasses]int64
	zeros    int64
	valueSum float64
}

// writeSynthTrain draws the o.Rows training rows from m in chunks of
// chunkRows (the train stream of o.Seed) into trw, counting them.
func writeSynthTrain(ctx context.Context, trw *Writer, m synthGen, names []string, o SynthOptions) (synthTally, error) {
	var t synthTally
	rtrain := rand.New(rand.NewPCG(o.Seed, streamSynthTrain))
	for done := 0; done < o.Rows; {
		if err := ctx.Err(); err != nil {
			return t, err
		}
		n := min(chunkRows, o.Rows-done)
		f := m.frame(names, n, rtrain, o.Groups)
		for _, y := range f.Label {
			t.counts[y]++
		}
		for _, v := range f.Value {
			if v == 0 {
				t.zeros++
			}
			t.valueSum += v
		}
		if err := trw.Write(f); err != nil {
			return t, err
		}
		done += n
	}
	return t, nil
}

// setSynthStats records the dataset's statistics in meta: the Bayes AUC
// (binary η) or accuracy and class rates (C classes), the row counts, and
// the Bayes MSE, zero rate and mean of values (vm) or the positive rate.
func (meta *Meta) setSynthStats(o SynthOptions, test *Frame, t synthTally, vm *valueModel) {
	if test.Eta != nil {
		meta.BayesAUC = finitePtr(stats.ExpectedAUC(test.Eta))
		meta.BayesAUCEmpirical = finitePtr(stats.AUC(test.Eta, test.Label))
	}
	if o.Kind == SynthMulticlass || o.Kind == SynthConversions {
		exp, emp := BayesAccuracy(test)
		meta.BayesAccuracy, meta.BayesAccuracyEmpirical = finitePtr(exp), finitePtr(emp)
		meta.ClassRates = classRates(t.counts[:o.classes()], o.Rows)
	}
	meta.TrainRows, meta.TestRows = int64(o.Rows), int64(o.TestRows)
	if vm != nil {
		exp, emp := vm.bayesMSE(test)
		meta.BayesMSE, meta.BayesMSEEmpirical = finitePtr(exp), finitePtr(emp)
		meta.ValueZeroRate = finitePtr(float64(t.zeros) / float64(o.Rows))
		meta.ValueMean = finitePtr(t.valueSum / float64(o.Rows))
	} else if meta.Classes < 3 {
		meta.PositiveRate = positiveRate(int64(o.Rows)-t.counts[0], int64(o.Rows))
	}
}

// synthBytes estimates the bytes of Synth's two files: per row D float32
// features, the uint8 label and the float64 η (C of them for C ≥ 3
// classes); per record batch (one per chunk) its metadata and each column's
// padding; the schema and footer.
func synthBytes(o SynthOptions) float64 {
	etas := 1.0
	if c := o.classes(); c >= 3 {
		etas = float64(c)
	}
	if o.Kind == SynthValues {
		etas = 4 // label, p0, mu, sigma: float64 each
	}
	rows := float64(o.Rows) + float64(o.TestRows)
	batches := float64(o.Rows)/chunkRows + 2
	cols := float64(o.Features) + 2 + etas
	return rows*(4*float64(o.Features)+1+8*etas+8*float64(min(o.Groups, 1))) + batches*(512+64*cols) + 1<<16
}

func finitePtr(v float64) *float64 {
	if !finite(v) {
		return nil
	}
	return &v
}

// SynthFeatureNames are the dense feature names of synthetic data: x0, x1, ….
func SynthFeatureNames(d int) []string {
	names := make([]string, d)
	for j := range names {
		names[j] = "x" + strconv.Itoa(j)
	}
	return names
}
