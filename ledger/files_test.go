package ledger

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// fixture is a ledger with history: 41 rr(1) releases of people 0..9, the
// files' bytes after 40 and after 41 releases.
type fixture struct {
	l                 *testLedger
	path              string
	csv40, people40   []byte
	csv, people, key  []byte
	restore, snapshot func()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{l: newTestLedger(t, Options{})}
	f.path = f.l.Path()
	for i := range 41 {
		if i == 40 {
			f.csv40, _ = os.ReadFile(f.path)
			f.people40, _ = os.ReadFile(PeoplePath(f.path))
		}
		if _, err := f.l.Record(f.l.rel("r"+strconv.Itoa(i), span(0, 10), pets.Params{Kind: pets.RR, Epsilon: 1})); err != nil {
			t.Fatal(err)
		}
	}
	f.csv, _ = os.ReadFile(f.path)
	f.people, _ = os.ReadFile(PeoplePath(f.path))
	f.key, _ = os.ReadFile(KeyPath(f.path))
	f.restore = func() {
		os.WriteFile(f.path, f.csv, 0o640)
		os.WriteFile(PeoplePath(f.path), f.people, 0o640)
		os.Remove(KeyPath(f.path))
		os.WriteFile(KeyPath(f.path), f.key, 0o600)
	}
	return f
}

// next is a release the damaged ledger must refuse.
func (f *fixture) next() Release {
	return f.l.rel("next", span(0, 10), pets.Params{Kind: pets.RR, Epsilon: 1})
}

// refused checks that Record, State, Rows and Keys+Record refuse with an
// error wrapping want and holding msg, and that no file changed.
func (f *fixture) refused(t *testing.T, want error, msg ...string) {
	t.Helper()
	before := ledgerFiles(f.path)
	l, _ := Open(f.path, Options{})
	_, err := l.Record(f.next())
	if !errors.Is(err, want) {
		t.Fatalf("Record: %v, want %v", err, want)
	}
	for _, m := range msg {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("Record: %q does not say %q", err, m)
		}
	}
	if _, err := l.State(0); err == nil {
		t.Fatal("State accepted it")
	}
	if _, err := l.Rows(); err == nil {
		t.Fatal("Rows accepted it")
	}
	if after := ledgerFiles(f.path); !reflect.DeepEqual(after, before) {
		t.Fatal("a refused ledger's files changed")
	}
	if strings.Count(err.Error(), "ledger: ") > 1 || strings.Count(err.Error(), "ledger: key") > 1 {
		t.Fatalf("doubled prefix: %q", err)
	}
}

// A ledger whose CSV is lost (missing, or only its header) while the
// people file and the key remain is refused, naming the files, and nothing
// changes: restarting would turn a 41-release history into 1.
func TestLedgerLostCSV(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name   string
		damage func()
		msg    []string
	}{
		{"missing", func() { os.Remove(f.path) }, []string{"CSV is missing", KeyPath(f.path), PeoplePath(f.path)}},
		{"header only", func() { os.WriteFile(f.path, []byte(headerLine()), 0o640) }, []string{"has no rows", "names row 41", "restore"}},
		{"40 of 41 rows and the last gone too", func() {
			lines := bytes.SplitAfter(f.csv, []byte("\n"))
			os.WriteFile(f.path, bytes.Join(lines[:len(lines)-3], nil), 0o640) // header + 39 rows
		}, []string{"missing its rows after row 39", "names row 41"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer f.restore()
			tc.damage()
			f.refused(t, ErrFormat, tc.msg...)
			l, _ := Open(f.path, Options{})
			if _, err := l.Keys(); err != nil { // the key is there; Keys creates nothing
				t.Fatal(err)
			}
			if tc.name == "missing" {
				if _, err := os.Stat(f.path); err == nil {
					t.Fatal("Keys recreated a lost CSV")
				}
			}
		})
	}
}

