package pipeline

import (
	"context"

	"labelprivacy/data"
	"labelprivacy/model"
)

// Executor trains the runs of one group as one unit and returns, per run in
// order, its test-set predictions and training summary. The pipeline forms
// the groups (Groups), makes the releases, builds each run's batch source
// and loss parameters, and turns the predictions into results; the
// executor only trains and predicts. The default, NewModelExecutor, is
// model.TrainGroup: one compiled program trains the whole group, replicas
// stacked on a leading axis, features resident on the device. Tests use
// fakes to exercise scheduling, sharding and resume without GoMLX.
type Executor interface {
	Execute(ctx context.Context, job *Job) ([]Outcome, JobStats, error)
}

// Job is one group to train.
type Job struct {
	Name   string
	Model  model.ModelConfig
	Loss   model.Loss
	Epochs int
	// Features are the training features (no label, eta or release column:
	// a PET model's trainer never sees raw labels); Test the test features.
	Features, Test *data.Frame
	Runs           []JobRun
	// CheckpointDir holds the group's checkpoint (one unit): a killed group
	// started again with the same runs resumes from it.
	CheckpointDir   string
	CheckpointEvery model.Interval
	SparseEmbedding bool
	// Progress and Notice report to the user (may be nil).
	Progress func(Progress)
	Notice   func(string)
}

// JobRun is one run of a job.
type JobRun struct {
	Run *RunSpec
	// Source yields the run's batches (IndexOnly: row ids into Features and
	// the run's released targets), shuffled with the run's own seed.
	Source *data.BatchSource
	Params model.LossParams
}

// Outcome is one run's result from the executor.
type Outcome struct {
	Probs     []float32 // P(y=1) for every test row, in order
	FinalLoss float64   // mean training loss of the last epoch
	Steps     int64
}

// JobStats are figures of the whole group.
type JobStats struct {
	WallS        float64 // the group's wall time
	CompileS     float64 // building and compiling its programs (0 when cached)
	CheckpointS  float64 // writing checkpoints
	ExamplesPerS float64 // steady-state training examples/s of the whole group (first step excluded)
	ResumedFrom  int64   // the step a checkpoint restored (0: none)
}
