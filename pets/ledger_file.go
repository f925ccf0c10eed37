package pets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// The ledger's file format: one schema of columns (ledgerColumns) from
// which the header is written and checked, each row formatted and each row
// parsed and validated, so the three cannot drift apart. doc.go and
// README's "The privacy ledger" list the same columns (tested).

// ledgerColumn is one column of the ledger: its name, how a row's field
// is written, and how it is parsed and checked (the error says what is
// wrong with the value; parseEntry names the column).
type ledgerColumn struct {
	name  string
	put   func(e *LedgerEntry) string
	parse func(e *LedgerEntry, s string) error
}

// textCol is a column holding a string field (or a string type) as is.
func textCol[S ~string](name string, p func(*LedgerEntry) *S) ledgerColumn {
	return ledgerColumn{name,
		func(e *LedgerEntry) string { return string(*p(e)) },
		func(e *LedgerEntry, s string) error { *p(e) = S(s); return nil }}
}

// intCol is a column holding a decimal integer ≥ lo.
func intCol(name string, p func(*LedgerEntry) *int, lo int) ledgerColumn {
	return ledgerColumn{name,
		func(e *LedgerEntry) string { return strconv.Itoa(*p(e)) },
		func(e *LedgerEntry, s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < lo {
				return fmt.Errorf("%q is not an integer ≥ %d", s, lo)
			}
			*p(e) = v
			return nil
		}}
}

// epsCol is a column holding a number ≥ 0 (+Inf written "inf").
func epsCol(name string, p func(*LedgerEntry) *float64) ledgerColumn {
	return ledgerColumn{name,
		func(e *LedgerEntry) string { return formatFloat(*p(e)) },
		func(e *LedgerEntry, s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) {
				return fmt.Errorf("%q is not a number ≥ 0", s)
			}
			*p(e) = v
			return nil
		}}
}

// ledgerColumns are the ledger's columns, in file order (the meaning of
// each: doc.go).
var ledgerColumns = []ledgerColumn{
	textCol("id", func(e *LedgerEntry) *string { return &e.ID }),
	{"status", func(e *LedgerEntry) string { return string(e.Status) }, func(e *LedgerEntry, s string) error {
		if e.Status = Status(s); e.Status != StatusReleased && e.Status != StatusAborted {
			return fmt.Errorf("%q is neither %q nor %q", s, StatusReleased, StatusAborted)
		}
		return nil
	}},
	textCol("input", func(e *LedgerEntry) *string { return &e.Input }),
	textCol("labels", func(e *LedgerEntry) *string { return &e.Labels }),
	intCol("rows", func(e *LedgerEntry) *int { return &e.Rows }, 1),
	intCol("people", func(e *LedgerEntry) *int { return &e.People }, 1),
	{"mechanism", func(e *LedgerEntry) string { return e.Mechanism.String() }, func(e *LedgerEntry, s string) error {
		k, err := ParseKind(s)
		if err != nil || s != k.String() {
			return fmt.Errorf("%q is not a mechanism name", s)
		}
		e.Mechanism = k
		return nil
	}},
	intCol("k", func(e *LedgerEntry) *int { return &e.K }, 0),
	epsCol("epsilon", func(e *LedgerEntry) *float64 { return &e.Epsilon }),
	textCol("noise", func(e *LedgerEntry) *Noise { return &e.Noise }),
	textCol("seed", func(e *LedgerEntry) *string { return &e.Seed }),
	textCol("path", func(e *LedgerEntry) *string { return &e.Path }),
	textCol("sha256", func(e *LedgerEntry) *string { return &e.SHA256 }),
	intCol("releases", func(e *LedgerEntry) *int { return &e.Releases }, 0),
	intCol("people_at_worst", func(e *LedgerEntry) *int { return &e.PeopleAtWorst }, 0),
	epsCol("eps_total", func(e *LedgerEntry) *float64 { return &e.EpsTotal }),
	epsCol("eps_total_basic", func(e *LedgerEntry) *float64 { return &e.EpsTotalBasic }),
	epsCol("eps_total_drv", func(e *LedgerEntry) *float64 { return &e.EpsTotalDRV }),
	epsCol("eps_total_drv_quad", func(e *LedgerEntry) *float64 { return &e.EpsTotalDRVQuad }),
	epsCol("eps_total_pld", func(e *LedgerEntry) *float64 { return &e.EpsTotalPLD }),
	{"delta_prime", func(e *LedgerEntry) string { return formatFloat(e.DeltaPrime) }, func(e *LedgerEntry, s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v < 1) {
			return fmt.Errorf("%q is not in (0, 1)", s)
		}
		e.DeltaPrime = v
		return nil
	}},
	{"time", func(e *LedgerEntry) string { return e.Time.UTC().Format(time.RFC3339Nano) }, func(e *LedgerEntry, s string) error {
		t, err := time.Parse(time.RFC3339Nano, s)
		e.Time = t.UTC()
		return err
	}},
	textCol("reason", func(e *LedgerEntry) *string { return &e.Reason }),
}

