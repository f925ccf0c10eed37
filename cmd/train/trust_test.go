package main

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/ledger"
)

// copyLedger returns the bytes of the ledger's three files.
func copyLedger(t *testing.T, lp string) [3][]byte {
	t.Helper()
	var b [3][]byte
	for i, p := range []string{lp, ledger.PeoplePath(lp), ledger.KeyPath(lp)} {
		var err error
		if b[i], err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// putLedger writes files (some of the three: nil keeps one) back.
func putLedger(t *testing.T, lp string, files [3][]byte) {
	t.Helper()
	for i, p := range []string{lp, ledger.PeoplePath(lp), ledger.KeyPath(lp)} {
		if files[i] != nil {
			os.Remove(p)
			if err := os.WriteFile(p, files[i], []os.FileMode{0o640, 0o640, 0o600}[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The finding's rollback: three rr(1) releases under --budget 3.5, then
// the last two rows of privacy_ledger.csv removed together with the
// matching tail of the people file: the ledger looked like one release and
// admitted a fourth over the budget. It is refused, naming the key file
// that keeps the chain's head, and nothing is written.
func TestPrivatizeRefusesRollback(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 200), data.TrainFile)
	out := t.TempDir()
	lp := userLedger(env)
	var first [3][]byte
	for i := range 3 {
		if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "3.5",
			"--out", filepath.Join(out, strconv.Itoa(i)+".arrow")); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = copyLedger(t, lp)
		}
	}
	putLedger(t, lp, [3][]byte{first[0], first[1], nil}) // CSV and people file truncated together; the key file as it is
	before := copyLedger(t, lp)
	next := filepath.Join(out, "3.arrow")
	_, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--budget", "3.5", "--out", next)
	if err == nil || !strings.Contains(err.Error(), ledger.KeyPath(lp)) || !strings.Contains(err.Error(), "records a chain of 3") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("a 3-release ledger truncated to 1: %v, want one line naming the key file's chain of 3", err)
	}
	if _, err := os.Stat(next); err == nil {
		t.Fatal("the release was written")
	}
	if after := copyLedger(t, lp); !reflect.DeepEqual(after, before) {
		t.Fatal("the refused ledger changed")
	}
	if _, err := cli(t, env, "ledger"); err == nil {
		t.Fatal("train ledger accepted the truncated ledger")
	}
}

// Restored whole from one older backup, a ledger verifies: no file of it
// can tell. `train ledger --check FILE.arrow` can, for each release made
// since (its metadata names the row that charged it): the exit status is
// non-zero and the line says MISSING; a chain head printed by
// `train ledger` and kept elsewhere tells too (--head).
func TestLedgerCheckReleases(t *testing.T) {
	env := userEnv(t)
	in := filepath.Join(synthDir(t, 200), data.TrainFile)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow")
	lp := userLedger(env)
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--out", a); err != nil {
		t.Fatal(err)
	}
	backup := copyLedger(t, lp)
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "llp_geom", "--k", "4", "--epsilon", "1", "--out", b); err != nil {
		t.Fatal(err)
	}
	md, err := data.ReadMetadata(b)
	if err != nil || len(md["ledger_release_id"]) != 32 || len(md["ledger_release_tag"]) != 64 {
		t.Fatalf("release metadata %v (%v): want the ledger row's id and tag", md, err)
	}
	out, err := cli(t, env, "ledger", "--check", a, "--check", b)
	if err != nil || strings.Count(out, ": held: ") != 2 {
		t.Fatalf("both releases held: %v\n%s", err, out)
	}
	report, err := cli(t, env, "ledger")
	m := regexp.MustCompile(`chain head (2:[0-9a-f]{64})`).FindStringSubmatch(report)
	if err != nil || m == nil {
		t.Fatalf("train ledger prints no chain head of 2 rows (%v):\n%s", err, report)
	}
	head := m[1]
	if out, err := cli(t, env, "ledger", "--head", head); err != nil || !strings.Contains(out, "holds the chain head "+head) {
		t.Fatalf("--head of the present ledger: %v\n%s", err, out)
	}

	putLedger(t, lp, backup) // all three files from the backup taken after a.arrow
	if _, err := cli(t, env, "ledger"); err != nil {
		t.Fatalf("the old backup verifies on its own: %v", err)
	}
	out, err = cli(t, env, "ledger", "--check", a, "--check", b)
	if err == nil || !strings.Contains(err.Error(), b) || strings.Contains(err.Error(), a+",") {
		t.Fatalf("after the rollback: %v, want an error naming %s only", err, b)
	}
	if !strings.Contains(out, a+": held") || !strings.Contains(out, b+": MISSING") || !strings.Contains(out, "rolled back") {
		t.Fatalf("after the rollback:\n%s", out)
	}
	if _, err := cli(t, env, "ledger", "--head", head); err == nil || !strings.Contains(err.Error(), "has 1 rows, the head kept elsewhere 2") {
		t.Fatalf("--head after the rollback: %v", err)
	}
	// A release of another ledger is not this one's.
	other := filepath.Join(t.TempDir(), "other", ledger.File)
	c := filepath.Join(dir, "c.arrow")
	if _, err := cli(t, env, "privatize", "--in", in, "--pet", "rr", "--epsilon", "1", "--ledger", other, "--out", c); err != nil {
		t.Fatal(err)
	}
	if out, err := cli(t, env, "ledger", "--check", c); err == nil || !strings.Contains(out, "NOT THIS LEDGER'S") {
		t.Fatalf("another ledger's release: %v\n%s", err, out)
	}
}

