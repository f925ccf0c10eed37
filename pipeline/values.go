package pipeline

import (
	"fmt"
	"math"
	"slices"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// Conversion values in the pipeline (data.LabelsValues; issue 37). A
// dataset of values has a grid (meta.json's value_max and value_step);
// every setting's mechanism is made on it (pets.Params.Values), so a kind
// of classes is refused there, as a kind of values is on classes. The
// runs train:
//
//   - laplace and rr_bins: a regression (model.ModelConfig.Regression, one
//     identity output) with squared loss (mse) on value_rr;
//   - value_bags: the bag-level squared loss (bag_mse) on bag_mean;
//   - none: the clean model, a classifier of valueBins's C classes over the
//     grid (0 alone, then bins of log-spaced width), trained with ce on the
//     clean values' bins: its prediction over the bins, spread over each
//     bin's points as the training values fall in them (gridLaw), is the
//     attacker's η̂ (audit.eta: clean_model) and its mean the model's
//     prediction of the value, scored like the regressions';
//   - bot: a constant, the training values' mean.
//
// Targets are in units of B (data.BatchOptions.ValueScale = 1/B) and
// predictions scaled back. Every run records its test MSE, R² and MAE
// (report.Run.TestMSE, TestR2, TestMAE; the best learning rate minimises
// the mean test MSE) and the audit is RunValues's (auditValues).

// labelSpace is what a dataset's labels are, for the settings made on it.
type labelSpace struct {
	classes int       // C (2: binary); 0 for values
	grid    pets.Grid // values: the grid (zero for classes)
	// population is a synthetic dataset's population prior over the grid
	// (meta.json value_prior), rr_bins's prior: population; planned: the
	// dataset is not made yet (its population prior unknown: a uniform
	// stand-in, never released through).
	population []float64
	planned    bool
}

// spaceOf is the label space of a dataset's meta.json.
func spaceOf(m *data.Meta, planned bool) labelSpace {
	if m.LabelKind() != data.LabelsValues {
		return labelSpace{classes: m.NumClasses()}
	}
	return labelSpace{grid: pets.Grid{Max: m.ValueMax, Step: m.ValueStep}, population: m.ValuePrior, planned: planned}
}

// values reports whether the session's labels are conversion values.
func (s *Session) values() bool { return !s.grid.IsZero() }

// valueScale is the factor from values to the regressions' targets, 1/B.
func (s *Session) valueScale() float64 { return 1 / s.grid.Max }

// publicPrior returns the public prior over the grid of an rr_bins setting
// of pets[i] (nil for a private one and the other kinds): uniform, the
// dataset's population prior, or prior_weights normalized; a list that
// does not cover the grid, or population on a dataset without one, is an
// error naming the key.
func publicPrior(i int, st config.Setting, sp labelSpace) ([]float64, error) {
	if !st.Kind.Spec().Takes.ValuePrior || st.PriorEpsilon > 0 {
		return nil, nil
	}
	n := sp.grid.Points()
	key := fmt.Sprintf("pets[%d].prior", i)
	switch st.Prior {
	case config.PriorUniform:
		return pets.UniformPrior(n), nil
	case config.PriorPopulation:
		switch {
		case sp.planned:
			return pets.UniformPrior(n), nil
		case len(sp.population) != n:
			return nil, &config.FieldError{Key: key, Msg: fmt.Sprintf("population needs a synthetic dataset of values (meta.json %s "+
				"holds its population prior); this one has none: give prior_weights (one per grid point) or prior_epsilon", "value_prior")}
		}
		return normalized(sp.population), nil
	}
	w := st.PriorWeights()
	if len(w) != n {
		return nil, &config.FieldError{Key: fmt.Sprintf("pets[%d].prior_weights", i), Msg: fmt.Sprintf("has %d weights; the grid %s "+
			"has %d points (one weight per point, 0, %g, …, %g)", len(w), sp.grid, n, sp.grid.Step, sp.grid.Max)}
	}
	return normalized(w), nil
}

// normalized returns w divided by its sum (w ≥ 0, not all 0).
func normalized(w []float64) []float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	out := make([]float64, len(w))
	for i, x := range w {
		out[i] = x / s
	}
	return out
}

// maxValueBins is the clean model's classes over the grid at most.
const maxValueBins = 32

// valueBins returns the clean model's classes over a grid of n points as
// cut points (grid indices; class c is points edges[c] ≤ i < edges[c+1]):
// point 0 alone, then up to maxValueBins − 1 bins of log-spaced width
// (round(n^{j/(C−1)}), each at least one point). A public rule of the grid
// alone.
func valueBins(n int) []int {
	c := min(n, maxValueBins)
	edges := []int{0, 1}
	for j := 1; j < c; j++ {
		e := int(math.Round(math.Exp(float64(j) / float64(c-1) * math.Log(float64(n)))))
		e = max(e, edges[len(edges)-1]+1)
		if e >= n {
			break
		}
		edges = append(edges, e)
	}
	if edges[len(edges)-1] != n {
		edges = append(edges, n)
	}
	return edges
}

// valueClasses is the number of the clean model's classes on the
// session's grid.
func (s *Session) valueClasses() int { return len(valueBins(s.grid.Points())) - 1 }

