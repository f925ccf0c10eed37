package model

import "context"

// The group trainer, in files by job: group.go is what a caller configures
// and gets back; this file runs it; validate.go checks a configuration and
// derives the program's shape; trainer.go holds the group's state on the
// device (restored from and snapshotted for checkpoints); loop.go steps it,
// calling progress.go's meter and checkpointer.go's schedule (the
// checkpoint file format is checkpoint.go's).

// TrainGroup trains the group's R replicas together, one compiled program
// stepping every replica at once, and returns the trained Group (Close it).
// It resumes from cfg.CheckpointDir when that holds a checkpoint of the same
// group. A non-finite loss stops it with a *ReplicaError wrapping
// ErrNonFiniteLoss; cancelling ctx stops it after the current step (saving a
// checkpoint when configured) and returns an error wrapping ctx.Err(). GoMLX
// panics come back as errors naming the group. It installs this package's
// fast gradients (dotvjp.go) before building its program, so it trains as
// fast on a backend made without NewBackend.
func TrainGroup(ctx context.Context, cfg GroupConfig) (_ *Group, err error) {
	installFastVJPs()
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
	t.fp = t.fingerprint()
	grp := &Group{Name: t.cfg.Name, be: t.be, m: t.m, r: t.s.r, Resident: t.s.feed == feedResident}
	prog, compileS, fresh, err := program(cacheKey{backend: t.be, shape: t.s}, buildTrain(t.m, t.s))
	if err != nil {
		return nil, t.wrap(err)
	}
	t.prog = prog
	if fresh {
		grp.CompileS = compileS
	}
	resumed, err := t.loadState()
	if err != nil {
		return nil, t.wrap(err)
	}
	if err := newLoop(t, grp, resumed).train(ctx); err != nil {
		return nil, t.wrap(err)
	}
	return grp, nil
}
