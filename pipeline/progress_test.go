package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pets"
)

// fakeClock is a Clock that moves step at every reading (a stage's work
// then "takes" step per report it considers) and ticks only when the test
// sends on tick.
type fakeClock struct {
	mu   sync.Mutex
	t    time.Time
	step time.Duration
	tick chan time.Time
}

func newFakeClock(step time.Duration) *fakeClock {
	return &fakeClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), step: step, tick: make(chan time.Time)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.step)
	return c.t
}

func (c *fakeClock) Tick(time.Duration) (<-chan time.Time, func()) { return c.tick, func() {} }

// clockedRecorder records a stage's progress reports on a fake clock
// (Clocked), and hands them to got when set.
type clockedRecorder struct {
	recorder
	clock *fakeClock
	mu    sync.Mutex
	prog  []Progress
	got   chan Progress
}

func (r *clockedRecorder) Clock() Clock { return r.clock }

func (r *clockedRecorder) Progress(p Progress) {
	r.mu.Lock()
	r.prog = append(r.prog, p)
	r.mu.Unlock()
	if r.got != nil {
		r.got <- p
	}
}

// A meter reports on its heartbeat when its work does not move (one unit
// that takes minutes): with no Done at all, a tick sends the report, its
// counts and what the stage does; after Stop nothing is sent.
func TestMeterHeartbeat(t *testing.T) {
	clk := newFakeClock(0)
	rec := &clockedRecorder{clock: clk, got: make(chan Progress, 8)}
	m := startMeter(rec, clk, Progress{Stage: "audit", What: "llp_k8", Units: 3})
	if p := <-rec.got; p.What != "llp_k8" || p.Units != 3 {
		t.Fatalf("the start's report: %+v", p)
	}
	m.Pass("bags", 1250)
	if p := <-rec.got; p.Of != "bags" || p.Total != 1250 || p.Done != 0 {
		t.Fatalf("the pass's report: %+v", p)
	}
	m.Done(7) // the fake clock has not moved: too soon to report
	select {
	case p := <-rec.got:
		t.Fatalf("reported %+v within meterSendEvery", p)
	default:
	}
	for range 3 { // a unit that takes long: only the heartbeat speaks
		clk.tick <- time.Time{}
		if p := <-rec.got; p.Stage != "audit" || p.What != "llp_k8" || p.Done != 7 || p.Total != 1250 {
			t.Fatalf("heartbeat report %+v", p)
		}
	}
	m.Stop()
	m.Done(100)
	if len(rec.got) != 0 {
		t.Fatalf("a report after Stop: %+v", <-rec.got)
	}
}

