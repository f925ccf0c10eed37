package model

import (
	stdctx "context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/gomlx/gomlx/backends"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
	"github.com/gomlx/gomlx/pkg/ml/context/checkpoints"
	"github.com/gomlx/gomlx/pkg/ml/train/optimizers"
)

// Training defaults.
const (
	DefaultLearningRate   = 1e-3
	DefaultProgressEvery  = 100
	DefaultCheckpointKeep = 2
)

// paramFingerprint is the context parameter that records the model, loss,
// learning rate and seed a checkpoint was trained with, so a resume with
// another config fails loudly.
const paramFingerprint = "labelprivacy_model"

// TrainConfig configures one training run.
type TrainConfig struct {
	// Name names the run in errors and progress reports.
	Name string

	// Backend to train on. When nil, one is created with
	// NewBackend(BackendName) ("" means "go").
	Backend     backends.Backend
	BackendName string

	Model ModelConfig
	Loss  Loss
	// LossParams: FlipProb for debiased_bce, Prior for easyllp.
	LossParams LossParams

	// LearningRate of Adam (default 1e-3).
	LearningRate float64
	// Epochs over src (default 1).
	Epochs int
	// Seed seeds the weight initialization (GoMLX context RNG via
	// context.ParamInitialSeed). Same seed, same backend, same batches →
	// same model.
	Seed int64

	// CheckpointDir, when set, holds GoMLX checkpoints: a run started with a
	// directory that has one resumes from its global step (skipping the
	// batches already trained on, so a deterministic source gives the same
	// result as an uninterrupted run). Checkpoints are written every
	// CheckpointEvery steps (0: only at the end), at the end, and when ctx is
	// cancelled; the newest CheckpointKeep (default 2) are kept.
	CheckpointDir   string
	CheckpointEvery int
	CheckpointKeep  int

	// Progress, when set, is called every ProgressEvery steps (default 100)
	// and once at the end. ProgressWriter, when set, gets a one-line report at
	// the same moments. Whether to draw a progress bar is the caller's call.
	Progress       func(Progress)
	ProgressEvery  int
	ProgressWriter io.Writer
}

// Progress is one progress report.
type Progress struct {
	Name           string
	Epoch          int // 1-based
	Epochs         int
	Step           int64   // global step (counts resumed steps)
	Examples       int64   // examples trained in this call
	ExamplesPerSec float64 // in this call
	Loss           float64 // mean training loss so far in the epoch
	Elapsed        time.Duration
	Done           bool
}

func (p Progress) String() string {
	return fmt.Sprintf("%s: epoch %d/%d step %d loss %.5f %.0f ex/s (%s)",
		p.Name, p.Epoch, p.Epochs, p.Step, p.Loss, p.ExamplesPerSec, p.Elapsed.Round(time.Millisecond))
}

// Trained is a trained model and its training summary.
type Trained struct {
	Name string

	// FinalLoss is the mean training loss over the last epoch trained in this
	// call (row-weighted); when a resumed run had nothing left to train, the
	// loss of the final model over one epoch of src.
	FinalLoss float64
	// Steps is the global step at the end (resumed steps included); StepsRun
	// the steps run in this call; ResumedFrom the step a checkpoint restored.
	Steps, StepsRun, ResumedFrom int64
	// Examples trained in this call, the wall time of the call, and
	// Examples per second of training-loop time.
	Examples       int64
	Wall           time.Duration
	ExamplesPerSec float64

	cfg TrainConfig
	r   *runner
}

// Backend returns the backend the model lives on (nil after Close).
func (t *Trained) Backend() backends.Backend {
	if t.r == nil {
		return nil
	}
	return t.r.backend
}

// Context returns the GoMLX context holding the model's variables (nil
// after Close).
func (t *Trained) Context() *context.Context {
	if t.r == nil {
		return nil
	}
	return t.r.ctx
}

// Config returns the run's configuration with defaults filled in.
func (t *Trained) Config() TrainConfig { return t.cfg }

// runner holds the GoMLX state of one run.
type runner struct {
	cfg        TrainConfig
	backend    backends.Backend
	ownBackend bool // created by newRunner: close finalizes it
	ctx        *context.Context
	ckpt       *checkpoints.Handler

	trainExec, lossExec, predExec *context.Exec
}

