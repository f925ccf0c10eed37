package ledger

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode"

	"labelprivacy/internal/faultpoint"
	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

func columnNames() []string {
	return strings.Split(strings.TrimSuffix(headerLine(), "\n"), ",")
}

// docColumns returns the column names of doc.go's table of the ledger's
// columns: the first field of each tab-indented line after "columns, in
// order:", split at ", " ("rows, people" names two).
func docColumns(doc string) []string {
	_, rest, ok := strings.Cut(doc, "columns, in order:\n//\n")
	if !ok {
		return nil
	}
	var names []string
	for _, line := range strings.Split(rest, "\n") {
		body, ok := strings.CutPrefix(line, "//\t")
		if !ok {
			break
		}
		if body == "" || body[0] == ' ' { // a continuation line
			continue
		}
		first, _, _ := strings.Cut(body, "  ")
		names = append(names, strings.Split(first, ", ")...)
	}
	return names
}

// readmeColumns returns the list after "Columns:" in README's section on
// the privacy ledger (the code span may wrap across lines).
func readmeColumns(readme string) []string {
	_, sec, _ := strings.Cut(readme, "\n## The privacy ledger") // docs/ledger.md
	sec, _, _ = strings.Cut(sec, "\n#")
	m := regexp.MustCompile("Columns: `([^`]+)`").FindStringSubmatch(sec)
	if m == nil {
		return nil
	}
	return strings.Split(strings.Join(strings.Fields(m[1]), " "), ", ")
}

// The ledger's columns as doc.go and docs/ledger.md's "The privacy ledger" list
// them are the ones the ledger writes and reads, in order.
func TestLedgerColumnsDocumented(t *testing.T) {
	want := columnNames()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := docColumns(string(doc)); !slices.Equal(got, want) {
		t.Errorf("doc.go lists the ledger's columns as\n%q\nwant\n%q", got, want)
	}
	readme := []byte(testutil.UserDocs(t, ".."))
	if got := readmeColumns(string(readme)); !slices.Equal(got, want) {
		t.Errorf("README.md lists the ledger's columns as\n%q\nwant\n%q", got, want)
	}
	// The parsers catch drift: a renamed, dropped or swapped column.
	for _, tc := range []struct{ from, to string }{
		{"eps_total_drv_quad  the same", "eps_total_quad  the same"},
		{"//\tdelta_prime ", "//\tdelta_prime_ "},
		{"//\trows, people ", "//\tpeople, rows "},
	} {
		if !strings.Contains(string(doc), tc.from) {
			t.Fatalf("doc.go no longer holds %q: update this test", tc.from)
		}
		if slices.Equal(docColumns(strings.Replace(string(doc), tc.from, tc.to, 1)), want) {
			t.Errorf("doc.go with %q for %q passes", tc.to, tc.from)
		}
	}
	for _, tc := range []struct{ from, to string }{
		{"eps_total_pld, delta_prime", "eps_total_pld, eps_total_extra, delta_prime"},
		{"reason, mac`", "mac, reason`"},
	} {
		if !strings.Contains(string(readme), tc.from) {
			t.Fatalf("README no longer holds %q: update this test", tc.from)
		}
		if slices.Equal(readmeColumns(strings.Replace(string(readme), tc.from, tc.to, 1)), want) {
			t.Errorf("README with %q for %q passes", tc.to, tc.from)
		}
	}
}

// parseRow refuses each out-of-range or malformed field of a valid row,
// naming its column, and accepts the row itself.
func TestParseRowRefuses(t *testing.T) {
	golden, err := os.ReadFile("testdata/ledger.golden.csv")
	if err != nil {
		t.Fatal(err)
	}
	cf, err := parseCSV("golden", golden)
	if err != nil {
		t.Fatal(err)
	}
	valid := cf.rows[1] // rr ε=1, seeded, released
	rec := make([]string, len(columns)+1)
	for i, c := range columns {
		rec[i] = c.put(&valid)
	}
	rec[len(columns)] = valid.MAC
	if e, err := parseRow(rec); err != nil || !reflect.DeepEqual(e, valid) {
		t.Fatalf("valid row: %+v, %v", e, err)
	}
	col := func(name string) int { return slices.Index(columnNames(), name) }
	cases := []struct {
		name, col, value, want string
	}{
		{"no rows", "rows", "0", "rows: \"0\" is not an integer ≥ 1"},
		{"no people", "people", "0", "people: \"0\" is not an integer ≥ 1"},
		{"more people than rows", "people", "101", "people: 101 people in 100 rows"},
		{"negative k", "k", "-1", "k: \"-1\" is not an integer ≥ 0"},
		{"no releases", "releases", "0", "releases: \"0\""},
		{"negative people at worst", "people_at_worst", "-2", "people_at_worst: \"-2\""},
		{"more people at worst than people", "people_at_worst", "101", "people_at_worst: 101 of 100"},
		{"negative epsilon", "epsilon", "-1", "epsilon: \"-1\" is not a number ≥ 0"},
		{"NaN total", "eps_total", "nan", "eps_total: \"nan\" is not a number ≥ 0"},
		{"non-numeric PLD", "eps_total_pld", "x", "eps_total_pld: \"x\""},
		{"unknown status", "status", "done", "status: \"done\" is neither"},
		{"unknown identity", "identity", "name", "identity: \"name\" is not one of"},
		{"unknown mechanism", "mechanism", "rx", "mechanism: \"rx\" is not a mechanism name"},
		{"mechanism not in its canonical spelling", "mechanism", "RR", "mechanism: \"RR\" is not a mechanism name"},
		{"δ' of 0.5", "delta_prime", "0.5", "delta_prime: \"0.5\" is not in (0, 0.001]"},
		{"δ' of 0", "delta_prime", "0", "delta_prime: \"0\" is not in (0, 0.001]"},
		{"bad time", "time", "yesterday", "time: parsing time"},
		{"seeded without a seed", "seed", "", `seed: "" is not a decimal uint64`},
		{"short mac", "mac", "abc", "mac: \"abc\" is not 64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := slices.Clone(rec)
			bad[col(tc.col)] = tc.value
			_, err := parseRow(bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one holding %q", err, tc.want)
			}
		})
	}
}

