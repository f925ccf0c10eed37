package pipeline

import (
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"time"

	"labelprivacy/internal/memctl"
)

// Groups trained at once: how many (concurrentGroups), events that stay
// whole lines (syncEvents) and one progress line for all of them
// (progressBoard). Fit schedules them (fitter.each).

// concurrentGroups resolves train.concurrent_groups for a fit with todo
// groups to train: on an XLA backend 1 (one client holds the device; a
// device trains more models per group instead, train.replicas); else a
// number as given (at most todo); auto is 1 with an injected executor
// (tests), else as many as GOMAXPROCS, at most todo, and no more than half
// the available memory holds (groupBytes each).
func (s *Session) concurrentGroups(todo int, injected bool) int {
	c := s.cfg.Train.ConcurrentGroups
	if !s.cfg.Backend.IsGo() {
		return 1
	}
	n := c.N
	if c.Auto() {
		if injected {
			return 1
		}
		n = runtime.GOMAXPROCS(0)
		if avail, ok := memctl.Available(); ok {
			if per := s.groupBytes(); per > 0 {
				n = min(n, int(math.Max(1, float64(avail)/(2*per))))
			}
		}
	}
	return max(1, min(n, todo))
}

// groupBytes estimates what one more group training at once holds: its
// models' parameters, Adam moments and activations as backend go holds them
// (model.Footprint.GoBytes: 12.5 copies of the dense parameters, measured;
// groups train at once on backend go only), a
// batch source per model (8 bytes a row: order and target) and one release
// read back (at most 26 bytes a row: bag id, proportions, row number and
// label).
func (s *Session) groupBytes() float64 {
	mc, err := s.modelConfig()
	if err != nil {
		return 0
	}
	if mc, err = mc.WithDefaults(); err != nil {
		return 0
	}
	r := max(s.cfg.Train.Replicas.N, 1)
	rows := float64(s.train.Rows)
	return mc.Footprint(r, s.cfg.Train.BatchSize).GoBytes() + rows*(8*float64(r)+26)
}

// syncEvents serializes a session's events for groups trained at once
// (Events implementations need not be safe for concurrent use).
type syncEvents struct {
	mu sync.Mutex
	ev Events
}

func (e *syncEvents) Info(stage, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Info(stage, msg)
}

func (e *syncEvents) Warn(stage, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Warn(stage, msg)
}

func (e *syncEvents) Error(stage, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Error(stage, msg)
}

func (e *syncEvents) Progress(p Progress) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ev.Progress(p)
}

// progressBoard merges the progress of the groups training at once into
// one report, so that a terminal's status line (or a log's progress line)
// shows all of them rather than flickering between them: "fit 2 groups at
// once: rr_eps1 lr=0.001 trial=0 41%; llp_k8 … 12%", their examples/s
// summed, the longest ETA, and the stage's counts.
type progressBoard struct {
	ev    Events
	out   func(Progress) // where the merged report goes (nil: ev)
	slots int            // groups at most at once
	mu    sync.Mutex
	order []*runGroup // running, by start
	last  map[*runGroup]Progress
}

// show records g's progress p and reports the merged line.
func (b *progressBoard) show(g *runGroup, p Progress) {
	b.mu.Lock()
	if b.last == nil {
		b.last = map[*runGroup]Progress{}
	}
	if _, ok := b.last[g]; !ok {
		b.order = append(b.order, g)
	}
	b.last[g] = p
	merged := b.merged(p)
	b.mu.Unlock()
	if b.out != nil {
		b.out(merged)
		return
	}
	b.ev.Progress(merged)
}

// done forgets g (finished or failed).
func (b *progressBoard) done(g *runGroup) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.last, g)
	for i, o := range b.order {
		if o == g {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
}

// merged is the report of every running group; counts and total ETA come
// from latest, the report just received (b.mu held).
func (b *progressBoard) merged(latest Progress) Progress {
	if len(b.order) == 1 {
		return latest
	}
	out := Progress{Stage: latest.Stage, Loss: math.NaN(), UnitsDone: latest.UnitsDone, Units: latest.Units}
	var parts []string
	var eta time.Duration
	for _, g := range b.order {
		p := b.last[g]
		pct := 0.0
		if p.Steps > 0 {
			pct = 100 * float64(p.Step) / float64(p.Steps)
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%%", p.What, pct))
		out.ExamplesPerS += p.ExamplesPerS
		eta = max(eta, p.ETA)
	}
	out.What = fmt.Sprintf("%d groups at once: %s", len(b.order), strings.Join(parts, "; "))
	out.ETA = eta
	if latest.TotalETA > 0 {
		out.TotalETA = latest.TotalETA - latest.ETA + eta
	}
	return out
}
