// Package console prints the pipeline's events for a person: a terminal
// (one rate-limited status line cut to its width) or a batch job's log
// (plain lines, each stamped with its time). The train command uses it;
// a library caller may pass its own pipeline.Events.
package console

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"labelprivacy/pipeline"
)

// Events prints the pipeline's events: Info to stdout, Warn and Error to
// stderr, Progress as one rate-limited status line with a progress bar on
// a terminal (cut to its width so it never wraps into stale lines) and, in
// a log (a batch job's stderr), as a plain line once every
// logProgressEvery. A line written to a log rather than a terminal starts
// with its time (ISO 8601, RFC 3339 to the second), so a batch job's log
// says when each stage happened. The stages report at least every second
// while they work (their meters' heartbeat), so a log gets its line every
// minute of a long stage. Its clock is the stages' too (pipeline.Clocked).
type Events struct {
	stdout, stderr io.Writer
	status         *Status
	clock          pipeline.Clock
	// stampOut, stampErr: stdout, stderr are not terminals.
	stampOut, stampErr bool
}

// New prints Info to stdout, the rest to stderr.
func New(stdout, stderr io.Writer) *Events {
	return &Events{stdout: stdout, stderr: stderr, status: NewStatus(stderr), clock: wallClock{},
		stampOut: !isTerminal(stdout), stampErr: !isTerminal(stderr)}
}

// SetClock makes c the time of the lines and of the stages reporting to
// e (tests drive stages past the log's interval with a fake clock).
func (e *Events) SetClock(c pipeline.Clock) {
	e.clock = c
	e.status.mu.Lock()
	e.status.now = c.Now
	e.status.start = c.Now()
	e.status.last = e.status.start
	e.status.mu.Unlock()
}

// Clock is the clock of e's lines, which the stages report with.
func (e *Events) Clock() pipeline.Clock { return e.clock }

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

func (wallClock) Tick(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stamp is the prefix of a log line: its time and a space ("" on a
// terminal).
func (e *Events) stamp(on bool) string {
	if !on {
		return ""
	}
	return e.status.now().Format(time.RFC3339) + " "
}

// Info prints a result line on stdout.
func (e *Events) Info(stage, msg string) {
	e.status.Clear()
	fmt.Fprintf(e.stdout, "%s%s: %s\n", e.stamp(e.stampOut), stage, msg)
}

// Warn prints a note on stderr.
func (e *Events) Warn(stage, msg string) {
	e.status.Clear()
	fmt.Fprintf(e.stderr, "%s%s: note: %s\n", e.stamp(e.stampErr), stage, msg)
}

// Error prints a failure on stderr.
func (e *Events) Error(stage, msg string) {
	e.status.Clear()
	fmt.Fprintf(e.stderr, "%s%s: error: %s\n", e.stamp(e.stampErr), stage, msg)
}

// Progress updates the status line: a bar and the report on a terminal,
// the report in a log.
func (e *Events) Progress(p pipeline.Progress) {
	f, ok := p.Fraction()
	e.status.Show(p.String(), f, ok)
}

// logProgressEvery is how often progress is written as a line where stderr
// is not a terminal (a Slurm or Kubernetes log): often enough to see a job
// move, rarely enough to keep the log readable.
const logProgressEvery = time.Minute

// Status is a one-line, rate-limited status on a terminal, or an
// occasional progress line in a log.
type Status struct {
	mu    sync.Mutex
	w     io.Writer
	fd    int // -1: not a terminal
	now   func() time.Time
	start time.Time
	last  time.Time
	shown bool
}

// NewStatus shows a status on w.
func NewStatus(w io.Writer) *Status {
	s := &Status{w: w, fd: -1, now: time.Now, start: time.Now()}
	s.last = s.start
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		s.fd = int(f.Fd())
	}
	return s
}

// Show prints msg plus the elapsed time: on a terminal at most 10 times a
// second, after a bar of frac (when known, in [0, 1]); in a log as a line
// at most once every logProgressEvery.
func (s *Status) Show(msg string, frac float64, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.fd < 0 {
		if now.Sub(s.last) >= logProgressEvery {
			s.last = now
			fmt.Fprintf(s.w, "%s progress: %s  [%s]\n", now.Format(time.RFC3339), msg, now.Sub(s.start).Round(time.Second))
		}
		return
	}
	if now.Sub(s.last) < 100*time.Millisecond {
		return
	}
	s.last = now
	line := fmt.Sprintf("%s  [%s]", msg, now.Sub(s.start).Round(time.Second))
	if known {
		line = bar(frac) + " " + line
	}
	if w, _, err := term.GetSize(s.fd); err == nil && w > 1 {
		line = truncateRunes(line, w-1)
	}
	fmt.Fprint(s.w, "\r\033[K"+line)
	s.shown = true
}

// Clear removes the status line before ordinary output.
func (s *Status) Clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}

// barWidth is the progress bar's width in cells.
const barWidth = 20

// bar draws frac (clamped to [0, 1]) as a bar of barWidth cells and a
// percentage: "[██████░░░░░░░░░░░░░░]  30%".
func bar(frac float64) string {
	frac = min(1, max(0, frac))
	full := int(frac*barWidth + 0.5)
	return "[" + strings.Repeat("█", full) + strings.Repeat("░", barWidth-full) + "] " + fmt.Sprintf("%3.0f%%", 100*frac)
}

// truncateRunes cuts s to at most n runes (terminal columns, for the text
// this tool prints), ending in "…" when cut.
func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
