package model

import (
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"

	"labelprivacy/data"
)

// validate checks t.cfg, fills in its defaults and derives the program
// shape t.s, the steps and the parameter lists. Each check is a function
// of its own below, in the order the errors are reported.
func (t *trainer) validate() error {
	cfg := &t.cfg
	if cfg.Backend == nil {
		return fmt.Errorf("%w: no backend", ErrInvalidConfig)
	}
	t.be = cfg.Backend
	var err error
	if t.m, err = cfg.Model.WithDefaults(); err != nil {
		return err
	}
	if err := cfg.fillDefaults(); err != nil {
		return err
	}
	if err := checkLossClasses(cfg.Loss, t.m); err != nil {
		return err
	}
	if len(cfg.Replicas) == 0 {
		return fmt.Errorf("%w: a group needs at least one replica", ErrInvalidConfig)
	}
	if err := checkFeatures(t.m, cfg.Features); err != nil {
		return err
	}
	s := trainShape{model: t.m.key(), loss: cfg.Loss, adam: cfg.Adam, r: len(cfg.Replicas)}
	if t.m.multiclass() {
		s.classes = t.m.Classes
	}
	sh, err := cfg.checkReplicas(t.m.Classes)
	if err != nil {
		return err
	}
	s.b, s.bag, s.sized, t.spe = sh.rows, sh.bag, sh.sized, sh.steps
	t.total = int64(cfg.Epochs) * t.spe
	t.chooseFeed(&s)
	s.hostAdam = hostAdamFeed(t.be, s.feed)
	t.s = s
	t.specs = t.m.params()
	t.gspecs = s.graphParams(t.m)
	return nil
}

// fillDefaults replaces zero fields by their defaults and checks the
// group-wide settings: loss, counts, resident mode, Adam.
func (c *GroupConfig) fillDefaults() error {
	if _, ok := losses.Name(c.Loss); !ok {
		return fmt.Errorf("%w: invalid loss %d", ErrInvalidConfig, int(c.Loss))
	}
	if c.Epochs == 0 {
		c.Epochs = 1
	}
	if c.LossEvery == 0 {
		c.LossEvery = DefaultLossEvery
	}
	if c.CheckpointEvery == (Interval{}) {
		c.CheckpointEvery = DefaultCheckpointInterval
	}
	if c.ResidentMaxBytes == 0 {
		c.ResidentMaxBytes = DefaultResidentMaxBytes
	}
	if c.Epochs < 0 || c.LossEvery < 0 || c.CheckpointEvery.Every < 0 || c.CheckpointEvery.Steps < 0 {
		return fmt.Errorf("%w: negative Epochs, LossEvery or CheckpointEvery", ErrInvalidConfig)
	}
	if _, ok := residentModes.Name(c.Resident); !ok {
		return fmt.Errorf("%w: invalid resident mode %d", ErrInvalidConfig, int(c.Resident))
	}
	adam, err := c.Adam.withDefaults()
	if err != nil {
		return err
	}
	c.Adam = adam
	return nil
}

// checkLossClasses checks that the loss trains the model's head: a binary
// loss a binary model, a C-class loss a model of C ≥ 3 classes.
func checkLossClasses(l Loss, m ModelConfig) error {
	if l.Regression() != m.Regression {
		if m.Regression {
			return fmt.Errorf("%w: loss %s trains a classifier; a regression model trains with mse or bag_mse", ErrInvalidConfig, l)
		}
		return fmt.Errorf("%w: loss %s trains a regression head (ModelConfig.Regression)", ErrInvalidConfig, l)
	}
	if l.Multiclass() == m.multiclass() {
		return nil
	}
	if m.multiclass() {
		hint := ""
		if alt, err := l.ForClasses(m.Classes); err == nil {
			hint = fmt.Sprintf(" (its C-class form is %s)", alt)
		}
		return fmt.Errorf("%w: loss %s is binary; model.classes = %d trains with ce, forward_ce, backward_ce or propmatch_ce%s",
			ErrInvalidConfig, l, m.Classes, hint)
	}
	return fmt.Errorf("%w: loss %s trains a softmax head of 3 or more classes; model.classes is %d (binary)", ErrInvalidConfig, l, m.Classes)
}

// checkReplicas checks every replica (on a copy of c.Replicas: defaults are
// filled in) of a model of classes classes and that they share one batch
// shape, which it returns: rows per batch, bag size (or slots of bags of
// any size) and batches per epoch.
func (c *GroupConfig) checkReplicas(classes int) (batchShape, error) {
	c.Replicas = slices.Clone(c.Replicas)
	var first batchShape
	for i := range c.Replicas {
		rep := &c.Replicas[i]
		sh, err := rep.check(c.Loss, classes)
		if err == nil && i > 0 && sh != first {
			err = fmt.Errorf("%w: %d batches of %d rows (bag size %d, sized %v) per epoch; replica 0 has %d of %d (bag size %d, sized %v): a group needs one shape",
				ErrInvalidData, sh.steps, sh.rows, sh.bag, sh.sized, first.steps, first.rows, first.bag, first.sized)
		}
		if err != nil {
			return batchShape{}, &ReplicaError{Group: c.Name, Replica: rep.Name, Index: i, Err: err}
		}
		if i == 0 {
			first = sh
		}
	}
	return first, nil
}

// batchShape is the shape of a replica's batches.
type batchShape struct {
	rows, bag int   // rows per batch; rows per bag (0: one target per row), or slots of bags of any size
	sized     bool  // bags of any size packed into slots (data.Batch.Sized)
	steps     int64 // batches per epoch
}

