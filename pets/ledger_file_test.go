package pets

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func ledgerColumnNames() []string {
	var names []string
	for _, c := range ledgerColumns {
		names = append(names, c.name)
	}
	return names
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
	_, sec, _ := strings.Cut(readme, "### The privacy ledger")
	sec, _, _ = strings.Cut(sec, "\n#")
	m := regexp.MustCompile("Columns: `([^`]+)`").FindStringSubmatch(sec)
	if m == nil {
		return nil
	}
	return strings.Split(strings.Join(strings.Fields(m[1]), " "), ", ")
}

// The ledger's columns as doc.go and README's "The privacy ledger" list
// them are the ones the ledger writes and reads (ledgerColumns), in order.
func TestLedgerColumnsDocumented(t *testing.T) {
	want := ledgerColumnNames()
	if got := strings.TrimSuffix(ledgerHeaderLine(), "\n"); got != strings.Join(want, ",") {
		t.Fatalf("header %q, want %q", got, strings.Join(want, ","))
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	if got := docColumns(string(doc)); !slices.Equal(got, want) {
		t.Errorf("doc.go lists the ledger's columns as\n%q\nwant\n%q", got, want)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
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
		{"time, reason`", "reason, time`"},
	} {
		if !strings.Contains(string(readme), tc.from) {
			t.Fatalf("README no longer holds %q: update this test", tc.from)
		}
		if slices.Equal(readmeColumns(strings.Replace(string(readme), tc.from, tc.to, 1)), want) {
			t.Errorf("README with %q for %q passes", tc.to, tc.from)
		}
	}
}

// parseEntry refuses each out-of-range or malformed field of a valid row,
// naming its column, and accepts the row itself.
func TestParseEntryRefuses(t *testing.T) {
	golden, err := os.ReadFile("testdata/ledger.golden.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseLedger("golden", golden)
	if err != nil {
		t.Fatal(err)
	}
	valid := rows[1] // rr ε=1, seeded, released
	rec := make([]string, len(ledgerColumns))
	for i, c := range ledgerColumns {
		rec[i] = c.put(&valid)
	}
	if e, err := parseEntry(rec); err != nil || !reflect.DeepEqual(e, valid) {
		t.Fatalf("valid row: %+v, %v", e, err)
	}
	col := func(name string) int { return slices.Index(ledgerColumnNames(), name) }
	cases := []struct {
		name, col, value, want string
	}{
		{"no rows", "rows", "0", "rows: \"0\" is not an integer ≥ 1"},
		{"no people", "people", "0", "people: \"0\" is not an integer ≥ 1"},
		{"more people than rows", "people", "101", "people: 101 people in 100 rows"},
		{"negative k", "k", "-1", "k: \"-1\" is not an integer ≥ 0"},
		{"negative releases", "releases", "-1", "releases: \"-1\""},
		{"negative people at worst", "people_at_worst", "-2", "people_at_worst: \"-2\""},
		{"negative epsilon", "epsilon", "-1", "epsilon: \"-1\" is not a number ≥ 0"},
		{"NaN total", "eps_total", "nan", "eps_total: \"nan\" is not a number ≥ 0"},
		{"non-numeric PLD", "eps_total_pld", "x", "eps_total_pld: \"x\""},
		{"unknown status", "status", "done", "status: \"done\" is neither"},
		{"unknown mechanism", "mechanism", "rx", "mechanism: \"rx\" is not a mechanism name"},
		{"mechanism not in its canonical spelling", "mechanism", "RR", "mechanism: \"RR\" is not a mechanism name"},
		{"δ' of 1", "delta_prime", "1", "delta_prime: \"1\" is not in (0, 1)"},
		{"δ' of 0", "delta_prime", "0", "delta_prime: \"0\" is not in (0, 1)"},
		{"bad time", "time", "yesterday", "time: parsing time"},
		{"seeded without a seed", "seed", "", "release.seed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bad := slices.Clone(rec)
			bad[col(tc.col)] = tc.value
			_, err := parseEntry(bad)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one holding %q", err, tc.want)
			}
		})
	}
}
