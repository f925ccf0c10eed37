package ledger

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"labelprivacy/pets"
)

// The rollback of the finding: a 3-release ledger whose CSV and people
// file lose their last rows together (consistent with each other) became
// a 1-release ledger and admitted a release over the budget. The key
// file's chain head refuses it, naming the key file and the rows lost,
// and nothing changes. The head's own line cannot be edited to match
// (its MAC fails); a head left behind by a crash is accepted and brought
// forward by the next writer.
func TestLedgerRollback(t *testing.T) {
	l := newTestLedger(t, Options{Budget: 3.5})
	path := l.Path()
	rr := pets.Params{Kind: pets.RR, Epsilon: 1}
	var after [4][3][]byte // the files after 0..3 releases
	after[0] = ledgerFiles(path)
	for i := range 3 {
		if _, err := l.Record(l.rel("r"+string(rune('0'+i)), span(0, 20), rr)); err != nil {
			t.Fatal(err)
		}
		after[i+1] = ledgerFiles(path)
	}
	for f := range 2 { // the CSV and the people file only grow: the old ones are their truncations
		if !bytes.HasPrefix(after[3][f], after[1][f]) {
			t.Fatalf("file %d after 1 release is not a prefix of it after 3", f)
		}
	}
	if _, err := l.Record(l.rel("over", span(0, 20), rr)); !errors.Is(err, ErrBudget) {
		t.Fatalf("a 4th release over the budget: %v", err)
	}
	restore := func(csv, people, key []byte) {
		os.WriteFile(path, csv, 0o640)
		os.WriteFile(PeoplePath(path), people, 0o640)
		os.WriteFile(KeyPath(path), key, 0o600)
	}
	refused := func(name string, want error, says ...string) {
		t.Helper()
		before := ledgerFiles(path)
		_, err := l.Record(l.rel("over", span(0, 20), rr))
		if !errors.Is(err, want) {
			t.Fatalf("%s: Record: %v, want %v", name, err, want)
		}
		for _, s := range says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not say %q", name, err, s)
			}
		}
		if _, err := l.State(0); err == nil {
			t.Errorf("%s: State accepted it", name)
		}
		if !reflect.DeepEqual(ledgerFiles(path), before) {
			t.Errorf("%s: a refused ledger's files changed", name)
		}
	}
	for _, rows := range []int{0, 1, 2} {
		restore(after[rows][0], after[rows][1], after[3][2])
		refused("truncated to "+string(rune('0'+rows)), ErrFormat, KeyPath(path), "records a chain of 3", "holds "+string(rune('0'+rows))+" rows")
	}
	// The head edited to match the truncation: its MAC fails.
	key := string(after[3][2])
	edited := strings.Replace(key, "head 3 ", "head 1 ", 1)
	restore(after[1][0], after[1][1], []byte(edited))
	refused("head edited", ErrFormat, "fails its MAC")
	// All three files from one older backup: no file of the ledger can
	// tell (CheckReleases and a head kept elsewhere can: TestCheckReleases).
	restore(after[1][0], after[1][1], after[1][2])
	if _, err := l.Rows(); err != nil {
		t.Fatalf("a consistent old backup: %v", err)
	}
	// A head one row behind (a crash between the row and the head) is
	// accepted and brought forward by the next writer.
	restore(after[3][0], after[3][1], after[2][2])
	if rows, err := l.Rows(); err != nil || len(rows) != 3 {
		t.Fatalf("a head left one row behind: %v", err)
	}
	if _, err := l.Record(l.rel("r3", span(20, 30), rr)); err != nil {
		t.Fatal(err)
	}
	_, h, err := readKey(KeyPath(path))
	if rows, _ := l.Rows(); err != nil || h.rows != 4 || hex.EncodeToString(h.mac[:]) != rows[3].MAC {
		t.Fatalf("head after the next release: %+v (%v)", h, err)
	}
	// The head names the chain's own last row: a ledger with as many rows
	// but another history is refused.
	other := newTestLedger(t, Options{})
	for i := range 4 {
		if _, err := other.Record(other.rel("o"+string(rune('0'+i)), span(0, 5), rr)); err != nil {
			t.Fatal(err)
		}
	}
	o := ledgerFiles(other.Path())
	restore(o[0], o[1], ledgerFiles(path)[2])
	refused("another chain of the same length", ErrFormat, "row 4 is not the one")
}

