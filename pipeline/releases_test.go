package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/pipeline/internal/store"
)

// damage flips one byte in the middle of the file at path.
func damage(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x5a
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// warned reports whether a warning of rec names every one of words.
func warned(rec *recorder, words ...string) bool {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, w := range rec.warns {
		if !slices.ContainsFunc(words, func(x string) bool { return !strings.Contains(w, x) }) {
			return true
		}
	}
	return false
}

// Fit verifies every release a stage will read and remakes a damaged one,
// with a warning naming the file: rr_prior's test priors (read by the
// audit) even when every run is finished, which the audit's advice "run
// train fit again to remake it" relies on; and the release of a run to
// train (it used to be remade silently). A damaged release no stage reads
// is left alone: remaking it would only charge the ledger again.
func TestFitRemakesDamagedReleasesAndPriors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	c.Train.Trials, c.Train.LearningRates = 1, []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RRPrior, Epsilon: []float64{1}}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLP, K: []int{4}}}
	s, _ := openRec(t, c)
	if _, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	byKind := map[pets.Kind]*runSpec{}
	for _, r := range s.runs {
		byKind[r.Setting.Kind] = r
	}
	ledgerRows := func() int {
		e, err := ledger.Read(s.ledgerPath())
		if err != nil {
			t.Fatal(err)
		}
		return len(e)
	}
	rows := ledgerRows()

	// The audit's rr_prior test priors, damaged after every run finished.
	rrp := byKind[pets.RRPrior]
	priors := testPriorPath(rrp.Plan.Release)
	damage(t, priors)
	s2, rec := openRec(t, c)
	if _, err := s2.testPriors(rrp.Setting, 0); err == nil || !strings.Contains(err.Error(), "run train fit again") {
		t.Fatalf("the audit reads damaged priors: %v", err)
	}
	ex := &fakeExec{t: t}
	if _, err := Fit(context.Background(), s2, FitOptions{executor: ex}); err != nil {
		t.Fatal(err)
	}
	if !warned(rec, priors, "damaged", "made again") {
		t.Errorf("no warning names the damaged test priors %s: %q", priors, rec.warns)
	}
	if got := ex.runs(); len(got) != 1 || !strings.HasPrefix(got[0], priorModelIDPrefix) {
		t.Errorf("fit trained %v; want the prior model alone (every run is finished)", got)
	}
	if _, err := s2.testPriors(rrp.Setting, 0); err != nil {
		t.Fatalf("after fit: %v", err)
	}
	if n := ledgerRows(); n != rows+1 {
		t.Fatalf("%d ledger rows after remaking one release, want %d", n, rows+1)
	}
	rows++
	s2.Close()

	// A simulation release a run to train reads, damaged.
	rr := byKind[pets.RR]
	damage(t, rr.Plan.Release)
	if err := os.Remove(store.Store{Dir: out}.ResultPath(rr.ID)); err != nil {
		t.Fatal(err)
	}
	// A damaged release whose runs are finished: nothing reads it.
	llp := byKind[pets.LLP]
	damage(t, llp.Plan.Release)
	s3, rec := openRec(t, c)
	ex = &fakeExec{t: t}
	if _, err := Fit(context.Background(), s3, FitOptions{executor: ex}); err != nil {
		t.Fatal(err)
	}
	if !warned(rec, rr.Plan.Release, "damaged", "made again") {
		t.Errorf("no warning names the damaged release %s: %q", rr.Plan.Release, rec.warns)
	}
	if warned(rec, llp.Plan.Release) {
		t.Errorf("the unread release %s was remade: %q", llp.Plan.Release, rec.warns)
	}
	if got := ex.runs(); !slices.Equal(got, []string{rr.ID}) {
		t.Errorf("fit trained %v, want %s alone", got, rr.ID)
	}
	if n := ledgerRows(); n != rows+1 {
		t.Fatalf("%d ledger rows, want %d (the rr release remade, the llp one not)", n, rows+1)
	}
	e, _ := ledger.Read(s.ledgerPath())
	last := e[len(e)-1]
	if sum, err := data.FileSHA256(rr.Plan.Release); err != nil || last.Path != rr.Plan.Release || sum != last.SHA256 {
		t.Fatalf("the remade release %s does not match its new ledger row %+v (%v)", rr.Plan.Release, last, err)
	}
}
