package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
	"labelprivacy/internal/stats"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// evalBatchRows is the prediction batch size (no gradients: larger is fine).
const evalBatchRows = 4096

// modelSource adapts data's batch source to model.BatchSource; data.Batch
// and model.Batch have identical fields, so no copy is made.
type modelSource struct{ s *data.BatchSource }

func (m modelSource) Next() (*model.Batch, error) {
	b, err := m.s.Next()
	if err != nil {
		return nil, err
	}
	return &model.Batch{Rows: b.Rows, X: b.X, Dim: b.Dim, Indices: b.Indices, IndexMask: b.IndexMask, Width: b.Width,
		Target: b.Target, BagSize: b.BagSize}, nil
}

func (m modelSource) Reset() error { return m.s.Reset() }

// lossFor picks the training loss matched to what a PET releases.
func lossFor(cfg *Config, k pets.Kind) (model.Loss, error) {
	switch {
	case k == pets.None:
		return model.LossBCE, nil
	case k == pets.RR:
		return model.ParseLoss(cfg.Train.RRLoss)
	case k.IsLLP():
		return model.ParseLoss(cfg.Train.LLPLoss)
	}
	return 0, fmt.Errorf("fit: no loss for %s", k)
}

// fitEnv is what every run of a fit stage shares.
type fitEnv struct {
	cfg      *Config
	ds       *data.Dataset
	dsID     string
	mcfg     model.ModelConfig
	backend  string
	stderr   io.Writer
	progress *progress
	// rel caches the last release read (path relPath): the runs of one
	// (setting, trial) at every learning rate train on the same release.
	rel     *data.Frame
	relPath string
	// be is the one backend every run of the stage shares (created on
	// first use: an XLA client is costly and holds the device).
	be backends.Backend
	// keepGoing records a failed run (runs/<id>.failed.json) and goes on
	// with the others (sweeps); otherwise the first failure stops the stage.
	keepGoing bool
}

func newFitEnv(cfg *Config, ds *data.Dataset, stderr io.Writer) (*fitEnv, error) {
	kind, err := model.ParseKind(cfg.Model.Kind)
	if err != nil {
		return nil, fmt.Errorf("model.kind: %w", err)
	}
	mc := model.ModelConfig{Kind: kind, InputDim: ds.Train.Dim()}
	switch kind {
	case model.KindMLP:
		mc.Hidden = cfg.Model.Hidden
	case model.KindKDDEmbed:
		if !ds.Train.HasSparse() {
			return nil, fmt.Errorf("model.kind: kdd_embed needs a dataset with a sparse %q column (train data import libsvm)", data.ColIndices)
		}
		mc.Buckets = int(ds.Meta.HashBuckets)
	}
	if kind != model.KindKDDEmbed && ds.Train.Dim() == 0 {
		return nil, fmt.Errorf("model.kind: %s needs dense features; this dataset has only sparse ones (use kdd_embed)", kind)
	}
	if _, err := mc.WithDefaults(); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	return &fitEnv{cfg: cfg, ds: ds, dsID: datasetIdentity(ds.Meta, ds.Dir), mcfg: mc, backend: cfg.Backend,
		stderr: stderr, progress: newProgress(stderr)}, nil
}

func (e *fitEnv) key(r runSpec, loss string) runKey {
	k := runKey{Dataset: e.dsID, Model: e.cfg.Model.Kind, Backend: e.backend, Epochs: e.cfg.Train.Epochs,
		BatchSize: e.cfg.Train.BatchSize, Loss: loss, Setting: r.Setting.ID(), LR: r.LR, Trial: r.Trial,
		Seed: e.cfg.Seed, Remainder: e.cfg.Privacy.KeepRemainder, Secure: e.cfg.Privacy.Secure}
	if e.mcfg.Kind == model.KindMLP {
		k.Hidden = e.cfg.Model.Hidden
	}
	return k
}

// lossName is the loss a setting trains with; "constant" for bot, which
// releases nothing to train on.
func (e *fitEnv) lossName(s petSetting) (string, error) {
	if s.Kind == pets.Bot {
		return "constant", nil
	}
	l, err := lossFor(e.cfg, s.Kind)
	if err != nil {
		return "", err
	}
	return l.String(), nil
}

