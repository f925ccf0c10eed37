package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.

	"labelprivacy/data"
)

// Training defaults.
const (
	DefaultLearningRate = 1e-3
	DefaultLossEvery    = 50
	// DefaultResidentMaxBytes is the largest dense feature matrix that
	// ResidentAuto uploads to an XLA device (4 GiB: Higgs' 10.5M × 28
	// float32 is 1.2 GB). Larger ones are sent as host batches every step.
	DefaultResidentMaxBytes int64 = 4 << 30
)

// AdamConfig holds Adam's constants (Kingma and Ba, ICLR 2015). The zero
// value of a field means its default: β1 0.9, β2 0.999, ε 1e-8 (PyTorch's,
// the parity anchor of issue 12; Keras and GoMLX use 1e-7). The update is
// PyTorch's: θ −= lr·m̂/(√v̂ + ε), m̂ and v̂ bias-corrected.
type AdamConfig struct {
	Beta1, Beta2, Epsilon float64
}

func (a AdamConfig) withDefaults() (AdamConfig, error) {
	if a.Beta1 == 0 {
		a.Beta1 = 0.9
	}
	if a.Beta2 == 0 {
		a.Beta2 = 0.999
	}
	if a.Epsilon == 0 {
		a.Epsilon = 1e-8
	}
	if !(a.Beta1 > 0 && a.Beta1 < 1 && a.Beta2 > 0 && a.Beta2 < 1 && a.Epsilon > 0 && a.Epsilon < 1) {
		return a, fmt.Errorf("%w: Adam needs 0 < β1, β2 < 1 and 0 < ε < 1, got %+v", ErrInvalidConfig, a)
	}
	return a, nil
}

// Replica is one model of a group: one run of the grid.
type Replica struct {
	// Name names the replica in errors and progress.
	Name string
	// Seed draws the replica's initial weights on the host from
	// math/rand/v2's PCG(Seed, "init"), so they do not depend on the group.
	Seed uint64
	// LR is Adam's learning rate (0: DefaultLearningRate).
	LR float64
	// Params: FlipProb (debiased_bce) and Prior (easyllp) of this replica.
	Params LossParams
	// Source yields this replica's batches: its own targets, bags and seeded
	// order. Build it with data.BatchOptions{IndexOnly: true, DropLast: true,
	// Features: …}: batches carry RowIDs into GroupConfig.Features (the
	// engine gathers features itself) and every batch has the same shape.
	// The engine positions it with SeekEpoch (epoch e of training is the
	// source's epoch e, 0-based) and reads it with Next.
	Source *data.BatchSource
}

// GroupConfig configures TrainGroup.
type GroupConfig struct {
	// Name names the group in errors and progress.
	Name    string
	Backend backends.Backend
	Model   ModelConfig
	Loss    Loss
	// Epochs over every replica's source (0: 1).
	Epochs int
	// Features are the shared training features (dense X, or the sparse
	// indices of kdd_embed). Their type holds no label or release column: a
	// PET model's trainer never sees raw labels (targets come only from
	// each replica's Source).
	Features *data.Features
	// Replicas (R ≥ 1) must all have the same batches per epoch, rows per
	// batch and bag size.
	Replicas []Replica
	Adam     AdamConfig
	// SparseEmbedding (kdd_embed) updates only the embedding rows a step
	// touches, with lazy Adam (as TensorFlow's LazyAdam and PyTorch's
	// SparseAdam): a row's moments decay only on steps that touch it, so
	// training differs from dense Adam, whose moments of untouched rows
	// decay (and whose updates keep moving them) every step. False: dense
	// Adam over the whole table, as the paper's Keras code would do.
	SparseEmbedding bool
	// CheckpointDir, when set, holds the group's checkpoints: a group started
	// on a directory holding one resumes from it (the same result as an
	// uninterrupted run, as batches are replayed deterministically).
	// Checkpoints are written every CheckpointEvery (zero:
	// DefaultCheckpointInterval), when ctx is cancelled, and at the end.
	CheckpointDir   string
	CheckpointEvery Interval
	// LossEvery is how many steps the losses accumulate on the device before
	// they are read back and checked (0: DefaultLossEvery). Progress is
	// reported at the same moments.
	LossEvery int
	// Resident: dense features uploaded once (index tensors per step) or
	// host batches; ResidentMaxBytes is ResidentAuto's threshold (0:
	// DefaultResidentMaxBytes). For kdd_embed with SparseEmbedding it says
	// where the tables live: on the device (always; lazy Adam in the
	// program) or on the host (never; the host sums the rows and applies lazy
	// Adam, the program trains the dense layers); auto: the host on backend
	// "go", the device on XLA. kdd_embed sends its index rows every step.
	Resident         ResidentMode
	ResidentMaxBytes int64
	// Progress, when set, is called after each loss read-back and at the end.
	Progress func(Progress)
	// Notices, when set, receives one-line notices (a checkpoint set aside, a
	// missing UseFastDotVJP).
	Notices func(string)
}