// Headers of earlier ledger formats, refused with an explanation.
const (
	// ledgerHeaderV1 composed only releases with the same (mechanism, k, ε).
	ledgerHeaderV1 = "mechanism,k,epsilon,rows,seed,releases,eps_basic,eps_advanced,delta_prime,time"
	// ledgerHeaderV2 composed per label column, named by a plain SHA-256.
	ledgerHeaderV2 = "id,status,source,rows,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"eps_total_basic,eps_total_advanced,eps_total,eps_total_seed004,delta_prime,time,reason"
)

// ledgerHeaderLine is the ledger's first line: its column names.
func ledgerHeaderLine() string {
	names := make([]string, len(ledgerColumns))
	for i, c := range ledgerColumns {
		names[i] = c.name
	}
	return strings.Join(names, ",") + "\n"
}

// readAll reads f from offset 0 to its current size in one allocation.
func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, st.Size())
	n, err := f.ReadAt(b, 0)
	if err == io.EOF {
		err = nil
	}
	return b[:n], err
}

// parseLedger parses and validates a whole ledger file's bytes.
func parseLedger(path string, b []byte) ([]LedgerEntry, error) {
	header := ledgerHeaderLine()
	first, _, _ := strings.Cut(string(b), "\n")
	switch strings.TrimSuffix(first, "\r") {
	case ledgerHeaderV1:
		return nil, &LedgerError{Path: path, Line: 1, Msg: "this is a ledger of the first format, which " +
			"composed only releases with the same mechanism and parameters and did not record which labels " +
			"or people they released, so its rows cannot be converted: move it aside (e.g. rename it to " +
			LedgerFile + ".v1), keep it with the raw data, and record new releases in a fresh ledger"}
	case ledgerHeaderV2:
		return nil, &LedgerError{Path: path, Line: 1, Msg: "this is a ledger of the previous format, which " +
			"composed per label column and names each by a plain SHA-256 of its labels (whoever holds it can " +
			"test label guesses: never ship it); it records no people, so its rows cannot be converted to " +
			"per-person totals. Move it aside (e.g. rename it to " + LedgerFile + ".v2), keep it with the raw " +
			"data or delete it, and record new releases in a fresh ledger; inside a run's output directory, " +
			"the simulation releases are then recorded again from their seeds"}
	}
	switch {
	case !strings.HasPrefix(string(b), header):
		return nil, &LedgerError{Path: path, Line: 1, Msg: fmt.Sprintf("header %q, want %q (not a privacy ledger?)",
			first, strings.TrimSpace(header))}
	case b[len(b)-1] != '\n':
		return nil, &LedgerError{Path: path, Msg: "last line is incomplete (truncated write?); repair it by hand"}
	}
	cr := csv.NewReader(bytes.NewReader(b[len(header):]))
	cr.FieldsPerRecord = len(ledgerColumns)
	rows := make([]LedgerEntry, 0, bytes.Count(b, []byte{'\n'}))
	seen := make(map[string]Status, cap(rows))
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			line := 0
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				line = pe.StartLine + 1 // after the header
			}
			return nil, &LedgerError{Path: path, Line: line, Msg: "unparsable row", Err: err}
		}
		line, _ := cr.FieldPos(0)
		line++
		e, err := parseEntry(rec)
		if err != nil {
			return nil, &LedgerError{Path: path, Line: line, Msg: "invalid row", Err: err}
		}
		switch prev, ok := seen[e.ID]; {
		case !ok && e.Status == StatusAborted:
			return nil, &LedgerError{Path: path, Line: line, Msg: fmt.Sprintf("release %q aborted before it was recorded", e.ID)}
		case ok && (e.Status == StatusReleased || prev == StatusAborted):
			return nil, &LedgerError{Path: path, Line: line, Msg: fmt.Sprintf("release %q %s twice", e.ID, e.Status)}
		}
		seen[e.ID] = e.Status
		rows = append(rows, e)
	}
}

// line formats e as one CSV line (fields quoted where CSV needs it).
func (e LedgerEntry) line() []byte {
	rec := make([]string, len(ledgerColumns))
	for i, c := range ledgerColumns {
		rec[i] = c.put(&e)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(rec)
	w.Flush() // cannot fail on a bytes.Buffer
	return buf.Bytes()
}

// formatFloat formats x in its shortest round-trip form, +Inf as "inf".
func formatFloat(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// parseEntry parses and validates one row's fields (as Record writes them;
// len(rec) == len(ledgerColumns)). Every bad field is reported, each named
// by its column.
func parseEntry(rec []string) (LedgerEntry, error) {
	var e LedgerEntry
	var errs []error
	for i, c := range ledgerColumns {
		if err := c.parse(&e, rec[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	if e.People > e.Rows {
		errs = append(errs, fmt.Errorf("people: %d people in %d rows", e.People, e.Rows))
	}
	if err := e.release().validateFields(); err != nil {
		errs = append(errs, err)
	}
	return e, errors.Join(errs...)
}
