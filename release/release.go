package release

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	mrand "math/rand/v2"
	"strconv"

	"labelprivacy/ara"
	"labelprivacy/data"
	"labelprivacy/internal/faultpoint"
	"labelprivacy/ledger"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

// Tool is recorded in every release's metadata.
const Tool = "labelprivacy/release v0.2"

// ErrNoRelease is returned for mechanism none: its "release" is the raw
// labels, which the pipeline never writes as a release.
var ErrNoRelease = errors.New("release: mechanism none releases the raw labels; train the clean model from the dataset itself")

// Options choose where a release's randomness comes from.
type Options struct {
	// Noise is secure (crypto/rand), seeded or seeded-simulation.
	Noise pets.Noise
	// Seed drives the PCG streams (bags: stream 1, noise: stream 2, row
	// order: stream 3) of seeded and simulation releases; ignored (must be
	// 0) for secure ones.
	Seed uint64
	// KeepRemainder keeps the n mod k leftover rows of an LLP partition as a
	// smaller last bag; otherwise they are dropped and counted.
	KeepRemainder bool
	// Partition forms the bags of the LLP family from the bags stream: nil
	// is the paper's random partition (llp.Partition); llp.Sorted and
	// llp.Keyed curate bags by a feature or a key column, whose values the
	// caller passes in (Apply reads nothing but the labels).
	Partition llp.Partitioner
}

// PCG streams of a seeded release.
const (
	streamBags  = 1
	streamNoise = 2
	streamOrder = 3
)

// Release is one privatized label column, in memory. Rows are in release
// order: bag order for the LLP family, input order otherwise.
type Release struct {
	Mech    *pets.Mechanism
	Noise   pets.Noise
	Input   int // rows of the labelled input
	Bags    int // LLP family: bags released
	Dropped int // LLP family: remainder rows in no bag

	rows     []int     // input row of each release row; nil: every input row, in order (per-example kinds)
	labelRR  []uint8   // one released label per row (ReleaseLabels, ReleaseLabelsWithPrior)
	state    []uint64  // the released state of each row of a law of states (ara_event; labelRR its projection)
	bagID    []int64   // LLP family, per release row
	alpha    []float64 // binary proportions per release row (the bag's, or the row's own for ReleaseCounts)
	debiased []float64 // their BagLaw targets (alpha_debiased), per release row
	prior    []float64 // with a prior, binary labels: the public prior P(y = 1 | x) of each row
	branch   []uint8   // with a prior, binary labels: 1 = the row's channel shows nothing (rr_prior's argmax branch)
	stage    []uint8   // with a prior: 1 or 2
	rule     llp.Rule  // LLP family: the bag rule
	fraction float64   // with a prior: share of rows in stage 1
	silent   int       // with a prior: rows whose channel shows nothing
	order    mrand.Source

	// Labels of C ≥ 3 classes (classes = C; 0 for binary labels, which use
	// the scalar columns above): the per-class columns that replace alpha,
	// debiased, prior and branch, row-major (data.Frame's AlphaC, …).
	classes   int
	alphaC    []float64 // C−1 released proportions (classes 1..C−1) per release row
	debiasedC []float64 // their BagLaw targets
	priorC    []float64 // with a prior: the public prior over the C classes of each row
	priorSet  []uint64  // with a prior: the classes each row's channel can release (its Support; bit c: class c)
	setSize   []uint8   // with a prior: how many

	// Conversion values (values.go): one released value per row, or each
	// row's bag's released mean; rr_bins's bins and whether their prior
	// was drawn here (private).
	valueRR      []float64
	bagMean      []float64
	bins         *pets.Bins
	privatePrior bool
}

// Classes is the number of label classes C of the release (2 for binary
// labels).
func (r *Release) Classes() int { return max(r.classes, 2) }

// classesOf returns the Release.classes of m: C for C ≥ 3, 0 for binary.
func classesOf(m *pets.Mechanism) int {
	if c := m.Classes(); c >= 3 {
		return c
	}
	return 0
}

// checkLabels refuses a label that is not a class of m (labels 0..C−1),
// naming its row.
func checkLabels(labels []uint8, m *pets.Mechanism) error {
	c := m.Classes()
	for i, y := range labels {
		if int(y) >= c {
			return fmt.Errorf("%w: label %d at row %d is not a class below %d (%s)", ErrLabel, y, i, c, m)
		}
	}
	return nil
}

