package data

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
)

// Target selects the per-row (or per-bag) training target of a batch.
type Target uint8

const (
	TargetNone          Target = iota // features only (prediction)
	TargetLabel                       // raw `label`: clean training and evaluation only
	TargetLabelRR                     // `label_rr`, randomized response
	TargetAlpha                       // `alpha` per bag (llp, llp_lap, llp_geom raw release)
	TargetAlphaDebiased               // `alpha_debiased` per bag (llp_geom)
	TargetSoft                        // `soft_target` per row: a float target derived from a release (rr_prior)
	TargetValueRR                     // `value_rr` per row: a released conversion value (laplace, rr_bins)
	TargetBagMean                     // `bag_mean` per bag: a bag's released mean value (value_bags)
)

var targetNames = []string{"none", ColLabel, ColLabelRR, ColAlpha, ColAlphaDebiased, ColSoftTarget, ColValueRR, ColBagMean}

func (t Target) String() string {
	if int(t) < len(targetNames) {
		return targetNames[t]
	}
	return "Target(" + strconv.Itoa(int(t)) + ")"
}

func (t Target) perBag() bool {
	return t == TargetAlpha || t == TargetAlphaDebiased || t == TargetBagMean
}

// Batch is one minibatch: dense features row-major, sparse indices padded to
// Width with mask 0, Target per row or, with BagSize k > 0, per bag. RowIDs
// are the rows of the feature frame the batch holds, in batch order, so a
// trainer whose features already live on its device needs only them. A PET
// model's batch carries the released target, never a raw label.
//
// Targets of C ≥ 3 classes (BatchOptions.Classes) are vectors: TargetWidth
// = C float32 per row (or per bag), row-major in Target, probability-like:
//   - TargetLabel, TargetLabelRR: the one-hot vector of the row's class;
//   - TargetAlpha, TargetAlphaDebiased: per bag, the released proportion
//     vector (1 − Σ_{c≥1} α_c, α_1, …, α_{C−1}), the class-0 entry computed
//     in float64 and not clipped (under noise entries may be negative or
//     above 1; losses linear in the target stay unbiased);
//   - TargetSoft: the row's soft_target_0 … soft_target_{C−1}.
//
// TargetWidth is 0 for binary targets (one float32 per row or bag, as
// always) and for TargetNone.
type Batch struct {
	Rows   int
	RowIDs []int32

	X   []float32
	Dim int

	Indices   []int32
	IndexMask []float32
	Width     int

	Target []float32
	// TargetWidth is the number of target values per row (or per bag): 0 or
	// 1, one scalar (binary labels, proportions, soft targets); W = C ≥ 3,
	// a vector over the C classes, row-major in Target (one-hot labels,
	// per-bag class proportions, per-row soft vectors).
	TargetWidth int

	BagSize int
	// Sized: BagSize is the number of slots of bags of any size packed into
	// the batch (BatchOptions.SizedBags), and Target carries each slot's
	// proportions, each slot's size and each row's slot.
	Sized bool
}

// BatchOptions configures a BatchSource.
type BatchOptions struct {
	BatchSize int    // rows per batch ≥ 1; in bag mode a multiple of BagSize
	Shuffle   bool   // shuffle rows (or whole bags) every epoch
	Seed      uint64 // shuffle seed; epoch e uses PCG(Seed, e)
	Target    Target
	// BagSize > 0 turns on bag mode: rows are grouped by `bag_id` and every
	// batch holds BatchSize/BagSize whole bags of exactly BagSize rows. Bags of
	// another size (a kept LLP remainder) are skipped and counted in
	// SkippedBags, since a batch is "B bags of k".
	BagSize int
	// SizedBags turns bag mode (BagSize = U > 0) into bags of any size from
	// 1 to BatchSize rows (ara_summary's key groups), each whole in one
	// batch: an epoch's shuffled bags are packed in order into batches of
	// BatchSize rows and at most U bags, the rest of a batch padding; the
	// epoch has max(1, ⌊rows in bags / BatchSize⌋) batches and leaves out
	// the bags that do not fit them (another order, other bags, the next
	// epoch; DroppedBags counts them). A batch's target is its U slots'
	// proportions (TargetWidth values a slot, as in bag mode), their U bag
	// sizes (0: an empty slot) and, per row, its slot (−1 for padding, whose
	// RowIDs repeat the batch's first row): U·w + U + BatchSize float32
	// (Batch.Sized). DropLast is implied.
	SizedBags bool
	// DropLast drops a final partial batch so that every batch has the same
	// shape (training); otherwise the last batch is smaller (prediction).
	DropLast bool
	// Width pads sparse rows to this many indices; 0 uses the widest row.
	Width int
	// Features, when set, are the features batches are gathered from (or,
	// with IndexOnly, the rows RowIDs point into): the source frame then only
	// supplies targets (a release that stays with the raw data), and its
	// `row` column, when present, maps each of its rows to a row of Features
	// (otherwise rows correspond by position). Unset: the source frame's own
	// features.
	Features *Features
	// IndexOnly fills RowIDs and Target but gathers no features (a trainer
	// with the features resident on its device).
	IndexOnly bool
	// Classes is the number of label classes C: 0 or 2 for binary targets
	// (one value a row or bag), 3..MaxClasses for class vectors (Batch's
	// doc). With a target it must be the frame's NumClasses.
	Classes int
	// ValueScale multiplies the value targets (value_rr, bag_mean): 1/B
	// trains a model on values in units of the grid's B. 0 means 1.
	ValueScale float64
}