func (c TrainConfig) withDefaults() (TrainConfig, error) {
	var err error
	if c.Model, err = c.Model.WithDefaults(); err != nil {
		return c, err
	}
	if err = c.LossParams.Validate(c.Loss); err != nil {
		return c, err
	}
	if c.LearningRate == 0 {
		c.LearningRate = DefaultLearningRate
	}
	if !(c.LearningRate > 0) || math.IsInf(c.LearningRate, 0) {
		return c, fmt.Errorf("model: learning rate must be > 0, got %v", c.LearningRate)
	}
	if c.Epochs == 0 {
		c.Epochs = 1
	}
	if c.Epochs < 0 {
		return c, fmt.Errorf("model: epochs must be >= 0, got %d", c.Epochs)
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.CheckpointKeep == 0 {
		c.CheckpointKeep = DefaultCheckpointKeep
	}
	if c.CheckpointEvery < 0 {
		return c, fmt.Errorf("model: CheckpointEvery must be >= 0, got %d", c.CheckpointEvery)
	}
	return c, nil
}

func (c TrainConfig) fingerprint() string {
	m := c.Model
	return fmt.Sprintf("kind=%s dim=%d hidden=%v buckets=%d embed=%d loss=%s lr=%g seed=%d",
		m.Kind, m.InputDim, m.Hidden, m.Buckets, m.EmbedDim, c.Loss, c.LearningRate, c.Seed)
}

// recoverErr turns a panic (GoMLX reports graph errors by panicking) into an
// error naming the run.
func recoverErr(name string, err *error) {
	if r := recover(); r != nil {
		e, ok := r.(error)
		if !ok {
			e = fmt.Errorf("%v", r)
		}
		*err = fmt.Errorf("model: run %q: panic: %w\n%s", name, e, debug.Stack())
	}
}

func newRunner(cfg TrainConfig) (_ *runner, err error) {
	r := &runner{}
	defer func() { // runs after recoverErr: also on panics
		if err != nil {
			r.close()
		}
	}()
	defer recoverErr(cfg.Name, &err)
	if cfg, err = cfg.withDefaults(); err != nil {
		return nil, fmt.Errorf("model: run %q: %w", cfg.Name, err)
	}
	r.cfg, r.backend = cfg, cfg.Backend
	if r.backend == nil {
		if r.backend, err = NewBackend(cfg.BackendName); err != nil {
			return nil, err
		}
		r.ownBackend = true
	}
	r.ctx = context.New()
	r.ctx.SetParam(context.ParamInitialSeed, cfg.Seed)
	if cfg.CheckpointDir != "" {
		moved, err := pruneIncompleteCheckpoints(cfg.CheckpointDir)
		if err != nil {
			return nil, fmt.Errorf("model: run %q: checkpoint dir %q: %w", cfg.Name, cfg.CheckpointDir, err)
		}
		if len(moved) > 0 && cfg.ProgressWriter != nil {
			fmt.Fprintf(cfg.ProgressWriter, "%s: %s\n", cfg.Name, describePruned(cfg.CheckpointDir, moved))
		}
		r.ckpt, err = checkpoints.Build(r.ctx).Dir(cfg.CheckpointDir).Keep(cfg.CheckpointKeep).Done()
		if err != nil {
			return nil, fmt.Errorf("model: run %q: checkpoint dir %q: %w", cfg.Name, cfg.CheckpointDir, err)
		}
		if fp, found := r.ctx.GetParam(paramFingerprint); found && fp != cfg.fingerprint() {
			return nil, fmt.Errorf("model: run %q: checkpoint in %q was trained with %q, this run is %q",
				cfg.Name, cfg.CheckpointDir, fp, cfg.fingerprint())
		}
	}
	r.ctx.SetParam(paramFingerprint, cfg.fingerprint())

	modelCtx := func(ctx *context.Context) *context.Context { return ctx.In("model").Checked(false) }
	opt := optimizers.Adam().LearningRate(cfg.LearningRate).Done()
	lossFn := func(ctx *context.Context, inputs []*Node) *Node {
		in, target := r.graphInputs(inputs)
		logits := Logits(modelCtx(ctx), cfg.Model, in)
		bag := 0
		if cfg.Loss.PerBag() {
			bag = logits.Shape().Dim(0) / max(target.Shape().Dim(0), 1)
		}
		return LossGraph(cfg.Loss, cfg.LossParams, logits, target, bag)
	}
	r.trainExec, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, inputs []*Node) *Node {
		loss := lossFn(ctx, inputs)
		opt.UpdateGraph(ctx, loss.Graph(), loss)
		return loss
	})
	if err != nil {
		return nil, fmt.Errorf("model: run %q: %w", cfg.Name, err)
	}
	r.lossExec, err = context.NewExec(r.backend, r.ctx, lossFn)
	if err != nil {
		return nil, fmt.Errorf("model: run %q: %w", cfg.Name, err)
	}
	r.predExec, err = context.NewExec(r.backend, r.ctx, func(ctx *context.Context, inputs []*Node) *Node {
		in, _ := r.graphInputs(append(slices.Clone(inputs), nil))
		return Sigmoid(Logits(modelCtx(ctx), cfg.Model, in))
	})
	if err != nil {
		return nil, fmt.Errorf("model: run %q: %w", cfg.Name, err)
	}
	return r, nil
}

