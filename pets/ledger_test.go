package pets

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const (
	srcA   = "sha256:ca331159b911e81debd5fd99db773bb442bcecd752ee1ae9f99d3b5c6ca0f116" // LabelSource([0 1 1])
	srcB   = "sha256:af5570f5a1810b7af78caf4bc70a660f0df51e42baf91d4de5b2328de0e83dfc" // LabelSource(nil)
	digest = "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"
)

// TestLabelSource pins the content hash against Python's hashlib:
// sha256(struct.pack('<Q', n) + bytes(labels)).
func TestLabelSource(t *testing.T) {
	if got := LabelSource([]uint8{0, 1, 1}); got != srcA {
		t.Errorf("LabelSource([0 1 1]) = %s, want %s", got, srcA)
	}
	if got := LabelSource(nil); got != srcB {
		t.Errorf("LabelSource(nil) = %s, want %s", got, srcB)
	}
	if LabelSource([]uint8{0, 1}) == LabelSource([]uint8{0, 1, 0}) {
		t.Error("row count not hashed")
	}
}

// newTestLedger returns a ledger in a temporary directory whose clock
// ticks one second per row from a fixed time.
func newTestLedger(t *testing.T, delta float64) *Ledger {
	t.Helper()
	l, err := NewLedger(filepath.Join(t.TempDir(), LedgerFile), delta)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	l.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	return l
}

func rel(id, source string, p Params) Release {
	return Release{ID: id, Source: source, Rows: 1000, Mech: MustNew(p), Noise: NoiseSimulation,
		Seed: "42", Path: "releases/" + id + ".arrow", SHA256: digest}
}

// indep is the composition written out independently of Compose (exp − 1,
// not expm1; sums in one pass each).
func indep(eps []float64, delta float64) (basic, adv float64) {
	var s2, drift float64
	for _, e := range eps {
		basic += e
		s2 += e * e
		drift += e * (math.Exp(e) - 1)
	}
	return basic, math.Sqrt(2*math.Log(1/delta)*s2) + drift
}

// TestLedgerComposesEverySource: issue 9's five ε-DP releases of one label
// column (rr 1, llp_geom 8/1, llp_lap 8/1, rr 0.5, rr 1), interleaved with
// releases of another column, count 1..5 and compose across mechanisms:
// the last row has eps_total_basic 4.5, eps_total_advanced
// 18.034085189219496 (δ' = 1e-6, computed independently in Python) and
// eps_total 4.5; every row's totals equal the independent formula over its
// prefix.
func TestLedgerComposesEverySource(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	seq := []Params{
		{Kind: RR, Epsilon: 1}, {Kind: LLPGeom, K: 8, Epsilon: 1}, {Kind: LLPLap, K: 8, Epsilon: 1},
		{Kind: RR, Epsilon: 0.5}, {Kind: RR, Epsilon: 1},
	}
	var eps []float64
	var last LedgerEntry
	for i, p := range seq {
		other, err := l.Record(rel(fmt.Sprintf("b%d", i), srcB, Params{Kind: RR, Epsilon: 2}))
		if err != nil {
			t.Fatal(err)
		}
		if other.Releases != i+1 || other.EpsTotalBasic != 2*float64(i+1) {
			t.Errorf("other source row %d: releases %d basic %v", i, other.Releases, other.EpsTotalBasic)
		}
		e, err := l.Record(rel(fmt.Sprintf("a%d", i), srcA, p))
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, p.Epsilon)
		basic, adv := indep(eps, 1e-6)
		if e.Releases != i+1 || !closeTo(e.EpsTotalBasic, basic) || !closeTo(e.EpsTotalAdvanced, adv) ||
			e.EpsTotal != math.Min(e.EpsTotalBasic, e.EpsTotalAdvanced) {
			t.Errorf("row %d: %+v; want releases %d basic %v advanced %v", i, e, i+1, basic, adv)
		}
		last = e
	}
	if last.EpsTotalBasic != 4.5 || !closeTo(last.EpsTotalAdvanced, 18.034085189219496) || last.EpsTotal != 4.5 ||
		!closeTo(last.EpsTotalSeed004, 19.336597240033253) {
		t.Errorf("last row %+v", last)
	}
	// Many small releases: the advanced bound is the smaller.
	l = newTestLedger(t, 1e-6)
	for i := range 200 {
		if last, _ = l.Record(rel(strconv.Itoa(i), srcA, Params{Kind: RR, Epsilon: 0.01})); last.Releases != i+1 {
			t.Fatalf("release %d counted %d", i+1, last.Releases)
		}
	}
	if !closeTo(last.EpsTotal, 0.7634847719383024) || !closeTo(last.EpsTotalBasic, 2) {
		t.Errorf("200 × rr(0.01): %+v", last)
	}
}