// BagError reports an inconsistent LLP bag.
type BagError struct {
	Bag int64
	Row int
	Msg string
}

func (e *BagError) Error() string {
	return fmt.Sprintf("data: bag %d (row %d): %s", e.Bag, e.Row, e.Msg)
}

// BatchSource yields batches over an in-memory Frame with an explicit, seeded
// shuffle (GoMLX's InMemoryDataset shuffles with the global math/rand and
// ignores seeds). It is the one batch source: model's group trainer reads
// it (SeekEpoch positions each epoch, Next returns io.EOF at its end), as do
// the pipeline's predictions. The returned Batch is reused by the next call.
type BatchSource struct {
	f     *Frame    // targets (and bags)
	feat  *Features // features
	rowOf []int64   // feature row of each row of f (nil: the same row)
	o     BatchOptions
	// Shuffle units: row u in row mode; in bag mode bag u, whose rows are
	// bagRows[bagStart[u]:bagStart[u+1]]. Four bytes per row: a 10M-row
	// source holds 80 MB (order and target), not the 440 MB a slice per
	// row took. Class-vector targets add nothing per row: labels stay the
	// frame's bytes (one-hot is built per batch), soft vectors are read from
	// the frame in place, and a bag's proportion vector is C float32 per bag.
	nUnits   int
	bagStart []int32
	bagRows  []int32
	order    []int32 // unit order of epoch orderOf (computed once per epoch: shuffleUnits)
	orderOf  uint64
	ordered  bool // order holds epoch orderOf's order
	pos      int  // next unit
	epoch    uint64
	b        Batch

	target      []float32 // per row (or per unit in bag mode, C values a unit for C ≥ 3 classes); nil with labels
	labels      []uint8   // class targets per row (label, label_rr), the frame's own column
	soft        []float64 // C ≥ 3: the frame's soft_target vectors, read in place (C a row)
	width       int       // C for class-vector targets, 0 for binary ones
	SkippedBags int
	// SizedBags: batches an epoch, the epoch's packing (batch j holds the
	// units order[packed[j]:packed[j+1]]) and the bags it left out.
	batches     int
	packed      []int32
	DroppedBags int
	shuffles    int   // orders made (tests: one per epoch)
	touched     int32 // shuffleUnits's sum of loads, kept
}

// NewBatchSource validates the options against the frame's columns.
func NewBatchSource(f *Frame, o BatchOptions) (*BatchSource, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if o.SizedBags {
		o.DropLast = true
	}
	s := &BatchSource{f: f, feat: f.FeaturesOnly(), o: o}
	if err := s.setClasses(); err != nil {
		return nil, err
	}
	if err := s.setFeatures(); err != nil {
		return nil, err
	}
	col, err := s.setTarget()
	if err != nil {
		return nil, err
	}
	if err := s.setUnits(col); err != nil {
		return nil, err
	}
	if err := s.setShape(); err != nil {
		return nil, err
	}
	// The first epoch's order is made when it is first needed (Next or
	// SeekEpoch), once: a trainer positions every source before its first
	// step, and a 10M-row order costs ~0.3 s to shuffle.
	return s, nil
}

