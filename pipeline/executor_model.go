package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/model"
)

// ModelExecutor is the default Executor: model.TrainGroup on one backend,
// shared by every group of the stage (an XLA client is costly and holds the
// device; compiled programs are cached per shape for the whole process).
type ModelExecutor struct {
	be backends.Backend
}

// NewModelExecutor creates the backend — so a missing XLA plugin fails
// before any work — after installing the fast Dot gradients
// (model.UseFastDotVJP) that every graph built afterwards uses.
func NewModelExecutor(backend string) (*ModelExecutor, error) {
	model.UseFastDotVJP()
	be, err := model.NewBackend(backend)
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	return &ModelExecutor{be: be}, nil
}

// Close releases the backend.
func (e *ModelExecutor) Close() {
	if e.be != nil && !e.be.IsFinalized() {
		e.be.Finalize()
	}
}

// Execute trains the job's runs as one group (one compiled program) and
// predicts the test set with every replica in one pass.
func (e *ModelExecutor) Execute(ctx context.Context, job *Job) ([]Outcome, JobStats, error) {
	start := time.Now()
	reps := make([]model.Replica, len(job.Runs))
	for i, jr := range job.Runs {
		reps[i] = model.Replica{Name: jr.Run.Name(), Seed: jr.Run.InitSeed(), LR: jr.Run.LR, Params: jr.Params, Source: jr.Source}
	}
	cfg := model.GroupConfig{Name: job.Name, Backend: e.be, Model: job.Model, Loss: job.Loss, Epochs: job.Epochs,
		Features: job.Features, Replicas: reps, SparseEmbedding: job.SparseEmbedding,
		CheckpointDir: job.CheckpointDir, CheckpointEvery: job.CheckpointEvery, Notices: job.Notice}
	if job.Progress != nil {
		cfg.Progress = func(p model.Progress) {
			var loss float64
			for _, l := range p.Losses {
				loss += l / float64(len(p.Losses))
			}
			job.Progress(Progress{Epoch: p.Epoch, Epochs: p.Epochs, Step: p.Step, Steps: p.Steps, ExamplesPerS: p.ExamplesPerS, Loss: loss, ETA: p.ETA})
		}
	}
	g, err := model.TrainGroup(ctx, cfg)
	if err != nil {
		return nil, JobStats{}, err
	}
	defer g.Close()
	probs, err := g.Predict(job.Test)
	if err != nil {
		return nil, JobStats{}, err
	}
	outs := make([]Outcome, len(job.Runs))
	for i, r := range g.Results {
		outs[i] = Outcome{Probs: probs[i], FinalLoss: r.FinalLoss, Steps: r.Steps}
	}
	return outs, JobStats{WallS: time.Since(start).Seconds(), CompileS: g.CompileS, CheckpointS: g.CheckpointS,
		ExamplesPerS: g.ExamplesPerS, ResumedFrom: g.ResumedFrom}, nil
}