// TestLedgerNonDP: an llp release (ε = +Inf) makes every total of its source
// +Inf from then on (basic, advanced, total, seed 004: nothing composed with
// a non-DP release is bounded), while the rows before it and another
// source's rows stay finite; bot counts as a release adding 0.
func TestLedgerNonDP(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	steps := []struct {
		id     string
		source string
		p      Params
		inf    bool
		basic  float64
	}{
		{"1", srcA, Params{Kind: RR, Epsilon: 1}, false, 1},
		{"2", srcA, Params{Kind: Bot}, false, 1},
		{"3", srcA, Params{Kind: LLP, K: 8}, true, 0},
		{"4", srcB, Params{Kind: RR, Epsilon: 0.5}, false, 0.5},
		{"5", srcA, Params{Kind: LLPLap, K: 8, Epsilon: 0.5}, true, 0},
		{"6", srcA, Params{Kind: None}, true, 0},
	}
	for i, s := range steps {
		e, err := l.Record(rel(s.id, s.source, s.p))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{e.EpsTotalBasic, e.EpsTotalAdvanced, e.EpsTotal, e.EpsTotalSeed004} {
			if math.IsInf(v, 1) != s.inf {
				t.Errorf("step %d: %+v; want infinite totals: %v", i, e, s.inf)
			}
		}
		if !s.inf && e.EpsTotalBasic != s.basic {
			t.Errorf("step %d: basic %v, want %v", i, e.EpsTotalBasic, s.basic)
		}
	}
}

