package model

import (
	"fmt"
	"time"

	"github.com/gomlx/gomlx/backends"

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
// the reference the trainer was matched against on real Higgs rows; Keras
// and GoMLX use 1e-7). The update is PyTorch's: θ −= lr·m̂/(√v̂ + ε), m̂ and
// v̂ bias-corrected.
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
	Source BatchSource
}

// BatchSource is what the engine reads of a replica's batches;
// *data.BatchSource is the production one. SeekEpoch(e) positions the
// source at the start of epoch e (0-based; the order of epoch e depends
// only on e and the source's seed); Next returns the next batch (reused by
// the following call) or io.EOF at the epoch's end; BatchesPerEpoch and
// Units (rows, or bags in bag mode) describe an epoch. A batch carries
// Target with data.Batch.TargetWidth values per row (or per bag): 0 or 1
// for a binary model, C for a model of C ≥ 3 classes.
type BatchSource interface {
	SeekEpoch(epoch uint64)
	Next() (*data.Batch, error)
	BatchesPerEpoch() int
	Units() int
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
	// Notices, when set, receives one-line notices (a damaged checkpoint set
	// aside).
	Notices func(string)
	// EpochEnd, when set, is called at the end of every epoch trained in
	// this call (for learning curves); its time is left out of
	// ExamplesPerS.
	EpochEnd func(EpochEnd) error
}

// EpochEnd is the state of a group at the end of an epoch.
type EpochEnd struct {
	Epoch int // 1-based
	// Losses is each replica's mean training loss over the epoch.
	Losses []float64
	// Predict returns every replica's predictions (as Group.Predict) with
	// the parameters at this epoch's end; nil where the parameters are not
	// all on the backend (kdd_embed with host embedding tables).
	Predict func(*data.Features) ([][]float32, error)
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
	steady steadyState
}

// steadyState is when a group's steady state ran (from the end of its first
// step to its last, checkpoint stalls included) and the process's CPU time
// at both ends: Bench combines the windows of groups trained at once.
type steadyState struct {
	from, to       time.Time
	cpuFrom, cpuTo time.Duration
	examples       int64 // trained in the window
}
