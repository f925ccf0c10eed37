package console

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/pets"
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

// fakeClock moves step at every reading and never ticks: a stage's work
// then takes step per report it considers, whatever the machine's speed.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *fakeClock) Tick(time.Duration) (<-chan time.Time, func()) { return nil, func() {} }

// A long stage talks in a log: the audit, driven past many minutes by a
// fake clock (a second per reading), writes a progress line every minute
// (never more than a minute and a few readings apart), each naming the
// setting and its bags or releases done of all, stamped with the clock's
// time.
func TestLongStageTalksInALog(t *testing.T) {
	c := config.Defaults()
	c.Name, c.Output = "log", filepath.Join(t.TempDir(), "out")
	c.Data.Synth.Kind, c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Data.Synth.Features = data.SynthUniform, 300, 5000, 4
	c.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{8}}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.CalibrationRows, c.Audit.RealizedDraws, c.Audit.Canaries = config.EtaTrue, 4000, 0, 4, 300
	var out, log strings.Builder
	ev := New(&out, &log)
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ev.SetClock(&fakeClock{t: start, step: time.Second})
	if err := pipeline.Run(context.Background(), &c, ev, pipeline.StageAudit); err != nil {
		t.Fatal(err)
	}
	var stamps []time.Time
	var lines []string
	for _, l := range strings.Split(log.String(), "\n") {
		ts, rest, ok := strings.Cut(l, " progress: ")
		if !ok {
			continue
		}
		at, err := time.Parse(time.RFC3339, ts)
		if err != nil {
			t.Fatalf("progress line %q: %v", l, err)
		}
		stamps, lines = append(stamps, at), append(lines, rest)
	}
	if len(stamps) < 5 {
		t.Fatalf("%d progress lines in the log, want one a minute of a stage that ran past 5 fake minutes:\n%s", len(stamps), log.String())
	}
	prev := start
	for i, at := range stamps {
		if gap := at.Sub(prev); gap < time.Minute || gap > time.Minute+5*time.Second {
			t.Errorf("line %d comes %v after the previous one, want a minute: %q", i, gap, lines[i])
		}
		prev = at
	}
	counted := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "audit llp_k8: bags ") || strings.HasPrefix(l, "audit rr_eps1: examples ") ||
			strings.Contains(l, ": releases ") || strings.Contains(l, ": canary releases ") {
			counted++
		}
		if strings.Contains(l, "\r") || strings.Contains(l, "█") {
			t.Errorf("a log line with terminal drawing: %q", l)
		}
	}
	if counted == 0 {
		t.Errorf("no line counts bags, examples or releases done of all:\n%s", strings.Join(lines, "\n"))
	}
}

// On a terminal the status line starts with a bar of the work's fraction.
func TestProgressBar(t *testing.T) {
	for _, tc := range []struct {
		frac float64
		want string
	}{
		{0, "[░░░░░░░░░░░░░░░░░░░░]   0%"},
		{0.3, "[██████░░░░░░░░░░░░░░]  30%"},
		{1, "[████████████████████] 100%"},
		{1.7, "[████████████████████] 100%"},
	} {
		if got := bar(tc.frac); got != tc.want {
			t.Errorf("bar(%v) = %q, want %q", tc.frac, got, tc.want)
		}
	}
	var w strings.Builder
	s := NewStatus(&w)
	s.fd = 1 << 20 // drawn as on a terminal (its width unknown: not cut)
	s.last = s.start.Add(-time.Second)
	p := pipeline.Progress{Stage: "audit", What: "llp_k8", Of: "bags", Done: 300, Total: 1000, Units: 3, UnitsDone: 1}
	f, ok := p.Fraction()
	s.Show(p.String(), f, ok)
	if got := w.String(); !strings.HasPrefix(got, "\r\033[K[██████░░░░░░░░░░░░░░]  30% audit llp_k8: bags 300/1000 (30%)") {
		t.Fatalf("status line %q", got)
	}
}
