package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"time"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
	"labelprivacy/internal/par"
)

// loop is the state of one training loop: where it is, its loss
// bookkeeping, its meter and its checkpointer.
type loop struct {
	t   *trainer
	grp *Group

	step                        int64
	epochLossSum, lastEpochLoss []float64
	sinceFlush                  int
	lastLosses                  []float64 // of the last report

	meter meter
	ckpt  checkpointer

	stepScale []float32
	inputs    []backends.Buffer
	donate    []bool

	// prefetch, when not nil, delivers the error of reading step
	// l.step+1's batches into t.next (started while step l.step's program
	// runs; see trainStep).
	prefetch chan error
}

// newLoop returns the loop of t's loaded state, positioned at its first
// step: 0, or the step of the checkpoint resumed (nil: none).
func newLoop(t *trainer, grp *Group, resumed *ckptHeader) *loop {
	r := t.s.r
	l := &loop{t: t, grp: grp, epochLossSum: make([]float64, r), lastEpochLoss: make([]float64, r),
		stepScale: make([]float32, r)}
	for i := range l.lastEpochLoss {
		l.lastEpochLoss[i] = math.NaN()
	}
	if resumed != nil {
		l.step = resumed.Step
		copy(l.epochLossSum, floatsOf(resumed.EpochLossSum))
		copy(l.lastEpochLoss, floatsOf(resumed.LastEpochLoss))
		grp.ResumedFrom = l.step
	}
	l.meter = meter{group: t.cfg.Name, epochs: t.cfg.Epochs, spe: t.spe, total: t.total,
		examplesPer: int64(r * t.s.b), progress: t.cfg.Progress}
	l.ckpt = newCheckpointer(t, l.step)
	n := len(t.state) + stepInputs + 1 + 3 + 1
	l.inputs, l.donate = make([]backends.Buffer, 0, n), make([]bool, 0, n)
	return l
}

// train runs the loop to its end and finishes the group; on an error it
// first waits for a checkpoint write in flight.
func (l *loop) train(ctx context.Context) error {
	err := l.run(ctx)
	if err == nil {
		err = l.finish()
	}
	if err != nil {
		_ = l.ckpt.w.wait()
	}
	return err
}

// run trains until the last step, reading losses back every LossEvery
// steps and at epoch ends, and checkpointing on schedule and when ctx is
// cancelled.
func (l *loop) run(ctx context.Context) error {
	t, cfg := l.t, l.t.cfg
	l.meter.begin()
	l.ckpt.last = l.meter.start
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
		l.sinceFlush++
		l.meter.stepDone()
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
				if err := l.epochEnd(); err != nil {
					return err
				}
			}
			l.lastLosses = losses
			l.meter.report(l.step, losses, false)
		}
		if l.step < t.total && l.ckpt.due(l.step) {
			if err := l.checkpoint(false); err != nil {
				return err
			}
		}
	}
	return nil
}

// epochEnd hands the epoch's losses, and predictions with the current
// parameters, to cfg.EpochEnd; the time it takes is a stall of the meter.
func (l *loop) epochEnd() error {
	t := l.t
	if t.cfg.EpochEnd == nil {
		return nil
	}
	t0 := time.Now()
	e := EpochEnd{Epoch: int(l.step / t.spe), Losses: append([]float64(nil), l.lastEpochLoss...)}
	if t.host == nil {
		view := &Group{Name: t.cfg.Name, be: t.be, m: t.m, r: t.s.r, params: t.state[:len(t.gspecs)]}
		e.Predict = view.Predict // reads the parameters, never donates them
	}
	err := t.cfg.EpochEnd(e)
	l.meter.stalled(time.Since(t0))
	return err
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
	if pos == 0 || step == l.grp.ResumedFrom {
		orderEpoch(cfg.Replicas, uint64(epoch))
	}
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

// orderEpoch positions the replicas' data.BatchSource sources at epoch e
// at once, on every core, so that each makes its order of the epoch (a
// shuffle of all its rows: 0.2 s at 10M rows, up to 64 sources a group)
// in parallel; readBatches then seeks each again, which reuses that
// order. Other source types are left to readBatches.
func orderEpoch(reps []Replica, e uint64) {
	var srcs []*data.BatchSource
	seen := map[*data.BatchSource]bool{}
	for _, rep := range reps {
		if bs, ok := rep.Source.(*data.BatchSource); ok && !seen[bs] {
			seen[bs] = true
			srcs = append(srcs, bs)
		}
	}
	par.Each(len(srcs), 0, func(_, i int) { srcs[i].SeekEpoch(e) })
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

// checkpoint saves the state at this step boundary, the losses accumulated
// since the last flush included (sync: and waits for the write); the time
// it takes is the loop's stall.
func (l *loop) checkpoint(sync bool) error {
	if !l.ckpt.pending(l.step) {
		return nil
	}
	t0 := time.Now()
	if l.sinceFlush > 0 {
		if _, err := l.flush(); err != nil {
			return err
		}
	}
	err := l.ckpt.save(l.t, l.step, l.epochLossSum, l.lastEpochLoss, sync)
	d := time.Since(t0)
	l.grp.CheckpointS += d.Seconds()
	l.meter.stalled(d)
	return err
}

// finish writes the final checkpoint, fills the group's results and hands
// the trained parameters over to it.
func (l *loop) finish() error {
	grp := l.grp
	grp.StepsRun = l.meter.steps
	grp.ExamplesPerS = l.meter.finalRate()
	grp.CPUPerExampleUs = l.meter.cpuPerExampleUs()
	grp.steady = l.meter.steadyState()
	if err := l.checkpoint(true); err != nil {
		return err
	}
	if err := l.ckpt.w.wait(); err != nil {
		return err
	}
	grp.Checkpoints = l.ckpt.saves
	grp.CheckpointWriteS = l.ckpt.w.writeS
	grp.TrainS = time.Since(l.meter.start).Seconds()
	grp.Steps = l.step
	for i, rep := range l.t.cfg.Replicas {
		grp.Results = append(grp.Results, ReplicaResult{Name: rep.Name, FinalLoss: l.lastEpochLoss[i], Steps: l.step})
	}
	l.meter.report(l.step, l.lastLosses, true)
	params, err := l.t.handOver()
	if err != nil {
		return err
	}
	grp.params = params
	return nil
}