// trainSource builds the batch source of a run: the clean training data for
// none; for a PET, the privatized release file only (it has no label column,
// so the trainer cannot read raw labels).
func (e *fitEnv) trainSource(r runSpec, shuffleSeed uint64) (*data.BatchSource, *data.Frame, error) {
	s := r.Setting
	o := data.BatchOptions{BatchSize: e.cfg.Train.BatchSize, Shuffle: true, Seed: shuffleSeed, DropLast: true}
	if w := e.ds.Meta.MaxIndices; w > 0 {
		o.Width = w
	}
	f := e.ds.Train
	switch {
	case s.Kind == pets.None:
		o.Target = data.TargetLabel
	default:
		path := releaseFile(e.cfg, s, r.Trial)
		if e.relPath != path {
			rel, err := data.ReadFrame(path)
			if err != nil {
				return nil, nil, err
			}
			if cols := rel.RawLabelColumns(); len(cols) > 0 {
				return nil, nil, fmt.Errorf("fit: release %s carries raw columns %v; refusing to train on it", path, cols)
			}
			e.rel, e.relPath = rel, path
		}
		f = e.rel
		switch {
		case s.Kind == pets.RR:
			o.Target = data.TargetLabelRR
		case s.Kind == pets.LLPGeom:
			o.Target = data.TargetAlphaDebiased
		default:
			o.Target = data.TargetAlpha
		}
		if s.Kind.IsLLP() {
			o.BagSize = s.K
			o.BatchSize = max(1, e.cfg.Train.BatchSize/s.K) * s.K
		}
	}
	if o.BatchSize > f.Rows {
		o.BatchSize = f.Rows - f.Rows%max(o.BagSize, 1)
	}
	src, err := data.NewBatchSource(f, o)
	if err != nil {
		return nil, nil, err
	}
	return src, f, nil
}

// fitRun trains and evaluates one run and stores its result file. The
// clean model's test predictions are kept for the audit's η̂.
func (e *fitEnv) fitRun(ctx context.Context, r runSpec) (*runResult, error) {
	s := r.Setting
	lossName, err := e.lossName(s)
	if err != nil {
		return nil, err
	}
	key := e.key(r, lossName)
	id := runID(key)
	res := &runResult{RunID: id, Dataset: e.dsID, Model: e.cfg.Model.Kind, Setting: s.ID(), Pet: s.Kind.String(),
		K: s.K, Epsilon: jfloat(s.Epsilon), LabelDPEpsilon: jfloat(labelDPEpsilon(s)), Loss: lossName,
		LR: jfloat(r.LR), Trial: r.Trial, Seed: deriveSeed(e.cfg.Seed, "fit", id) >> 1, Epochs: e.cfg.Train.Epochs, Backend: e.backend}
	start := time.Now()
	labels := e.ds.Test.Label
	if s.Kind == pets.Bot {
		// ⊥ releases nothing: the best model is a constant score (AUC ½).
		probs := make([]float32, len(labels))
		for i := range probs {
			probs[i] = 0.5
		}
		res.TestAUC = jfloat(stats.AUC(probs, labels))
		res.TestLogLoss = jfloat(model.LogLoss(probs, labels))
		res.TrainLoss = jfloat(math.NaN())
		res.WallS = jfloat(time.Since(start).Seconds())
		return res, writeRunResult(e.cfg, res)
	}
	loss, err := lossFor(e.cfg, s.Kind)
	if err != nil {
		return nil, err
	}
	src, frame, err := e.trainSource(r, deriveSeed(res.Seed, "shuffle"))
	if err != nil {
		return nil, fmt.Errorf("run %s (%s lr=%g trial %d): %w", id, s.ID(), r.LR, r.Trial, err)
	}
	var lp model.LossParams
	m, err := s.mechanism(false)
	if err != nil {
		return nil, err
	}
	if s.Kind == pets.RR {
		lp.FlipProb = m.FlipProb()
	}
	if loss == model.LossEasyLLP {
		lp.Prior = meanTarget(frame, s.Kind)
	}
	be, err := e.backendOnce()
	if err != nil {
		return nil, err
	}
	ckpt := filepath.Join(e.cfg.Output, "checkpoints", id)
	name := fmt.Sprintf("%s lr=%g trial=%d", s.ID(), r.LR, r.Trial)
	tc := model.TrainConfig{
		Name: name, Backend: be, Model: e.mcfg, Loss: loss, LossParams: lp,
		LearningRate: r.LR, Epochs: e.cfg.Train.Epochs, Seed: int64(deriveSeed(res.Seed, "init") >> 1),
		CheckpointDir: ckpt, CheckpointEvery: e.cfg.Train.CheckpointEvery,
		Progress: func(p model.Progress) {
			e.progress.update("fit %s: epoch %d/%d step %d loss %.4f %.0f ex/s", name, p.Epoch, p.Epochs, p.Step, p.Loss, p.ExamplesPerSec)
		},
	}
	tr, err := model.Train(ctx, tc, modelSource{src})
	e.progress.done()
	if err != nil {
		return nil, err
	}
	test, err := data.NewBatchSource(e.ds.Test, data.BatchOptions{BatchSize: evalBatchRows, Target: data.TargetNone, Width: e.ds.Meta.MaxIndices})
	if err != nil {
		return nil, err
	}
	probs, err := tr.Predict(modelSource{test})
	tr.Close()
	if err != nil {
		return nil, err
	}
	res.Steps = tr.Steps
	if tr.ResumedFrom > 0 {
		fmt.Fprintf(e.stderr, "fit: %s resumed from its checkpoint at step %d\n", name, tr.ResumedFrom)
	}
	res.TrainLoss = jfloat(tr.FinalLoss)
	res.TestAUC = jfloat(stats.AUC(probs, labels))
	res.TestLogLoss = jfloat(model.LogLoss(probs, labels))
	res.WallS = jfloat(time.Since(start).Seconds())
	res.ExamplesPerS = jfloat(tr.ExamplesPerSec)
	if s.Kind == pets.None {
		if err := writeEtaHat(e.cfg, id, probs); err != nil {
			return nil, err
		}
	}
	if err := writeRunResult(e.cfg, res); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(ckpt); err != nil {
		return nil, err
	}
	return res, nil
}

