package pipeline

import (
	"context"
	"fmt"

	"math"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
	"labelprivacy/model"
)

// ModelExecutor is the default Executor: GoMLX models on one backend,
// shared by every group of the stage (an XLA client is costly and holds the
// device).
type ModelExecutor struct {
	name string
	be   backends.Backend
}

// NewModelExecutor creates the backend (so a missing XLA plugin fails
// before any work) and installs the fast Dot gradients on it.
func NewModelExecutor(backend string) (*ModelExecutor, error) {
	be, err := model.NewBackend(backend)
	if err != nil {
		return nil, fmt.Errorf("backend: %w", err)
	}
	return &ModelExecutor{name: backend, be: be}, nil
}

// Close releases the backend.
func (e *ModelExecutor) Close() {
	if e.be != nil && !e.be.IsFinalized() {
		e.be.Finalize()
	}
}

// Execute trains the job's runs one after the other (groups of one).
// TODO(issue 11): one program per group (model.TrainGroup).
func (e *ModelExecutor) Execute(ctx context.Context, job *Job) ([]Outcome, JobStats, error) {
	start := time.Now()
	var outs []Outcome
	var st JobStats
	var examples, loopS float64
	for i, jr := range job.Runs {
		r := jr.Run
		tc := model.TrainConfig{
			Name: r.Name(), Backend: e.be, Model: job.Model, Loss: job.Loss, LossParams: jr.Params,
			LearningRate: r.LR, Epochs: job.Epochs, Seed: int64(r.InitSeed() >> 1),
			CheckpointDir: fmt.Sprintf("%s/%d", job.CheckpointDir, i), CheckpointEvery: job.CheckpointEvery.Steps,
			Progress: func(p model.Progress) {
				if job.Progress != nil {
					job.Progress(Progress{Epoch: p.Epoch, Epochs: p.Epochs, Step: p.Step, ExamplesPerS: p.ExamplesPerSec, Loss: p.Loss})
				}
			},
		}
		tr, err := model.Train(ctx, tc, &gatherSource{src: jr.Source, feats: job.Features})
		if err != nil {
			return nil, st, err
		}
		test, err := data.NewBatchSource(job.Test, data.BatchOptions{BatchSize: 4096, Target: data.TargetNone, Width: max(1, widest(job.Test))})
		if err != nil {
			tr.Close()
			return nil, st, err
		}
		probs, err := tr.Predict(&gatherSource{src: test})
		tr.Close()
		if err != nil {
			return nil, st, err
		}
		st.ResumedFrom = max(st.ResumedFrom, tr.ResumedFrom)
		examples += float64(tr.Examples)
		if tr.ExamplesPerSec > 0 {
			loopS += float64(tr.Examples) / tr.ExamplesPerSec
		}
		outs = append(outs, Outcome{Probs: probs, FinalLoss: tr.FinalLoss, Steps: tr.Steps})
	}
	st.WallS = time.Since(start).Seconds()
	st.ExamplesPerS = math.NaN()
	if loopS > 0 {
		st.ExamplesPerS = examples / loopS
	}
	return outs, st, nil
}

func widest(f *data.Frame) int {
	w := 0
	for i := 0; f.Offsets != nil && i < f.Rows; i++ {
		w = max(w, int(f.Offsets[i+1]-f.Offsets[i]))
	}
	return w
}

// gatherSource adapts an IndexOnly data.BatchSource to model.BatchSource by
// gathering the features of each batch's rows.
type gatherSource struct {
	src   *data.BatchSource
	feats *data.Frame
}

func (g *gatherSource) Reset() error { return g.src.Reset() }

func (g *gatherSource) Next() (*model.Batch, error) {
	b, err := g.src.Next()
	if err != nil {
		return nil, err
	}
	mb := &model.Batch{Rows: b.Rows, X: b.X, Dim: b.Dim, Indices: b.Indices, IndexMask: b.IndexMask, Width: b.Width,
		Target: b.Target, BagSize: b.BagSize}
	if f := g.feats; f != nil {
		d := f.Dim()
		mb.Dim = d
		if d > 0 {
			mb.X = make([]float32, b.Rows*d)
			for i, r := range b.RowIDs {
				copy(mb.X[i*d:(i+1)*d], f.X[int(r)*d:(int(r)+1)*d])
			}
		}
		if f.HasSparse() {
			mb.Width = b.Width
			mb.Indices = make([]int32, b.Rows*b.Width)
			mb.IndexMask = make([]float32, b.Rows*b.Width)
			for i, r := range b.RowIDs {
				for t, v := range f.Indices[f.Offsets[r]:f.Offsets[r+1]] {
					mb.Indices[i*b.Width+t] = int32(v)
					mb.IndexMask[i*b.Width+t] = 1
				}
			}
		}
	}
	return mb, nil
}