// TestLedgerAbort: an aborted release leaves the totals of later rows;
// its own row carries the totals without it; aborting twice, aborting an
// unknown id and recording an existing id are refused.
func TestLedgerAbort(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	for i, eps := range []float64{1, 2, 4} {
		if _, err := l.Record(rel(strconv.Itoa(i), srcA, Params{Kind: RR, Epsilon: eps})); err != nil {
			t.Fatal(err)
		}
	}
	ab, err := l.Abort("1", "rename: no space left\non device")
	if err != nil {
		t.Fatal(err)
	}
	if ab.Status != StatusAborted || ab.Releases != 2 || ab.EpsTotalBasic != 5 || ab.Epsilon != 2 ||
		ab.Reason != "rename: no space left on device" || ab.Path != "releases/1.arrow" {
		t.Errorf("aborted row %+v", ab)
	}
	e, err := l.Record(rel("3", srcA, Params{Kind: RR, Epsilon: 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	if _, adv := indep([]float64{1, 4, 0.5}, 1e-6); e.Releases != 3 || e.EpsTotalBasic != 5.5 || !closeTo(e.EpsTotalAdvanced, adv) {
		t.Errorf("row after abort %+v", e)
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"abort twice", second(l.Abort("1", "again")), ErrDuplicateRelease},
		{"abort unknown", second(l.Abort("nope", "")), ErrUnknownRelease},
		{"record existing id", second(l.Record(rel("2", srcA, Params{Kind: RR, Epsilon: 1}))), ErrDuplicateRelease},
		{"record aborted id", second(l.Record(rel("1", srcA, Params{Kind: RR, Epsilon: 1}))), ErrDuplicateRelease},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	rows, err := ReadLedger(l.Path())
	if err != nil || len(rows) != 5 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestLedgerRoundTrip: ReadLedger returns exactly the entries Record and
// Abort returned (quoted path, secure and seeded noise, +Inf, aborted row),
// and the file matches testdata/ledger.golden.csv (go test -run
// TestLedgerRoundTrip -update rewrites it).
func TestLedgerRoundTrip(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	secure := rel("c0ffee", srcA, Params{Kind: LLPLap, K: 64, Epsilon: 0.5, Secure: true})
	secure.Noise, secure.Seed, secure.Path = NoiseSecure, "", `out dir/a,"b".arrow`
	seeded := rel("beef", srcA, Params{Kind: RR, Epsilon: 1})
	seeded.Noise, seeded.Seed = NoiseSeeded, "18446744073709551615"
	var want []LedgerEntry
	for _, r := range []Release{secure, seeded, rel("llp", srcB, Params{Kind: LLP, K: 8}),
		rel("geom", srcA, Params{Kind: LLPGeom, K: 1, Epsilon: 0.25})} {
		e, err := l.Record(r)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	e, err := l.Abort("geom", "disk full")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, e)
	got, err := ReadLedger(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	raw, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "ledger.golden.csv")
	if *update {
		if err := os.WriteFile(golden, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if g, err := os.ReadFile(golden); err != nil || !bytes.Equal(g, raw) {
		t.Errorf("ledger differs from %s (%v); got:\n%s", golden, err, raw)
	}
}

// TestLedgerRefuses: Record on a file with a foreign or first-format
// header, an invalid row or an incomplete last line errors with a
// *LedgerError naming the line and leaves the file byte-for-byte unchanged.
func TestLedgerRefuses(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger.golden.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(golden), "\n")
	badRow := strings.Replace(lines[2], ",rr,", ",rx,", 1)
	tests := []struct {
		name, content, wantMsg string
		line                   int
	}{
		{"foreign header", "a,b,c\n1,2,3\n", "not a privacy ledger", 1},
		{"first format", ledgerHeaderV1 + "\nrr,0,1,10,1,1,1,2,1e-06,2025-01-02T03:04:05Z\n", "move it aside", 1},
		{"empty file", "", "not a privacy ledger", 1},
		{"truncated last line", string(golden[:len(golden)-7]), "incomplete", 0},
		{"invalid mechanism", lines[0] + lines[1] + badRow + lines[3], "mechanism", 3},
		{"unbalanced quote", lines[0] + `x,"released` + "\n", "unparsable", 2},
		{"abort before record", lines[0] + lines[5], "aborted before", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), LedgerFile)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			l, _ := NewLedger(path, 1e-6)
			_, err := l.Record(rel("new", srcA, Params{Kind: RR, Epsilon: 1}))
			var le *LedgerError
			if !errors.As(err, &le) || !errors.Is(err, ErrLedgerFormat) || le.Line != tc.line ||
				!strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Record error %v, want a LedgerError at line %d naming the file and %q", err, tc.line, tc.wantMsg)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatalf("file changed to %q", b)
			}
			if _, err := ReadLedger(path); !errors.Is(err, ErrLedgerFormat) {
				t.Errorf("ReadLedger error %v", err)
			}
		})
	}
	if _, err := NewLedger("x.csv", 0); err == nil || !strings.Contains(err.Error(), "delta_prime") {
		t.Errorf("NewLedger δ'=0: %v", err)
	}
}

// TestRecordValidation: each malformed Release is refused with a
// *ParamError naming its field, and nothing is written.
func TestRecordValidation(t *testing.T) {
	ok := rel("id", srcA, Params{Kind: RR, Epsilon: 1})
	tests := []struct {
		name  string
		edit  func(*Release)
		field string
	}{
		{"empty id", func(r *Release) { r.ID = "" }, "id"},
		{"newline in id", func(r *Release) { r.ID = "a\nb" }, "id"},
		{"raw hex source", func(r *Release) { r.Source = digest }, "source"},
		{"uppercase source", func(r *Release) { r.Source = strings.ToUpper(srcA) }, "source"},
		{"zero rows", func(r *Release) { r.Rows = 0 }, "rows"},
		{"nil mechanism", func(r *Release) { r.Mech = nil }, "mech"},
		{"unknown noise", func(r *Release) { r.Noise = "pseudo" }, "noise"},
		{"secure with seed", func(r *Release) { r.Noise = NoiseSecure }, "seed"},
		{"seeded without seed", func(r *Release) { r.Seed = "" }, "seed"},
		{"negative seed", func(r *Release) { r.Seed = "-1" }, "seed"},
		{"seed with leading zero", func(r *Release) { r.Seed = "042" }, "seed"},
		{"empty path", func(r *Release) { r.Path = "" }, "path"},
		{"short digest", func(r *Release) { r.SHA256 = digest[:63] }, "sha256"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLedger(t, 1e-6)
			r := ok
			tc.edit(&r)
			_, err := l.Record(r)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != "release."+tc.field {
				t.Fatalf("error %v, want one naming release.%s", err, tc.field)
			}
			if _, err := os.Stat(l.Path()); err == nil {
				t.Error("ledger created for an invalid release")
			}
		})
	}
}

