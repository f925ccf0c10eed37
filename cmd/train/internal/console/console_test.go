package console

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"labelprivacy/pipeline"
)

// A progress line is cut to the terminal's width (a wrapped line would
// leave stale copies behind on every redraw) and says the epoch, step,
// ex/s and the ETAs of the group and of the sweep.
func TestProgressLine(t *testing.T) {
	p := pipeline.Progress{Stage: "fit", What: "8 models of rr_eps1,rr_eps2", Epoch: 2, Epochs: 4, Step: 120, Steps: 480,
		ExamplesPerS: 41234, Loss: 0.4321, ETA: 95 * time.Second, UnitsDone: 3, Units: 20, TotalETA: 3 * time.Hour}
	line := p.String()
	for _, want := range []string{"epoch 2/4", "step 120/480", "41234 ex/s", "ETA 1m35s", "3/20 done", "all ETA 3h0m0s"} {
		if !strings.Contains(line, want) {
			t.Fatalf("%q lacks %q", line, want)
		}
	}
	for _, w := range []int{10, 40, len(line) + 5} {
		got := truncateRunes(line, w)
		if n := utf8.RuneCountInString(got); n > w {
			t.Fatalf("width %d: %d runes", w, n)
		}
		if w < utf8.RuneCountInString(line) && !strings.HasSuffix(got, "…") {
			t.Fatalf("width %d: a cut line should end in …: %q", w, got)
		}
	}
	if got := truncateRunes("εεεεε", 3); got != "εε…" {
		t.Fatalf("cut by runes, not bytes: %q", got)
	}
}

// In a log (stderr not a terminal, e.g. Slurm's), progress is a plain line
// at most once a minute: a job is seen to move, the log stays readable.
// Failures are printed as errors, notes as notes.
func TestProgressInLogs(t *testing.T) {
	var buf strings.Builder
	ev := New(&strings.Builder{}, &buf)
	clock := ev.status.start
	ev.status.now = func() time.Time { return clock }
	p := pipeline.Progress{Stage: "fit", What: "g", Step: 1}
	for i := range 600 { // 10 minutes, one report a second
		clock = ev.status.start.Add(time.Duration(i) * time.Second)
		ev.Progress(p)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	first := ev.status.start.Add(time.Minute).Format(time.RFC3339) + " progress: fit g step 1  [1m0s]"
	if len(lines) != 9 || !strings.HasPrefix(lines[0], first) || strings.Contains(buf.String(), "\r") {
		t.Fatalf("%d lines in 10 minutes, want 9 (one a minute after the first):\n%s", len(lines), buf.String())
	}
	buf.Reset()
	ev.Error("fit", "2 models of rr_eps1: device on fire")
	ev.Warn("fit", "resumed")
	// Every line of a log starts with its time (ISO 8601).
	ts := clock.Format(time.RFC3339)
	if got := buf.String(); got != ts+" fit: error: 2 models of rr_eps1: device on fire\n"+ts+" fit: note: resumed\n" {
		t.Fatalf("%q", got)
	}
	var out strings.Builder
	ev.stdout = &out
	ev.Info("fit", "done")
	if got := out.String(); got != ts+" fit: done\n" {
		t.Fatalf("info line in a log: %q", got)
	}
	if _, err := time.Parse(time.RFC3339, strings.Fields(out.String())[0]); err != nil {
		t.Fatalf("the stamp is not RFC 3339: %v", err)
	}
	ev.stampOut = false // a terminal: no stamp
	out.Reset()
	ev.Info("fit", "done")
	if out.String() != "fit: done\n" {
		t.Fatalf("info line on a terminal: %q", out.String())
	}
}