// Progress is one progress report of a group.
type Progress struct {
	Group         string
	Epoch, Epochs int   // epoch of the last step (1-based), epochs in all
	Step, Steps   int64 // steps done (resumed ones included), steps in all
	// ExamplesPerS is the aggregate steady-state rate over all replicas
	// (first step excluded).
	ExamplesPerS float64
	ETA          time.Duration
	Elapsed      time.Duration
	// Losses is each replica's mean training loss over the steps since the
	// previous report (the final report repeats the last ones; nil when a
	// resumed group had nothing left to train).
	Losses []float64
	Done   bool
}

func (p Progress) String() string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range p.Losses {
		lo, hi = min(lo, l), max(hi, l)
	}
	return fmt.Sprintf("%s: epoch %d/%d step %d/%d loss %.4f–%.4f %.0f ex/s ETA %s",
		p.Group, p.Epoch, p.Epochs, p.Step, p.Steps, lo, hi, p.ExamplesPerS, p.ETA.Round(time.Second))
}

// ReplicaResult is one replica's training summary.
type ReplicaResult struct {
	Name string
	// FinalLoss is the replica's mean training loss over its last epoch.
	FinalLoss float64
	Steps     int64
}

// Group is a trained group: R models with their parameters on the backend.
type Group struct {
	Name    string
	Results []ReplicaResult
	// Steps is the global step at the end; StepsRun those run in this call;
	// ResumedFrom the step a checkpoint restored (0: none).
	Steps, StepsRun, ResumedFrom int64
	// CompileS is the time spent compiling programs for this group (0 when
	// the process had them cached; Predict adds its program's). TrainS is the
	// training loop's wall time. CheckpointS is the time the loop stood still
	// for checkpoints (snapshots to the host, waiting for a previous write);
	// CheckpointWriteS the time spent writing them in the background.
	CompileS, TrainS, CheckpointS, CheckpointWriteS float64
	Checkpoints                                     int
	// ExamplesPerS is the aggregate steady-state training rate (examples of
	// all replicas per second, first step and checkpoint stalls excluded).
	ExamplesPerS float64
	// CPUPerExampleUs is the process's CPU time (user + system, all threads)
	// per training example over the same steady state, in µs (0 where not
	// measured). Unlike ExamplesPerS it barely moves when other processes
	// share the cores, so it is the figure to compare code changes by on a
	// busy machine; ExamplesPerS·CPUPerExampleUs/1e6 is the cores kept busy.
	CPUPerExampleUs float64
	// Resident reports whether the dense features were resident on the
	// backend (false: host batches, or kdd_embed).
	Resident bool

	be     backends.Backend
	m      ModelConfig
	r      int
	params []backends.Buffer // nil after Close
}

// trainer is the state of one TrainGroup call.
type trainer struct {
	cfg        GroupConfig
	m          ModelConfig
	s          trainShape
	be         backends.Backend
	specs      []paramSpec // every parameter
	gspecs     []paramSpec // those the program holds (all but a host-kept table)
	host       *hostEmbedding
	spe, total int64 // steps per epoch, steps in all
	fp         string
	prog       *Graph
	state      []backends.Buffer // program params, m, v (len(gspecs) each), loss accumulator
	consts     []backends.Buffer // flip, prior [R]
	feats      backends.Buffer   // resident features, or nil
	feed       *feeder           // this step's batches
	next       *feeder           // the next step's, read while the program runs
}

func (t *trainer) notice(msg string) {
	if t.cfg.Notices != nil {
		t.cfg.Notices(t.cfg.Name + ": " + msg)
	}
}