// TestLedgerRefuses: a file with a foreign or earlier-format header, an
// invalid row, an incomplete last line or binary content is refused with
// an *Error naming the file and line, printing no binary byte, and left
// byte-for-byte unchanged.
func TestLedgerRefuses(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger.golden.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(golden), "\n")
	badRow := strings.Replace(lines[2], ",rr,", ",rx,", 1)
	arrow := append([]byte("ARROW1\x00\x00\xff\xff\xff\xff\x08\x01\x00\x00\x10\x00"), bytes.Repeat([]byte{0x9c, 0, 1}, 40)...)
	tests := []struct {
		name, content, wantMsg string
		line                   int
	}{
		{"foreign header", "a,b,c\n1,2,3\n", "not a privacy ledger", 1},
		{"first format", headerV1 + "\nrr,0,1,10,1,1,1,2,1e-06,2025-01-02T03:04:05Z\n", "move it aside", 1},
		{"second format", headerV2 + "\n", "plain SHA-256", 1},
		{"third format", headerV3 + "\n", "charged several rows of one person in one release once", 1},
		{"previous format", headerV4 + "\n", "kept no chain head", 1},
		{"empty file", "", "not a privacy ledger", 1},
		{"Arrow file", string(arrow), "it is an Arrow IPC file, not a privacy ledger", 1},
		{"binary", "\x00\x01\x02garbage\xff\n", "binary data", 1},
		{"people file given", string(newPeopleHeader()), "people file", 1},
		{"truncated last line", string(golden[:len(golden)-7]), "incomplete", 0},
		{"invalid mechanism", lines[0] + lines[1] + badRow + lines[3], `"rx" is not a mechanism`, 3},
		{"unbalanced quote", lines[0] + `x,"released` + "\n", "invalid row", 2},
		{"abort before record", lines[0] + lines[5], "aborted before", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), File)
			newFixedLedgerFiles(t, path)
			if err := os.WriteFile(path, []byte(tc.content), 0o640); err != nil {
				t.Fatal(err)
			}
			o, _ := Open(path, Options{})
			l := &testLedger{o, newKeys(fixedKey)}
			_, err := l.Record(l.rel("new", span(0, 3), pets.Params{Kind: pets.RR, Epsilon: 1}))
			for name, err2 := range map[string]error{"Keys": second(l.Keys()), "Rows": second(l.Rows()), "State": second(l.State(0))} {
				if name == "Keys" && tc.line != 1 {
					continue // Keys reads the header only
				}
				if errors.Is(err2, ErrKey) || !errors.Is(err2, ErrFormat) {
					t.Errorf("%s: %v, want the format refused first", name, err2)
				}
			}
			var le *Error
			if !errors.As(err, &le) || !errors.Is(err, ErrFormat) || le.Line != tc.line ||
				!strings.Contains(err.Error(), tc.wantMsg) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Record error %v, want an *Error at line %d naming the file and %q", err, tc.line, tc.wantMsg)
			}
			if i := strings.IndexFunc(err.Error(), func(r rune) bool { return !unicode.IsPrint(r) || r == unicode.ReplacementChar }); i >= 0 {
				t.Fatalf("the error prints a non-printable byte at %d: %q", i, err)
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Fatalf("file changed to %q", b)
			}
			if p, _ := os.ReadFile(PeoplePath(path)); !bytes.Equal(p, newPeopleHeader()) {
				t.Fatal("the people file was written")
			}
		})
	}
}