// close releases the compiled graphs, the variables and an owned backend.
func (r *runner) close() {
	for _, e := range []*context.Exec{r.trainExec, r.lossExec, r.predExec} {
		if e != nil {
			e.Finalize()
		}
	}
	r.trainExec, r.lossExec, r.predExec = nil, nil, nil
	if r.ctx != nil {
		r.ctx.Finalize()
	}
	if r.ownBackend && r.backend != nil && !r.backend.IsFinalized() {
		r.backend.Finalize()
	}
}

// Close releases the model's compiled graphs and variables, and the backend
// when Train created it (TrainConfig.Backend nil). With an XLA backend,
// especially CUDA, close every model or share one Backend across runs
// through TrainConfig.Backend: each created backend holds a PJRT client.
// The Trained must not be used after Close.
func (t *Trained) Close() {
	if t.r != nil {
		t.r.close()
		t.r = nil
	}
}

// graphInputs splits the Exec inputs: the model inputs then the target.
func (r *runner) graphInputs(inputs []*Node) (Inputs, *Node) {
	if r.cfg.Model.Kind == KindKDDEmbed {
		return Inputs{Indices: inputs[0], Mask: inputs[1]}, inputs[2]
	}
	return Inputs{X: inputs[0]}, inputs[1]
}

// checkBatch validates a batch against the model and (withTarget) the loss.
func (r *runner) checkBatch(b *Batch, withTarget bool) error {
	if b == nil || b.Rows <= 0 {
		return fmt.Errorf("empty batch")
	}
	m := r.cfg.Model
	if m.Kind == KindKDDEmbed {
		if b.Width <= 0 || len(b.Indices) != b.Rows*b.Width || len(b.IndexMask) != len(b.Indices) {
			return fmt.Errorf("batch of %d rows needs Indices and IndexMask of %d×Width (Width=%d), got %d and %d",
				b.Rows, b.Rows, b.Width, len(b.Indices), len(b.IndexMask))
		}
		for _, ix := range b.Indices {
			if ix < 0 || int(ix) >= m.Buckets {
				return fmt.Errorf("bucket index %d outside [0, %d)", ix, m.Buckets)
			}
		}
	} else if b.Dim != m.InputDim || len(b.X) != b.Rows*m.InputDim {
		return fmt.Errorf("batch of %d rows needs X of %d×%d, got Dim=%d and %d values", b.Rows, b.Rows, m.InputDim, b.Dim, len(b.X))
	}
	if !withTarget {
		return nil
	}
	if r.cfg.Loss.PerBag() {
		if b.BagSize < 1 || b.Rows%b.BagSize != 0 || len(b.Target) != b.Rows/b.BagSize {
			return fmt.Errorf("loss %s needs whole bags and one target per bag: %d rows, bag size %d, %d targets",
				r.cfg.Loss, b.Rows, b.BagSize, len(b.Target))
		}
	} else if len(b.Target) != b.Rows {
		return fmt.Errorf("loss %s needs one target per row: %d rows, %d targets", r.cfg.Loss, b.Rows, len(b.Target))
	}
	return nil
}