// The audit stage tells its progress per setting and pass (the exact
// pass's bags or examples, the realized attack's releases, the canary
// rounds), each pass's count rising to its total, on the session's clock.
func TestAuditReportsProgress(t *testing.T) {
	c := auditConfig(t)
	c.Audit.RealizedDraws, c.Audit.Canaries = 4, 500
	rec := &clockedRecorder{clock: newFakeClock(time.Second)}
	s, err := Open(context.Background(), c, Exclusive, rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := Audit(context.Background(), s, nil); err != nil {
		t.Fatal(err)
	}
	type key struct{ setting, of string }
	last := map[key]Progress{}
	var order []key
	for _, p := range rec.prog {
		if p.Stage != "audit" || p.Of == "" {
			continue
		}
		k := key{p.What, p.Of}
		if prev, ok := last[k]; ok && p.Done < prev.Done && p.Of != "canary releases" {
			t.Errorf("%s %s: %d after %d", p.What, p.Of, p.Done, prev.Done)
		}
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = p
		if p.Units != 4 || p.UnitsDone < 0 || p.UnitsDone >= 4 {
			t.Errorf("%s: setting %d of %d", p.What, p.UnitsDone, p.Units)
		}
	}
	want := map[string][]string{"rr_eps1": {"examples", "releases", "canary releases"}, "llp_k8": {"bags", "releases", "canary releases"},
		"llp_geom_k8_eps1": {"bags", "releases", "canary releases"}, "bot": {"examples", "releases"}}
	for setting, passes := range want {
		for _, of := range passes {
			p, ok := last[key{setting, of}]
			if !ok {
				t.Errorf("%s: no %q pass reported (passes %v)", setting, of, order)
				continue
			}
			if p.Done != p.Total || p.Total == 0 {
				t.Errorf("%s %s: the last report says %d of %d", setting, of, p.Done, p.Total)
			}
		}
	}
	if p := last[key{"llp_k8", "bags"}]; p.Total != 5000/8 {
		t.Errorf("llp_k8: %d bags, want %d", p.Total, 5000/8)
	}
	if p := last[key{"rr_eps1", "releases"}]; p.Total != 4 || !strings.Contains(p.String(), "releases 4/4") {
		t.Errorf("rr_eps1's releases: %+v: %s", p, p.String())
	}
}

// The other long stages report through meters too: privatize its steps
// and the rows keyed to their people, the report the figures it drew, an
// import its position in the input (the bar's fraction), each to 100%.
func TestStagesReportProgress(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 3000, TestRows: 10, Features: 3, Seed: 5, Out: ds}); err != nil {
		t.Fatal(err)
	}
	csvPath := filepath.Join(dir, "HIGGS.csv")
	var csv strings.Builder
	for i := range 400 {
		fmt.Fprintf(&csv, "%d", i%2)
		for j := range 28 {
			fmt.Fprintf(&csv, ",%g", float64(i*j%17)/7)
		}
		csv.WriteByte('\n')
	}
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	auditOut := auditConfig(t)
	auditOut.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}}
	auditOut.Audit.Canaries = 0
	cases := []struct {
		name, stage string
		run         func(Events) error
		check       func(t *testing.T, ps []Progress)
	}{
		{"privatize", "privatize", func(ev Events) error {
			_, err := Privatize(PrivatizeOptions{In: filepath.Join(ds, data.TrainFile), Out: filepath.Join(dir, "ship", "r.arrow"),
				Params: pets.Params{Kind: pets.RR, Epsilon: 1}, Ledger: filepath.Join(dir, "ledger", ledger.File), Events: ev})
			return err
		}, func(t *testing.T, ps []Progress) {
			var whats []string
			rows := int64(0)
			for _, p := range ps {
				whats = append(whats, p.What)
				if p.Of == "rows" {
					rows = max(rows, p.Done)
				}
			}
			w := strings.Join(whats, "\n")
			for _, want := range []string{"reading ", "releasing the labels through rr(ε=1)", "keying rows to their people", "writing "} {
				if !strings.Contains(w, want) {
					t.Errorf("no step %q among %q", want, whats)
				}
			}
			if rows != 3000 {
				t.Errorf("%d of 3000 rows keyed", rows)
			}
		}},
		{"report", "report", func(ev Events) error {
			s, err := Open(context.Background(), auditOut, Exclusive, ev)
			if err != nil {
				return err
			}
			defer s.Close()
			a, err := Audit(context.Background(), s, nil)
			if err != nil {
				return err
			}
			_, err = Report(s, nil, a)
			return err
		}, func(t *testing.T, ps []Progress) {
			figs := int64(0)
			for _, p := range ps {
				if p.Of == "figures" {
					figs = max(figs, p.Done)
				}
			}
			pngs, _ := filepath.Glob(filepath.Join(auditOut.Output, "figures", "*.png"))
			if figs == 0 || figs != int64(len(pngs)) {
				t.Errorf("%d figures reported, %d drawn", figs, len(pngs))
			}
		}},
		{"import", "import", func(ev Events) error {
			o := NewDatasetOptions("higgs")
			o.Import.In, o.Import.Out, o.Import.TestRows = csvPath, filepath.Join(dir, "higgs"), 100
			_, err := MakeDataset(context.Background(), o, ev)
			return err
		}, func(t *testing.T, ps []Progress) {
			if f, ok := ps[len(ps)-1].Fraction(); !ok || f != 1 {
				t.Errorf("the import's last report is at %v (%v) of its input", f, ok)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &clockedRecorder{clock: newFakeClock(time.Second)}
			if err := tc.run(rec); err != nil {
				t.Fatal(err)
			}
			var ps []Progress
			for _, p := range rec.prog {
				if p.Stage == tc.stage {
					ps = append(ps, p)
				}
			}
			if len(ps) == 0 {
				t.Fatalf("no %s progress among %d reports", tc.stage, len(rec.prog))
			}
			tc.check(t, ps)
		})
	}
}