// check checks the sizes (batch ≥ 1, bag ≥ 0, a batch a multiple of the
// bag, bags of any size with U ≥ 1) and that the target is per bag exactly
// in bag mode.
func (o BatchOptions) check() error {
	if o.BatchSize < 1 {
		return fmt.Errorf("%w: batch size must be ≥ 1, got %d", ErrInvalid, o.BatchSize)
	}
	if o.BagSize < 0 {
		return fmt.Errorf("%w: bag size must be ≥ 0, got %d", ErrInvalid, o.BagSize)
	}
	if o.Target.perBag() != (o.BagSize > 0) {
		return fmt.Errorf("%w: target %s needs bag mode (BagSize > 0) exactly when it is a bag proportion", ErrInvalid, o.Target)
	}
	if o.BagSize > 0 && !o.SizedBags && o.BatchSize%o.BagSize != 0 {
		return fmt.Errorf("%w: batch size %d is not a multiple of bag size %d", ErrInvalid, o.BatchSize, o.BagSize)
	}
	if o.SizedBags && o.BagSize < 1 {
		return fmt.Errorf("%w: bags of any size need a number of bags a batch (BagSize ≥ 1), got %d", ErrInvalid, o.BagSize)
	}
	return nil
}

// setClasses checks a target's classes against the frame's and sets
// s.width: C for C ≥ 3 classes, 0 for binary targets and TargetNone.
func (s *BatchSource) setClasses() error {
	f, o := s.f, s.o
	if o.Target == TargetNone {
		return nil
	}
	if err := CheckClasses(o.Classes); err != nil {
		return err
	}
	if c := max(o.Classes, 2); c != f.NumClasses() {
		return fmt.Errorf("%w: batch %s %d for a frame of %d classes", ErrInvalid, MetaClasses, c, f.NumClasses())
	}
	if c := f.NumClasses(); c >= 3 {
		s.width = c
	}
	return nil
}

// setFeatures takes the features from o.Features when set: each frame row
// maps to its `row` (in range), or rows correspond by position (as many).
func (s *BatchSource) setFeatures() error {
	f, o := s.f, s.o
	if o.Features == nil {
		return nil
	}
	o.Features.checkMemory()
	s.feat = o.Features
	if f.Row != nil {
		for i, r := range f.Row {
			if r < 0 || r >= int64(o.Features.Rows) {
				return fmt.Errorf("%w: row %d refers to feature row %d of %d", ErrInvalid, i, r, o.Features.Rows)
			}
		}
		s.rowOf = f.Row
	} else if f.Rows != o.Features.Rows {
		return fmt.Errorf("%w: %d target rows for %d feature rows (and no %s column)", ErrSchema, f.Rows, o.Features.Rows, ColRow)
	}
	return nil
}

// setTarget sets the per-row target (s.labels, s.soft or s.target, value
// targets times ValueScale) and returns the per-bag target column of bag
// mode (alpha…, bag_mean times ValueScale; nil otherwise), which setUnits
// groups.
func (s *BatchSource) setTarget() ([]float64, error) {
	f, o := s.f, s.o
	var col []float64
	switch o.Target {
	case TargetNone:
	case TargetLabel, TargetLabelRR:
		src := f.Label
		if o.Target == TargetLabelRR {
			src = f.LabelRR
		}
		if src == nil {
			return nil, fmt.Errorf("%w: no %s column for the batch target", ErrSchema, o.Target)
		}
		if s.width > 0 {
			for i, y := range src {
				if int(y) >= s.width {
					return nil, labelError(o.Target.String(), i, int64(y), s.width)
				}
			}
		}
		s.labels = src // read in place: one byte a row, not a float32 copy (one-hot per batch for C ≥ 3)
	case TargetSoft:
		return nil, s.setSoftTarget()
	case TargetValueRR, TargetBagMean:
		return s.setValueTarget()
	case TargetAlpha:
		col = f.Alpha
		if s.width > 0 {
			col = f.AlphaC
		}
	case TargetAlphaDebiased:
		col = f.AlphaDebiased
		if s.width > 0 {
			col = f.AlphaDebiasedC
		}
	default:
		return nil, fmt.Errorf("%w: unknown target %d", ErrInvalid, o.Target)
	}
	return col, nil
}