// A release Record killed (SIGKILL) after the people file's record and
// before the CSV row: the next Record appends the lost row from the
// people file (rolled forward) and counts the release. Killed after the
// row: nothing to roll forward. Both: the ledger verifies.
func TestLedgerKilledMidRecord(t *testing.T) {
	for _, point := range []string{"ledger.people-written", "ledger.row-written"} {
		t.Run(point, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), File)
			newFixedLedgerFiles(t, path)
			l := openTestLedger(t, path, Options{})
			for i := range 3 {
				if _, err := l.Record(l.rel("r"+strconv.Itoa(i), span(0, 30), pets.Params{Kind: pets.RR, Epsilon: 1})); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestLedgerKillChild$")
			cmd.Env = append(os.Environ(), "LEDGER_KILL_CHILD="+path, faultpoint.Env+"="+point)
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child: %v (want killed by SIGKILL)\n%s", err, out)
			}
			csv, _ := os.ReadFile(path)
			rows := bytes.Count(csv, []byte("\n")) - 1
			if want := map[string]int{"ledger.people-written": 3, "ledger.row-written": 4}[point]; rows != want {
				t.Fatalf("%d rows after a kill at %s, want %d", rows, point, want)
			}
			e, err := l.Record(l.rel("after", span(0, 30), pets.Params{Kind: pets.RR, Epsilon: 1}))
			if err != nil {
				t.Fatal(err)
			}
			if e.Releases != 5 || e.EpsTotalBasic != 5 {
				t.Fatalf("after the kill: %+v, want the killed release counted (5 releases)", e)
			}
			if st, err := l.State(0); err != nil || st.People != 30 {
				t.Fatalf("%+v, %v", st, err)
			}
		})
	}
}

// TestLedgerKillChild is the child of TestLedgerKilledMidRecord.
func TestLedgerKillChild(t *testing.T) {
	path := os.Getenv("LEDGER_KILL_CHILD")
	if path == "" {
		t.Skip("child process of TestLedgerKilledMidRecord")
	}
	l := openTestLedger(t, path, Options{})
	l.Record(l.rel("killed", span(0, 30), pets.Params{Kind: pets.RR, Epsilon: 1}))
	t.Fatal("not killed")
}

// FuzzReadLedger: no input makes the parser panic; whatever it accepts
// formats back to the same rows. The seed corpus (a valid ledger,
// truncated at several points and with flipped bytes, the earlier formats)
// runs in plain go test.
func FuzzReadLedger(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "ledger.golden.csv"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	for _, cut := range []int{0, 1, 40, len(golden) / 2, len(golden) - 1} {
		f.Add(golden[:cut])
	}
	for _, at := range []int{3, len(headerLine()) + 5, len(golden) / 3, len(golden) - 2} {
		b := slices.Clone(golden)
		b[at] ^= 0x55
		f.Add(b)
	}
	f.Add([]byte(headerV1 + "\n"))
	f.Add([]byte(headerV2 + "\n"))
	f.Add([]byte(headerV3 + "\n"))
	f.Add([]byte(headerLine() + "\n\n"))
	k := newKeys(fixedKey)
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := parseCSV("fuzz.csv", b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not wrap ErrFormat", err)
			}
			return
		}
		verifyChain(k, cf.lines)
		out := []byte(headerLine())
		for _, e := range cf.rows {
			body := e.body()
			out = append(append(append(out, body...), e.MAC...), '\n')
		}
		again, err := parseCSV("fuzz.csv", out)
		if err != nil || !reflect.DeepEqual(again.rows, cf.rows) {
			t.Fatalf("reformatted rows do not parse back: %v", err)
		}
	})
}

// FuzzPeopleFile: no bytes make the people-file reader panic or loop; a
// damaged file is an error wrapping ErrFormat. The seed corpus (a valid
// file with a snapshot and records, truncated and with flipped bytes) runs
// in plain go test.
func FuzzPeopleFile(f *testing.F) {
	l := newTestLedger(f, Options{})
	defer func(v int) { compactMinListed = v }(compactMinListed)
	compactMinListed = 50 // a snapshot after the third release, records after it
	for i, ids := range [][]int{span(0, 40), span(20, 60), span(0, 60), span(5, 60), span(10, 30)} {
		if _, err := l.Record(l.rel(strconv.Itoa(i), ids, pets.Params{Kind: pets.RR, Epsilon: 1})); err != nil {
			f.Fatal(err)
		}
	}
	valid, err := os.ReadFile(PeoplePath(l.Path()))
	if err != nil {
		f.Fatal(err)
	}
	if valid[peopleHeaderLen] != recSnapshot || bytes.Count(valid, []byte{recRelease}) == 0 {
		f.Fatal("the seed corpus lacks a snapshot followed by records")
	}
	f.Add(valid)
	for _, cut := range []int{0, 8, 30, len(valid) / 2, len(valid) - 1} {
		f.Add(valid[:cut])
	}
	for _, at := range []int{9, 13, 30, 45, len(valid) / 2, len(valid) - 33, len(valid) - 1} {
		b := slices.Clone(valid)
		b[at] ^= 0x41
		f.Add(b)
	}
	dir := f.TempDir()
	k := newKeys(fixedKey)
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "p.people")
		if err := os.WriteFile(path, b, 0o640); err != nil {
			t.Fatal(err)
		}
		p, err := openPeople(path, k, false)
		if err == nil && p != nil {
			err = p.walk(k, &covered{keys: []uint64{1, 2, 3}, charges: []charge{{single: 1}}}, func(uint64, int32, int32) {})
			p.Close()
		}
		if err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("error %v does not wrap ErrFormat", err)
		}
	})
}
