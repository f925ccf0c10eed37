package release

import (
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strconv"

	"labelprivacy/data"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// ErrTwoStages is returned by Apply for rr_prior, whose release needs a
// prior model trained between its two stages: use StartRRPrior.
var ErrTwoStages = errors.New("release: rr_prior is released in two stages (StartRRPrior, then Finish with the stage-1 model's priors)")

// streamStages is the PCG stream of the stage split of a seeded rr_prior
// release (bags: 1, noise: 2, order: 3).
const streamStages = 4

// StageSplit assigns n rows to rr_prior's two stages: round(fraction·n)
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

// TwoStage is an rr_prior release in the making (LP-2ST of Ghazi et al.
// 2021): the rows are split into two stages; stage 1 is released by RR(ε)
// (rr_prior with the uninformative prior ½); a model trained on stage 1's
// released labels only then gives the prior of each stage-2 row, and
// Finish releases stage 2 by rr_prior with those priors. Each row is
// released exactly once, so the whole release is ε-label-DP as long as
// the priors are computed from stage 1's release (and public features)
// only. TwoStage holds the labels until Finish; the Release it returns
// keeps nothing of them but what was released.
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

// StartRRPrior splits labels (0/1, one per input row) into stages with
// StageSplit (stage fraction in (0, 1)) and releases stage 1 through RR(ε).
// m must be an rr_prior mechanism. Randomness comes from o as for Apply:
// the split from its own stream, stage 1's and then stage 2's noise from
// the noise stream, the shipping order from the order stream.
func StartRRPrior(labels []uint8, m *pets.Mechanism, fraction float64, o Options) (*TwoStage, error) {
	if !m.Spec().Release.WithPrior() {
		return nil, fmt.Errorf("release: StartRRPrior needs a mechanism released with a prior (rr_prior), got %s", m.Kind())
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("release: no labels")
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
	lab, prior := make([]uint8, len(rows)), make([]float64, len(rows))
	for i, row := range rows {
		lab[i], prior[i] = labels[row], 0.5
	}
	out := make([]uint8, len(rows))
	m.ReleaseRRPrior(out, lab, prior, make([]bool, len(rows)), t.noise)
	for i, row := range rows {
		t.released[row] = out[i]
	}
	return t, nil
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
// rows' `label_rr` and `row` (the input row), in input order. It carries
// no raw label.
func (t *TwoStage) Stage1() *data.Frame {
	rows := t.rowsOf(1)
	f := &data.Frame{Rows: len(rows), LabelRR: make([]uint8, len(rows)), Row: make([]int64, len(rows))}
	for i, row := range rows {
		f.LabelRR[i], f.Row[i] = t.released[row], int64(row)
	}
	return f
}

// Stage2Rows returns the input rows of stage 2, in input order: Finish
// takes one prior per row, in this order.
func (t *TwoStage) Stage2Rows() []int { return t.rowsOf(2) }

// Finish releases stage 2 with prior[i] = P(y = 1 | x) of row
// Stage2Rows()[i] (in [0, 1], computed without these rows' labels) and
// returns the whole release: every input row, in input order, with its
// released label, prior (½ in stage 1), branch and stage. It may be
// called once.
func (t *TwoStage) Finish(prior []float64) (*Release, error) {
	if t.done {
		return nil, fmt.Errorf("release: rr_prior release already finished")
	}
	rows := t.rowsOf(2)
	if len(prior) != len(rows) {
		return nil, fmt.Errorf("release: %d priors for %d stage-2 rows", len(prior), len(rows))
	}
	for i, p := range prior {
		if !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("release: prior of stage-2 row %d (input row %d) is %v, not in [0, 1]", i, rows[i], p)
		}
	}
	t.done = true
	n := len(t.labels)
	r := &Release{Mech: t.m, Noise: t.o.Noise, Input: n, order: t.order, fraction: t.fraction,
		labelRR: t.released, prior: make([]float64, n), branch: make([]uint8, n), stage: t.stage}
	for row := range n {
		r.prior[row] = 0.5
	}
	lab := make([]uint8, len(rows))
	for i, row := range rows {
		lab[i] = t.labels[row]
	}
	out, argmax := make([]uint8, len(rows)), make([]bool, len(rows))
	t.m.ReleaseRRPrior(out, lab, prior, argmax, t.noise)
	for i, row := range rows {
		r.labelRR[row], r.prior[row] = out[i], prior[i]
		if argmax[i] {
			r.branch[row] = 1
		}
	}
	t.labels = nil
	return r, nil
}

// priorMeta adds rr_prior's figures to a release's metadata: the stage
// fraction, rows per stage and how many took the argmax branch (Meta adds
// its flip_prob).
func (r *Release) priorMeta(md map[string]string) {
	var s1, am int
	for i, s := range r.stage {
		if s == 1 {
			s1++
		}
		am += int(r.branch[i])
	}
	md["stage_fraction"] = data.FormatFloat(r.fraction)
	md["stage1_rows"] = strconv.Itoa(s1)
	md["stage2_rows"] = strconv.Itoa(len(r.stage) - s1)
	md["argmax_rows"] = strconv.Itoa(am)
}

func take[T any](s []T, pos []int) []T {
	out := make([]T, len(pos))
	for i, p := range pos {
		out[i] = s[p]
	}
	return out
}

// ApplyRRPrior releases every row of labels through rr_prior's per-row law
// with the given public priors (one per row, in [0, 1]): the law of
// Finish's second stage, for callers that hold the priors of all rows (the
// audit's attacks on its own examples). Rows keep their input order.
func ApplyRRPrior(labels []uint8, prior []float64, m *pets.Mechanism, o Options) (*Release, error) {
	if !m.Spec().Release.WithPrior() {
		return nil, fmt.Errorf("release: ApplyRRPrior needs a mechanism released with a prior (rr_prior), got %s", m.Kind())
	}
	if len(labels) == 0 || len(prior) != len(labels) {
		return nil, fmt.Errorf("release: %d priors for %d labels", len(prior), len(labels))
	}
	for i, p := range prior {
		if !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("release: prior of row %d is %v, not in [0, 1]", i, p)
		}
	}
	_, noiseSrc, orderSrc, err := o.sources()
	if err != nil {
		return nil, err
	}
	n := len(labels)
	r := &Release{Mech: m, Noise: o.Noise, Input: n, order: orderSrc, labelRR: make([]uint8, n),
		prior: append([]float64(nil), prior...), branch: make([]uint8, n), stage: make([]uint8, n)}
	for i := range r.stage {
		r.stage[i] = 2 // every row released with its given prior, as Finish's second stage
	}
	argmax := make([]bool, n)
	m.ReleaseRRPrior(r.labelRR, labels, prior, argmax, noiseSrc.(pets.Rand))
	for i, a := range argmax {
		if a {
			r.branch[i] = 1
		}
	}
	return r, nil
}