// check fills in the replica's default learning rate and checks it, its
// loss parameters and its source, for a model of classes classes.
func (rep *Replica) check(loss Loss, classes int) (batchShape, error) {
	if rep.LR == 0 {
		rep.LR = DefaultLearningRate
	}
	if !(rep.LR > 0) || math.IsInf(rep.LR, 0) {
		return batchShape{}, fmt.Errorf("%w: learning rate must be > 0, got %v", ErrInvalidConfig, rep.LR)
	}
	if err := rep.Params.ValidateFor(loss, classes); err != nil {
		return batchShape{}, err
	}
	if rep.Source == nil || isNilPointer(rep.Source) {
		return batchShape{}, fmt.Errorf("%w: no batch source", ErrInvalidConfig)
	}
	return probeSource(rep.Source, loss, classes)
}

// probeSource reads the source's first batch and checks that its batches
// can train loss on a model of classes classes: whole batches (DropLast),
// one target per row or per bag as the loss needs, of one value (binary)
// or C values (C ≥ 3 classes), row ids into the features (IndexOnly
// sources carry them).
func probeSource(src BatchSource, loss Loss, classes int) (batchShape, error) {
	src.SeekEpoch(0)
	b, err := src.Next()
	if errors.Is(err, io.EOF) {
		return batchShape{}, fmt.Errorf("%w: the batch source yields no batch", ErrInvalidData)
	}
	if err != nil {
		return batchShape{}, err
	}
	sh := batchShape{rows: b.Rows, bag: b.BagSize, sized: b.Sized, steps: int64(src.BatchesPerEpoch())}
	if per := b.Rows / max(b.BagSize, 1); !b.Sized && per*src.BatchesPerEpoch() > src.Units() {
		return sh, fmt.Errorf("%w: the source's last batch is partial; build it with DropLast", ErrInvalidData)
	}
	if b.Sized && (loss != LossPropMatch && loss != LossBagMSE || classes >= 3) {
		return sh, fmt.Errorf("%w: bags of any size (key groups) train with propmatch on binary labels or bag_mse on values, not %s on %d classes", ErrInvalidData, loss, max(classes, 2))
	}
	if loss.PerBag() != (b.BagSize > 0) {
		return sh, fmt.Errorf("%w: loss %s needs %s, the source has bag size %d", ErrInvalidData, loss,
			map[bool]string{true: "whole bags", false: "one target per row"}[loss.PerBag()], b.BagSize)
	}
	if len(b.RowIDs) != b.Rows {
		return sh, fmt.Errorf("%w: batches carry no row ids", ErrInvalidData)
	}
	if want := targetWidthFor(classes); max(b.TargetWidth, 1) != want {
		return sh, fmt.Errorf("%w: the source's targets have %d values per %s, a model of %d classes needs %d",
			ErrInvalidData, max(b.TargetWidth, 1), map[bool]string{true: "bag", false: "row"}[loss.PerBag()], max(classes, 2), want)
	}
	return sh, nil
}

// chooseFeed picks how steps receive their rows (feedKind) and the shape
// fields that go with it.
func (t *trainer) chooseFeed(s *trainShape) {
	cfg, f := &t.cfg, t.cfg.Features
	switch {
	case t.m.Kind == KindKDDEmbed && cfg.SparseEmbedding:
		s.feed, s.w = feedSparseLazy, sparseWidth(f)
		s.u = s.b * s.w
		if cfg.Resident == ResidentNever || (cfg.Resident == ResidentAuto && isGoBackend(t.be)) {
			s.feed, s.e = feedSparseHost, t.m.EmbedDim
		}
	case t.m.Kind == KindKDDEmbed:
		s.feed, s.w = feedSparseDense, sparseWidth(f)
	default:
		s.d = f.Dim()
		resident := cfg.Resident == ResidentAlways ||
			(cfg.Resident == ResidentAuto && !isGoBackend(t.be) && int64(len(f.X))*4 <= cfg.ResidentMaxBytes)
		s.feed = feedHost
		if resident {
			s.feed, s.n = feedResident, f.Rows
		}
	}
}

// checkFeatures checks that the features fit the model.
func checkFeatures(m ModelConfig, f *data.Features) error {
	if f == nil || f.Rows == 0 {
		return fmt.Errorf("%w: no feature rows", ErrInvalidData)
	}
	if err := f.CheckMemory(); err != nil { // arrays whose owner the features do not carry
		return fmt.Errorf("%w: %w", ErrInvalidData, err)
	}
	if m.Kind != KindKDDEmbed {
		if f.Dim() != m.InputDim || len(f.X) != f.Rows*f.Dim() {
			return fmt.Errorf("%w: %s needs %d dense features, got %d", ErrInvalidData, m.Kind, m.InputDim, f.Dim())
		}
		return nil
	}
	if !f.HasSparse() || len(f.Offsets) != f.Rows+1 {
		return fmt.Errorf("%w: kdd_embed needs the sparse indices column", ErrInvalidData)
	}
	for i := range f.Rows {
		for _, ix := range f.Indices[f.Offsets[i]:f.Offsets[i+1]] {
			if int(ix) >= m.Buckets {
				return &RowError{Row: i, Msg: fmt.Sprintf("bucket index %d outside [0, %d)", ix, m.Buckets)}
			}
		}
	}
	return nil
}

// sparseWidth is the most indices any row has (at least 1).
func sparseWidth(f *data.Features) int {
	w := 1
	for i := range f.Rows {
		w = max(w, int(f.Offsets[i+1]-f.Offsets[i]))
	}
	return w
}

// isNilPointer reports whether v holds a nil pointer (a typed nil, e.g. a
// nil *data.BatchSource, is not == nil as an interface).
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// targetWidthFor is the number of target values per row or bag a model of
// classes classes trains on: 1 (binary, classes 0 or 2) or C.
func targetWidthFor(classes int) int {
	if classes >= 3 {
		return classes
	}
	return 1
}