// batchTensors converts a batch to the Exec arguments.
func (r *runner) batchTensors(b *Batch, withTarget bool) []any {
	var args []any
	if r.cfg.Model.Kind == KindKDDEmbed {
		args = append(args,
			tensors.FromFlatDataAndDimensions(b.Indices, b.Rows, b.Width),
			tensors.FromFlatDataAndDimensions(b.IndexMask, b.Rows, b.Width))
	} else {
		args = append(args, tensors.FromFlatDataAndDimensions(b.X, b.Rows, b.Dim))
	}
	if withTarget {
		args = append(args, tensors.FromFlatDataAndDimensions(b.Target, len(b.Target)))
	}
	return args
}

func finalizeAll(args []any, outs []*tensors.Tensor) {
	for _, a := range args {
		if t, ok := a.(*tensors.Tensor); ok {
			_ = t.FinalizeAll()
		}
	}
	for _, t := range outs {
		_ = t.FinalizeAll()
	}
}

// scalarLoss runs exec (train or loss) on a batch and returns the loss.
func (r *runner) scalarLoss(exec *context.Exec, b *Batch) (float64, error) {
	if err := r.checkBatch(b, true); err != nil {
		return 0, err
	}
	args := r.batchTensors(b, true)
	outs, err := exec.Exec(args...)
	if err != nil {
		finalizeAll(args, nil)
		return 0, err
	}
	loss := float64(tensors.ToScalar[float32](outs[0]))
	finalizeAll(args, outs)
	return loss, nil
}

func (r *runner) step(b *Batch) (float64, error) { return r.scalarLoss(r.trainExec, b) }

func (r *runner) globalStep() int64 { return optimizers.GetGlobalStep(r.ctx) }

// Train trains a model on src for cfg.Epochs epochs with Adam, calling
// src.Reset before each epoch, and returns the trained model. It resumes
// from cfg.CheckpointDir when that holds a checkpoint. A non-finite loss
// stops the run with an error naming it; cancelling ctx stops it after the
// current step (saving a checkpoint when configured) and returns ctx.Err().
// Panics from GoMLX are returned as errors.
func Train(ctx stdctx.Context, cfg TrainConfig, src BatchSource) (t *Trained, err error) {
	start := time.Now()
	var r *runner
	defer func() { // runs after recoverErr: also on panics
		if err != nil && r != nil {
			r.close()
		}
	}()
	defer recoverErr(cfg.Name, &err)
	if r, err = newRunner(cfg); err != nil {
		return nil, err
	}
	cfg = r.cfg
	wrap := func(err error) error { return fmt.Errorf("model: run %q: %w", cfg.Name, err) }
	t = &Trained{Name: cfg.Name, cfg: cfg, r: r}
	t.ResumedFrom = r.globalStep()

	var (
		seen                 int64 // batches seen over all epochs, trained or skipped
		loopTime             time.Duration
		epochLoss, epochRows float64
		lastEpochLoss        = math.NaN()
		loopStart            = time.Now()
	)
	report := func(epoch int, done bool) {
		if cfg.Progress == nil && cfg.ProgressWriter == nil {
			return
		}
		el := time.Since(loopStart)
		p := Progress{Name: cfg.Name, Epoch: epoch, Epochs: cfg.Epochs, Step: t.ResumedFrom + t.StepsRun,
			Examples: t.Examples, Loss: epochLoss / math.Max(epochRows, 1), Elapsed: el, Done: done}
		if el > 0 {
			p.ExamplesPerSec = float64(t.Examples) / el.Seconds()
		}
		if cfg.Progress != nil {
			cfg.Progress(p)
		}
		if cfg.ProgressWriter != nil {
			fmt.Fprintln(cfg.ProgressWriter, p.String())
		}
	}
	save := func() error {
		if r.ckpt == nil {
			return nil
		}
		if err := r.ckpt.Save(); err != nil {
			return wrap(fmt.Errorf("saving checkpoint: %w", err))
		}
		return nil
	}

	for epoch := 1; epoch <= cfg.Epochs; epoch++ {
		if err := src.Reset(); err != nil {
			return nil, wrap(fmt.Errorf("epoch %d: reset: %w", epoch, err))
		}
		epochLoss, epochRows = 0, 0
		for {
			b, err := src.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, wrap(fmt.Errorf("epoch %d: reading batch: %w", epoch, err))
			}
			seen++
			if seen <= t.ResumedFrom {
				continue // trained on before the checkpoint
			}
			if err := ctx.Err(); err != nil {
				if serr := save(); serr != nil {
					return nil, serr
				}
				return nil, wrap(err)
			}
			t0 := time.Now()
			loss, err := r.step(b)
			loopTime += time.Since(t0)
			if err != nil {
				return nil, wrap(fmt.Errorf("epoch %d step %d: %w", epoch, seen, err))
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, wrap(fmt.Errorf("non-finite training loss %v at epoch %d step %d (try a lower learning rate than %g)",
					loss, epoch, seen, cfg.LearningRate))
			}
			t.StepsRun++
			t.Examples += int64(b.Rows)
			epochLoss += loss * float64(b.Rows)
			epochRows += float64(b.Rows)
			if cfg.CheckpointEvery > 0 && seen%int64(cfg.CheckpointEvery) == 0 {
				if err := save(); err != nil {
					return nil, err
				}
			}
			if t.StepsRun%int64(cfg.ProgressEvery) == 0 {
				report(epoch, false)
			}
		}
		if epochRows > 0 {
			lastEpochLoss = epochLoss / epochRows
		}
	}
	if t.StepsRun > 0 {
		if err := save(); err != nil {
			return nil, err
		}
	}
	t.Steps = r.globalStep()
	if math.IsNaN(lastEpochLoss) {
		if lastEpochLoss, err = t.Loss(src); err != nil {
			return nil, err
		}
	}
	t.FinalLoss = lastEpochLoss
	t.Wall = time.Since(start)
	if loopTime > 0 {
		t.ExamplesPerSec = float64(t.Examples) / loopTime.Seconds()
	}
	report(cfg.Epochs, true)
	return t, nil
}

