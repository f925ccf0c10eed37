package model

import (
	"fmt"
	"math"
	"time"
)

// Progress is one progress report of a group.
type Progress struct {
	Group         string
	Epoch, Epochs int   // epoch of the last step (1-based), epochs in all
	Step, Steps   int64 // steps done (resumed ones included), steps in all
	// ExamplesPerS is the aggregate steady-state rate over all replicas
	// (first step excluded).
	ExamplesPerS float64
	ETA          time.Duration
	Elapsed      time.Duration
	// Losses is each replica's mean training loss over the steps since the
	// previous report (the final report repeats the last ones; nil when a
	// resumed group had nothing left to train).
	Losses []float64
	Done   bool
}

func (p Progress) String() string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, l := range p.Losses {
		lo, hi = min(lo, l), max(hi, l)
	}
	return fmt.Sprintf("%s: epoch %d/%d step %d/%d loss %.4f–%.4f %.0f ex/s ETA %s",
		p.Group, p.Epoch, p.Epochs, p.Step, p.Steps, lo, hi, p.ExamplesPerS, p.ETA.Round(time.Second))
}

// meter times a group's training loop and reports its progress. Its rates
// are steady-state: the first step (compilation, warm-up) and the time the
// loop stood still for checkpoints are left out.
type meter struct {
	group       string
	epochs      int
	spe, total  int64 // steps per epoch, steps in all
	examplesPer int64 // examples of all replicas per step
	progress    func(Progress)

	start    time.Time     // the loop's start
	first    time.Time     // the end of the first step run
	cpuFirst time.Duration // processCPU at first
	stall    time.Duration // checkpoint stalls after the first step
	steps    int64         // steps run
}

func (m *meter) begin() { m.start = time.Now() }

// stepDone counts a step run.
func (m *meter) stepDone() {
	m.steps++
	if m.steps == 1 {
		m.first, m.cpuFirst = time.Now(), processCPU()
	}
}

// stalled records d spent standing still (a checkpoint).
func (m *meter) stalled(d time.Duration) {
	if !m.first.IsZero() {
		m.stall += d
	}
}

// rate is the aggregate steady-state examples/s (0 before the second step).
func (m *meter) rate() float64 {
	if m.first.IsZero() || m.steps < 2 {
		return 0
	}
	el := time.Since(m.first) - m.stall
	return float64((m.steps-1)*m.examplesPer) / el.Seconds()
}

// finalRate is rate at the end; a loop of one step is timed whole.
func (m *meter) finalRate() float64 {
	if m.steps == 1 {
		return float64(m.examplesPer) / time.Since(m.start).Seconds()
	}
	return m.rate()
}

// cpuPerExampleUs is the process's CPU µs per example over the steady
// state (0 before the second step or where CPU time is not measured).
func (m *meter) cpuPerExampleUs() float64 {
	if cpu := processCPU(); m.steps >= 2 && cpu > 0 {
		return (cpu - m.cpuFirst).Seconds() * 1e6 / float64((m.steps-1)*m.examplesPer)
	}
	return 0
}

// steadyState is the steady state's window so far (zero before the second
// step).
func (m *meter) steadyState() steadyState {
	if m.first.IsZero() || m.steps < 2 {
		return steadyState{}
	}
	return steadyState{from: m.first, to: time.Now(), cpuFrom: m.cpuFirst, cpuTo: processCPU(),
		examples: (m.steps - 1) * m.examplesPer}
}

// report calls the progress callback, if any, at step.
func (m *meter) report(step int64, losses []float64, done bool) {
	if m.progress == nil {
		return
	}
	p := Progress{Group: m.group, Epoch: int((max(step, 1)-1)/m.spe) + 1, Epochs: m.epochs, Step: step, Steps: m.total,
		ExamplesPerS: m.rate(), Elapsed: time.Since(m.start), Losses: losses, Done: done}
	if p.ExamplesPerS > 0 {
		p.ETA = time.Duration(float64(m.total-step) * float64(m.examplesPer) / p.ExamplesPerS * float64(time.Second))
	}
	m.progress(p)
}
