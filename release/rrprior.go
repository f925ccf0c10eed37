package release

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	mrand "math/rand/v2"
	"strconv"

	"labelprivacy/data"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// ErrTwoStages is returned by Apply for a kind released with a public prior
// (rr_prior), whose release needs a prior model trained between its two
// stages: use StartRRPrior.
var ErrTwoStages = errors.New("release: a mechanism released with a prior is released in two stages (StartRRPrior, then Finish with the stage-1 model's priors)")

// streamStages is the PCG stream of the stage split of a seeded release
// with a prior (bags: 1, noise: 2, order: 3).
const streamStages = 4

// StageSplit assigns n rows to the two stages of a release with a prior: round(fraction·n)
// rows (at least one, and at least one left for stage 2 when n ≥ 2) form
// stage 1, chosen by a seeded uniform permutation of the rows
// (llp.Partition's, so the split depends only on r's word stream).
// fraction must be in (0, 1). It returns each row's stage, 1 or 2.
func StageSplit(n int, fraction float64, r mrand.Source) ([]uint8, error) {
	if !(fraction > 0 && fraction < 1) {
		return nil, fmt.Errorf("release: stage fraction must be in (0, 1), got %v", fraction)
	}
	if n < 1 {
		return nil, fmt.Errorf("release: no rows to split into stages")
	}
	n1 := int(math.Round(fraction * float64(n)))
	n1 = max(1, min(n1, n-1))
	if n == 1 {
		n1 = 1
	}
	perm, err := llp.Partition(n, 1, r, false)
	if err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	stage := make([]uint8, n)
	for row, pos := range perm.BagOf {
		stage[row] = 2
		if int(pos) < n1 {
			stage[row] = 1
		}
	}
	return stage, nil
}

// TwoStage is a release with a public prior in the making (rr_prior's
// LP-2ST of Ghazi et al. 2021, and any kind released WithPrior): the rows
// are split into two stages; stage 1 is released through the channel of
// the uniform prior (pets.UniformPrior: rr_prior's RR over every class); a
// model trained on stage 1's released labels only then gives the prior of
// each stage-2 row, and Finish releases stage 2 through the channels of
// those priors. Each row is released exactly once, so the whole release
// is ε-label-DP as long as the priors are computed from stage 1's release
// (and public features) only. TwoStage holds the labels until Finish; the
// Release it returns keeps nothing of them but what was released.
type TwoStage struct {
	m        *pets.Mechanism
	o        Options
	labels   []uint8
	noise    pets.Rand
	order    mrand.Source
	stage    []uint8
	released []uint8 // per row; stage 2 rows filled by Finish
	fraction float64
	done     bool
}

// StartRRPrior splits labels (classes of m, one per input row) into stages
// with StageSplit (stage fraction in (0, 1)) and releases stage 1 through
// the uniform prior's channel. m must be released with a prior
// (Release.WithPrior). Randomness comes from o as for Apply: the split
// from its own stream, stage 1's and then stage 2's noise from the noise
// stream, the shipping order from the order stream.
func StartRRPrior(labels []uint8, m *pets.Mechanism, fraction float64, o Options) (*TwoStage, error) {
	if !m.Spec().Release.WithPrior() {
		return nil, fmt.Errorf("release: StartRRPrior needs a mechanism released with a prior (rr_prior), got %s", m.Kind())
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("release: no labels")
	}
	if err := checkLabels(labels, m); err != nil {
		return nil, err
	}
	_, noiseSrc, orderSrc, err := o.sources()
	if err != nil {
		return nil, err
	}
	splitSrc := mrand.Source(pets.NewSecureRand())
	if o.Noise != pets.NoiseSecure {
		splitSrc = mrand.NewPCG(o.Seed, streamStages)
	}
	stage, err := StageSplit(len(labels), fraction, splitSrc)
	if err != nil {
		return nil, err
	}
	t := &TwoStage{m: m, o: o, labels: labels, noise: noiseSrc.(pets.Rand), order: orderSrc, stage: stage,
		released: make([]uint8, len(labels)), fraction: fraction}
	rows := t.rowsOf(1)
	lab := make([]uint8, len(rows))
	for i, row := range rows {
		lab[i] = labels[row]
	}
	out := make([]uint8, len(rows))
	m.ExampleLaw().Release(out, lab, repeatRows(pets.UniformPrior(m.Classes()), len(rows)), t.noise)
	for i, row := range rows {
		t.released[row] = out[i]
	}
	return t, nil
}