// ErrLabel is wrapped when a label is not a class of the mechanism.
var ErrLabel = errors.New("release: label out of range")

// Rows is the number of labelled rows the release covers.
func (r *Release) Rows() int {
	if r.rows == nil {
		return r.Input
	}
	return len(r.rows)
}

// row is the input row of release row i.
func (r *Release) row(i int) int {
	if r.rows == nil {
		return i
	}
	return r.rows[i]
}

func (o Options) sources() (bags, noise, order mrand.Source, err error) {
	switch o.Noise {
	case pets.NoiseSecure:
		if o.Seed != 0 {
			return nil, nil, nil, fmt.Errorf("release: a secure release takes no seed")
		}
		return pets.NewSecureRand(), pets.NewSecureRand(), pets.NewSecureRand(), nil
	case pets.NoiseSeeded, pets.NoiseSimulation:
		return mrand.NewPCG(o.Seed, streamBags), mrand.NewPCG(o.Seed, streamNoise), mrand.NewPCG(o.Seed, streamOrder), nil
	}
	return nil, nil, nil, fmt.Errorf("release: unknown noise mode %q", o.Noise)
}

// Apply releases labels (classes 0..C−1 of m, one per input row) through
// m. It reads nothing but the labels, and the Release keeps nothing of
// them but what m releases. A kind released with a public prior is made in
// two stages (ErrTwoStages: StartRRPrior).
func Apply(labels []uint8, m *pets.Mechanism, o Options) (*Release, error) {
	if len(labels) == 0 {
		return nil, fmt.Errorf("release: no labels")
	}
	if err := checkLabels(labels, m); err != nil {
		return nil, err
	}
	bagSrc, noiseSrc, orderSrc, err := o.sources()
	if err != nil {
		return nil, err
	}
	noise := noiseSrc.(pets.Rand)
	r := &Release{Mech: m, Noise: o.Noise, Input: len(labels), order: orderSrc, classes: classesOf(m)}
	switch sp := m.Spec(); sp.Release {
	case pets.ReleaseRaw:
		return nil, ErrNoRelease
	case pets.ReleaseNothing:
	case pets.ReleaseLabels:
		r.labelRR = make([]uint8, len(labels))
		r.releaseLabels(labels, noise)
	case pets.ReleaseBags:
		k, keep := m.K(), o.KeepRemainder
		if sp.Takes.KeyGroups {
			// One bag per key group, whatever its size: groups cut into
			// bags of every row, each kept whole.
			if o.Partition == nil || o.Partition.Rule().Kind != llp.RuleKey {
				return nil, fmt.Errorf("release: %s releases one value per group of a key column: it needs the key's groups (key:<column>)", m)
			}
			k, keep = len(labels), true
		}
		var bags *llp.Bags
		if o.Partition == nil {
			bags, err = llp.Partition(len(labels), k, bagSrc, keep)
		} else {
			r.rule = o.Partition.Rule()
			bags, err = o.Partition.Partition(len(labels), k, bagSrc, keep)
		}
		if err != nil {
			return nil, fmt.Errorf("release: %w", err)
		}
		r.releaseBags(labels, bags, sp.Train.Target == pets.TargetAlphaDebiased, noise)
	case pets.ReleaseCounts:
		r.releaseCounts(labels, noise)
	case pets.ReleaseLabelsWithPrior:
		return nil, ErrTwoStages
	default:
		return nil, fmt.Errorf("release: unsupported mechanism %s", m.Kind())
	}
	return r, nil
}

// releaseLabels releases each label through the mechanism's ExampleLaw;
// for a law whose releases are states (pets.StateLaw: ara_event) it keeps
// the states too, each row's label_rr their projection (the same draws
// Release makes).
func (r *Release) releaseLabels(labels []uint8, noise pets.Rand) {
	law := r.Mech.ExampleLaw()
	sl, ok := law.(pets.StateLaw)
	if !ok {
		law.Release(r.labelRR, labels, nil, noise)
		return
	}
	r.state = make([]uint64, len(labels))
	sl.ReleaseStates(r.state, labels, noise)
	for i, st := range r.state {
		r.labelRR[i] = sl.Project(st)
	}
}