// The ledger is tamper-evident: editing or removing rows is refused,
// naming the first bad row; a last row removed alone is put back from the
// people file (which names it), so no total is lost.
func TestLedgerTamper(t *testing.T) {
	f := newFixture(t)
	lines := bytes.SplitAfter(f.csv, []byte("\n"))
	lines = lines[:len(lines)-1] // the empty string after the last '\n'
	join := func(ls ...[]byte) []byte { return bytes.Join(ls, nil) }
	without := func(i int) []byte {
		return join(slices.Concat(lines[:i], lines[i+1:])...)
	}
	edit := func(i int, from, to string) []byte {
		c := slices.Clone(lines)
		c[i] = bytes.Replace(c[i], []byte(from), []byte(to), 1)
		return join(c...)
	}
	for _, tc := range []struct {
		name    string
		content []byte
		line    int
		msg     string
	}{
		{"middle row deleted", without(10), 11, "row 10 fails its MAC"},
		{"first row deleted", without(1), 2, "row 1 fails its MAC"},
		{"ε edited from 1 to 0.001", edit(5, ",rr,0,1,", ",rr,0,0.001,"), 6, "row 5 fails its MAC"},
		{"total edited", edit(41, ",41,10,", ",4,10,"), 42, "row 41 fails its MAC"},
		{"two rows swapped", join(slices.Concat(lines[:3], [][]byte{lines[4], lines[3]}, lines[5:])...), 4, "row 3 fails its MAC"},
		{"a row repeated", join(slices.Concat(lines[:3], [][]byte{lines[2]}, lines[3:])...), 4, `"r1" released twice`},
		{"last two rows deleted", join(lines[:40]...), 0, "names row 41"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer f.restore()
			os.WriteFile(f.path, tc.content, 0o640)
			f.refused(t, ErrFormat, tc.msg)
			l, _ := Open(f.path, Options{})
			_, err := l.Rows()
			var le *Error
			if !errors.As(err, &le) || le.Line != tc.line {
				t.Fatalf("Rows: %v, want an *Error at line %d", err, tc.line)
			}
		})
	}
	t.Run("last row deleted is rolled forward", func(t *testing.T) {
		defer f.restore()
		os.WriteFile(f.path, join(lines[:41]...), 0o640)
		e, err := f.l.Record(f.next())
		if err != nil {
			t.Fatal(err)
		}
		if e.Releases != 42 || e.EpsTotalBasic != 42 {
			t.Fatalf("after the last row was removed: %+v, want it counted (42 releases)", e)
		}
		if rows, _ := f.l.Rows(); len(rows) != 42 {
			t.Fatalf("%d rows", len(rows))
		}
	})
}

