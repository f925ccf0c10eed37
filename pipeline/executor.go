package pipeline

import (
	"context"

	"labelprivacy/data"
	"labelprivacy/model"
)

// executor trains the runs of one group as one unit and returns, per run in
// order, its test-set predictions and training summary. The pipeline forms
// the groups (formGroups), makes the releases, builds each run's batch
// source and loss parameters from its plan (runSpec.Plan), and turns the
// predictions into results; the executor only trains and predicts. The
// default, modelExecutor (newModelExecutor), runs model.TrainGroup: one
// compiled program trains the whole group, replicas stacked on a leading
// axis, features resident on the device; rr_prior's prior models train
// through it too. Tests use fakes (FitOptions.executor) to exercise
// scheduling, sharding, resume and the targets each run receives without
// GoMLX.
type executor interface {
	Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error)
}

// groupJob is one group to train: the model's own group configuration, as
// model.TrainGroup takes it, and the test features to predict.
type groupJob struct {
	// Group is complete except for Backend, which the executor supplies.
	// Group.Replicas[i] trains Runs[i]; Group.Features, of type
	// data.Features, cannot carry a label, eta or release column (a PET
	// model's trainer never sees raw labels).
	Group model.GroupConfig
	// runs are the group's runs, in replica order.
	runs []*runSpec
	// Test holds the test features.
	Test *data.Features
	// Probe, when set, holds training rows every model of the group also
	// predicts once trained (the model attack, audit.model_attack:
	// outcome.ProbeProbs); its features only, like Group.Features.
	Probe *data.Features
	// EpochEnd, when set, observes every epoch trained (learning curves):
	// its number (1-based), each replica's mean training loss over it and
	// each replica's test-set predictions with the parameters at its end
	// (outcome.Probs' layout; nil where the model cannot predict mid-training:
	// kdd_embed with host embedding tables). The executor predicts the test
	// set once per epoch: the last epoch's predictions are the outcomes'.
	EpochEnd func(epoch int, losses []float64, probs [][]float32) error
}

// outcome is one run's result from the executor.
type outcome struct {
	Probs      []float32 // test-set predictions in row order: P(y=1) per row (binary), C probabilities per row (C ≥ 3; Group.Predict's layout)
	ProbeProbs []float32 // groupJob.Probe's predictions in its row order (Probs' layout); nil without a probe
	FinalLoss  float64   // mean training loss of the last epoch
	Steps      int64
}

// jobStats are figures of the whole group.
type jobStats struct {
	WallS        float64 // the group's wall time
	CompileS     float64 // building and compiling its programs (0 when cached)
	CheckpointS  float64 // writing checkpoints
	ExamplesPerS float64 // steady-state training examples/s of the whole group (first step excluded)
	ResumedFrom  int64   // the step a checkpoint restored (0: none)
	ProbeS       float64 // predicting groupJob.Probe (the model attack's cost in fit)
}