// releaseBags releases the bags of labels: each bag's class counts through
// the mechanism's BagLaw (the proportions of classes 1..C−1: one on binary
// labels, the alpha column; alpha_1 … on C ≥ 3 classes) and, when
// debiased, their Target; every member row carries its bag's values.
func (r *Release) releaseBags(labels []uint8, bags *llp.Bags, debiased bool, noise pets.Rand) {
	law, c := r.Mech.BagLaw(), r.Classes()
	w := c - 1
	n := bags.Kept()
	r.rows, r.bagID = make([]int, n), make([]int64, n)
	alpha, deb := make([]float64, n*w), []float64(nil)
	if debiased {
		deb = make([]float64, n*w)
	}
	counts, a, d := make([]int, c), make([]float64, w), make([]float64, w)
	at := 0
	for b := range bags.NumBags {
		clear(counts)
		members := bags.Members(b)
		for _, row := range members {
			counts[labels[row]]++
		}
		law.ReleaseBag(a, counts, noise)
		law.Target(d, a, len(members))
		for _, row := range members {
			r.rows[at], r.bagID[at] = int(row), int64(b)
			copy(alpha[at*w:], a)
			if debiased {
				copy(deb[at*w:], d)
			}
			at++
		}
	}
	r.setAlpha(alpha, deb)
	r.Bags, r.Dropped = bags.NumBags, bags.Dropped
}

// releaseCounts releases each row's label as its own bag of one through
// the mechanism's BagLaw (ReleaseCounts): its one-hot counts' noisy
// proportions, rows in input order, no bag id.
func (r *Release) releaseCounts(labels []uint8, noise pets.Rand) {
	law, c := r.Mech.BagLaw(), r.Classes()
	w := c - 1
	alpha := make([]float64, len(labels)*w)
	counts := make([]int, c)
	for i, y := range labels {
		clear(counts)
		counts[y] = 1
		law.ReleaseBag(alpha[i*w:(i+1)*w], counts, noise)
	}
	r.setAlpha(alpha, nil)
}

// setAlpha stores released proportions and their targets, C−1 values a
// row: the scalar columns on binary labels, the per-class ones on C ≥ 3.
func (r *Release) setAlpha(alpha, deb []float64) {
	if r.classes >= 3 {
		r.alphaC, r.debiasedC = alpha, deb
		return
	}
	r.alpha, r.debiased = alpha, deb
}

func identity(n int) []int {
	rows := make([]int, n)
	for i := range rows {
		rows[i] = i
	}
	return rows
}

// columns returns a frame of the release columns for the release rows at
// the given positions.
func (r *Release) columns(pos []int) *data.Frame { return r.columnsInto(&data.Frame{}, pos) }

// columnsInto is columns into f's release columns, reusing their arrays
// where they have room (f's other fields are kept).
func (r *Release) columnsInto(f *data.Frame, pos []int) *data.Frame {
	c := r.Classes()
	f.Rows, f.Classes = len(pos), r.classes
	f.LabelRR, f.BagID = takeInto(f.LabelRR, r.labelRR, 1, pos), takeInto(f.BagID, r.bagID, 1, pos)
	f.ARAState = takeInto(f.ARAState, r.state, 1, pos)
	f.Alpha, f.AlphaDebiased = takeInto(f.Alpha, r.alpha, 1, pos), takeInto(f.AlphaDebiased, r.debiased, 1, pos)
	f.Prior, f.Branch, f.Stage = takeInto(f.Prior, r.prior, 1, pos), takeInto(f.Branch, r.branch, 1, pos), takeInto(f.Stage, r.stage, 1, pos)
	f.AlphaC, f.AlphaDebiasedC = takeInto(f.AlphaC, r.alphaC, c-1, pos), takeInto(f.AlphaDebiasedC, r.debiasedC, c-1, pos)
	f.PriorC, f.PriorSet, f.PriorSetSize = takeInto(f.PriorC, r.priorC, c, pos), takeInto(f.PriorSet, r.priorSet, 1, pos), takeInto(f.PriorSetSize, r.setSize, 1, pos)
	f.ValueRR, f.BagMean = takeInto(f.ValueRR, r.valueRR, 1, pos), takeInto(f.BagMean, r.bagMean, 1, pos)
	return f
}

// takeInto is takeRows into dst's array when it has room.
func takeInto[T any](dst, s []T, w int, pos []int) []T {
	if s == nil {
		return nil
	}
	out := dst[:0]
	if out == nil || cap(out) < len(pos)*w { // never nil: a present column stays present at 0 rows
		out = make([]T, 0, len(pos)*w)
	}
	for _, p := range pos {
		out = append(out, s[p*w:(p+1)*w]...)
	}
	return out
}

