package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progress prints a one-line, rate-limited status on a terminal and nothing
// otherwise (batch jobs keep clean logs).
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	now := time.Now()
	return &progress{w: w, tty: tty, start: now, last: now}
}

// update shows format (with args) plus the elapsed time, at most 10×/s.
func (p *progress) update(format string, args ...any) {
	if !p.tty || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\033[K"+format+"  [%s]", append(args, time.Since(p.start).Round(time.Second))...)
}

// done clears the status line.
func (p *progress) done() {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