// repeatRows returns n copies of the vector v, row-major.
func repeatRows(v []float64, n int) []float64 {
	out := make([]float64, 0, n*len(v))
	for range n {
		out = append(out, v...)
	}
	return out
}

// priorRows returns n rows' priors as ExampleLaw.Release takes them, C
// values a row: on binary labels (1 − p_i, p_i) from prior[i] = p_i, on C ≥
// 3 classes prior itself.
func priorRows(prior []float64, c int) []float64 {
	if c >= 3 {
		return prior
	}
	out := make([]float64, 2*len(prior))
	for i, p := range prior {
		out[2*i], out[2*i+1] = 1-p, p
	}
	return out
}

func (t *TwoStage) rowsOf(stage uint8) []int {
	var rows []int
	for row, s := range t.stage {
		if s == stage {
			rows = append(rows, row)
		}
	}
	return rows
}

// Stage1 returns stage 1's release for training the prior model: its
// rows' `label_rr`, `row` (the input row) and the uniform prior they went
// through (prior, or prior_0 … on C ≥ 3 classes), in input order. It
// carries no raw label.
func (t *TwoStage) Stage1() *data.Frame {
	rows := t.rowsOf(1)
	c := t.m.Classes()
	f := &data.Frame{Rows: len(rows), LabelRR: make([]uint8, len(rows)), Row: make([]int64, len(rows)), Classes: classesOf(t.m)}
	for i, row := range rows {
		f.LabelRR[i], f.Row[i] = t.released[row], int64(row)
	}
	if u := pets.UniformPrior(c); c >= 3 {
		f.PriorC = repeatRows(u, len(rows))
	} else {
		f.Prior = make([]float64, len(rows))
		for i := range f.Prior {
			f.Prior[i] = u[1]
		}
	}
	return f
}

// Stage2Rows returns the input rows of stage 2, in input order: Finish
// takes one prior per row, in this order.
func (t *TwoStage) Stage2Rows() []int { return t.rowsOf(2) }

// Finish releases stage 2 with the public priors of the rows
// Stage2Rows() (computed without these rows' labels) and returns the whole
// release: every input row, in input order, with its released label,
// prior (uninformative in stage 1) and stage, and what its channel shows:
// on binary labels branch (1: nothing, rr_prior's argmax branch), on C ≥ 3
// classes the classes it can release (prior_set, prior_set_size). Binary
// labels: prior[i] = P(y = 1 | x) ∈ [0, 1] of row Stage2Rows()[i]. C ≥ 3
// classes: prior[i·C:(i+1)·C] is its probability vector over the classes
// (pets.CheckPrior). It may be called once.
func (t *TwoStage) Finish(prior []float64) (*Release, error) {
	if t.done {
		return nil, fmt.Errorf("release: the release with a prior is already finished")
	}
	rows := t.rowsOf(2)
	if err := checkPriors(prior, len(rows), t.m, func(i int) string {
		return fmt.Sprintf("stage-2 row %d (input row %d)", i, rows[i])
	}); err != nil {
		return nil, err
	}
	t.done = true
	n, c := len(t.labels), t.m.Classes()
	r := &Release{Mech: t.m, Noise: t.o.Noise, Input: n, order: t.order, fraction: t.fraction,
		labelRR: t.released, stage: t.stage, classes: classesOf(t.m)}
	lab := make([]uint8, len(rows))
	for i, row := range rows {
		lab[i] = t.labels[row]
	}
	out := make([]uint8, len(rows))
	rowPriors := priorRows(prior, c)
	t.m.ExampleLaw().Release(out, lab, rowPriors, t.noise)
	// Every row's prior: the uniform one in stage 1, the given ones in
	// stage 2.
	all := repeatRows(pets.UniformPrior(c), n)
	for i, row := range rows {
		r.labelRR[row] = out[i]
		copy(all[row*c:(row+1)*c], rowPriors[i*c:(i+1)*c])
	}
	r.setPriors(all)
	t.labels = nil
	return r, nil
}

