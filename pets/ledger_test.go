package pets

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLedgerAppendReadBack appends twice (creating the file, then appending)
// and reads back every column, including "inf" for a non-DP mechanism and
// composition columns for a second release of the same labels.
func TestLedgerAppendReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	l, err := NewLedger(path, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	l.now = func() time.Time { return t0 }
	geom := MustNew(Params{Kind: LLPGeom, K: 64, Epsilon: 0.5})
	llp := MustNew(Params{Kind: LLP, K: 8})
	e1, err := l.Record(geom, 1000, 7, 3)
	if err != nil {
		t.Fatal(err)
	}
	e2, err := l.Record(llp, 999, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	wantAdv, _ := AdvancedComposition(0.5, 3, 1e-6)
	want := []LedgerEntry{
		{Mechanism: LLPGeom, K: 64, Epsilon: 0.5, Rows: 1000, Seed: 7, Releases: 3,
			EpsBasic: 1.5, EpsAdvanced: wantAdv, DeltaPrime: 1e-6, Time: t0},
		{Mechanism: LLP, K: 8, Epsilon: math.Inf(1), Rows: 999, Seed: 8, Releases: 1,
			EpsBasic: math.Inf(1), EpsAdvanced: math.Inf(1), DeltaPrime: 1e-6, Time: t0},
	}
	if len(got) != 2 {
		t.Fatalf("read %d entries, want 2", len(got))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Errorf("entry %d time %v, want %v", i, got[i].Time, want[i].Time)
		}
		got[i].Time, want[i].Time = time.Time{}, time.Time{}
		if got[i] != want[i] {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if e1.EpsAdvanced != wantAdv || e2.EpsBasic != math.Inf(1) {
		t.Errorf("returned entries %+v %+v", e1, e2)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 3 || lines[0] != strings.Join(LedgerHeader, ",") {
		t.Fatalf("file:\n%s", raw)
	}
	if want := "llp,8,inf,999,8,1,inf,inf,1e-06,2025-01-02T03:04:05.000000006Z"; lines[2] != want {
		t.Errorf("line 2 = %q, want %q", lines[2], want)
	}
}

// TestLedgerRefuses: an existing file with another header, or whose last
// line is incomplete, is left byte-for-byte unchanged and Append errors.
func TestLedgerRefuses(t *testing.T) {
	tests := []struct {
		name, content, wantErr string
	}{
		{"foreign header", "a,b,c\n1,2,3\n", "header"},
		{"truncated last line", strings.Join(LedgerHeader, ",") + "\nrr,0,1,10,1,1,1,", "newline"},
		{"empty file", "", "header"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), LedgerFile)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			l, _ := NewLedger(path, 1e-6)
			_, err := l.Record(MustNew(Params{Kind: RR, Epsilon: 1}), 10, 1, 1)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Record error %v, want one mentioning %q", err, tc.wantErr)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatalf("file changed to %q", b)
			}
		})
	}
	if _, err := NewLedger("x.csv", 0); err == nil || !strings.Contains(err.Error(), "delta_prime") {
		t.Errorf("NewLedger δ'=0: %v", err)
	}
}

// TestLedgerConcurrent: independent Ledger values (as separate processes
// would) appending to one new file concurrently produce one header and
// every line whole.
func TestLedgerConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	const writers, each = 8, 25
	errs := make(chan error, writers*each)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, _ := NewLedger(path, 1e-6)
			m := MustNew(Params{Kind: RR, Epsilon: 1})
			for i := range each {
				_, err := l.Record(m, 100, uint64(w*1000+i), i+1)
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadLedger(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != writers*each {
		t.Fatalf("read %d entries, want %d", len(got), writers*each)
	}
}