// Ship returns the frame of a release meant to leave the machine: the
// features of features (the labelled input; its label and eta columns are
// not copied) and the release columns, rows in a random order (the
// partition's for the LLP family, a permutation from the release's order
// stream otherwise), without row numbers.
func (r *Release) Ship(features *data.Frame) (*data.Frame, error) {
	c, err := r.ShipChunked(features)
	if err != nil {
		return nil, err
	}
	return c.Chunk(0, c.Rows), nil
}

// ShipChunked is Ship made a range of rows at a time (PublishChunked
// writes 1M rows at a time): besides features it holds the rows' order (4
// bytes a row) and one range's copy, not a shuffled copy of every row (a
// KDD12-size release: 7.9 GB of sparse features). The ranges are copies
// (their frames own nothing) made into the same arrays each time (a
// range's frame is valid until the next is asked for, as data.Chunked
// allows); features must stay open until the last range is made.
func (r *Release) ShipChunked(features *data.Frame) (data.Chunked, error) {
	if features.Rows != r.Input {
		return data.Chunked{}, fmt.Errorf("release: %d feature rows for a release of %d input rows", features.Rows, r.Input)
	}
	n := r.Rows()
	if n > math.MaxInt32 {
		return data.Chunked{}, fmt.Errorf("release: %d rows; a shipped release holds at most %d", n, math.MaxInt32)
	}
	pos := make([]int32, n) // release row of each shipped row
	for i := range pos {
		pos[i] = int32(i)
	}
	if !r.Mech.Kind().IsLLP() {
		rng := mrand.New(r.order)
		rng.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
	}
	x := features.FeaturesOnly()
	var at, in []int
	var feats *data.Features
	cols := &data.Frame{}
	chunk := func(lo, hi int) *data.Frame {
		at, in = at[:0], in[:0]
		for _, p := range pos[lo:hi] {
			at, in = append(at, int(p)), append(in, r.row(int(p)))
		}
		feats = x.TakeInto(feats, in) // copied: f owns nothing of features'
		cols = r.columnsInto(cols, at)
		f := *cols
		g := data.FrameOf(feats)
		f.Rows, f.Features, f.X, f.Indices, f.Offsets = g.Rows, g.Features, g.X, g.Indices, g.Offsets
		return &f
	}
	return data.Chunked{Rows: n, Chunk: chunk}, nil
}

// Simulation returns the frame of a release that stays with the raw data:
// the release columns (shared with r: do not modify them) and `row`, in
// release order, without features.
func (r *Release) Simulation() *data.Frame { return r.simulationRows(0, r.Rows()) }

// SimulationChunked is Simulation made a range of rows at a time: its
// `row` column is made per range (release.PublishChunked writes 1M rows
// at a time), the release columns are r's own.
func (r *Release) SimulationChunked() data.Chunked {
	return data.Chunked{Rows: r.Rows(), Chunk: r.simulationRows}
}

// simulationRows is Simulation's rows [lo, hi).
func (r *Release) simulationRows(lo, hi int) *data.Frame {
	part := func(v []float64) []float64 {
		if v == nil {
			return nil
		}
		return v[lo:hi]
	}
	f := &data.Frame{Rows: hi - lo, Alpha: part(r.alpha), AlphaDebiased: part(r.debiased), Prior: part(r.prior), Row: make([]int64, hi-lo),
		ValueRR: part(r.valueRR), BagMean: part(r.bagMean)}
	if r.labelRR != nil {
		f.LabelRR = r.labelRR[lo:hi]
	}
	if r.state != nil {
		f.ARAState = r.state[lo:hi]
	}
	if r.bagID != nil {
		f.BagID = r.bagID[lo:hi]
	}
	if r.prior != nil {
		f.Branch, f.Stage = r.branch[lo:hi], r.stage[lo:hi]
	}
	if c := r.classes; c >= 3 {
		rows := func(v []float64, w int) []float64 {
			if v == nil {
				return nil
			}
			return v[lo*w : hi*w]
		}
		f.Classes, f.AlphaC, f.AlphaDebiasedC, f.PriorC = c, rows(r.alphaC, c-1), rows(r.debiasedC, c-1), rows(r.priorC, c)
		if r.priorSet != nil {
			f.PriorSet, f.PriorSetSize = r.priorSet[lo:hi], r.setSize[lo:hi]
		}
		if r.stage != nil {
			f.Stage = r.stage[lo:hi]
		}
	}
	for i := range f.Row {
		f.Row[i] = int64(r.row(lo + i))
	}
	return f
}