// setPriors records each row's prior (C values a row) and what its channel
// shows: the prior and branch columns on binary labels, prior_C, prior_set
// and prior_set_size on C ≥ 3 classes, and the count of rows whose channel
// shows nothing.
func (r *Release) setPriors(all []float64) {
	ex, c := r.Mech.ExampleLaw(), r.Classes()
	n := len(all) / c
	type shows struct {
		support     uint64
		informative bool
	}
	seen := map[uint64]shows{} // by channel key
	if c >= 3 {
		r.priorC, r.priorSet, r.setSize = all, make([]uint64, n), make([]uint8, n)
	} else {
		r.prior, r.branch = make([]float64, n), make([]uint8, n)
	}
	r.silent = 0
	for row := range n {
		p := all[row*c : (row+1)*c]
		key := ex.ChannelOf(p)
		sh, ok := seen[key]
		if !ok {
			ch := ex.Channel(key)
			sh = shows{ch.Support(), ch.Informative()}
			seen[key] = sh
		}
		if !sh.informative {
			r.silent++
		}
		if c >= 3 {
			r.priorSet[row], r.setSize[row] = sh.support, uint8(bits.OnesCount64(sh.support))
			continue
		}
		r.prior[row] = p[1]
		if !sh.informative {
			r.branch[row] = 1
		}
	}
}

// checkPriors checks n rows' public priors for m: one P(y = 1 | x) in
// [0, 1] per row for binary labels, a probability vector of C entries per
// row (flat) for C ≥ 3 classes; what names row i in an error.
func checkPriors(prior []float64, n int, m *pets.Mechanism, what func(i int) string) error {
	c := m.Classes()
	if c < 3 {
		if len(prior) != n {
			return fmt.Errorf("release: %d priors for %d rows", len(prior), n)
		}
		for i, p := range prior {
			if !(p >= 0 && p <= 1) {
				return fmt.Errorf("release: prior of %s is %v, not in [0, 1]", what(i), p)
			}
		}
		return nil
	}
	if len(prior) != n*c {
		return fmt.Errorf("release: %d prior values for %d rows of %d classes (want %d)", len(prior), n, c, n*c)
	}
	for i := range n {
		if err := pets.CheckPrior(prior[i*c:(i+1)*c], c); err != nil {
			return fmt.Errorf("release: prior of %s: %w", what(i), err)
		}
	}
	return nil
}

// priorMeta adds the figures of a release with a prior to its metadata:
// the stage fraction, rows per stage and how many went through a channel
// that shows nothing (rr_prior's argmax branch; Meta adds its flip_prob).
func (r *Release) priorMeta(md map[string]string) {
	var s1 int
	for _, s := range r.stage {
		if s == 1 {
			s1++
		}
	}
	md["stage_fraction"] = data.FormatFloat(r.fraction)
	md["stage1_rows"] = strconv.Itoa(s1)
	md["stage2_rows"] = strconv.Itoa(len(r.stage) - s1)
	md["argmax_rows"] = strconv.Itoa(r.silent)
}

// take returns s's values at the positions pos (nil for a nil s: an absent
// column stays absent).
func take[T any](s []T, pos []int) []T { return takeRows(s, 1, pos) }

// takeRows is take for w values a row (row-major).
func takeRows[T any](s []T, w int, pos []int) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(pos)*w)
	for i, p := range pos {
		copy(out[i*w:(i+1)*w], s[p*w:(p+1)*w])
	}
	return out
}

// ApplyRRPrior releases every row of labels through the per-row law of a
// kind released with a prior, with the given public priors (Finish's: one
// per row in [0, 1] for binary labels, a vector of C per row, flat, for
// C ≥ 3 classes): the law of Finish's second stage, for callers that hold
// the priors of all rows (the audit's attacks on its own examples). Rows
// keep their input order.
func ApplyRRPrior(labels []uint8, prior []float64, m *pets.Mechanism, o Options) (*Release, error) {
	if !m.Spec().Release.WithPrior() {
		return nil, fmt.Errorf("release: ApplyRRPrior needs a mechanism released with a prior (rr_prior), got %s", m.Kind())
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("release: no labels")
	}
	if err := checkLabels(labels, m); err != nil {
		return nil, err
	}
	if err := checkPriors(prior, len(labels), m, func(i int) string { return fmt.Sprintf("row %d", i) }); err != nil {
		return nil, err
	}
	_, noiseSrc, orderSrc, err := o.sources()
	if err != nil {
		return nil, err
	}
	n := len(labels)
	r := &Release{Mech: m, Noise: o.Noise, Input: n, order: orderSrc, labelRR: make([]uint8, n),
		stage: make([]uint8, n), classes: classesOf(m)}
	for i := range r.stage {
		r.stage[i] = 2 // every row released with its given prior, as Finish's second stage
	}
	rowPriors := priorRows(prior, m.Classes())
	m.ExampleLaw().Release(r.labelRR, labels, rowPriors, noiseSrc.(pets.Rand))
	if r.classes >= 3 {
		rowPriors = append([]float64(nil), rowPriors...)
	}
	r.setPriors(rowPriors)
	return r, nil
}
