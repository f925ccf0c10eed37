package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// synthDataset synthesizes a logistic dataset of rows training rows in a
// folder of t's and returns the folder.
func synthDataset(t *testing.T, rows int, seed uint64) string {
	t.Helper()
	ds := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: rows, TestRows: 10, Features: 3, Seed: seed, Out: ds}); err != nil {
		t.Fatal(err)
	}
	return ds
}

// Releases started together to one new --out: exactly one lands (the
// finding: two privatize runs both printed "wrote" and the second silently
// replaced the first, 10 of 10 tries); each other one is refused naming
// the file, and if it got as far as its ledger row, the row is marked
// aborted (its charge stays). What lies at --out is the winner's release.
func TestPrivatizeOneOut(t *testing.T) {
	in := filepath.Join(synthDataset(t, 300, 5), data.TrainFile)
	led := filepath.Join(t.TempDir(), "ledger", ledger.File)
	const tries, runs = 3, 4
	mechs := []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLPGeom, K: 4, Epsilon: 1}, {Kind: pets.RR, Epsilon: 2}, {Kind: pets.LLP, K: 8}}
	for try := range tries {
		out := filepath.Join(t.TempDir(), "outbox", "r.arrow")
		var wg sync.WaitGroup
		start := make(chan struct{})
		got := make([]*Privatized, runs)
		errs := make([]error, runs)
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i], errs[i] = Privatize(PrivatizeOptions{In: in, Out: out, Params: mechs[i], Ledger: led})
			}()
		}
		close(start)
		wg.Wait()
		var won *Privatized
		for i, err := range errs {
			switch {
			case err == nil && won != nil:
				t.Fatalf("try %d: two releases to %s both succeeded (%s and %s): one replaced the other", try, out, won.Release.Mech, got[i].Release.Mech)
			case err == nil:
				won = got[i]
			case !strings.Contains(err.Error(), out) || strings.Contains(err.Error(), "\n"):
				t.Fatalf("try %d: refusal %q does not name %s on one line", try, err, out)
			case !errors.Is(err, release.ErrExists) && !errors.Is(err, ErrRefused):
				t.Fatalf("try %d: %v, want the file named as existing", try, err)
			}
		}
		if won == nil {
			t.Fatalf("try %d: no release landed: %v", try, errs)
		}
		if sum, err := data.FileSHA256(out); err != nil || sum != won.Entry.SHA256 {
			t.Fatalf("try %d: %s has SHA-256 %s (%v), the winner's ledger row %s", try, out, sum, err, won.Entry.SHA256)
		}
		if names, _ := os.ReadDir(filepath.Dir(out)); len(names) != 1 {
			t.Fatalf("try %d: the outbox holds %v", try, names)
		}
	}
	rows, err := ledger.Read(led)
	if err != nil {
		t.Fatal(err)
	}
	released, aborted := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if r.Status == ledger.StatusAborted {
			aborted[r.ID] = true
		} else {
			released[r.ID] = true
		}
	}
	if len(released)-len(aborted) != tries {
		t.Fatalf("%d released rows, %d aborted: want exactly %d standing (one per try)", len(released), len(aborted), tries)
	}
}

// privatize checks its input against the SHA-256 the dataset's meta.json
// records, as fit does: a file rewritten before the read is refused naming
// it and meta.json, and one rewritten while it is read is refused too
// (the finding shipped rows that exist in neither version); nothing is
// written, not even a ledger.
func TestPrivatizeVerifiesInput(t *testing.T) {
	ds := synthDataset(t, 200, 5)
	in := filepath.Join(ds, data.TrainFile)
	orig, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(filepath.Join(synthDataset(t, 200, 6), data.TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		before bool // rewrite before privatize, else while it reads
		want   error
		says   []string
	}{
		{"rewritten before", true, data.ErrIdentity, []string{in, data.MetaFile, "train_sha256"}},
		{"rewritten while read", false, data.ErrChanged, []string{in, "while it was read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer os.WriteFile(in, orig, 0o644)
			if tc.before {
				os.WriteFile(in, other, 0o644)
			} else {
				afterInputRead = func() {
					f, _ := os.OpenFile(in, os.O_WRONLY, 0)
					f.WriteAt(other[len(other)/2:len(other)/2+64], int64(len(other)/2)) // in place, as a writer would
					f.Close()
				}
				defer func() { afterInputRead = func() {} }()
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "out", "r.arrow")
			led := filepath.Join(dir, "ledger", ledger.File)
			_, err := Privatize(PrivatizeOptions{In: in, Out: out, Params: pets.Params{Kind: pets.RR, Epsilon: 1}, Ledger: led})
			if !errors.Is(err, tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%v, want %v on one line", err, tc.want)
			}
			for _, s := range tc.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			for _, p := range []string{out, led} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
	if _, err := Privatize(PrivatizeOptions{In: in, Out: filepath.Join(t.TempDir(), "r.arrow"), Params: pets.Params{Kind: pets.RR, Epsilon: 1},
		Ledger: filepath.Join(t.TempDir(), ledger.File)}); err != nil {
		t.Fatalf("the dataset as written: %v", err)
	}
}
