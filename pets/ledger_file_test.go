package pets

import (
	"os"
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