// Meta is the release file's Arrow schema metadata: what was released and
// how, never a seed, a random state or a hash of labelled data.
func (r *Release) Meta() map[string]string {
	m := r.Mech
	p := m.Params()
	md := map[string]string{
		"mechanism":        p.Kind.String(),
		"label_dp_epsilon": data.FormatFloat(m.Epsilon()),
		"noise":            string(r.Noise),
		"rows":             strconv.Itoa(r.Rows()),
		"tool":             Tool,
	}
	if p.Kind.NeedsK() {
		md["k"] = strconv.Itoa(p.K)
		md["bags"] = strconv.Itoa(r.Bags)
		md["dropped_rows"] = strconv.Itoa(r.Dropped)
	}
	if t := m.Spec().Takes; t.KeyGroups {
		md["bags"] = strconv.Itoa(r.Bags) // one per key group
	}
	if t := m.Spec().Takes; t.Source {
		md["trigger_data"], md["windows"], md["reports"] = strconv.Itoa(p.TriggerData), strconv.Itoa(p.Windows), strconv.Itoa(p.Reports)
		if sl, ok := m.ExampleLaw().(pets.StateLaw); ok {
			md["states"] = strconv.FormatUint(sl.States(), 10)
		}
	}
	if t := m.Spec().Takes; t.Shares {
		md["contribution_budget"] = strconv.Itoa(ara.ContributionBudget)
		if l := m.ValueLaw(); l != nil { // on values: the value's share and its sum's Laplace scale (value units)
			md["budget_share_value"] = data.FormatFloat(p.ValueShare)
			md["value_noise_scale"] = data.FormatFloat(l.Scale())
		} else {
			md["budget_share_count"] = data.FormatFloat(p.CountShare)
			md["count_noise_rate"] = data.FormatFloat(m.BagLaw().NoiseRate())
		}
	}
	if p.Kind.NeedsEpsilon() && p.Epsilon > 0 {
		md["epsilon"] = data.FormatFloat(p.Epsilon)
	}
	if r.classes >= 3 {
		md[data.MetaClasses] = strconv.Itoa(r.classes)
		if b := m.BagLaw(); b != nil && b.NoiseRate() > 0 {
			md["count_sensitivity"] = strconv.Itoa(b.Sensitivity())
			md["count_noise_rate"] = data.FormatFloat(b.NoiseRate())
		}
	}
	if pi := m.FlipProb(); pi > 0 {
		md["flip_prob"] = data.FormatFloat(pi)
	}
	if b := m.BagLaw(); b != nil && b.SumNoise() == pets.SumLaplace || m.ValueLaw() != nil && m.ValueLaw().Scale() > 0 {
		md["laplace_sampler"] = map[bool]string{true: "grid (floating-point safe)", false: "textbook"}[p.Secure]
	}
	r.valueMeta(md)
	if r.rule.Kind != llp.RuleRandom { // random bags keep the metadata they always had
		md["bag_rule"] = r.rule.String()
	}
	if m.Spec().Release.WithPrior() {
		r.priorMeta(md)
	}
	return md
}

// Covered returns the input row of each release row: the rows (people) the
// release covers, in release order (an LLP remainder that was dropped is
// not covered). The slice is shared: do not modify it. A release of every
// input row in order (InOrder) makes it on each call.
func (r *Release) Covered() []int {
	if r.rows == nil {
		return identity(r.Input)
	}
	return r.rows
}

// InOrder reports whether the release covers every input row, in input
// order (rr, bot, rr_prior): Covered is then 0, 1, …, Input−1.
func (r *Release) InOrder() bool { return r.rows == nil }

// Draws returns the noise draw of each release row for the ledger: the
// bag id of the LLP family (rows of a bag share one proportion; ids are
// non-decreasing in release order), nil when every row is its own draw
// (rr, rr_prior, bot). The slice is shared: do not modify it.
func (r *Release) Draws() []int64 { return r.bagID }

// Entry is the ledger record of publishing r at path; the caller adds the
// ledger's identities of the labels and of the people covered (Input,
// Labels, Identity, People, KeyCheck).
func (r *Release) Entry(path string, seed uint64) ledger.Release {
	e := ledger.Release{ID: newID(), Draws: r.Draws(), Mech: r.Mech, Noise: r.Noise, Path: path}
	if r.Noise != pets.NoiseSecure {
		e.Seed = strconv.FormatUint(seed, 10)
	}
	return e
}

