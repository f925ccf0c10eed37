package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"labelprivacy/internal/flock"
	"labelprivacy/model"
	"labelprivacy/pipeline/internal/store"
	"labelprivacy/report"
)

// autoStateBudget is what train.replicas: auto lets a group take on an
// XLA device: its parameters, Adam moments and one step's activations
// (model.Footprint). GoMLX v0.26 exposes no device-memory query, so it is
// an assumption, sized for a 16 GB GPU that also holds up to
// model.DefaultResidentMaxBytes (4 GiB) of features. Set train.replicas to
// use a larger device fully.
const autoStateBudget = 8 << 30

// maxAutoReplicas caps auto's group size. Measured on an H100 (xla:cuda,
// higgs_mlp, batch 1024): 17.5–20.1M examples/s at R = 64, 22.0–29.5M at
// R = 256; past that the step is no longer launch-bound.
const maxAutoReplicas = 256

// Replicas resolves train.replicas: a number as given; auto is 1 on the go
// backend (the pure-Go matmul does the same work per example whatever the
// group size, so stacking gains nothing on a CPU) and, on XLA backends, the
// largest group ≤ maxAutoReplicas whose footprint at train.batch_size fits
// autoStateBudget (higgs_mlp at batch 1024: 256, 5.6 GiB; at batch 8192:
// 52, where 64 took 64 before activations were counted; kdd_embed: 27).
func (s *Session) Replicas() (int, error) {
	c := s.cfg
	if !c.Train.Replicas.Auto() {
		return c.Train.Replicas.N, nil
	}
	if c.Backend.IsGo() {
		return 1, nil
	}
	mc, err := s.modelConfig()
	if err != nil {
		return 0, err
	}
	if mc, err = mc.WithDefaults(); err != nil {
		return 0, err
	}
	return autoReplicas(mc, c.Train.BatchSize), nil
}

// autoReplicas is the largest r in [1, maxAutoReplicas] whose footprint
// fits autoStateBudget (1 when even one does not).
func autoReplicas(mc model.ModelConfig, batch int) int {
	per := mc.Footprint(1, batch).Bytes() // a footprint is linear in r
	return int(min(maxAutoReplicas, max(1, float64(autoStateBudget)/per)))
}

// fitter trains groups of one session, one or several at once (each on
// its own executor).
type fitter struct {
	s  *Session
	st store.Store
	// ev is the session's events; serialized (and progress merged into one
	// line by board) when groups train at once.
	ev    Events
	board *progressBoard
	// meter reports the groups' training while each runs them (nil
	// outside: progress then goes to ev as it comes).
	meter *meter
	// mu guards what groups trained at once share: Fit's done map and
	// counts, and groups and spent.
	mu       sync.Mutex
	groups   int // groups trained so far
	spent    time.Duration
	examples int64   // training examples of the groups trained (steps run in this call × rows per step, every model)
	probeS   float64 // the groups' time predicting the model attack's training rows
}

// executors returns the n executors groups train on at once: exec alone
// (n ≤ 1), or exec and n−1 more of the same backend sharing the cores
// through a model.CoreShare (the caller closes the others). An injected
// executor (tests) serves every slot itself. With several, the fitter's
// events are serialized and its progress merged.
func (f *fitter) executors(exec executor, n int) ([]executor, error) {
	execs := []executor{exec}
	if n <= 1 {
		return execs, nil
	}
	f.ev = &syncEvents{ev: f.ev}
	f.board = &progressBoard{ev: f.ev, out: f.progress, slots: n}
	me, ok := exec.(*modelExecutor)
	if !ok {
		for len(execs) < n {
			execs = append(execs, exec)
		}
		return execs, nil
	}
	share := model.NewCoreShare(0)
	me.share = share
	for len(execs) < n {
		more, err := newModelExecutor(f.s.cfg.Backend)
		if err != nil {
			for _, e := range execs[1:] {
				e.(*modelExecutor).Close()
			}
			return nil, err
		}
		more.share = share
		execs = append(execs, more)
	}
	f.ev.Info("fit", fmt.Sprintf("training %d groups at once, each on its share of the %d cores (train.concurrent_groups)",
		n, runtime.GOMAXPROCS(0)))
	return execs, nil
}