// setSoftTarget sets TargetSoft's targets: the frame's soft_target_c
// vectors in place (C ≥ 3), or soft_target as float32.
func (s *BatchSource) setSoftTarget() error {
	f, o := s.f, s.o
	if s.width > 0 {
		if len(f.SoftTargetC) != f.Rows*s.width {
			return fmt.Errorf("%w: no %s0… columns (%d values) for the batch target of %d rows × %d classes", ErrSchema, ColSoftTargetPrefix, len(f.SoftTargetC), f.Rows, s.width)
		}
		s.soft = f.SoftTargetC
		return nil
	}
	if f.SoftTarget == nil {
		return fmt.Errorf("%w: no %s column for the batch target", ErrSchema, o.Target)
	}
	s.target = make([]float32, len(f.SoftTarget))
	for i, v := range f.SoftTarget {
		s.target[i] = float32(v)
	}
	return nil
}

// setValueTarget scales the value targets by ValueScale (0: 1): value_rr
// into s.target (float32 a row); bag_mean returned as the bag column.
func (s *BatchSource) setValueTarget() ([]float64, error) {
	f, o := s.f, s.o
	src := f.ValueRR
	if o.Target == TargetBagMean {
		src = f.BagMean
	}
	if src == nil {
		return nil, fmt.Errorf("%w: no %s column for the batch target", ErrSchema, o.Target)
	}
	scale := o.ValueScale
	if scale == 0 {
		scale = 1
	}
	if o.Target == TargetBagMean {
		col := make([]float64, len(src))
		for i, v := range src {
			col[i] = v * scale
		}
		return col, nil
	}
	s.target = make([]float32, len(src))
	for i, v := range src {
		s.target[i] = float32(v * scale)
	}
	return nil, nil
}

// setUnits sets the shuffle units: the rows (at most MaxInt32), or in bag
// mode the bags of bag_id with their target col (groupBags).
func (s *BatchSource) setUnits(col []float64) error {
	f, o := s.f, s.o
	if f.Rows > math.MaxInt32 {
		return fmt.Errorf("%w: %d rows; a batch source holds at most %d", ErrInvalid, f.Rows, math.MaxInt32)
	}
	if o.BagSize == 0 {
		s.nUnits = f.Rows
		return nil
	}
	if col == nil || s.width > 0 && len(col) != f.Rows*(s.width-1) {
		return fmt.Errorf("%w: no %s column for the batch target", ErrSchema, s.targetColumn())
	}
	if f.BagID == nil {
		return fmt.Errorf("%w: bag mode needs a %s column", ErrSchema, ColBagID)
	}
	return s.groupBags(col)
}

// setShape sets the batch's shape: the sparse width (o.Width, 0: the
// widest row; at least 1), the dense dimension, bag and target widths.
func (s *BatchSource) setShape() error {
	o := s.o
	if ff := s.feat; ff.HasSparse() {
		w := o.Width
		for i := range ff.Rows {
			n := int(ff.Offsets[i+1] - ff.Offsets[i])
			if o.Width > 0 && n > o.Width {
				return fmt.Errorf("%w: row %d has %d sparse indices, more than width %d", ErrInvalid, i, n, o.Width)
			}
			w = max(w, n)
		}
		s.b.Width = max(w, 1)
	}
	s.b.Dim = s.feat.Dim()
	s.b.BagSize, s.b.Sized = o.BagSize, o.SizedBags
	s.b.TargetWidth = s.width
	return nil
}

// targetColumn names the target's column(s), for errors.
func (s *BatchSource) targetColumn() string {
	if s.width == 0 {
		return s.o.Target.String()
	}
	if s.o.Target == TargetAlphaDebiased {
		return ColAlphaDebiasedPrefix + "1…"
	}
	return ColAlphaPrefix + "1…"
}