// The people file must go with the CSV: missing, older (restored from a
// backup), newer, damaged, altered or keyed with another key, it is
// refused; a crash between the people file's record and the CSV row is
// rolled forward (the release counts).
func TestLedgerPeopleFile(t *testing.T) {
	f := newFixture(t)
	pp := PeoplePath(f.path)
	if !bytes.HasPrefix(f.people, f.people40) {
		t.Fatal("the 41st release rewrote the people file; the truncation cases assume it appended")
	}
	for _, tc := range []struct {
		name   string
		damage func()
		want   error
		msg    string
	}{
		{"missing", func() { os.Remove(pp) }, ErrFormat, "people file " + pp + " is missing"},
		{"older than the ledger", func() { os.WriteFile(pp, f.people40, 0o640) }, ErrFormat, "names row 40 but the ledger has 41 rows"},
		{"CSV older than the people file", func() { os.WriteFile(f.path, f.csv40, 0o640) }, ErrFormat, ""},
		{"a record's byte flipped", func() {
			b := slices.Clone(f.people)
			b[len(b)-40] ^= 1
			os.WriteFile(pp, b, 0o640)
		}, ErrFormat, "fails its MAC"},
		{"a snapshot byte flipped", func() {
			b := slices.Clone(f.people)
			b[peopleHeaderLen+recHeaderLen+4] ^= 1
			os.WriteFile(pp, b, 0o640)
		}, ErrFormat, "people file"},
		{"truncated into the first record", func() { os.WriteFile(pp, f.people[:peopleHeaderLen+20], 0o640) }, ErrFormat, "has 41 rows"},
		// A crash while the last record was written: cut short in its
		// header or its payload, it is ignored (the file names row 40).
		{"truncated into the last record's header", func() { os.WriteFile(pp, f.people[:len(f.people40)+recHeaderLen-2], 0o640) },
			ErrFormat, "names row 40 but the ledger has 41 rows"},
		{"truncated into the last record's payload", func() { os.WriteFile(pp, f.people[:len(f.people40)+recHeaderLen+3], 0o640) },
			ErrFormat, "names row 40 but the ledger has 41 rows"},
		{"not a people file", func() { os.WriteFile(pp, []byte("hello"), 0o640) }, ErrFormat, "not a people file"},
		{"key replaced", func() {
			os.Remove(KeyPath(f.path))
			createKey(KeyPath(f.path))
		}, ErrFormat, "fails its MAC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer f.restore()
			tc.damage()
			if tc.name == "CSV older than the people file" {
				// 40 rows and a people file naming 41: row 41 is rolled
				// forward from the people file, not lost.
				e, err := f.l.Record(f.next())
				if err != nil || e.Releases != 42 {
					t.Fatalf("%+v, %v: want row 41 rolled forward and 42 releases", e, err)
				}
				return
			}
			f.refused(t, tc.want, tc.msg)
		})
	}
	t.Run("key missing", func(t *testing.T) {
		defer f.restore()
		os.Remove(KeyPath(f.path))
		l, _ := Open(f.path, Options{})
		if _, err := l.Keys(); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "restore") {
			t.Fatalf("Keys: %v", err)
		}
		if _, err := os.Stat(KeyPath(f.path)); err == nil {
			t.Fatal("a new key was created for an existing ledger")
		}
	})
}

// A ledger's files keep their secrets from other users: the key is
// created 0600 and refused when wider, the CSV and people file are created
// 0640 and refused when the world can read them.
func TestLedgerModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", File)
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Keys(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{KeyPath(path): 0o600, path: 0o640, PeoplePath(path): 0o640, filepath.Dir(path): 0o700} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Fatalf("%s: mode %v (%v), want %04o", p, st.Mode().Perm(), err, want)
		}
	}
	for _, tc := range []struct {
		file string
		mode os.FileMode
		want error
		msg  string
	}{
		{KeyPath(path), 0o640, ErrKey, "chmod 600"},
		{KeyPath(path), 0o604, ErrKey, "must not be readable by others"},
		{path, 0o644, ErrFormat, "chmod o-rwx"},
		{PeoplePath(path), 0o644, ErrFormat, "chmod o-rwx"},
	} {
		os.Chmod(tc.file, tc.mode)
		_, err := l.Rows()
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s at %04o: %v, want %v saying %q", tc.file, tc.mode, err, tc.want, tc.msg)
		}
		os.Chmod(tc.file, map[bool]os.FileMode{true: 0o600, false: 0o640}[tc.file == KeyPath(path)])
	}
	if _, err := l.Rows(); err != nil {
		t.Fatal(err)
	}
}

// One ledger, one rule for who a person is: a release keyed by an id
// column is refused by a ledger of people known by their features (the
// same 5,000 people would count as 10,000), and the other way round.
func TestLedgerIdentityRule(t *testing.T) {
	l := newTestLedger(t, Options{})
	if _, err := l.Record(l.rel("ids", span(0, 50), pets.Params{Kind: pets.RR, Epsilon: 1})); err != nil {
		t.Fatal(err)
	}
	before := ledgerFiles(l.Path())
	r := l.rel("features", span(0, 50), pets.Params{Kind: pets.RR, Epsilon: 1})
	r.Identity, r.IDColumn = ByFeatures, IDColumn{}
	for name, err := range map[string]error{"Check": l.Check(ByFeatures, IDColumn{}), "Plan": second(l.Plan(&r)), "Record": second(l.Record(r))} {
		if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "knows people by an id column, this release by their feature values") {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := l.Check(ByID, uid); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ledgerFiles(l.Path()), before) {
		t.Fatal("a refused release changed the ledger")
	}
}