// each calls fn for the groups in order, one at a time with one executor;
// with several, each executor's goroutine takes the next group when it is
// free. The first error stops the others (their groups checkpoint, as on
// an interruption) and is returned.
func (f *fitter) each(ctx context.Context, execs []executor, gs []*runGroup, fn func(context.Context, executor, *runGroup) error) error {
	f.meter = startMeter(f.ev, f.s.clock, Progress{Stage: "fit", What: "starting", Units: len(gs)})
	defer func() { f.meter.Stop(); f.meter = nil }()
	if len(execs) == 1 {
		for _, g := range gs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(ctx, execs[0], g); err != nil {
				return err
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *runGroup)
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for _, exec := range execs {
		wg.Go(func() {
			for g := range next {
				if err := fn(ctx, exec, g); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		})
	}
feed:
	for _, g := range gs {
		select {
		case next <- g:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// groupLockPoll is how often a process waiting for another's group checks
// the lock (flock's blocking wait cannot be interrupted).
var groupLockPoll = 2 * time.Second

// lockGroup takes g's group lock. Held by another process, it returns nil
// (saying so) when wait is false, else polls until the lock is free or ctx
// is done.
func (f *fitter) lockGroup(ctx context.Context, g *runGroup, wait bool) (*flock.Lock, error) {
	path := f.st.GroupLockPath(groupID(g.Runs))
	said := false
	for {
		l, err := flock.Acquire(path, flock.Exclusive, false, "train fit: "+g.Name())
		var held *flock.HeldError
		if !errors.As(err, &held) {
			return l, err
		}
		who := strings.Join(held.Holders, "; ")
		if who == "" {
			who = "another process"
		}
		if !wait {
			f.s.ev.Info("fit", fmt.Sprintf("%s is being trained by %s: coming back to it after the others", g.Name(), who))
			return nil, nil
		}
		if !said {
			f.s.ev.Info("fit", fmt.Sprintf("waiting for %s to finish %s", who, g.Name()))
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(groupLockPoll):
		}
	}
}

// unlockGroup releases g's group lock and removes its file, whether the
// group finished, failed or was interrupted (the file says nothing once
// released: the results and failure records do), then the folder of group
// locks if no other group's lock is in it. A process waiting for the lock
// opens a new file (flock.Acquire), then re-reads the results before
// training.
func (f *fitter) unlockGroup(l *flock.Lock) {
	if err := l.ReleaseAndRemove(); err != nil {
		f.ev.Warn("fit", err.Error())
	}
	os.Remove(f.st.LocksDir()) // only when empty
}

// refresh re-reads the results of g's runs not yet done (another process
// may have stored them since Fit looked) and returns the runs still
// pending (nil: none) and how many were found finished.
func (f *fitter) refresh(g *runGroup, done map[string]*report.Run) ([]*runSpec, int, error) {
	var pending []*runSpec
	found := 0
	for _, r := range g.Runs {
		if done[r.ID] != nil {
			continue
		}
		res, err := f.st.Result(r.ID)
		var d *store.DamagedRecordError
		if errors.As(err, &d) {
			res, err = nil, nil // trained again; Put replaces the record
		}
		if err != nil {
			return nil, found, err
		}
		if res != nil {
			done[r.ID] = res
			found++
			continue
		}
		pending = append(pending, r)
	}
	return pending, found, nil
}

// progress reports a group's progress: through the fit's meter while
// each runs the groups (its heartbeat repeats the last report while a
// group compiles or checkpoints), else straight to the events.
func (f *fitter) progress(p Progress) {
	if f.meter != nil {
		f.meter.Set(p)
		return
	}
	f.ev.Progress(p)
}