// backendOnce creates the stage's backend on first use (backend key).
func (e *fitEnv) backendOnce() (backends.Backend, error) {
	if e.be == nil {
		be, err := model.NewBackend(e.backend)
		if err != nil {
			return nil, fmt.Errorf("backend: %w", err)
		}
		e.be = be
	}
	return e.be, nil
}

// meanTarget is the mean released per-bag proportion: EasyLLP's label
// prior, estimated from the release only.
func meanTarget(f *data.Frame, k pets.Kind) float64 {
	col := f.Alpha
	if k == pets.LLPGeom {
		col = f.AlphaDebiased
	}
	var sum float64
	for _, a := range col {
		sum += a
	}
	return min(max(sum/float64(len(col)), 0), 1)
}

// etaHatFile holds a clean model's test-set predictions (the audit's η̂).
func etaHatFile(cfg *Config, id string) string {
	return filepath.Join(cfg.Output, "eta_hat", id+".parquet")
}

func writeEtaHat(cfg *Config, id string, probs []float32) error {
	v := make([]float64, len(probs))
	row := make([]int64, len(probs))
	for i, p := range probs {
		v[i] = float64(p)
		row[i] = int64(i)
	}
	t := &data.Table{Columns: []data.Column{{Name: "test_row", Values: row}, {Name: "eta_hat", Values: v}},
		Meta: map[string]string{"run_id": id, "tool": version}}
	return t.WriteParquet(etaHatFile(cfg, id))
}

// fitStage trains every run of specs whose result file is missing (a
// rerun skips finished runs) and returns all results in grid order.
func fitStage(ctx context.Context, e *fitEnv, specs []runSpec, stdout io.Writer) ([]*runResult, error) {
	var results []*runResult
	trained, skipped, failed := 0, 0, 0
	for i, r := range specs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lossName, err := e.lossName(r.Setting)
		if err != nil {
			return nil, err
		}
		id := runID(e.key(r, lossName))
		done, err := readRunResult(e.cfg, id)
		if err != nil {
			return nil, err
		}
		if done != nil {
			results = append(results, done)
			skipped++
			continue
		}
		res, err := e.fitRun(ctx, r)
		if err != nil {
			err = fmt.Errorf("fit: run %d/%d (%s): %w", i+1, len(specs), id, err)
			if !e.keepGoing || ctx.Err() != nil {
				return nil, err
			}
			fmt.Fprintf(stdout, "%v\n", err)
			if rerr := recordFailure(e.cfg, id, r, err); rerr != nil {
				return nil, rerr
			}
			failed++
			continue
		}
		os.Remove(failedPath(e.cfg, id))
		fmt.Fprintf(stdout, "fit: [%d/%d] %-22s lr=%-8g trial=%d  test AUC %.4f  loss %.4f  %.0f ex/s  %.1fs\n",
			i+1, len(specs), res.Setting, float64(res.LR), res.Trial, float64(res.TestAUC), float64(res.TrainLoss),
			float64(res.ExamplesPerS), float64(res.WallS))
		results = append(results, res)
		trained++
	}
	if skipped > 0 || failed > 0 {
		fmt.Fprintf(stdout, "fit: %d runs trained, %d already done (skipped), %d failed\n", trained, skipped, failed)
	}
	if failed > 0 {
		return results, fmt.Errorf("fit: %d of %d runs failed (see %s/*.failed.json)", failed, len(specs), runsDir(e.cfg))
	}
	return results, nil
}

var errNoRuns = errors.New("fit: no finished runs")

// writeRunTables writes runs.csv and runs.parquet from results.
func writeRunTables(cfg *Config, results []*runResult) error {
	if len(results) == 0 {
		return errNoRuns
	}
	t := runsTable(results)
	if err := t.WriteCSV(filepath.Join(cfg.Output, "runs.csv")); err != nil {
		return err
	}
	return t.WriteParquet(filepath.Join(cfg.Output, "runs.parquet"))
}
