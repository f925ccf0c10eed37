package pipeline

import (
	"fmt"
	"math"
	"strings"
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
	// Done of Total units of the current pass (Total 0: not known), named
	// by Of ("bags", "releases", "canary releases", "rows", "figures";
	// "": counts of no unit a person reads, e.g. an import's bytes, shown
	// as a fraction only).
	Done, Total int64
	Of          string
}

// Fraction is how far the current work is, in [0, 1]: Done of Total, else
// Step of Steps, else UnitsDone of Units; ok false when none is known.
func (p Progress) Fraction() (f float64, ok bool) {
	switch {
	case p.Total > 0:
		return math.Min(1, float64(p.Done)/float64(p.Total)), true
	case p.Steps > 0:
		return math.Min(1, float64(p.Step)/float64(p.Steps)), true
	case p.Units > 0:
		return math.Min(1, float64(p.UnitsDone)/float64(p.Units)), true
	}
	return 0, false
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

// String renders a progress report: the unit (epoch, step of
// steps, ex/s, ETA) then the sweep (units done of all, total ETA).
func (p Progress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", p.Stage, p.What)
	if p.Epochs > 0 {
		fmt.Fprintf(&b, ": epoch %d/%d", p.Epoch, p.Epochs)
	}
	if p.Of != "" {
		if p.Total > 0 {
			fmt.Fprintf(&b, ": %s %d/%d (%.0f%%)", p.Of, p.Done, p.Total, 100*float64(p.Done)/float64(p.Total))
		} else {
			fmt.Fprintf(&b, ": %s %d", p.Of, p.Done)
		}
	}
	if p.Step > 0 {
		if p.Steps > 0 {
			fmt.Fprintf(&b, " step %d/%d", p.Step, p.Steps)
		} else {
			fmt.Fprintf(&b, " step %d", p.Step)
		}
	}
	if p.ExamplesPerS > 0 {
		fmt.Fprintf(&b, " %.0f ex/s", p.ExamplesPerS)
	}
	if !math.IsNaN(p.Loss) && p.Loss != 0 {
		fmt.Fprintf(&b, " loss %.4f", p.Loss)
	}
	if p.ETA > 0 {
		fmt.Fprintf(&b, " ETA %s", roundDur(p.ETA))
	}
	if p.Units > 1 {
		fmt.Fprintf(&b, " | %d/%d done", p.UnitsDone, p.Units)
		if p.TotalETA > 0 {
			fmt.Fprintf(&b, ", all ETA %s", roundDur(p.TotalETA))
		}
	}
	return b.String()
}

// roundDur rounds a duration for display: to the second above a minute,
// to 100 ms below.
func roundDur(d time.Duration) time.Duration {
	if d > time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