// Loss returns the model's training objective averaged (row-weighted) over
// one epoch of src (after src.Reset), without updating the model.
func (t *Trained) Loss(src BatchSource) (loss float64, err error) {
	defer recoverErr(t.Name, &err)
	if t.r == nil {
		return 0, fmt.Errorf("model: run %q: model is closed", t.Name)
	}
	if err := src.Reset(); err != nil {
		return 0, fmt.Errorf("model: run %q: reset: %w", t.Name, err)
	}
	var sum, rows float64
	for {
		b, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("model: run %q: reading batch: %w", t.Name, err)
		}
		l, err := t.r.scalarLoss(t.r.lossExec, b)
		if err != nil {
			return 0, fmt.Errorf("model: run %q: %w", t.Name, err)
		}
		sum += l * float64(b.Rows)
		rows += float64(b.Rows)
	}
	if rows == 0 {
		return math.NaN(), nil
	}
	return sum / rows, nil
}

// Predict returns the predicted probability σ(logit) of every row of one
// epoch of src (after src.Reset), in order. Batches may have any size
// (a smaller last batch costs one extra graph compilation); targets are
// ignored.
func (t *Trained) Predict(src BatchSource) (probs []float32, err error) {
	defer recoverErr(t.Name, &err)
	if t.r == nil {
		return nil, fmt.Errorf("model: run %q: model is closed", t.Name)
	}
	if err := src.Reset(); err != nil {
		return nil, fmt.Errorf("model: run %q: reset: %w", t.Name, err)
	}
	for {
		b, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("model: run %q: reading batch: %w", t.Name, err)
		}
		p, err := t.r.predict(b)
		if err != nil {
			return nil, fmt.Errorf("model: run %q: %w", t.Name, err)
		}
		probs = append(probs, p...)
	}
	return probs, nil
}

func (r *runner) predict(b *Batch) ([]float32, error) {
	if err := r.checkBatch(b, false); err != nil {
		return nil, err
	}
	args := r.batchTensors(b, false)
	outs, err := r.predExec.Exec(args...)
	if err != nil {
		finalizeAll(args, nil)
		return nil, err
	}
	p := tensors.MustCopyFlatData[float32](outs[0])
	finalizeAll(args, outs)
	return p, nil
}