func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("release: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// Ledger records releases before they are published (*ledger.Ledger).
type Ledger interface {
	Record(ledger.Release) (ledger.Row, error)
	Abort(id, reason string) (ledger.Row, error)
}

// Put says whether a release file may replace a file at its path.
type Put bool

// The ways of putting a release file in place.
const (
	// NoReplace refuses the release (ErrExists) when a file is at its path
	// when it is put in place: of two releases started at once to one new
	// path (two privatize runs with one --out), exactly one lands, and the
	// other's ledger row is marked aborted.
	NoReplace Put = false
	// Replace replaces a file at the path (privatize --force; simulation
	// releases made again).
	Replace Put = true
)

// ErrExists is wrapped when a NoReplace release finds a file at its path.
var ErrExists = errors.New("release: the release file exists")

// Publish writes f (with metadata md) to path, recorded first: the file's
// SHA-256 is computed without writing it (data.FrameSHA256), e is recorded
// in the ledger with it, and only then is the file written (under a
// temporary name, mode 0600, in path's folder), its digest checked and
// put in place (put: never over another file, or replacing it). If the
// ledger refuses, nothing is written; if the write fails (or, NoReplace, a
// file has appeared at path), the ledger row is marked aborted (it keeps
// its charge) and the temporary removed. A crash after the row leaves at
// most a recorded temporary, which the next writer of that path removes
// (and Privatize, atomicfile.RemoveStaleFor, those of every path the ledger
// names): no complete release ever sits anywhere without its ledger row.
// Returns the ledger row.
func Publish(path string, f *data.Frame, md map[string]string, l Ledger, e ledger.Release, put Put) (ledger.Row, error) {
	return PublishChunked(path, data.Whole(f), md, l, e, put)
}

// PublishChunked is Publish of the frame c makes a range of rows at a time
// (Release.SimulationChunked: the file without its whole row column in
// memory).
func PublishChunked(path string, c data.Chunked, md map[string]string, l Ledger, e ledger.Release, put Put) (ledger.Row, error) {
	rows, err := PublishSteps(path, c, md, l, []ledger.Release{e}, put)
	return rows[len(rows)-1], err
}

// PublishSteps is PublishChunked of a release charged as several steps
// (Release.Entries: rr_bins's private prior, then its bins): every entry
// is recorded, in order, with the file's SHA-256 before a byte is written,
// and if the file cannot be written each is marked aborted. It returns a
// row per entry recorded (at least one, the last the error's).
func PublishSteps(path string, c data.Chunked, md map[string]string, l Ledger, es []ledger.Release, put Put) ([]ledger.Row, error) {
	sum, err := data.ChunkedSHA256(c, md)
	if err != nil {
		return []ledger.Row{{}}, fmt.Errorf("release: %s: %w", path, err)
	}
	var rows []ledger.Row
	for _, e := range es {
		e.SHA256 = sum
		row, err := l.Record(e)
		rows = append(rows, row)
		if err != nil {
			for _, done := range es[:len(rows)-1] {
				l.Abort(done.ID, err.Error())
			}
			return rows, fmt.Errorf("release: %s not published: %w", path, err)
		}
	}
	if err := publishFile(path, c, md, sum, put); err != nil {
		for _, e := range es {
			if _, aerr := l.Abort(e.ID, err.Error()); aerr != nil {
				return rows, fmt.Errorf("%w (and marking its ledger row aborted failed: %v)", err, aerr)
			}
		}
		return rows, fmt.Errorf("%w (its ledger row is marked aborted; the release still counts)", err)
	}
	return rows, nil
}

// publishFile writes the recorded release file (PublishSteps).
func publishFile(path string, c data.Chunked, md map[string]string, sum string, put Put) error {
	faultpoint.Hit("release.recorded")
	write := data.WriteChunkedNewAfter
	if put == Replace {
		write = data.WriteChunkedAfter
	}
	err := write(path, c, md, func(got string) error {
		if got != sum {
			return fmt.Errorf("release: %s: the file written has SHA-256 %s, the ledger recorded %s", path, got, sum)
		}
		faultpoint.Hit("release.written")
		return nil
	})
	if put == NoReplace && errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s was put there while this release was written (another release to the same file, started at the same time?): "+
			"it was left as it is and this release was not published", ErrExists, path)
	} else if err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}
