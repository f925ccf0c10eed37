package pets

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
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

const digest = "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"

// fixedKey is the key of golden-file ledgers (a fixed key makes the keyed
// digests reproducible).
var fixedKey = [32]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

// writeFixedKey puts fixedKey where a new ledger at path looks for its key.
func writeFixedKey(t testing.TB, path string) {
	t.Helper()
	b := fmt.Sprintf("%s\n%s\n", keyHeader, hex.EncodeToString(fixedKey[:]))
	if err := os.WriteFile(KeyPath(path), []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// testLedger is a ledger in a temporary directory whose clock ticks one
// second per row from a fixed time, with its keys.
type testLedger struct {
	*Ledger
	keys *Keys
}

func newTestLedger(t testing.TB, delta float64) *testLedger {
	t.Helper()
	path := filepath.Join(t.TempDir(), LedgerFile)
	writeFixedKey(t, path)
	return openTestLedger(t, path, delta)
}

func openTestLedger(t testing.TB, path string, delta float64) *testLedger {
	t.Helper()
	l, err := NewLedger(path, delta)
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	l.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	k, err := l.Keys()
	if err != nil {
		t.Fatal(err)
	}
	return &testLedger{l, k}
}

// people returns the person keys of ids (each a person's identifier).
func (l *testLedger) people(ids ...int) []uint64 {
	h := l.keys.NewPersonHasher()
	out := make([]uint64, len(ids))
	for i, id := range ids {
		out[i] = h.ID([]byte(strconv.Itoa(id)))
	}
	return out
}

// span is the ids lo, lo+1, …, hi−1.
func span(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// rel is a simulation release of the people ids through p.
func (l *testLedger) rel(id string, ids []int, p Params) Release {
	people := l.people(ids...)
	return Release{ID: id, Input: "data/train.arrow", Labels: l.keys.Labels([]uint8{0, 1, 1}), Rows: len(people),
		People: people, KeyCheck: l.keys.Check(), Mech: mustNew(p), Noise: NoiseSimulation, Seed: "42",
		Path: "releases/" + id + ".arrow", SHA256: digest}
}

// model is the ledger's arithmetic written out per person, independently
// of the people file: each person's list of releases.
type model struct {
	hist    map[int][]string
	steps   map[string]Step
	aborted map[string]bool
}

func newModel() *model {
	return &model{hist: map[int][]string{}, steps: map[string]Step{}, aborted: map[string]bool{}}
}

func (m *model) record(id string, ids []int, p Params) {
	m.steps[id] = StepOf(mustNew(p))
	seen := map[int]bool{}
	for _, x := range ids {
		if !seen[x] {
			seen[x] = true
			m.hist[x] = append(m.hist[x], id)
		}
	}
}

// worst returns the worst (by Total, then Basic) person among ids and how
// many share its Total.
func (m *model) worst(t *testing.T, ids []int, delta float64) (Composition, int, int) {
	t.Helper()
	var w Composition
	releases, at := 0, 0
	seen := map[int]bool{}
	for i, x := range ids {
		if seen[x] {
			continue
		}
		seen[x] = true
		var steps []Step
		for _, r := range m.hist[x] {
			if !m.aborted[r] {
				steps = append(steps, m.steps[r])
			}
		}
		c, err := Compose(steps, delta)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == 0 || c.Total > w.Total:
			w, releases, at = c, len(steps), 1
		case c.Total == w.Total:
			at++
			if c.Basic > w.Basic || (c.Basic == w.Basic && len(steps) > releases) {
				w, releases = c, len(steps)
			}
		}
	}
	return w, releases, at
}

func checkRow(t *testing.T, what string, e LedgerEntry, w Composition, releases, at int) {
	t.Helper()
	if e.Releases != releases || e.PeopleAtWorst != at || e.EpsTotal != w.Total || e.EpsTotalBasic != w.Basic ||
		e.EpsTotalDRV != w.DRV || e.EpsTotalDRVQuad != w.DRVQuad || e.EpsTotalPLD != w.PLD {
		t.Fatalf("%s: row %+v\nwant releases %d, %d people at worst, totals %+v", what, e, releases, at, w)
	}
}

// TestLedgerComposesPerPerson: 40 releases of random subsets (with
// duplicates: rows of one person) of 300 people, through random
// mechanisms, with random aborts, recorded in one ledger: after each, the
// row's worst person (releases, people at worst, every total) equals the
// per-person model's; the people file stays one record per history class.
func TestLedgerComposesPerPerson(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	m := newModel()
	r := rand.New(rand.NewPCG(7, 8))
	mechs := []Params{{Kind: RR, Epsilon: 1}, {Kind: RR, Epsilon: 0.25}, {Kind: LLPGeom, K: 8, Epsilon: 0.5},
		{Kind: LLPLap, K: 8, Epsilon: 0.5}, {Kind: Bot}}
	var live []string
	for i := range 40 {
		lo := r.IntN(250)
		ids := span(lo, lo+1+r.IntN(300-lo))
		ids = append(ids, ids[:len(ids)/3]...) // repeated rows of some people
		r.Shuffle(len(ids), func(a, b int) { ids[a], ids[b] = ids[b], ids[a] })
		p := mechs[r.IntN(len(mechs))]
		id := "r" + strconv.Itoa(i)
		e, err := l.Record(l.rel(id, ids, p))
		if err != nil {
			t.Fatal(err)
		}
		m.record(id, ids, p)
		w, rs, at := m.worst(t, ids, 1e-6)
		checkRow(t, id, e, w, rs, at)
		if e.Rows != len(ids) || e.People != len(slices.Compact(slices.Sorted(slices.Values(ids)))) {
			t.Fatalf("%s: rows %d people %d", id, e.Rows, e.People)
		}
		live = append(live, id)
		if r.IntN(5) == 0 { // abort a random live release
			j := r.IntN(len(live))
			victim := live[j]
			live = slices.Delete(live, j, j+1)
			ab, err := l.Abort(victim, "test")
			if err != nil {
				t.Fatal(err)
			}
			m.aborted[victim] = true
			var covered []int
			for x, h := range m.hist {
				if slices.Contains(h, victim) {
					covered = append(covered, x)
				}
			}
			slices.Sort(covered)
			w, rs, at := m.worst(t, covered, 1e-6)
			checkRow(t, "abort "+victim, ab, w, rs, at)
		}
	}
	st, err := ReadLedgerState(l.Path(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	people := 0
	for _, c := range st.Classes {
		people += c.People
	}
	if people != st.People || st.People > 300 || len(st.Classes) > 200 {
		t.Fatalf("%d classes holding %d (%d) people", len(st.Classes), people, st.People)
	}
	// Every class's total is its people's, per the model.
	for _, c := range st.Classes {
		comp, _ := Compose(c.Steps, 1e-6)
		if comp != c.Comp {
			t.Fatalf("class %v: %+v, want %+v", c.Releases, c.Comp, comp)
		}
	}
}

// TestLedgerUnderCounts are the three under-counts of the finding, at the
// ledger level: releases of one set of people through files in another row
// order, or less one row, compose per person (the 1,999 people in all three
// carry basic ε = 3; the one left out carries 2).
func TestLedgerUnderCounts(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	orig := span(0, 2000)
	rev := slices.Clone(orig)
	slices.Reverse(rev)
	var last LedgerEntry
	for i, ids := range [][]int{orig, rev, orig[1:]} {
		e, err := l.Record(l.rel(strconv.Itoa(i), ids, Params{Kind: RR, Epsilon: 1}))
		if err != nil {
			t.Fatal(err)
		}
		last = e
	}
	if last.EpsTotalBasic != 3 || last.Releases != 3 || last.PeopleAtWorst != 1999 || last.People != 1999 {
		t.Fatalf("third release %+v; want basic 3 for 1,999 people", last)
	}
	st, err := ReadLedgerState(l.Path(), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Classes) != 2 || st.Classes[0].People != 1999 || st.Classes[1].People != 1 ||
		st.Classes[1].Comp.Basic != 2 || st.People != 2000 {
		t.Fatalf("classes %+v", st.Classes)
	}
}

// TestLedgerNonDP: an llp release makes every total of the people it
// covers +Inf from then on; others stay finite; bot adds nothing.
func TestLedgerNonDP(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	steps := []struct {
		ids   []int
		p     Params
		inf   bool
		basic float64
	}{
		{span(0, 10), Params{Kind: RR, Epsilon: 1}, false, 1},
		{span(0, 10), Params{Kind: Bot}, false, 1},
		{span(0, 5), Params{Kind: LLP, K: 8}, true, 0},
		{span(5, 10), Params{Kind: RR, Epsilon: 0.5}, false, 1.5},
		{span(0, 10), Params{Kind: LLPLap, K: 8, Epsilon: 0.5}, true, 0},
		{span(10, 20), Params{Kind: None}, true, 0},
		{span(20, 30), Params{Kind: RR, Epsilon: 0.5}, false, 0.5},
	}
	for i, s := range steps {
		e, err := l.Record(l.rel(strconv.Itoa(i), s.ids, s.p))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []float64{e.EpsTotalBasic, e.EpsTotalDRV, e.EpsTotal, e.EpsTotalDRVQuad, e.EpsTotalPLD} {
			if math.IsInf(v, 1) != s.inf {
				t.Errorf("step %d: %+v; want infinite totals: %v", i, e, s.inf)
			}
		}
		if !s.inf && e.EpsTotalBasic != s.basic {
			t.Errorf("step %d: basic %v, want %v", i, e.EpsTotalBasic, s.basic)
		}
	}
}

// TestLedgerAbort: an aborted release leaves the totals of later rows; its
// own row carries the totals without it; aborting twice, aborting an
// unknown id and recording an existing id are refused.
func TestLedgerAbort(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	all := span(0, 50)
	for i, eps := range []float64{1, 2, 4} {
		if _, err := l.Record(l.rel(strconv.Itoa(i), all, Params{Kind: RR, Epsilon: eps})); err != nil {
			t.Fatal(err)
		}
	}
	ab, err := l.Abort("1", "rename: no space left\non device")
	if err != nil {
		t.Fatal(err)
	}
	if ab.Status != StatusAborted || ab.Releases != 2 || ab.EpsTotalBasic != 5 || ab.Epsilon != 2 || ab.People != 50 ||
		ab.Reason != "rename: no space left on device" || ab.Path != "releases/1.arrow" {
		t.Errorf("aborted row %+v", ab)
	}
	e, err := l.Record(l.rel("3", all, Params{Kind: RR, Epsilon: 0.5}))
	if err != nil {
		t.Fatal(err)
	}
	if e.Releases != 3 || e.EpsTotalBasic != 5.5 || e.PeopleAtWorst != 50 {
		t.Errorf("row after abort %+v", e)
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"abort twice", second(l.Abort("1", "again")), ErrDuplicateRelease},
		{"abort unknown", second(l.Abort("nope", "")), ErrUnknownRelease},
		{"record existing id", second(l.Record(l.rel("2", all, Params{Kind: RR, Epsilon: 1}))), ErrDuplicateRelease},
		{"record aborted id", second(l.Record(l.rel("1", all, Params{Kind: RR, Epsilon: 1}))), ErrDuplicateRelease},
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

// TestLedgerBudget: with a budget, a release that would take anyone above
// it is refused by Check and by Record with a *BudgetError naming how many
// people and their current total, and no file changes; people it would
// not take above it are recorded.
func TestLedgerBudget(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	if err := l.SetBudget(2.5); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := l.Record(l.rel(strconv.Itoa(i), span(0, 30), Params{Kind: RR, Epsilon: 1})); err != nil {
			t.Fatal(err)
		}
	}
	files := func() [3][]byte {
		var b [3][]byte
		for i, p := range []string{l.Path(), PeoplePath(l.Path()), KeyPath(l.Path())} {
			b[i], _ = os.ReadFile(p)
		}
		return b
	}
	before := files()
	r := l.rel("over", span(20, 40), Params{Kind: RR, Epsilon: 1}) // 10 of its people carry 2 already
	for name, err := range map[string]error{"Check": l.Check(&r), "Record": second(l.Record(r))} {
		var be *BudgetError
		if !errors.As(err, &be) || !errors.Is(err, ErrBudget) || be.People != 10 || be.Releases != 2 ||
			!(be.Current > 1.99 && be.Current <= 2) || !(be.Would > 2.99 && be.Would <= 3) {
			t.Fatalf("%s: %v (%+v), want a budget refusal for 10 people at ε ≈ 2", name, err, be)
		}
		if !strings.Contains(err.Error(), "10 people") {
			t.Fatalf("%s: %q does not name the people", name, err)
		}
	}
	if after := files(); !reflect.DeepEqual(after, before) {
		t.Fatal("a refused release changed the ledger's files")
	}
	if _, err := l.Record(l.rel("fresh", span(30, 40), Params{Kind: RR, Epsilon: 2})); err != nil {
		t.Fatalf("a release within the budget: %v", err)
	}
	if err := l.SetBudget(-1); err == nil {
		t.Fatal("a negative budget was accepted")
	}
}

// TestLedgerRoundTrip: ReadLedger returns exactly the entries Record and
// Abort returned (quoted path, secure and seeded noise, +Inf, aborted row),
// and the file matches testdata/ledger.golden.csv (go test -run
// TestLedgerRoundTrip -update rewrites it).
func TestLedgerRoundTrip(t *testing.T) {
	l := newTestLedger(t, 1e-6)
	secure := l.rel("c0ffee", span(0, 100), Params{Kind: LLPLap, K: 64, Epsilon: 0.5, Secure: true})
	secure.Noise, secure.Seed, secure.Path = NoiseSecure, "", `out dir/a,"b".arrow`
	seeded := l.rel("beef", span(50, 150), Params{Kind: RR, Epsilon: 1})
	seeded.Noise, seeded.Seed = NoiseSeeded, "18446744073709551615"
	var want []LedgerEntry
	for _, r := range []Release{secure, seeded, l.rel("llp", span(200, 210), Params{Kind: LLP, K: 8}),
		l.rel("geom", span(0, 10), Params{Kind: LLPGeom, K: 1, Epsilon: 0.25})} {
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

// TestLedgerRefuses: Record on a file with a foreign or earlier-format
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
		{"previous format", ledgerHeaderV2 + "\n", "plain SHA-256", 1},
		{"empty file", "", "not a privacy ledger", 1},
		{"truncated last line", string(golden[:len(golden)-7]), "incomplete", 0},
		{"invalid mechanism", lines[0] + lines[1] + badRow + lines[3], `"rx" is not a mechanism`, 3},
		{"unbalanced quote", lines[0] + `x,"released` + "\n", "unparsable", 2},
		{"abort before record", lines[0] + lines[5], "aborted before", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), LedgerFile)
			writeFixedKey(t, path)
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			l := openTestLedger(t, path, 1e-6)
			_, err := l.Record(l.rel("new", span(0, 3), Params{Kind: RR, Epsilon: 1}))
			var le *LedgerError
			if !errors.As(err, &le) || !errors.Is(err, ErrLedgerFormat) || le.Line != tc.line ||
				!strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Record error %v, want a LedgerError at line %d naming the file and %q", err, tc.line, tc.wantMsg)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatalf("file changed to %q", b)
			}
			if _, err := os.Stat(PeoplePath(path)); err == nil {
				t.Fatal("a people file was written")
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

// TestLedgerFiles: the key is created with mode 0600 and reused; the people
// file stays consistent with the CSV or the ledger refuses: missing, older
// (restored from a backup), damaged or keyed with another key. A crash
// between the people file's rename and the CSV row leaves a release the CSV
// lacks, which counts nowhere.
func TestLedgerFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, LedgerFile)
	l := openTestLedger(t, path, 1e-6)
	st, err := os.Stat(KeyPath(path))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v", err, st.Mode())
	}
	if _, err := l.Record(l.rel("a", span(0, 10), Params{Kind: RR, Epsilon: 1})); err != nil {
		t.Fatal(err)
	}
	old, _ := os.ReadFile(PeoplePath(path))
	if _, err := l.Record(l.rel("b", span(0, 10), Params{Kind: RR, Epsilon: 1})); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(PeoplePath(path))
	csvRows, _ := os.ReadFile(path)
	key, _ := os.ReadFile(KeyPath(path))
	restore := func() {
		os.WriteFile(PeoplePath(path), cur, 0o644)
		os.WriteFile(path, csvRows, 0o644)
		os.WriteFile(KeyPath(path), key, 0o600)
	}
	tests := []struct {
		name   string
		damage func()
		want   error
		msg    string
	}{
		{"people file missing", func() { os.Remove(PeoplePath(path)) }, ErrLedgerFormat, "under-count"},
		{"people file older than the ledger", func() { os.WriteFile(PeoplePath(path), old, 0o644) }, ErrLedgerFormat, `"b"`},
		{"people file damaged", func() {
			b := slices.Clone(cur)
			b[len(b)-40] ^= 1
			os.WriteFile(PeoplePath(path), b, 0o644)
		}, ErrLedgerFormat, "people file"},
		{"people file truncated", func() { os.WriteFile(PeoplePath(path), cur[:len(cur)/2], 0o644) }, ErrLedgerFormat, "people file"},
		{"key replaced", func() {
			os.Remove(KeyPath(path))
			createKey(KeyPath(path))
		}, ErrLedgerKey, "another key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer restore()
			tc.damage()
			l2, err := NewLedger(path, 1e-6)
			if err != nil {
				t.Fatal(err)
			}
			k, err := l2.Keys()
			if err != nil {
				t.Fatal(err)
			}
			r := l.rel("c", span(0, 10), Params{Kind: RR, Epsilon: 1})
			r.KeyCheck = k.Check()
			h := k.NewPersonHasher()
			for i := range r.People {
				r.People[i] = h.ID([]byte(strconv.Itoa(i)))
			}
			before, _ := os.ReadFile(path)
			_, err = l2.Record(r)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Record: %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
				t.Fatal("the CSV changed")
			}
			if _, err := ReadLedgerState(path, 1e-6); err == nil {
				t.Fatal("ReadLedgerState accepted it")
			}
		})
	}
	t.Run("key missing", func(t *testing.T) {
		defer restore()
		os.Remove(KeyPath(path))
		l2, _ := NewLedger(path, 1e-6)
		if _, err := l2.Keys(); !errors.Is(err, ErrLedgerKey) || !strings.Contains(err.Error(), "restore") {
			t.Fatalf("Keys: %v", err)
		}
		if _, err := os.Stat(KeyPath(path)); err == nil {
			t.Fatal("a new key was created for an existing ledger")
		}
	})
	t.Run("crash before the CSV row", func(t *testing.T) {
		defer restore()
		if _, err := l.Record(l.rel("lost", span(0, 10), Params{Kind: RR, Epsilon: 5})); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, csvRows, 0o644) // the row never made it
		e, err := l.Record(l.rel("next", span(0, 10), Params{Kind: RR, Epsilon: 1}))
		if err != nil {
			t.Fatal(err)
		}
		if e.Releases != 3 || e.EpsTotalBasic != 3 {
			t.Fatalf("after a crash: %+v; want the lost release ignored", e)
		}
	})
}