// classFrame is the training rows as labels of the clean model's classes
// (the bin of each training value): the features shared with the
// session's frame, made once.
func (s *Session) classFrame() *data.Frame {
	if s.binFrame != nil {
		return s.binFrame
	}
	edges := valueBins(s.grid.Points())
	f := data.FrameOf(s.train.FeaturesOnly())
	f.Label = make([]uint8, s.train.Rows)
	for i, v := range s.train.Value {
		f.Label[i] = uint8(binOf(edges, s.pointOf(v)))
	}
	if c := len(edges) - 1; c >= 3 {
		f.Classes = c
	}
	s.binFrame = f
	return f
}

// pointOf is the grid point of a value on the grid.
func (s *Session) pointOf(v float64) int {
	i, ok := s.grid.Index(v)
	if !ok {
		panic(fmt.Sprintf("pipeline: value %v off the grid %s", v, s.grid)) // data checks values at load
	}
	return i
}

// binOf is the bin of grid point i.
func binOf(edges []int, i int) int {
	b, _ := slices.BinarySearch(edges, i+1)
	return b - 1
}

// withinBins is, for each grid point, its share of its bin's training
// values (uniform over a bin with none): how the clean model's class
// probabilities spread over the grid (gridLaw).
func (s *Session) withinBins() []float64 {
	if s.binShare != nil {
		return s.binShare
	}
	edges := valueBins(s.grid.Points())
	n := s.grid.Points()
	count := make([]float64, n)
	for _, v := range s.train.Value {
		count[s.pointOf(v)]++
	}
	share := make([]float64, n)
	for b := range len(edges) - 1 {
		lo, hi := edges[b], edges[b+1]
		var tot float64
		for i := lo; i < hi; i++ {
			tot += count[i]
		}
		for i := lo; i < hi; i++ {
			share[i] = 1 / float64(hi-lo)
			if tot > 0 {
				share[i] = count[i] / tot
			}
		}
	}
	s.binShare = share
	return share
}

// gridLaw spreads a clean model's class probabilities (c per row, the
// binary model's P(class 1) for c = 2) over the grid: row i's law gives
// point j its bin's probability times its share of the bin.
func (s *Session) gridLaw(probs []float64, rows int) []float64 {
	edges := valueBins(s.grid.Points())
	c := len(edges) - 1
	share := s.withinBins()
	n := s.grid.Points()
	out := make([]float64, rows*n)
	for r := range rows {
		for b := range c {
			var pb float64
			if c == 2 {
				pb = probs[r]
				if b == 0 {
					pb = 1 - probs[r]
				}
			} else {
				pb = probs[r*c+b]
			}
			for i := edges[b]; i < edges[b+1]; i++ {
				out[r*n+i] = pb * share[i]
			}
		}
	}
	return out
}

// scoreValues fills a run's test figures of values from its test-set
// outputs: a regression's values in units of B, the clean model's class
// probabilities (as many as its classes), or nil for the constant
// predictor (bot: the training values' mean).
func (s *Session) scoreValues(res *report.Run, out []float32, plan trainPlan) {
	nan := math.NaN()
	res.TestAUC, res.TestLogLoss, res.TestAccuracy, res.ValueMax = nan, nan, nan, s.grid.Max
	test := s.test.Value
	pred := make([]float32, len(test))
	switch {
	case out == nil:
		var mean float64
		for _, v := range s.train.Value {
			mean += v / float64(len(s.train.Value))
		}
		for i := range pred {
			pred[i] = float32(mean)
		}
	case plan.Loss.Regression():
		for i := range pred {
			pred[i] = out[i] / float32(s.valueScale())
		}
	default:
		probs := make([]float64, len(out))
		for i, p := range out {
			probs[i] = float64(p)
		}
		law := s.gridLaw(probs, len(test))
		n := s.grid.Points()
		v := s.grid.Values()
		for r := range pred {
			var m float64
			for i, w := range law[r*n : (r+1)*n] {
				m += w * v[i]
			}
			pred[r] = float32(m)
		}
	}
	res.TestMSE, res.TestR2, res.TestMAE = model.ValueScores(pred, 1, test)
}

// checkTestValues refuses a test set whose values do not vary (its R² is
// then undefined and the audit's variances 0).
func checkTestValues(dir string, values []float64) error {
	for _, v := range values {
		if v != values[0] {
			return nil
		}
	}
	return fmt.Errorf("%w: the test set of %s has %d rows, all of the value %v; the test R² and the audit need values that vary",
		ErrDegenerate, dir, len(values), firstOr(values))
}

func firstOr(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	return v[0]
}

// synthValuesMatch reports whether a synthetic dataset of values has the
// grid and zero rate the options ask for (true for the other kinds).
func synthValuesMatch(m *data.Meta, o data.SynthOptions) bool {
	if o.Kind != data.SynthValues {
		return true
	}
	zero := o.ZeroRate
	if zero == 0 {
		zero = data.DefaultZeroRate
	}
	return m.ValueMax == cmpOr(o.ValueMax, data.DefaultValueMax) && m.ValueStep == cmpOr(o.ValueStep, data.DefaultValueStep) && m.ZeroRate == zero
}

func cmpOr(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// etaClasses is the number of values per test row of the clean model's η̂
// as stored (store.PutEtaHat): the dataset's classes, or on values the
// clean model's classes over the grid.
func (s *Session) etaClasses() int {
	if s.values() {
		return s.valueClasses()
	}
	return s.classes()
}
