package pipeline

import (
	"context"
	"errors"
	"fmt"
)

// releaseQueue makes a fit's later releases on a goroutine while its first
// groups train: the releases are CPU and disk work (~45 ms a release of 1M
// rows on one core, most of it the ledger's), which a device's host would
// otherwise do before the device trains its first step (at the paper's
// Higgs grid, ~2,200 releases of 11M rows). Groups wait (wait) for the
// releases they read. The releases, their ledger rows and their order are
// those makeReleases makes up front.
type releaseQueue struct {
	ready map[string]chan struct{} // by release path: closed once it is current on disk
	end   chan struct{}            // closed when the goroutine has returned
	err   error                    // why it stopped early (read after end)
	n     releaseCount             // what it wrote and reused (read after end)

	cancel context.CancelFunc
}

// splitReleases divides the releases of runs (releaseReaders) between
// those made before training (now) and those a releaseQueue makes while
// groups train (later, in the order groups read them): later holds the
// releases read only by groups after the first `first` of todo (their
// order of training), and never rr_prior's, whose prior model trains on
// the fit's executor. Everything is made now under privacy.budget, which
// must refuse a release before any model trains.
func (s *Session) splitReleases(runs []*runSpec, todo []*runGroup, first int) (now, later []releaseUnit) {
	units := releaseUnits(runs)
	if s.cfg.Privacy.Budget > 0 || len(todo) <= first {
		return units, nil
	}
	firstRead := map[string]int{} // release path → the first todo group reading it
	for j, g := range todo {
		for _, r := range g.Runs {
			if _, ok := firstRead[r.Plan.Release]; !ok && r.Plan.Release != "" {
				firstRead[r.Plan.Release] = j
			}
		}
	}
	byGroup := make([][]releaseUnit, len(todo))
	for _, u := range units {
		j, ok := firstRead[u.path]
		if !ok || j < first || u.s.Kind.Spec().Release.WithPrior() {
			now = append(now, u)
			continue
		}
		byGroup[j] = append(byGroup[j], u)
	}
	for _, us := range byGroup {
		later = append(later, us...)
	}
	return now, later
}

// queueReleases starts making units on a goroutine (nil: none to make);
// close waits for it. It forgets the session's person keys when done.
func (s *Session) queueReleases(ctx context.Context, units []releaseUnit) *releaseQueue {
	if len(units) == 0 {
		return nil
	}
	q := &releaseQueue{ready: map[string]chan struct{}{}, end: make(chan struct{})}
	for _, u := range units {
		q.ready[u.path] = make(chan struct{})
	}
	ctx, q.cancel = context.WithCancel(ctx)
	go func() {
		defer close(q.end)
		defer func() { s.peopleSorted = nil }()
		closed := map[string]bool{}
		q.n, q.err = s.makeUnits(ctx, units, nil, func(u releaseUnit) {
			if !closed[u.path] {
				closed[u.path] = true
				close(q.ready[u.path])
			}
		})
	}()
	return q
}

// wait returns once the releases runs read are made, or the error that
// stopped the queue before it made one of them, or ctx's.
func (q *releaseQueue) wait(ctx context.Context, runs []*runSpec) error {
	if q == nil {
		return nil
	}
	for _, r := range runs {
		ch := q.ready[r.Plan.Release]
		if ch == nil {
			continue
		}
		select {
		case <-ch:
			continue
		case <-q.end:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case <-ch:
		default:
			err := q.err
			if err == nil {
				err = fmt.Errorf("release %s was not made", r.Plan.Release)
			}
			return fmt.Errorf("%w: %w", errReleases, err)
		}
	}
	return nil
}

// close waits for the goroutine. With cancel it first stops what is left
// to make (the release being published is finished or aborted) and
// returns nil; without, it waits for every release and returns the error
// that stopped the queue, if any. Closing twice is harmless.
func (q *releaseQueue) close(cancel bool) error {
	if q == nil {
		return nil
	}
	if cancel {
		q.cancel()
	}
	<-q.end
	q.cancel() // frees the context
	if cancel || q.err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", errReleases, q.err)
}

// errReleases marks a fit stopped by a release made while groups trained:
// never a failure of the runs that waited for it (sweeps record those and
// go on), but of the stage.
var errReleases = errors.New("fit: making releases while groups trained")
