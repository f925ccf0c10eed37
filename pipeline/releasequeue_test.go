package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pipeline/internal/store"
)

// checkingExec is fakeExec that first checks every release its group
// reads is on disk, complete (a group never starts before its releases).
type checkingExec struct {
	fakeExec
	missing []string
}

func (e *checkingExec) Execute(ctx context.Context, job *groupJob) ([]outcome, jobStats, error) {
	for _, r := range job.runs {
		if p := r.Plan.Release; p != "" {
			if _, err := os.Stat(p); err != nil {
				e.mu.Lock()
				e.missing = append(e.missing, p)
				e.mu.Unlock()
			}
		}
	}
	return e.fakeExec.Execute(ctx, job)
}

// Fit makes the releases of its first group before training and the
// others while groups train, each before a group reads it: every group
// finds its releases on disk, each release is made and recorded once
// (as up front: the same files, each matching its ledger row), and the
// summary line counts them all, saying how many were made meanwhile.
func TestFitMakesLaterReleasesWhileTraining(t *testing.T) {
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Train.Replicas = config.Replicas{N: 2}
	s, rec := openRec(t, c)
	ex := &checkingExec{fakeExec: fakeExec{t: t}}
	if _, err := Fit(context.Background(), s, FitOptions{executor: ex}); err != nil {
		t.Fatal(err)
	}
	if len(ex.missing) > 0 {
		t.Fatalf("groups started before their releases %v were made", ex.missing)
	}
	entries, err := ledger.Read(s.ledgerPath())
	if err != nil {
		t.Fatal(err)
	}
	units := releaseUnits(s.runs)
	if len(entries) != len(units) || len(units) != 6 {
		t.Fatalf("%d ledger rows for %d releases (want 6, each once)", len(entries), len(units))
	}
	for _, u := range units {
		i := slices.IndexFunc(entries, func(e ledger.Row) bool { return e.Path == u.path })
		if sum, err := data.FileSHA256(u.path); i < 0 || err != nil || sum != entries[i].SHA256 {
			t.Fatalf("release %s does not match a ledger row (%v)", u.path, err)
		}
	}
	groups := formGroups(s.runs, 2)
	first := releaseUnits(groups[slices.IndexFunc(groups, func(g *runGroup) bool { return g.Runs[0].Setting.Trains() })].Runs)
	want := fmt.Sprintf("6 releases written, 0 reused under %s; ledger %s (%d of them made while groups trained)",
		s.Out("releases"), s.ledgerPath(), 6-len(first))
	if !slices.Contains(rec.info, "privatize: "+want) {
		t.Fatalf("no summary %q in %q", want, rec.info)
	}
}

// A release that cannot be made while groups train stops the fit, a sweep
// too, with the release's error: no group reading it trains, and no run
// is recorded as failed for it (the stage failed, not the runs).
func TestFitStopsOnLaterReleaseFailure(t *testing.T) {
	for _, keepGoing := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep_going=%v", keepGoing), func(t *testing.T) {
			c := testConfig(filepath.Join(t.TempDir(), "out"))
			c.Train.Replicas = config.Replicas{N: 2}
			s := openTest(t, c)
			var todo []*runGroup
			for _, g := range formGroups(s.runs, 2) {
				if g.Runs[0].Setting.Trains() {
					todo = append(todo, g)
				}
			}
			_, later := s.splitReleases(s.runs, todo, 1)
			if len(later) == 0 {
				t.Fatal("no release is made while groups train")
			}
			blocked := later[len(later)-1].path
			if err := os.MkdirAll(filepath.Join(blocked, "in-the-way"), 0o755); err != nil { // the file cannot be renamed onto it
				t.Fatal(err)
			}
			ex := &fakeExec{t: t}
			_, err := Fit(context.Background(), s, FitOptions{executor: ex, KeepGoing: keepGoing})
			if !errors.Is(err, errReleases) || !strings.Contains(err.Error(), blocked) {
				t.Fatalf("fit: %v, want the failure of release %s", err, blocked)
			}
			for _, r := range s.runs {
				if r.Plan.Release == blocked && slices.Contains(ex.runs(), r.ID) {
					t.Fatalf("run %s trained without its release", r.ID)
				}
				if (store.Store{Dir: c.Output}).Failed(r.ID) {
					t.Fatalf("run %s recorded as failed", r.ID)
				}
			}
			if len(ex.calls) == 0 {
				t.Fatal("no group trained: the first group's releases were made before training")
			}
		})
	}
}