// TestRecordValidation: each malformed Release is refused with a
// *ParamError naming its field, and nothing is written.
func TestRecordValidation(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*Release)
		field string
	}{
		{"empty id", func(r *Release) { r.ID = "" }, "id"},
		{"newline in id", func(r *Release) { r.ID = "a\nb" }, "id"},
		{"newline in input", func(r *Release) { r.Input = "a\nb" }, "input"},
		{"plain digest", func(r *Release) { r.Labels = "sha256:" + digest }, "labels"},
		{"uppercase digest", func(r *Release) { r.Labels = strings.ToUpper(r.Labels) }, "labels"},
		{"no people", func(r *Release) { r.People = nil }, "people"},
		{"more people than rows", func(r *Release) { r.Rows = 1 }, "people"},
		{"no key check", func(r *Release) { r.KeyCheck = "" }, "key_check"},
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
			r := l.rel("id", span(0, 3), Params{Kind: RR, Epsilon: 1})
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
// releases each of the same people into one new ledger get the worst
// person's release counts 1..80 exactly once each, and the last total is
// the sum of all ε.
func TestLedgerConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), LedgerFile)
	const writers, each = 8, 10
	var mu sync.Mutex
	var counts []int
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			l := openTestLedger(t, path, 1e-6)
			for i := range each {
				e, err := l.Record(l.rel(fmt.Sprintf("%d-%d", w, i), span(0, 20), Params{Kind: RR, Epsilon: 0.5}))
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
	st, err := ReadLedgerState(path, 1e-6)
	if err != nil || len(st.Classes) != 1 || st.Classes[0].Comp.Basic != 0.5*writers*each || st.People != 20 {
		t.Fatalf("%+v, %v", st, err)
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
// as TestLedgerChild) start together and record 10 releases each of the
// same people into one new ledger (each creating the key if it is first);
// the release counts they get back are 1..40 exactly once each.
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
	l := openTestLedger(t, path, 1e-6)
	for i := range 10 {
		e, err := l.Record(l.rel(os.Getenv("PETS_LEDGER_ID")+"-"+strconv.Itoa(i), span(0, 25), Params{Kind: RR, Epsilon: 1}))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("count=%d\n", e.Releases)
	}
}

// TestPeopleFileSize: people with one history share one record: 100,000
// people through 5 releases (all, then halves) take a few bytes each, and
// the classes are the distinct histories.
func TestPeopleFileSize(t *testing.T) {
	if testing.Short() {
		t.Skip("100k people")
	}
	l := newTestLedger(t, 1e-6)
	const n = 100_000
	for i, ids := range [][]int{span(0, n), span(0, n), span(0, n/2), span(n/2, n), span(0, n)} {
		if _, err := l.Record(l.rel(strconv.Itoa(i), ids, Params{Kind: RR, Epsilon: 0.5})); err != nil {
			t.Fatal(err)
		}
	}
	st, err := os.Stat(PeoplePath(l.Path()))
	if err != nil || st.Size() > 9*n { // 8-byte keys as varint deltas (~7 bytes at this density) + a class byte
		t.Fatalf("people file %v bytes for %d people (%v)", st.Size(), n, err)
	}
	s, err := ReadLedgerState(l.Path(), 1e-6)
	if err != nil || len(s.Classes) != 2 || s.People != n {
		t.Fatalf("%d classes, %d people (%v)", len(s.Classes), s.People, err)
	}
}

// FuzzReadLedger: no input makes the parser panic; whatever it accepts
// formats back to the same rows (parse → format → parse is stable). The
// seed corpus (a valid ledger, truncated at several points and with flipped
// bytes, the earlier formats) runs in plain go test.
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
	f.Add([]byte(ledgerHeaderV2 + "\n"))
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

// FuzzPeopleFile: no bytes make the people-file reader panic or loop; a
// damaged file is an error wrapping ErrLedgerFormat. The seed corpus (a
// valid file, truncated and with flipped bytes) runs in plain go test.
func FuzzPeopleFile(f *testing.F) {
	l := newTestLedger(f, 1e-6)
	for i, ids := range [][]int{span(0, 40), span(20, 60)} {
		if _, err := l.Record(l.rel(strconv.Itoa(i), ids, Params{Kind: RR, Epsilon: 1})); err != nil {
			f.Fatal(err)
		}
	}
	valid, err := os.ReadFile(PeoplePath(l.Path()))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	for _, cut := range []int{0, 8, 30, len(valid) / 2, len(valid) - 1} {
		f.Add(valid[:cut])
	}
	for _, at := range []int{9, 30, 45, len(valid) / 2, len(valid) - 33, len(valid) - 1} {
		b := slices.Clone(valid)
		b[at] ^= 0x41
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "p.people")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		pr, err := openPeople(path)
		if err == nil {
			err = merge(pr, []uint64{1, 2, 3}, func(uint64, int, bool) {})
			pr.Close()
		}
		if err != nil && !errors.Is(err, ErrLedgerFormat) {
			t.Fatalf("error %v does not wrap ErrLedgerFormat", err)
		}
		if err == nil && !bytes.Equal(b, valid) {
			t.Logf("accepted a different file of %d bytes", len(b))
		}
	})
}

// TestSortKeys: the bucketed parallel sort equals slices.Sort + Compact on
// large inputs with duplicates and skewed top bytes.
func TestSortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for _, n := range []int{10, 1 << 16, 300_000} {
		for _, skew := range []bool{false, true} {
			keys := make([]uint64, n)
			for i := range keys {
				keys[i] = r.Uint64()
				if skew {
					keys[i] >>= 60 // few distinct top bytes, many duplicates
				}
				if i%7 == 0 && i > 0 {
					keys[i] = keys[i-1]
				}
			}
			want := slices.Compact(slices.Sorted(slices.Values(keys)))
			if got := sortKeys(keys); !slices.Equal(got, want) {
				t.Fatalf("n=%d skew=%v: %d keys, want %d", n, skew, len(got), len(want))
			}
		}
	}
}