// groupBags groups rows by bag id (ids need not be dense or sorted; bags
// in the order of their first row, members in row order) and checks that
// every member carries the bag's proportion (for C ≥ 3 classes, the C−1
// proportions of col's row).
func (s *BatchSource) groupBags(col []float64) error {
	w := 1 // proportions a row in col
	if s.width > 0 {
		w = s.width - 1
	}
	byID := map[int64]int32{}
	bagOf := make([]int32, len(s.f.BagID)) // each row's bag, in order of first appearance
	var first []int32                      // each bag's first row
	var size []int32
	for i, id := range s.f.BagID {
		u, ok := byID[id]
		if !ok {
			u = int32(len(first))
			byID[id] = u
			first, size = append(first, int32(i)), append(size, 0)
		}
		if f := int(first[u]); w == 1 && col[f] != col[i] {
			return &BagError{Bag: id, Row: i, Msg: fmt.Sprintf("released %s %v differs from the bag's %v", s.targetColumn(), col[i], col[f])}
		} else if w > 1 && !slices.Equal(col[f*w:(f+1)*w], col[i*w:(i+1)*w]) {
			return &BagError{Bag: id, Row: i, Msg: fmt.Sprintf("released proportions %v differ from the bag's %v", col[i*w:(i+1)*w], col[f*w:(f+1)*w])}
		}
		bagOf[i] = u
		size[u]++
	}
	// Keep the bags of exactly BagSize rows: unit numbers in bag order.
	unit := make([]int32, len(first))
	if w > 1 {
		s.target = make([]float32, 0, len(first)*s.width) // C values a bag, no slack
	}
	s.bagStart = []int32{0}
	for u, n := range size {
		unit[u] = -1
		if s.o.SizedBags && int(n) > s.o.BatchSize {
			return &BagError{Bag: s.f.BagID[first[u]], Row: int(first[u]), Msg: fmt.Sprintf("%d rows, more than a batch of %d holds (a bag trains whole: raise the batch size)", n, s.o.BatchSize)}
		}
		if int(n) != s.o.BagSize && !s.o.SizedBags {
			s.SkippedBags++
			continue
		}
		unit[u] = int32(len(s.bagStart) - 1)
		s.bagStart = append(s.bagStart, s.bagStart[len(s.bagStart)-1]+n)
		f := int(first[u])
		if w == 1 {
			s.target = append(s.target, float32(col[f]))
			continue
		}
		// The bag's proportion vector: class 0 implied, not clipped.
		alpha := col[f*w : (f+1)*w]
		rest := 0.0
		for _, a := range alpha {
			rest += a
		}
		s.target = append(s.target, float32(1-rest))
		for _, a := range alpha {
			s.target = append(s.target, float32(a))
		}
	}
	s.nUnits = len(s.bagStart) - 1
	if s.nUnits == 0 {
		return fmt.Errorf("%w: no bag has exactly %d rows", ErrInvalid, s.o.BagSize)
	}
	if s.o.SizedBags {
		s.batches = max(1, int(s.bagStart[s.nUnits])/s.o.BatchSize)
	}
	s.bagRows = make([]int32, s.bagStart[s.nUnits])
	fill := slices.Clone(s.bagStart[:s.nUnits])
	for i, b := range bagOf {
		if u := unit[b]; u >= 0 {
			s.bagRows[fill[u]] = int32(i)
			fill[u]++
		}
	}
	return nil
}

// unitRows returns the rows of unit u (in row mode, u itself, in one).
func (s *BatchSource) unitRows(u int32, one *[1]int32) []int32 {
	if s.bagStart == nil {
		one[0] = u
		return one[:]
	}
	return s.bagRows[s.bagStart[u]:s.bagStart[u+1]]
}

// BatchesPerEpoch is the number of batches Next yields per epoch (for a
// trainer's progress and ETA).
func (s *BatchSource) BatchesPerEpoch() int {
	if s.o.SizedBags {
		return s.batches
	}
	per := s.unitsPerBatch()
	if s.o.DropLast {
		return s.nUnits / per
	}
	return (s.nUnits + per - 1) / per
}

func (s *BatchSource) unitsPerBatch() int {
	if s.o.BagSize > 0 {
		return s.o.BatchSize / s.o.BagSize
	}
	return s.o.BatchSize
}

// shuffle positions the source at the start of epoch s.epoch, making that
// epoch's unit order unless the source holds it already: identity order,
// then (with Shuffle) math/rand/v2's Fisher–Yates shuffle drawn from
// PCG(Seed, epoch) (shuffleUnits).
func (s *BatchSource) shuffle() {
	s.pos = 0
	if s.ordered && s.orderOf == s.epoch {
		return
	}
	if s.order == nil {
		s.order = make([]int32, s.nUnits)
	}
	for i := range s.order {
		s.order[i] = int32(i)
	}
	if s.o.Shuffle {
		s.touched = shuffleUnits(s.order, rand.NewPCG(s.o.Seed, s.epoch))
	}
	if s.o.SizedBags {
		s.pack()
	}
	s.orderOf, s.ordered = s.epoch, true
	s.shuffles++
}