// δ' is bounded (≤ 1e-3) and one per ledger: a release at another δ' is
// refused, and the totals are stated at the ledger's own.
func TestLedgerDeltaPrime(t *testing.T) {
	for _, d := range []float64{0.5, 2e-3, -1} {
		if _, err := Open("x.csv", Options{DeltaPrime: d}); !errors.Is(err, ErrInvalid) {
			t.Errorf("δ' = %v: %v", d, err)
		}
	}
	l := newTestLedger(t, Options{DeltaPrime: 1e-5})
	e, err := l.Record(l.rel("a", span(0, 5), pets.Params{Kind: pets.RR, Epsilon: 1}))
	if err != nil || e.DeltaPrime != 1e-5 {
		t.Fatalf("%+v, %v", e, err)
	}
	other := openTestLedger(t, l.Path(), Options{DeltaPrime: 1e-6})
	if _, err := other.Record(other.rel("b", span(0, 5), pets.Params{Kind: pets.RR, Epsilon: 1})); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), "δ' = 1e-05") {
		t.Fatalf("another δ': %v", err)
	}
	own := openTestLedger(t, l.Path(), Options{})
	e, err = own.Record(own.rel("c", span(0, 5), pets.Params{Kind: pets.RR, Epsilon: 1}))
	if err != nil || e.DeltaPrime != 1e-5 {
		t.Fatalf("δ' unset: %+v, %v; want the ledger's 1e-5", e, err)
	}
	st, err := own.State(0)
	if err != nil || st.DeltaPrime != 1e-5 || st.Own != 1e-5 {
		t.Fatalf("%+v, %v", st, err)
	}
	if _, err := own.State(0.5); !errors.Is(err, ErrInvalid) {
		t.Fatalf("State at δ' 0.5: %v", err)
	}
	st, err = own.State(1e-3)
	if err != nil || st.DeltaPrime != 1e-3 || !(st.Classes[0].Comp.Total < e.EpsTotal) {
		t.Fatalf("State at 1e-3: %+v, %v", st, err)
	}
}

// Doubled prefixes: an unreadable key says "ledger" and "key" once.
func TestKeyErrorPrefix(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	newFixedLedgerFiles(t, path)
	os.Remove(KeyPath(path))
	os.WriteFile(KeyPath(path), []byte("not a key\n"), 0o600)
	l, _ := Open(path, Options{})
	for name, err := range map[string]error{"Keys": second(l.Keys()), "Rows": second(l.Rows()), "State": second(l.State(0))} {
		if !errors.Is(err, ErrKey) || strings.Count(err.Error(), "ledger: key") != 1 || strings.Count(err.Error(), "ledger: ") != 1 {
			t.Errorf("%s: %q", name, err)
		}
	}
}

// Keys makes a new ledger whole (CSV, people file, then key) and refuses
// to make a key for one that has rows; a key whose CSV and people file are
// both missing is a lost ledger, not a new one.
func TestLedgerKeysCreation(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	l, _ := Open(path, Options{})
	if _, err := l.Rows(); err == nil {
		t.Fatal("Rows of a ledger never created")
	}
	if err := l.Check(ByID, uid); err != nil {
		t.Fatalf("Check of a new ledger: %v", err)
	}
	k1, err := l.Keys()
	if err != nil {
		t.Fatal(err)
	}
	k2, err := l.Keys()
	if err != nil || k1.Check() != k2.Check() {
		t.Fatalf("second Keys: %v", err)
	}
	if rows, err := l.Rows(); err != nil || len(rows) != 0 {
		t.Fatalf("a new ledger: %v, %v", rows, err)
	}
	os.Remove(path)
	os.Remove(PeoplePath(path))
	if _, err := l.Rows(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "CSV is missing") {
		t.Fatalf("key without CSV and people file: %v", err)
	}
}