// validate checks cfg and derives the program shape.
func (t *trainer) validate() error {
	cfg := &t.cfg
	var err error
	if cfg.Backend == nil {
		return fmt.Errorf("%w: no backend", ErrInvalidConfig)
	}
	t.be = cfg.Backend
	if t.m, err = cfg.Model.WithDefaults(); err != nil {
		return err
	}
	if _, ok := losses.name(cfg.Loss); !ok {
		return fmt.Errorf("%w: invalid loss %d", ErrInvalidConfig, int(cfg.Loss))
	}
	if cfg.Epochs == 0 {
		cfg.Epochs = 1
	}
	if cfg.LossEvery == 0 {
		cfg.LossEvery = DefaultLossEvery
	}
	if cfg.CheckpointEvery == (Interval{}) {
		cfg.CheckpointEvery = DefaultCheckpointInterval
	}
	if cfg.ResidentMaxBytes == 0 {
		cfg.ResidentMaxBytes = DefaultResidentMaxBytes
	}
	if cfg.Epochs < 0 || cfg.LossEvery < 0 || cfg.CheckpointEvery.Every < 0 || cfg.CheckpointEvery.Steps < 0 {
		return fmt.Errorf("%w: negative Epochs, LossEvery or CheckpointEvery", ErrInvalidConfig)
	}
	if _, ok := residentModes.name(cfg.Resident); !ok {
		return fmt.Errorf("%w: invalid resident mode %d", ErrInvalidConfig, int(cfg.Resident))
	}
	adam, err := cfg.Adam.withDefaults()
	if err != nil {
		return err
	}
	cfg.Adam = adam
	if len(cfg.Replicas) == 0 {
		return fmt.Errorf("%w: a group needs at least one replica", ErrInvalidConfig)
	}
	if err := checkFeatures(t.m, cfg.Features); err != nil {
		return err
	}
	cfg.Replicas = slices.Clone(cfg.Replicas)
	s := trainShape{model: t.m.key(), loss: cfg.Loss, adam: cfg.Adam, r: len(cfg.Replicas)}
	for i := range cfg.Replicas {
		rep := &cfg.Replicas[i]
		bad := func(err error) error { return &ReplicaError{Group: cfg.Name, Replica: rep.Name, Index: i, Err: err} }
		if rep.LR == 0 {
			rep.LR = DefaultLearningRate
		}
		if !(rep.LR > 0) || math.IsInf(rep.LR, 0) {
			return bad(fmt.Errorf("%w: learning rate must be > 0, got %v", ErrInvalidConfig, rep.LR))
		}
		if err := rep.Params.Validate(cfg.Loss); err != nil {
			return bad(err)
		}
		if rep.Source == nil {
			return bad(fmt.Errorf("%w: no batch source", ErrInvalidConfig))
		}
		rep.Source.SeekEpoch(0)
		b, err := rep.Source.Next()
		if errors.Is(err, io.EOF) {
			return bad(fmt.Errorf("%w: the batch source yields no batch", ErrInvalidData))
		}
		if err != nil {
			return bad(err)
		}
		spe := int64(rep.Source.BatchesPerEpoch())
		if per := b.Rows / max(b.BagSize, 1); per*rep.Source.BatchesPerEpoch() > rep.Source.Units() {
			return bad(fmt.Errorf("%w: the source's last batch is partial; build it with DropLast", ErrInvalidData))
		}
		if cfg.Loss.PerBag() != (b.BagSize > 0) {
			return bad(fmt.Errorf("%w: loss %s needs %s, the source has bag size %d", ErrInvalidData, cfg.Loss,
				map[bool]string{true: "whole bags", false: "one target per row"}[cfg.Loss.PerBag()], b.BagSize))
		}
		if i == 0 {
			s.b, s.bag, t.spe = b.Rows, b.BagSize, spe
		} else if b.Rows != s.b || b.BagSize != s.bag || spe != t.spe {
			return bad(fmt.Errorf("%w: %d batches of %d rows (bag size %d) per epoch; replica 0 has %d of %d (bag size %d): a group needs one shape",
				ErrInvalidData, spe, b.Rows, b.BagSize, t.spe, s.b, s.bag))
		}
		if len(b.RowIDs) != b.Rows {
			return bad(fmt.Errorf("%w: batches carry no row ids", ErrInvalidData))
		}
	}
	t.total = int64(cfg.Epochs) * t.spe
	f := cfg.Features
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
	s.hostAdam = hostAdamFeed(t.be, s.feed)
	t.s = s
	t.specs = t.m.params()
	t.gspecs = s.graphParams(t.m)
	return nil
}

// isGoBackend reports whether be is GoMLX's pure-Go backend.
func isGoBackend(be backends.Backend) bool {
	_, ok := be.(*simplego.Backend)
	return ok
}

