package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/model"
)

// modelExecutor is the default executor: model.TrainGroup on one backend,
// shared by every group of the stage (an XLA client is costly and holds the
// device; compiled programs are cached per shape for the whole process).
type modelExecutor struct {
	be backends.Backend
	// share, when set, divides the cores among the executors training groups
	// at once (Execute enters it for its group's training and prediction).
	share *model.CoreShare
}

// newModelExecutor creates the backend, so a missing XLA plugin fails
// before any work.
func newModelExecutor(backend model.BackendName) (*modelExecutor, error) {
	be, err := backend.Open()
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	return &modelExecutor{be: be}, nil
}

// Close releases the backend.
func (e *modelExecutor) Close() {
	if e.be != nil && !e.be.IsFinalized() {
		e.be.Finalize()
	}
}

// Execute trains the job's runs as one group (one compiled program) and
// predicts the test set with every replica in one pass.
func (e *modelExecutor) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	start := time.Now()
	defer e.share.Enter(e.be)()
	cfg := job.Group
	cfg.Backend = e.be
	g, err := model.TrainGroup(ctx, cfg)
	if err != nil {
		return nil, jobStats{}, err
	}
	defer g.Close()
	probs, err := g.Predict(job.Test)
	if err != nil {
		return nil, jobStats{}, err
	}
	outs := make([]outcome, len(g.Results))
	for i, r := range g.Results {
		outs[i] = outcome{Probs: probs[i], FinalLoss: r.FinalLoss, Steps: r.Steps}
	}
	return outs, jobStats{WallS: time.Since(start).Seconds(), CompileS: g.CompileS, CheckpointS: g.CheckpointS,
		ExamplesPerS: g.ExamplesPerS, ResumedFrom: g.ResumedFrom}, nil
}
