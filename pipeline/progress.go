package pipeline

import (
	"sync"
	"sync/atomic"
	"time"
)

// Every long stage reports through a meter: the work counts what it has
// done (from any goroutine, an atomic add) or sets what it is doing, and
// the meter sends Progress to the Events at most every meterSendEvery on
// a count (every report a stage sets itself, every new unit) and, while the stage runs,
// at least every meterHeartbeat even when nothing moved (a bag of C classes that takes minutes, a blocking
// read). What a person sees of it is the Events' choice: the console draws
// a bar on a terminal and writes a line a minute in a log.

// Clock is the time progress reports are made with: when a report is due,
// how long work took. The stages take it from their Events when those
// implement Clocked (tests pass a fake one that moves only when told);
// otherwise it is the wall clock.
type Clock interface {
	Now() time.Time
	// Tick returns a channel that receives every d, and stops it.
	Tick(d time.Duration) (c <-chan time.Time, stop func())
}

// Clocked is an Events that sets the stages' Clock.
type Clocked interface {
	Clock() Clock
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Tick(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// clockOf is ev's Clock (Clocked), else the wall clock.
func clockOf(ev Events) Clock {
	if c, ok := ev.(Clocked); ok && c.Clock() != nil {
		return c.Clock()
	}
	return wallClock{}
}

const (
	// meterSendEvery is the least time between two reports of a meter on
	// a change (a terminal's bar moves at most 10 times a second).
	meterSendEvery = 100 * time.Millisecond
	// meterHeartbeat is the most time between two reports of a running
	// meter: a log's line a minute never waits on the work.
	meterHeartbeat = time.Second
)

// meter reports one long stage's progress. Its report is a Progress whose
// Done of Total counts the units of the current pass (Pass: bags,
// releases, rows, figures), with an ETA from the pass's rate (a named
// pass's: Of set, no ETA of the stage's own), and whose
// other fields the stage sets (Set). Done is safe from any goroutine;
// the others are the stage's own. ev must be safe for concurrent use (a
// meter's heartbeat reports from its own goroutine): Session.ev is.
type meter struct {
	ev    Events
	clock Clock
	done  atomic.Int64

	// lastSent is the time of the last report (Unix ns): a Done too soon
	// after it returns without taking mu (workers call Done per unit).
	lastSent atomic.Int64

	mu        sync.Mutex
	p         Progress
	passStart time.Time
	stopped   bool

	stopTick func()
	quit     chan struct{}
	wg       sync.WaitGroup
}

// startMeter starts reporting p (its Stage and What; Units and UnitsDone
// for a stage of several units) until Stop.
func startMeter(ev Events, clock Clock, p Progress) *meter {
	m := &meter{ev: ev, clock: clock, p: p, quit: make(chan struct{})}
	m.passStart = clock.Now()
	tick, stop := clock.Tick(meterHeartbeat)
	m.stopTick = stop
	m.wg.Add(1)
	m.send(true) // what the stage starts with
	go func() {
		defer m.wg.Done()
		for {
			select {
			case <-tick:
				m.send(true)
			case <-m.quit:
				return
			}
		}
	}()
	return m
}

// Pass starts a pass of total units named of ("bags", "releases"; 0: not
// known): Done counts from 0 again, and the ETA is the pass's. It is
// audit.Progress's Pass.
func (m *meter) Pass(of string, total int) {
	m.mu.Lock()
	m.p.Of, m.p.Total, m.p.Done = of, int64(total), 0
	m.done.Store(0)
	m.passStart = m.clock.Now()
	m.mu.Unlock()
	m.send(true)
}

// Done counts n more units of the pass done (any goroutine); it is
// audit.Progress's Done.
func (m *meter) Done(n int) {
	m.done.Add(int64(n))
	m.send(false)
}

// Set replaces the report by p, from a stage that keeps its own counts
// (fit's steps and ETA, an import's bytes read of its input's) and paces
// its own reports: each is sent, as the stage made it.
func (m *meter) Set(p Progress) {
	m.mu.Lock()
	m.p = p
	m.done.Store(p.Done)
	m.mu.Unlock()
	m.send(true)
}

// Unit moves the stage to its unit i (e.g. the i-th setting, 0-based) of
// Units and names it.
func (m *meter) Unit(what string, i int) {
	m.mu.Lock()
	m.p.What, m.p.UnitsDone = what, i
	m.mu.Unlock()
	m.send(true)
}

// unit is the stage's unit and count of them.
func (m *meter) unit() (i, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.p.UnitsDone, m.p.Units
}

// send reports the meter's progress when due: always (a heartbeat or a
// new pass), else when meterSendEvery has passed since the last report.
func (m *meter) send(always bool) {
	now := m.clock.Now()
	if !always && now.UnixNano()-m.lastSent.Load() < int64(meterSendEvery) {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped || !always && now.UnixNano()-m.lastSent.Load() < int64(meterSendEvery) {
		return
	}
	m.lastSent.Store(now.UnixNano())
	p := m.p
	p.Done = m.done.Load()
	if p.Total > 0 {
		p.Done = min(p.Done, p.Total)
		if el := now.Sub(m.passStart); p.Of != "" && p.ETA == 0 && p.Done > 0 && el > 0 {
			p.ETA = time.Duration(float64(el) * float64(p.Total-p.Done) / float64(p.Done))
		}
	}
	m.ev.Progress(p)
}

// Stop ends the meter's reports (a report being sent completes first).
func (m *meter) Stop() {
	m.mu.Lock()
	m.stopped = true
	m.mu.Unlock()
	close(m.quit)
	m.stopTick()
	m.wg.Wait()
}

// startMeter starts a meter of the session's stage p.
func (s *Session) startMeter(p Progress) *meter { return startMeter(s.ev, s.clock, p) }

// taggedPasses is a meter seen as an audit.Progress whose passes are
// named with tag: the exact audits of a setting under another η ("bags
// (calibrated η)").
type taggedPasses struct {
	m   *meter
	tag string
}

func (t taggedPasses) Pass(of string, units int) { t.m.Pass(of+" ("+t.tag+")", units) }
func (t taggedPasses) Done(n int)                { t.m.Done(n) }

// releaseProgress reports p, a release's own progress (rr_prior's prior
// model training), through the releases' meter when one runs.
func (s *Session) releaseProgress(p Progress) {
	if m := s.releaseMeter.Load(); m != nil {
		p.UnitsDone, p.Units = m.unit()
		m.Set(p)
		return
	}
	s.ev.Progress(p)
}