// TestLedgerConcurrentGoroutines: 8 independent Ledger values recording 10
// releases each into one new file get the counts 1..80 exactly once each,
// and the last total is the sum of all ε.
func TestLedgerConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	const writers, each = 8, 10
	var mu sync.Mutex
	var counts []int
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			l, _ := NewLedger(path, 1e-6)
			for i := range each {
				e, err := l.Record(rel(fmt.Sprintf("%d-%d", w, i), srcA, Params{Kind: RR, Epsilon: 0.5}))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				counts = append(counts, e.Releases)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	checkCounts1toN(t, counts, writers*each)
	rows, err := ReadLedger(path)
	if err != nil || len(rows) != writers*each || rows[len(rows)-1].EpsTotalBasic != 0.5*writers*each {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

func checkCounts1toN(t *testing.T, counts []int, n int) {
	t.Helper()
	slices.Sort(counts)
	for i, c := range counts {
		if c != i+1 {
			t.Fatalf("counts %v, want 1..%d exactly once each", counts, n)
		}
	}
	if len(counts) != n {
		t.Fatalf("%d counts, want %d", len(counts), n)
	}
}

// TestLedgerConcurrentProcesses: 4 processes (this test binary re-executed
// as TestLedgerChild) start together and record 10 releases each into one
// new ledger; the counts they get back are 1..40 exactly once each.
func TestLedgerConcurrentProcesses(t *testing.T) {
	dir := t.TempDir()
	path, start := filepath.Join(dir, LedgerFile), filepath.Join(dir, "start")
	const procs = 4
	var outs [procs]bytes.Buffer
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		c := exec.Command(os.Args[0], "-test.run=^TestLedgerChild$")
		c.Env = append(os.Environ(), "PETS_LEDGER_CHILD="+path, "PETS_LEDGER_START="+start, "PETS_LEDGER_ID="+strconv.Itoa(i))
		c.Stdout, c.Stderr = &outs[i], &outs[i]
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = c
	}
	if err := os.WriteFile(start, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var counts []int
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("child %d: %v\n%s", i, err, outs[i].String())
		}
		for _, f := range strings.Fields(outs[i].String()) {
			if v, ok := strings.CutPrefix(f, "count="); ok {
				n, _ := strconv.Atoi(v)
				counts = append(counts, n)
			}
		}
	}
	checkCounts1toN(t, counts, procs*10)
}

// TestLedgerChild is the child of TestLedgerConcurrentProcesses (skipped
// otherwise): it waits for the start file, records 10 releases and prints
// their counts.
func TestLedgerChild(t *testing.T) {
	path := os.Getenv("PETS_LEDGER_CHILD")
	if path == "" {
		t.Skip("child process of TestLedgerConcurrentProcesses")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(os.Getenv("PETS_LEDGER_START")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no start signal")
		}
	}
	l, err := NewLedger(path, 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		e, err := l.Record(rel(os.Getenv("PETS_LEDGER_ID")+"-"+strconv.Itoa(i), srcA, Params{Kind: RR, Epsilon: 1}))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("count=%d\n", e.Releases)
	}
}

// FuzzReadLedger: no input makes the parser panic; whatever it accepts
// formats back to the same bytes' rows (parse → format → parse is stable).
// The seed corpus (a valid ledger, truncated at several points and with
// flipped bytes, the first format) runs in plain go test.
func FuzzReadLedger(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger.golden.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	for _, cut := range []int{0, 1, 40, len(golden) / 2, len(golden) - 1} {
		f.Add(golden[:cut])
	}
	for _, at := range []int{3, len(ledgerHeaderLine()) + 5, len(golden) / 3, len(golden) - 2} {
		b := slices.Clone(golden)
		b[at] ^= 0x55
		f.Add(b)
	}
	f.Add([]byte(ledgerHeaderV1 + "\n"))
	f.Add([]byte(ledgerHeaderLine() + "\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := parseLedger("fuzz.csv", b)
		if err != nil {
			if !errors.Is(err, ErrLedgerFormat) {
				t.Fatalf("error %v does not wrap ErrLedgerFormat", err)
			}
			return
		}
		out := []byte(ledgerHeaderLine())
		for _, e := range rows {
			out = append(out, e.line()...)
		}
		again, err := parseLedger("fuzz.csv", out)
		if err != nil || !reflect.DeepEqual(again, rows) {
			t.Fatalf("reformatted rows do not parse back: %v", err)
		}
	})
}