// Reset starts the next epoch with a fresh shuffle.
func (s *BatchSource) Reset() error {
	s.epoch++
	s.shuffle()
	return nil
}

// SeekEpoch positions the source at the start of epoch e (0-based; the
// order a new source starts in is epoch 0): the replica trainer sets every
// epoch explicitly, so a group resumed from a checkpoint replays the same
// batches. The order is made here (not at the next Next), so that a caller
// may position many sources at once on several cores; seeking the epoch
// the source holds reuses its order.
func (s *BatchSource) SeekEpoch(e uint64) {
	s.epoch = e
	s.shuffle()
}

// Ordered reports the epoch whose unit order the source holds (made by
// SeekEpoch, Reset or a new source's first Next; ok is false before any):
// seeking that epoch costs nothing.
func (s *BatchSource) Ordered() (epoch uint64, ok bool) { return s.orderOf, s.ordered }

// Units is the number of shuffle units: rows, or whole bags in bag mode.
func (s *BatchSource) Units() int { return s.nUnits }

// Next fills and returns the next batch, or io.EOF at the end of the epoch.
func (s *BatchSource) Next() (*Batch, error) {
	if !s.ordered { // a new source: epoch 0
		s.shuffle()
	}
	if s.o.SizedBags {
		return s.nextSized()
	}
	per := s.unitsPerBatch()
	left := len(s.order) - s.pos
	if left == 0 || (s.o.DropLast && left < per) {
		return nil, io.EOF
	}
	units := s.order[s.pos : s.pos+min(per, left)]
	s.pos += len(units)
	b := &s.b
	f := s.feat
	gather := !s.o.IndexOnly
	d := f.Dim()
	rows := len(units)
	if s.bagStart != nil {
		rows = len(units) * s.o.BagSize // every kept bag has BagSize rows
	}
	b.size(rows, d, gather, gather && f.HasSparse())
	w := max(s.width, 1) // target values a row or bag
	if s.o.Target == TargetNone {
		b.Target = b.Target[:0]
	} else if s.o.BagSize > 0 {
		b.Target = grow(b.Target, len(units)*w)
	} else {
		b.Target = grow(b.Target, rows*w)
	}
	r := 0
	var one [1]int32
	for k, u := range units {
		if s.o.BagSize > 0 {
			if w == 1 {
				b.Target[k] = s.target[u]
			} else {
				copy(b.Target[k*w:(k+1)*w], s.target[int(u)*w:(int(u)+1)*w])
			}
		}
		for _, src32 := range s.unitRows(u, &one) {
			src := int(src32)
			switch {
			case s.labels != nil && w == 1:
				b.Target[r] = float32(s.labels[src])
			case s.labels != nil: // one-hot
				t := b.Target[r*w : (r+1)*w]
				clear(t)
				t[s.labels[src]] = 1
			case s.soft != nil:
				for j, v := range s.soft[src*w : (src+1)*w] {
					b.Target[r*w+j] = float32(v)
				}
			case s.o.BagSize == 0 && s.o.Target != TargetNone:
				b.Target[r] = s.target[src]
			}
			fr := src
			if s.rowOf != nil {
				fr = int(s.rowOf[src])
			}
			b.RowIDs[r] = int32(fr)
			if gather {
				copy(b.X[r*d:(r+1)*d], f.X[fr*d:(fr+1)*d])
				if f.HasSparse() {
					idx := f.Indices[f.Offsets[fr]:f.Offsets[fr+1]]
					for t, v := range idx {
						b.Indices[r*b.Width+t] = int32(v)
						b.IndexMask[r*b.Width+t] = 1
					}
				}
			}
			r++
		}
	}
	if d == 0 || !gather {
		b.X = nil
	}
	if !gather {
		b.Indices, b.IndexMask = nil, nil
	}
	return b, nil
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// size sets b to hold rows rows of d dense features (when gather) and of
// b.Width sparse indices and masks (when sparse, cleared): its row ids
// and buffers grown, reused when large enough.
func (b *Batch) size(rows, d int, gather, sparse bool) {
	b.Rows = rows
	b.RowIDs = grow(b.RowIDs, rows)
	if gather {
		b.X = grow(b.X, rows*d)
	}
	if sparse {
		b.Indices = grow(b.Indices, rows*b.Width)
		b.IndexMask = grow(b.IndexMask, rows*b.Width)
		clear(b.Indices)
		clear(b.IndexMask)
	}
}