// writeWithColumns writes f's label and features with the extra columns
// as Parquet, and returns its path.
func writeWithColumns(t *testing.T, f *data.Frame, extra ...data.Column) string {
	t.Helper()
	labels := make([]int64, f.Rows)
	for i, v := range f.Label {
		labels[i] = int64(v)
	}
	cols := []data.Column{{Name: data.ColLabel, Values: labels}}
	for j, name := range f.Features {
		v := make([]float64, f.Rows)
		for i := range v {
			v[i] = float64(f.X[i*f.Dim()+j])
		}
		cols = append(cols, data.Column{Name: name, Values: v})
	}
	path := filepath.Join(t.TempDir(), "with_ids.parquet")
	if err := (&data.Table{Columns: append(cols, extra...)}).WriteParquet(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// One id column per ledger: the finding released with --id-column pid and
// then --id-column x0 and the same 2,500 people became 7,499. Another id
// column is refused, naming both, and nothing is written; a float column
// that is not of whole numbers (a feature) is refused as an id, naming
// the column and the row; and string ids that hold the same integer
// ("000001", " 1", "+1", "1": a trial counted 20,000 people where 5,000
// carried ε = 3) are one person.
func TestPrivatizeBindsIDColumn(t *testing.T) {
	env := userEnv(t)
	f, err := data.ReadFrame(filepath.Join(synthDir(t, 400), data.TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	pid, pid2, sid := make([]int64, f.Rows), make([]int64, f.Rows), make([]string, f.Rows)
	for i := range pid {
		person := i / 4
		pid[i], pid2[i] = int64(person), int64(person+1000)
		n := strconv.Itoa(person + 1)
		sid[i] = []string{strings.Repeat("0", 6-len(n)) + n, " " + n, "+" + n, n}[i%4]
	}
	in := writeWithColumns(t, f, data.Column{Name: "pid", Values: pid}, data.Column{Name: "pid2", Values: pid2})
	out := t.TempDir()
	if _, err := cli(t, env, "privatize", "--in", in, "--id-column", "pid", "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(out, "a.arrow")); err != nil {
		t.Fatal(err)
	}
	before := copyLedger(t, userLedger(env))
	texts := writeWithColumns(t, f, data.Column{Name: "sid", Values: sid})
	for _, tc := range []struct{ in, col, says string }{
		{in, "pid2", `knows people by the id column "pid" (integer) of its first release, this release by "pid2" (integer)`},
		{texts, "sid", `this release by "sid" (text)`},
		{in, "x0", `id column "x0" row 0 holds`},
	} {
		_, err := cli(t, env, "privatize", "--in", tc.in, "--id-column", tc.col, "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(out, tc.col+".arrow"))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--id-column %s after pid: %v, want one line saying %q", tc.col, err, tc.says)
		}
		if _, err := os.Stat(filepath.Join(out, tc.col+".arrow")); err == nil {
			t.Errorf("--id-column %s: the release was written", tc.col)
		}
	}
	if !reflect.DeepEqual(copyLedger(t, userLedger(env)), before) {
		t.Fatal("a refused release changed the ledger")
	}
	rs := ledgerRows(t, userLedger(env))
	if rs[0]["id_column"] != "pid" || rs[0]["id_type"] != "integer" || num(t, rs[0], "people") != 100 {
		t.Fatalf("ledger row %v, want id column pid (integer), 100 people", rs[0])
	}

	env = userEnv(t) // a ledger of its own, keyed by the string ids
	if _, err := cli(t, env, "privatize", "--in", texts, "--id-column", "sid", "--pet", "rr", "--epsilon", "1", "--out", filepath.Join(out, "s.arrow")); err != nil {
		t.Fatal(err)
	}
	rs = ledgerRows(t, userLedger(env))
	if num(t, rs[0], "people") != 100 || num(t, rs[0], "eps_total_basic") != 4 || rs[0]["id_type"] != "text" {
		t.Fatalf("ledger row %v, want 100 people (four forms of each id), each charged 4 rows", rs[0])
	}
}
