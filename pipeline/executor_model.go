package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
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
	// predictions counts the passes over a job's test features (tests
	// check that a group's test set is predicted once per epoch, not once
	// more at the end).
	predictions atomic.Int64
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
// predicts the test set with every replica in one pass: at every epoch's
// end when the job observes epochs (job.EpochEnd), the last of which gives
// the outcomes (the trained parameters are those of the last epoch's end,
// bit for bit), else once after training.
func (e *modelExecutor) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	start := time.Now()
	defer e.share.Enter(e.be)()
	cfg := job.Group
	cfg.Backend = e.be
	var last [][]float32 // the test predictions at the end of epoch cfg.Epochs
	if job.EpochEnd != nil {
		cfg.EpochEnd = func(ep model.EpochEnd) error {
			var probs [][]float32
			if ep.Predict != nil {
				var err error
				if probs, err = e.predict(ep.Predict, job.Test); err != nil {
					return fmt.Errorf("learning curve, epoch %d: %w", ep.Epoch, err)
				}
				if ep.Epoch == cfg.Epochs {
					last = probs
				}
			}
			return job.EpochEnd(ep.Epoch, ep.Losses, probs)
		}
	}
	g, err := model.TrainGroup(ctx, cfg)
	if err != nil {
		return nil, jobStats{}, err
	}
	defer g.Close()
	probs := last
	if probs == nil { // not observed, not predictable mid-training, or no epoch left to train (resumed at the end)
		if probs, err = e.predict(g.Predict, job.Test); err != nil {
			return nil, jobStats{}, err
		}
	}
	var probe [][]float32
	probeStart := time.Now()
	if job.Probe != nil { // not counted in e.predictions: a pass over training rows
		if probe, err = g.Predict(job.Probe); err != nil {
			return nil, jobStats{}, fmt.Errorf("model attack probe: %w", err)
		}
	}
	probeS := time.Since(probeStart).Seconds()
	outs := make([]outcome, len(g.Results))
	for i, r := range g.Results {
		outs[i] = outcome{Probs: probs[i], FinalLoss: r.FinalLoss, Steps: r.Steps}
		if probe != nil {
			outs[i].ProbeProbs = probe[i]
		}
	}
	return outs, jobStats{WallS: time.Since(start).Seconds(), CompileS: g.CompileS, CheckpointS: g.CheckpointS,
		ExamplesPerS: g.ExamplesPerS, ResumedFrom: g.ResumedFrom, ProbeS: probeS}, nil
}

// predict runs one prediction pass over test, counted.
func (e *modelExecutor) predict(p func(*data.Features) ([][]float32, error), test *data.Features) ([][]float32, error) {
	e.predictions.Add(1)
	return p(test)
}
