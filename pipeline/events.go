package pipeline

import (
	"fmt"
	"time"
)

// Events receives what the pipeline has to tell its user; the pipeline
// itself never prints. The CLI prints Info lines to stdout, Warn lines to
// stderr and Progress as a transient status line on a terminal. A nil
// Events discards everything.
type Events interface {
	// Info is a line of normal output, e.g. "fit: [3/20] rr_eps1 lr=0.001
	// trial=0  test AUC 0.8412 …" under stage "fit".
	Info(stage, msg string)
	// Warn is something the user should act on or know (a notice printed at
	// start, a resumed checkpoint, a set-aside file).
	Warn(stage, msg string)
	// Error is a failure the stage went on past (a failed group of a
	// sweep, recorded in runs/<id>.failed.json).
	Error(stage, msg string)
	// Progress reports long work; frequent, and safe to drop.
	Progress(p Progress)
}

// Progress is one progress report of a long stage.
type Progress struct {
	Stage string // "fit", "release", "audit"
	What  string // e.g. the group being trained
	// Epoch, Epochs, Step and Steps locate the work within the current unit
	// (a group's training); Steps 0 when unknown.
	Epoch, Epochs int
	Step, Steps   int64
	ExamplesPerS  float64
	Loss          float64 // NaN when not known
	ETA           time.Duration
	// UnitsDone of Units (groups of the sweep), and the ETA of all of them.
	UnitsDone, Units int
	TotalETA         time.Duration
}

type discard struct{}

func (discard) Info(string, string)  {}
func (discard) Warn(string, string)  {}
func (discard) Error(string, string) {}
func (discard) Progress(Progress)    {}

func orDiscard(e Events) Events {
	if e == nil {
		return discard{}
	}
	return e
}

// count formats n with its unit, singular for 1: "1 figure", "3 figures".
func count(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