// One id column per ledger: the finding's releases with --id-column pid
// and then --id-column x0 made the same 2,500 people 7,499. A release by
// another column, or by the same name holding another kind of value, is
// refused (ErrMismatch, naming both columns), by Check, Plan and Record.
func TestLedgerBindsIDColumn(t *testing.T) {
	l := newTestLedger(t, Options{})
	rr := pets.Params{Kind: pets.RR, Epsilon: 1}
	r := l.rel("pid", span(0, 50), rr)
	r.IDColumn = IDColumn{Name: "pid", Type: IDInteger}
	if _, err := l.Record(r); err != nil {
		t.Fatal(err)
	}
	before := ledgerFiles(l.Path())
	for _, col := range []IDColumn{{"x0", IDInteger}, {"pid", IDText}} {
		r := l.rel("other", span(0, 50), rr)
		r.IDColumn = col
		for name, err := range map[string]error{"Check": l.Check(ByID, col), "Plan": second(l.Plan(&r)), "Record": second(l.Record(r))} {
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `"pid" (integer)`) || !strings.Contains(err.Error(), col.String()) {
				t.Errorf("%v: %s: %v, want ErrMismatch naming both columns", col, name, err)
			}
		}
	}
	if !reflect.DeepEqual(ledgerFiles(l.Path()), before) {
		t.Fatal("a refused release changed the ledger")
	}
	r = l.rel("again", span(0, 50), rr)
	r.IDColumn = IDColumn{Name: "pid", Type: IDInteger}
	if e, err := l.Record(r); err != nil || e.Releases != 2 || e.IDColumn != r.IDColumn {
		t.Fatalf("the same column again: %+v, %v", e, err)
	}
}

// CheckReleases says, for each release file (the id and tag its metadata
// records, the SHA-256 of its bytes), whether the ledger still holds its
// row: after all three files are restored from one older backup the
// ledger verifies, yet a release made since is reported missing; a file
// of another ledger, a changed file, one that names no row and one whose
// row was aborted are told apart.
func TestCheckReleases(t *testing.T) {
	l := newTestLedger(t, Options{})
	path := l.Path()
	rr := pets.Params{Kind: pets.RR, Epsilon: 1}
	file := func(id string) ReleaseFile {
		return ReleaseFile{Path: id + ".arrow", ID: id, Tag: l.keys.ReleaseTag(id), SHA256: digest}
	}
	if _, err := l.Record(l.rel("a", span(0, 10), rr)); err != nil {
		t.Fatal(err)
	}
	backup := ledgerFiles(path)
	for _, id := range []string{"b", "c"} {
		if _, err := l.Record(l.rel(id, span(0, 10), rr)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Abort("c", "disk full"); err != nil {
		t.Fatal(err)
	}
	changed := file("a")
	changed.SHA256 = strings.Repeat("0", 64)
	foreign := file("a")
	foreign.Tag = newKeys([32]byte{9}).ReleaseTag("a")
	files := []ReleaseFile{file("a"), file("b"), file("c"), changed, foreign, {Path: "old.arrow"}}
	check := func(want ...Verdict) {
		t.Helper()
		got, err := l.CheckReleases(files)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range got {
			if c.Verdict != want[i] || !strings.Contains(c.Explain(path), files[i].Path) {
				t.Errorf("%s: %v (%s), want %v", files[i].Path, c.Verdict, c.Explain(path), want[i])
			}
		}
	}
	check(Held, Held, HeldAborted, Changed, Foreign, Unnamed)
	for i, p := range []string{path, PeoplePath(path), KeyPath(path)} {
		os.WriteFile(p, backup[i], 0o600)
	}
	if _, err := l.State(0); err != nil {
		t.Fatalf("the backup verifies on its own: %v", err)
	}
	check(Held, Missing, Missing, Changed, Foreign, Unnamed)
}

// FuzzKeyFile: the key file reader never panics, and a key file it accepts
// is the canonical one of its key and head (nothing else is accepted).
func FuzzKeyFile(f *testing.F) {
	k := newKeys(fixedKey)
	f.Add(keyFile(k, head{}))
	f.Add(keyFile(k, head{rows: 41, mac: [32]byte{1, 2, 3}}))
	f.Add([]byte(keyHeaderV1 + "\n" + strings.Repeat("ab", 32) + "\n"))
	f.Add([]byte(keyHeader + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := t.TempDir() + "/k.key"
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, h, err := readKey(path)
		if err != nil {
			return
		}
		if want := keyFile(got, h); !bytes.Equal(bytes.TrimRight(b, "\n"), bytes.TrimRight(want, "\n")) {
			t.Fatalf("accepted %q, which is not the canonical %q", b, want)
		}
	})
}
