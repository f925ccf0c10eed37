package data

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// VerifyFile checks a dataset file against meta.json before it is read,
// and Recheck refuses it when it changed while it was read: by its stat key
// for a file last changed long ago, by its bytes for one changed within
// the clock tick a stat key can miss (freshWindow). A file outside a
// dataset, or one meta.json records no digest of, has nothing to check.
func TestVerifyFile(t *testing.T) {
	ds := filepath.Join(t.TempDir(), "ds")
	if _, err := Synth(context.Background(), SynthOptions{Kind: SynthLogistic, Rows: 100, TestRows: 10, Features: 2, Seed: 1, Out: ds}); err != nil {
		t.Fatal(err)
	}
	train := filepath.Join(ds, TrainFile)
	orig, _ := os.ReadFile(train)
	// A write in place that keeps the size.
	poke := func() {
		b := append([]byte(nil), orig...)
		b[len(b)/2] ^= 0xff
		os.WriteFile(train, b, 0o644)
	}
	defer func(w time.Duration) { freshWindow = w }(freshWindow)
	for _, tc := range []struct {
		name     string
		window   time.Duration
		sameTick bool // the write left the stat key as it was (a write in the clock tick of the last one)
		changed  bool
	}{
		{"unchanged, stat path", 0, false, false},
		{"unchanged, bytes path", time.Hour, false, false},
		{"rewritten, stat path", 0, false, true},
		{"rewritten in the same tick, bytes path", time.Hour, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer os.WriteFile(train, orig, 0o644)
			freshWindow = tc.window
			c, err := VerifyFile(train)
			if err != nil || c == nil {
				t.Fatalf("VerifyFile: %v, %v", c, err)
			}
			if tc.changed {
				poke()
			}
			if tc.sameTick {
				c.key, _ = statKey(train)
			}
			if err := c.Recheck(); errors.Is(err, ErrChanged) != tc.changed {
				t.Fatalf("Recheck: %v, want changed=%v", err, tc.changed)
			}
		})
	}
	freshWindow = time.Second
	poke()
	if _, err := VerifyFile(train); !errors.Is(err, ErrIdentity) {
		t.Fatalf("a rewritten file: %v, want ErrIdentity", err)
	}
	os.WriteFile(train, orig, 0o644)
	loose := filepath.Join(t.TempDir(), "loose.arrow")
	os.WriteFile(loose, orig, 0o644)
	if c, err := VerifyFile(loose); c != nil || err != nil {
		t.Fatalf("a file outside a dataset: %v, %v", c, err)
	}
}