// checkFeatures checks that the features fit the model.
func checkFeatures(m ModelConfig, f *data.Features) error {
	if f == nil || f.Rows == 0 {
		return fmt.Errorf("%w: no feature rows", ErrInvalidData)
	}
	if m.Kind != KindKDDEmbed {
		if f.Dim() != m.InputDim || len(f.X) != f.Rows*f.Dim() {
			return fmt.Errorf("%w: %s needs %d dense features, the frame has %d", ErrInvalidData, m.Kind, m.InputDim, f.Dim())
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

// fingerprint is what a checkpoint must match: everything that shapes the
// trajectory except Epochs (a finished group can be extended).
func (t *trainer) fingerprint() string {
	type rep struct {
		Name     string
		Seed     uint64
		LR       float64
		FlipProb float64
		Prior    float64
	}
	reps := make([]rep, len(t.cfg.Replicas))
	for i, r := range t.cfg.Replicas {
		reps[i] = rep{r.Name, r.Seed, r.LR, r.Params.FlipProb, r.Params.Prior}
	}
	return fingerprintOf(struct {
		Model         string
		Init          string
		Loss          string
		Adam          AdamConfig
		Sparse        bool
		Rows, Bag     int
		StepsPerEpoch int64
		Replicas      []rep
	}{t.m.key(), t.m.Init.String(), t.cfg.Loss.String(), t.cfg.Adam, t.cfg.SparseEmbedding, t.s.b, t.s.bag, t.spe, reps})
}

// stateTensors names and shapes the checkpointed state (params, m, v).
func (t *trainer) stateTensors() []ckptTensor {
	var ts []ckptTensor
	for _, prefix := range []string{"param/", "adam_m/", "adam_v/"} {
		for _, p := range t.specs {
			ts = append(ts, ckptTensor{Name: prefix + p.name, Dims: p.dims(t.s.r)})
		}
	}
	return ts
}

// upload creates a backend buffer from host data.
func (t *trainer) upload(flat any, dims ...int) (backends.Buffer, error) {
	shape := f32(dims...)
	if _, ok := flat.([]int32); ok {
		shape = i32(dims...)
	}
	return t.be.BufferFromFlatData(0, flat, shape)
}

// initialState uploads the replicas' initial parameters and zero moments
// (a host-kept table stays on the host).
func (t *trainer) initialState() error {
	r := t.s.r
	host := make([][]float32, len(t.specs))
	for i, p := range t.specs {
		host[i] = make([]float32, r*p.size())
	}
	dst := make([][]float32, len(t.specs))
	for k, rep := range t.cfg.Replicas {
		for i, p := range t.specs {
			dst[i] = host[i][k*p.size() : (k+1)*p.size()]
		}
		t.m.initReplica(rep.Seed, dst)
	}
	if t.host != nil {
		t.host.set(0, host[0]) // zero moments: the host table starts zeroed
		host = host[1:]
	}
	np := len(t.gspecs)
	zeros := map[int][]float32{}
	for i, p := range t.gspecs {
		b, err := t.upload(host[i], p.dims(r)...)
		if err != nil {
			return err
		}
		t.state[i] = b
		host[i] = nil
		n := r * p.size()
		if zeros[n] == nil {
			zeros[n] = make([]float32, n)
		}
		for _, j := range []int{np + i, 2*np + i} {
			if t.state[j], err = t.upload(zeros[n], p.dims(r)...); err != nil {
				return err
			}
		}
	}
	return nil
}

// stateSlot maps checkpoint tensor i (stateTensors order) to the part of a
// host-kept table it is (0 values, 1 and 2 moments; −1: none) or to its
// index in t.state.
func (t *trainer) stateSlot(i int) (hostPart, state int) {
	n := len(t.specs)
	kind, p := i/n, i%n
	if t.host != nil {
		if p == 0 {
			return kind, -1
		}
		return -1, kind*len(t.gspecs) + p - 1
	}
	return -1, i
}

// restore uploads a checkpoint's state.
func (t *trainer) restore(h *ckptHeader, data [][]float32) error {
	want := t.stateTensors()
	if len(h.Tensors) != len(want) {
		return fmt.Errorf("%w: checkpoint has %d tensors, want %d", ErrCheckpointMismatch, len(h.Tensors), len(want))
	}
	for i, w := range want {
		if h.Tensors[i].Name != w.Name || !slices.Equal(h.Tensors[i].Dims, w.Dims) {
			return fmt.Errorf("%w: checkpoint tensor %s%v, want %s%v", ErrCheckpointMismatch, h.Tensors[i].Name, h.Tensors[i].Dims, w.Name, w.Dims)
		}
		if part, _ := t.stateSlot(i); part >= 0 {
			t.host.set(part, data[i])
			data[i] = nil
			continue
		}
		b, err := t.upload(data[i], w.Dims...)
		if err != nil {
			return err
		}
		_, j := t.stateSlot(i)
		t.state[j] = b
		data[i] = nil
	}
	return nil
}

// resetLossAcc replaces the loss accumulator with zeros.
func (t *trainer) resetLossAcc() error {
	i := len(t.state) - 1
	if t.state[i] != nil {
		_ = t.be.BufferFinalize(t.state[i])
	}
	var err error
	t.state[i], err = t.upload(make([]float32, t.s.r), t.s.r)
	return err
}

// readLossAcc reads the accumulated losses back and resets the accumulator.
func (t *trainer) readLossAcc() ([]float64, error) {
	acc := make([]float32, t.s.r)
	if err := t.be.BufferToFlatData(t.state[len(t.state)-1], acc); err != nil {
		return nil, err
	}
	out := make([]float64, len(acc))
	for i, v := range acc {
		out[i] = float64(v)
	}
	return out, t.resetLossAcc()
}

// snapshotInto copies the state (params and moments) to the host.
func (t *trainer) snapshotInto(s *snapshot) error {
	s.tensors = t.stateTensors()
	if s.data == nil {
		s.data = make([][]float32, len(s.tensors))
	}
	for i, ts := range s.tensors {
		n := 1
		for _, d := range ts.Dims {
			n *= d
		}
		if len(s.data[i]) != n {
			s.data[i] = make([]float32, n)
		}
		if part, j := t.stateSlot(i); part >= 0 {
			t.host.get(part, s.data[i])
		} else if err := t.be.BufferToFlatData(t.state[j], s.data[i]); err != nil {
			return err
		}
	}
	return nil
}

func (t *trainer) release() {
	for _, bs := range [][]backends.Buffer{t.state, t.consts} {
		for i, b := range bs {
			if b != nil {
				_ = t.be.BufferFinalize(b)
				bs[i] = nil
			}
		}
	}
	if t.feats != nil {
		_ = t.be.BufferFinalize(t.feats)
		t.feats = nil
	}
}

// runProgram executes g; outputs come back as buffers the caller owns.
func runProgram(be backends.Backend, g *Graph, inputs []backends.Buffer, donate []bool) (outs []backends.Buffer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("executing %s: %v", g.Name(), r)
		}
	}()
	ts := g.RunWithBuffers(inputs, donate, 0)
	outs = make([]backends.Buffer, len(ts))
	for i, tt := range ts {
		if outs[i], err = tt.DonateBuffer(be, 0); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// TrainGroup trains the group's R replicas together, one compiled program
// stepping every replica at once, and returns the trained Group (Close it).
// It resumes from cfg.CheckpointDir when that holds a checkpoint of the same
// group. A non-finite loss stops it with a *ReplicaError wrapping
// ErrNonFiniteLoss; cancelling ctx stops it after the current step (saving a
// checkpoint when configured) and returns an error wrapping ctx.Err(). GoMLX
// panics come back as errors naming the group.
func TrainGroup(ctx context.Context, cfg GroupConfig) (_ *Group, err error) {
	t := &trainer{cfg: cfg}
	defer func() {
		if err != nil {
			t.release()
		}
	}()
	defer recoverErr(cfg.Name, &err)
	if err := t.validate(); err != nil {
		return nil, err
	}
	cfg = t.cfg
	if isGoBackend(t.be) && !fastDotVJPInstalled() {
		t.notice("model.UseFastDotVJP was not called: dense-layer gradients are ~15× slower on backend \"go\"")
	}
	t.fp = t.fingerprint()
	grp := &Group{Name: cfg.Name, be: t.be, m: t.m, r: t.s.r, Resident: t.s.feed == feedResident}
	prog, compileS, fresh, err := program(cacheKey{backend: t.be, shape: t.s}, buildTrain(t.m, t.s))
	if err != nil {
		return nil, t.wrap(err)
	}
	t.prog = prog
	if fresh {
		grp.CompileS = compileS
	}
	l, err := t.prepare(grp)
	if err != nil {
		return nil, t.wrap(err)
	}
	if err := l.run(ctx); err != nil {
		_ = l.w.wait()
		return nil, t.wrap(err)
	}
	if err := l.finish(); err != nil {
		_ = l.w.wait()
		return nil, t.wrap(err)
	}
	return grp, nil
}

func (t *trainer) wrap(err error) error { return fmt.Errorf("model: group %q: %w", t.cfg.Name, err) }

// loop is the state of one training loop: where it is, its loss
// accumulators, its timing, and its checkpoint writer.
type loop struct {
	t   *trainer
	grp *Group
	w   *ckptWriter

	step                        int64
	epochLossSum, lastEpochLoss []float64
	sinceFlush                  int
	lastLosses                  []float64 // of the last report

	loopStart, firstDone, lastCkpt time.Time
	stall                          time.Duration // checkpoint stalls after the first step
	cpuFirst                       time.Duration // processCPU at the end of the first step
	lastCkptAt                     int64
	snap                           snapshot

	stepScale   []float32
	examplesPer int64
	inputs      []backends.Buffer
	donate      []bool

	// prefetch, when not nil, delivers the error of reading step
	// l.step+1's batches into t.next (started while step l.step's program
	// runs; see trainStep).
	prefetch chan error
}

// prepare loads the group's state — a checkpoint, or the replicas'
// initialization — uploads the per-replica constants and resident
// features, and returns the loop positioned at its first step.
func (t *trainer) prepare(grp *Group) (*loop, error) {
	cfg, r := t.cfg, t.s.r
	t.state = make([]backends.Buffer, 3*len(t.gspecs)+1)
	if t.s.feed == feedSparseHost {
		t.host = newHostEmbedding(r, t.m.Buckets, t.m.EmbedDim, t.s.u)
	}
	l := &loop{t: t, grp: grp, w: &ckptWriter{dir: cfg.CheckpointDir, fingerprint: t.fp},
		epochLossSum: make([]float64, r), lastEpochLoss: make([]float64, r),
		stepScale: make([]float32, r), examplesPer: int64(r * t.s.b)}
	for i := range l.lastEpochLoss {
		l.lastEpochLoss[i] = math.NaN()
	}
	var h *ckptHeader
	if cfg.CheckpointDir != "" {
		var data [][]float32
		var err error
		if h, data, err = loadCheckpoint(cfg.CheckpointDir, t.fp, t.notice); err != nil {
			return nil, err
		}
		if h != nil {
			if err := t.restore(h, data); err != nil {
				return nil, err
			}
			l.step = h.Step
			copy(l.epochLossSum, floatsOf(h.EpochLossSum))
			copy(l.lastEpochLoss, floatsOf(h.LastEpochLoss))
			grp.ResumedFrom = l.step
		}
	}
	if h == nil {
		if err := t.initialState(); err != nil {
			return nil, err
		}
	}
	if err := t.resetLossAcc(); err != nil {
		return nil, err
	}
	flip, prior := make([]float32, r), make([]float32, r)
	for i, rep := range cfg.Replicas {
		flip[i], prior[i] = float32(rep.Params.FlipProb), float32(rep.Params.Prior)
	}
	t.consts = make([]backends.Buffer, 2)
	for i, v := range [][]float32{flip, prior} {
		var err error
		if t.consts[i], err = t.upload(v, r); err != nil {
			return nil, err
		}
	}
	if t.s.feed == feedResident {
		var err error
		if t.feats, err = t.upload(cfg.Features.X, t.s.n, t.s.d); err != nil {
			return nil, fmt.Errorf("uploading %d×%d features: %w", t.s.n, t.s.d, err)
		}
	}
	t.feed = newFeeder(t.s, cfg.Features, t.m.Buckets)
	t.next = newFeeder(t.s, cfg.Features, t.m.Buckets)
	n := len(t.state) + stepInputs + 1 + 3 + 1
	l.inputs, l.donate = make([]backends.Buffer, 0, n), make([]bool, 0, n)
	l.lastCkptAt = l.step
	return l, nil
}

// run trains until the last step, reading losses back every LossEvery
// steps and at epoch ends, and checkpointing on schedule and when ctx is
// cancelled.
func (l *loop) run(ctx context.Context) error {
	t, cfg := l.t, l.t.cfg
	l.loopStart = time.Now()
	l.lastCkpt = l.loopStart
	defer l.joinPrefetch() // no source is read after TrainGroup returns
	for l.step < t.total {
		if err := ctx.Err(); err != nil {
			if cerr := l.checkpoint(true); cerr != nil {
				return errors.Join(err, cerr)
			}
			return fmt.Errorf("stopped at step %d (checkpointed: %v): %w", l.step, cfg.CheckpointDir != "", err)
		}
		if err := l.fill(); err != nil {
			return err
		}
		if err := l.trainStep(); err != nil {
			return err
		}
		l.step++
		l.grp.StepsRun++
		l.sinceFlush++
		if l.grp.StepsRun == 1 {
			l.firstDone, l.cpuFirst = time.Now(), processCPU()
		}
		endOfEpoch := l.step%t.spe == 0
		if l.sinceFlush >= cfg.LossEvery || endOfEpoch || l.step == t.total {
			losses, err := l.flush()
			if err != nil {
				return err
			}
			if endOfEpoch {
				for i := range l.epochLossSum {
					l.lastEpochLoss[i] = l.epochLossSum[i] / float64(t.spe)
					l.epochLossSum[i] = 0
				}
			}
			l.lastLosses = losses
			l.report(losses, false)
		}
		if cfg.CheckpointDir != "" && l.step < t.total &&
			((cfg.CheckpointEvery.Steps > 0 && l.step%cfg.CheckpointEvery.Steps == 0) ||
				(cfg.CheckpointEvery.Steps == 0 && time.Since(l.lastCkpt) >= cfg.CheckpointEvery.Every)) {
			if err := l.checkpoint(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill puts every replica's batch of step l.step into t.feed (read ahead
// by trainStep's prefetch, or now) and computes the host embedding sums,
// which need the previous step's update.
func (l *loop) fill() error {
	t := l.t
	if l.prefetch != nil {
		err := l.joinPrefetch()
		t.feed, t.next = t.next, t.feed
		if err != nil {
			return err
		}
	} else if err := l.readBatches(t.feed, l.step); err != nil {
		return err
	}
	if t.host != nil {
		t.host.forward(t.feed)
	}
	return nil
}

// startPrefetch reads step l.step+1's batches into t.next on a goroutine.
// Sources are read one step at a time and in step order, as before; only
// the reading overlaps the program (the source read and feeder fill run on
// one core: ~4% of a kdd_embed step on 2 cores, and on an accelerator the
// host work of every replica that the device would otherwise wait for).
func (l *loop) startPrefetch() {
	if l.step+1 >= l.t.total {
		return
	}
	ch := make(chan error, 1)
	l.prefetch = ch
	go func(step int64) {
		var err error
		defer func() {
			if r := recover(); r != nil { // as recoverErr does on the loop's goroutine
				err = fmt.Errorf("panic reading the batches of step %d: %v\n%s", step+1, r, debug.Stack())
			}
			ch <- err
		}()
		err = l.readBatches(l.t.next, step)
	}(l.step + 1)
}

// joinPrefetch waits for a running prefetch and returns its error.
func (l *loop) joinPrefetch() error {
	if l.prefetch == nil {
		return nil
	}
	err := <-l.prefetch
	l.prefetch = nil
	return err
}

// readBatches reads every replica's batch of step (0-based) into f,
// positioning the sources at epoch starts and replaying a resumed epoch's
// trained batches.
func (l *loop) readBatches(f *feeder, step int64) error {
	t, cfg := l.t, l.t.cfg
	epoch, pos := step/t.spe, step%t.spe
	for i, rep := range cfg.Replicas {
		if pos == 0 || step == l.grp.ResumedFrom {
			rep.Source.SeekEpoch(uint64(epoch))
			for range pos {
				if _, err := rep.Source.Next(); err != nil {
					return &ReplicaError{Group: cfg.Name, Replica: rep.Name, Index: i, Err: fmt.Errorf("replaying to step %d: %w", step, err)}
				}
			}
		}
		b, err := rep.Source.Next()
		if err == nil {
			err = f.fill(i, b)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: the source ended after %d of %d batches", ErrInvalidData, pos, t.spe)
			}
			return &ReplicaError{Group: cfg.Name, Replica: rep.Name, Index: i, Step: step + 1, Err: err}
		}
	}
	return nil
}

// trainStep runs the program once on the filled batches (and, for host
// embedding tables, applies lazy Adam to the rows it touched).
func (l *loop) trainStep() error {
	t, cfg, r := l.t, l.t.cfg, l.t.s.r
	// Adam's bias corrections at step t = step+1, folded into inputs.
	tt := float64(l.step + 1)
	for i, rep := range cfg.Replicas {
		l.stepScale[i] = float32(rep.LR / (1 - math.Pow(cfg.Adam.Beta1, tt)))
	}
	vScale := float32(1 / math.Sqrt(1-math.Pow(cfg.Adam.Beta2, tt)))
	sb, err := t.upload(l.stepScale, r)
	if err != nil {
		return err
	}
	vb, err := t.upload([]float32{vScale})
	if err != nil {
		_ = t.be.BufferFinalize(sb)
		return err
	}
	dataBufs, err := t.feed.buffers(t.be)
	if err != nil {
		return err
	}
	in, donate := l.inputs[:0], l.donate[:0]
	for i, b := range t.state {
		// With host Adam the program only reads the parameters (and not the
		// moments); the host updates them in place afterwards.
		in, donate = append(in, b), append(donate, !t.s.hostAdam || i == len(t.state)-1)
	}
	in, donate = append(in, sb, vb), append(donate, true, true)
	in, donate = append(in, t.consts...), append(donate, false, false)
	if t.feats != nil {
		in, donate = append(in, t.feats), append(donate, false)
	}
	for _, b := range dataBufs {
		in, donate = append(in, b), append(donate, true)
	}
	l.inputs, l.donate = in, donate
	if t.host != nil {
		t.host.startDeferred() // the last step's other rows, while the program runs
	}
	l.startPrefetch()
	outs, err := runProgram(t.be, t.prog, in, donate)
	if t.host != nil {
		t.host.wait()
	}
	if err != nil {
		if t.s.hostAdam {
			t.state[len(t.state)-1] = nil // only the loss accumulator was donated
		} else {
			clear(t.state) // donated: no longer ours
		}
		return &ReplicaError{Group: cfg.Name, Replica: "(all)", Index: -1, Step: l.step + 1, Err: err}
	}
	if t.s.hostAdam {
		np := len(t.gspecs)
		t.state[len(t.state)-1] = outs[np]
		err := t.adamOnHost(outs[:np], l.stepScale, vScale)
		for _, g := range outs[:np] {
			_ = t.be.BufferFinalize(g)
		}
		if err != nil {
			return err
		}
	} else {
		copy(t.state, outs)
	}
	if t.host != nil {
		gb := outs[len(outs)-1]
		err := t.be.BufferToFlatData(gb, t.feed.x)
		_ = t.be.BufferFinalize(gb)
		if err != nil {
			return err
		}
		t.host.update(t.feed, t.feed.x, l.stepScale, vScale, cfg.Adam)
	}
	return nil
}

// rate is the aggregate steady-state examples/s (first step and checkpoint
// stalls excluded; 0 before the second step).
func (l *loop) rate() float64 {
	if l.firstDone.IsZero() || l.grp.StepsRun < 2 {
		return 0
	}
	el := time.Since(l.firstDone) - l.stall
	return float64((l.grp.StepsRun-1)*l.examplesPer) / el.Seconds()
}

// flush reads the losses accumulated on the device since the last flush,
// checks them, and returns each replica's mean over those steps.
func (l *loop) flush() ([]float64, error) {
	t, cfg := l.t, l.t.cfg
	acc, err := t.readLossAcc()
	if err != nil {
		return nil, err
	}
	for i, v := range acc {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &ReplicaError{Group: cfg.Name, Replica: cfg.Replicas[i].Name, Index: i, Step: l.step,
				Err: fmt.Errorf("%w %v in steps %d–%d (learning rate %g may be too high, or the targets non-finite)",
					ErrNonFiniteLoss, v, l.step-int64(l.sinceFlush)+1, l.step, cfg.Replicas[i].LR)}
		}
		l.epochLossSum[i] += v
	}
	n := l.sinceFlush
	l.sinceFlush = 0
	for i := range acc {
		acc[i] /= float64(max(n, 1))
	}
	return acc, nil
}

func (l *loop) report(losses []float64, done bool) {
	t, cfg := l.t, l.t.cfg
	if cfg.Progress == nil {
		return
	}
	p := Progress{Group: cfg.Name, Epoch: int((max(l.step, 1)-1)/t.spe) + 1, Epochs: cfg.Epochs, Step: l.step, Steps: t.total,
		ExamplesPerS: l.rate(), Elapsed: time.Since(l.loopStart), Losses: losses, Done: done}
	if p.ExamplesPerS > 0 {
		p.ETA = time.Duration(float64(t.total-l.step) * float64(l.examplesPer) / p.ExamplesPerS * float64(time.Second))
	}
	cfg.Progress(p)
}

// checkpoint snapshots the state to the host at this step boundary and
// writes it in the background (sync: and waits for the write).
func (l *loop) checkpoint(sync bool) error {
	t := l.t
	if t.cfg.CheckpointDir == "" || l.step == l.lastCkptAt {
		return nil
	}
	t0 := time.Now()
	if l.sinceFlush > 0 {
		if _, err := l.flush(); err != nil {
			return err
		}
	}
	if err := l.w.wait(); err != nil {
		return err
	}
	if err := t.snapshotInto(&l.snap); err != nil {
		return err
	}
	l.snap.step = l.step
	l.snap.epochLossSum, l.snap.lastEpochLoss = slices.Clone(l.epochLossSum), slices.Clone(l.lastEpochLoss)
	l.w.start(&l.snap)
	l.grp.Checkpoints++
	l.lastCkpt, l.lastCkptAt = time.Now(), l.step
	var err error
	if sync {
		err = l.w.wait()
	}
	d := time.Since(t0)
	l.grp.CheckpointS += d.Seconds()
	if !l.firstDone.IsZero() {
		l.stall += d
	}
	return err
}

// finish writes the final checkpoint, fills the group's results and hands
// the trained parameters over to it.
func (l *loop) finish() error {
	t, grp, cfg, r := l.t, l.grp, l.t.cfg, l.t.s.r
	grp.ExamplesPerS = l.rate()
	if cpu := processCPU(); grp.StepsRun >= 2 && cpu > 0 {
		grp.CPUPerExampleUs = (cpu - l.cpuFirst).Seconds() * 1e6 / float64((grp.StepsRun-1)*l.examplesPer)
	}
	if grp.StepsRun == 1 {
		grp.ExamplesPerS = float64(l.examplesPer) / time.Since(l.loopStart).Seconds()
	}
	if err := l.checkpoint(true); err != nil {
		return err
	}
	if err := l.w.wait(); err != nil {
		return err
	}
	grp.CheckpointWriteS = l.w.writeS
	grp.TrainS = time.Since(l.loopStart).Seconds()
	grp.Steps = l.step
	for i, rep := range cfg.Replicas {
		grp.Results = append(grp.Results, ReplicaResult{Name: rep.Name, FinalLoss: l.lastEpochLoss[i], Steps: l.step})
	}
	l.report(l.lastLosses, true)
	np := len(t.gspecs)
	grp.params = slices.Clone(t.state[:np])
	clear(t.state[:np])
	if t.host != nil {
		values := make([]float32, r*t.specs[0].size())
		t.host.get(0, values)
		table, err := t.upload(values, t.specs[0].dims(r)...)
		if err != nil {
			return err
		}
		grp.params = append([]backends.Buffer{table}, grp.params...)
		t.host = nil
	}
	t.release()
	return nil
}
