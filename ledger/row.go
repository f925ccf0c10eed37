package ledger

import (
	"bytes"
	"crypto/hmac"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"labelprivacy/pets"
)

// Status is the state of a ledger row's release.
type Status string

// The statuses of a ledger row.
const (
	StatusReleased Status = "released" // recorded before a byte of the release file was written
	StatusAborted  Status = "aborted"  // the release file was never put in place (it still counts)
)

// Row is one ledger row. The totals are those of the worst person the
// release covers (the largest EpsTotal; ties broken by EpsTotalBasic) over
// that person's releases so far, this one included. An aborted row repeats
// its released row's totals: the charge stays (see Ledger.Abort).
type Row struct {
	ID        string
	Status    Status
	Input     string   // the labelled file released
	Labels    string   // keyed digest of the label column (Keys.Labels)
	Identity  Identity // who a person is
	IDColumn  IDColumn // rule ByID: the id column people are known by (zero otherwise)
	Rows      int      // release rows
	People    int      // distinct people among them
	Mechanism pets.Kind
	K         int     // bag size; 0 outside the LLP family
	Epsilon   float64 // ε of this release per row (+Inf for none and llp, 0 for bot)
	Noise     pets.Noise
	Seed      string // "" for secure releases
	Path      string
	SHA256    string

	Releases      int // the worst person's releases (this one included)
	PeopleAtWorst int // covered people whose EpsTotal equals the worst

	EpsTotal        float64 // Composition.Total of the worst person
	EpsTotalBasic   float64 // Composition.Basic
	EpsTotalDRV     float64 // Composition.DRV
	EpsTotalDRVQuad float64 // Composition.DRVQuad
	EpsTotalPLD     float64 // Composition.PLD
	DeltaPrime      float64 // δ' of the (ε, δ') totals: the ledger's, in (0, MaxDeltaPrime]

	Time   time.Time // written as RFC 3339 with nanoseconds, UTC
	Reason string    // why an aborted release was aborted; "" when released
	MAC    string    // hex HMAC-SHA-256 chaining this row to the previous one
}

// The ledger's file format: one schema of columns (columns) from which the
// header is written and checked, each row formatted and each row parsed and
// validated, so the three cannot drift apart. The last column, mac, is not
// in the schema: it is computed over the line before it. doc.go and
// README's "The privacy ledger" list the same columns (tested).

// column is one column of the ledger: its name, how a row's field is
// written, and how it is parsed and checked (the error says what is wrong
// with the value; parseRow names the column).
type column struct {
	name  string
	put   func(e *Row) string
	parse func(e *Row, s string) error
}

// textCol is a column holding a string field (or a string type) as is.
func textCol[S ~string](name string, p func(*Row) *S) column {
	return column{name,
		func(e *Row) string { return string(*p(e)) },
		func(e *Row, s string) error { *p(e) = S(s); return nil }}
}

// intCol is a column holding a decimal integer ≥ lo.
func intCol(name string, p func(*Row) *int, lo int) column {
	return column{name,
		func(e *Row) string { return strconv.Itoa(*p(e)) },
		func(e *Row, s string) error {
			v, err := strconv.Atoi(s)
			if err != nil || v < lo {
				return fmt.Errorf("%q is not an integer ≥ %d", s, lo)
			}
			*p(e) = v
			return nil
		}}
}

// epsCol is a column holding a number ≥ 0 (+Inf written "inf").
func epsCol(name string, p func(*Row) *float64) column {
	return column{name,
		func(e *Row) string { return formatFloat(*p(e)) },
		func(e *Row, s string) error {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || !(v >= 0) {
				return fmt.Errorf("%q is not a number ≥ 0", s)
			}
			*p(e) = v
			return nil
		}}
}

// columns are the ledger's columns before mac, in file order (the meaning
// of each: doc.go).
var columns = []column{
	textCol("id", func(e *Row) *string { return &e.ID }),
	{"status", func(e *Row) string { return string(e.Status) }, func(e *Row, s string) error {
		if e.Status = Status(s); e.Status != StatusReleased && e.Status != StatusAborted {
			return fmt.Errorf("%q is neither %q nor %q", s, StatusReleased, StatusAborted)
		}
		return nil
	}},
	textCol("input", func(e *Row) *string { return &e.Input }),
	textCol("labels", func(e *Row) *string { return &e.Labels }),
	{"identity", func(e *Row) string { return string(e.Identity) }, func(e *Row, s string) error {
		if e.Identity = Identity(s); !e.Identity.Valid() {
			return fmt.Errorf("%q is not one of %q, %q, %q", s, ByID, ByFeatures, ByStandardizedFeatures)
		}
		return nil
	}},
	textCol("id_column", func(e *Row) *string { return &e.IDColumn.Name }),
	{"id_type", func(e *Row) string { return string(e.IDColumn.Type) }, func(e *Row, s string) error {
		if e.IDColumn.Type = IDType(s); s != "" && e.IDColumn.Type != IDInteger && e.IDColumn.Type != IDText {
			return fmt.Errorf("%q is not one of \"\", %q, %q", s, IDInteger, IDText)
		}
		return nil
	}},
	intCol("rows", func(e *Row) *int { return &e.Rows }, 1),
	intCol("people", func(e *Row) *int { return &e.People }, 1),
	{"mechanism", func(e *Row) string { return e.Mechanism.String() }, func(e *Row, s string) error {
		k, err := pets.ParseKind(s)
		if err != nil || s != k.String() {
			return fmt.Errorf("%q is not a mechanism name", s)
		}
		e.Mechanism = k
		return nil
	}},
	intCol("k", func(e *Row) *int { return &e.K }, 0),
	epsCol("epsilon", func(e *Row) *float64 { return &e.Epsilon }),
	textCol("noise", func(e *Row) *pets.Noise { return &e.Noise }),
	textCol("seed", func(e *Row) *string { return &e.Seed }),
	textCol("path", func(e *Row) *string { return &e.Path }),
	textCol("sha256", func(e *Row) *string { return &e.SHA256 }),
	intCol("releases", func(e *Row) *int { return &e.Releases }, 1),
	intCol("people_at_worst", func(e *Row) *int { return &e.PeopleAtWorst }, 1),
	epsCol("eps_total", func(e *Row) *float64 { return &e.EpsTotal }),
	epsCol("eps_total_basic", func(e *Row) *float64 { return &e.EpsTotalBasic }),
	epsCol("eps_total_drv", func(e *Row) *float64 { return &e.EpsTotalDRV }),
	epsCol("eps_total_drv_quad", func(e *Row) *float64 { return &e.EpsTotalDRVQuad }),
	epsCol("eps_total_pld", func(e *Row) *float64 { return &e.EpsTotalPLD }),
	{"delta_prime", func(e *Row) string { return formatFloat(e.DeltaPrime) }, func(e *Row, s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v <= MaxDeltaPrime) {
			return fmt.Errorf("%q is not in (0, %g]", s, MaxDeltaPrime)
		}
		e.DeltaPrime = v
		return nil
	}},
	{"time", func(e *Row) string { return e.Time.UTC().Format(time.RFC3339Nano) }, func(e *Row, s string) error {
		t, err := time.Parse(time.RFC3339Nano, s)
		e.Time = t.UTC()
		return err
	}},
	textCol("reason", func(e *Row) *string { return &e.Reason }),
}

// Headers of earlier ledger formats, refused with an explanation.
const (
	// headerV1 composed only releases with the same (mechanism, k, ε).
	headerV1 = "mechanism,k,epsilon,rows,seed,releases,eps_basic,eps_advanced,delta_prime,time"
	// headerV2 composed per label column, named by a plain SHA-256.
	headerV2 = "id,status,source,rows,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"eps_total_basic,eps_total_advanced,eps_total,eps_total_seed004,delta_prime,time,reason"
	// headerV3 composed per person but charged several rows of one person
	// in one release once, and carried no MAC chain.
	headerV3 = "id,status,input,labels,rows,people,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"people_at_worst,eps_total,eps_total_basic,eps_total_drv,eps_total_drv_quad,eps_total_pld,delta_prime,time,reason"
	// headerV4 kept no chain head (its CSV and people file truncated
	// together went unnoticed) and did not bind the id column's name.
	headerV4 = "id,status,input,labels,identity,rows,people,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"people_at_worst,eps_total,eps_total_basic,eps_total_drv,eps_total_drv_quad,eps_total_pld,delta_prime,time,reason,mac"
)

// headerLine is the ledger's first line: its column names.
func headerLine() string {
	names := make([]string, len(columns), len(columns)+1)
	for i, c := range columns {
		names[i] = c.name
	}
	return strings.Join(append(names, "mac"), ",") + "\n"
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

// csvFile is a ledger CSV read whole: its rows and their lines (each
// with its '\n'), and an incomplete last line (a write torn by a crash).
type csvFile struct {
	rows    []Row
	lines   [][]byte
	partial []byte
}

// describeForeign names what a file that is not a ledger looks like,
// without echoing binary bytes.
func describeForeign(b []byte) string {
	first, _, _ := bytes.Cut(b, []byte{'\n'})
	switch {
	case bytes.HasPrefix(b, []byte("ARROW1")):
		return "it is an Arrow IPC file, not a privacy ledger"
	case bytes.HasPrefix(b, []byte("PAR1")):
		return "it is a Parquet file, not a privacy ledger"
	case bytes.HasPrefix(b, []byte(peopleMagic)):
		return "it is a ledger's people file; name the ledger's CSV (" + File + ")"
	case bytes.HasPrefix(b, []byte(keyHeader)):
		return "it is a ledger's key file; name the ledger's CSV (" + File + ")"
	case !utf8.Valid(first) || bytes.ContainsFunc(first, func(r rune) bool { return r < 0x20 && r != '\t' && r != '\r' || r == 0x7f }):
		return "it holds binary data, not a privacy ledger"
	case len(first) > 200:
		return fmt.Sprintf("its first line (%d bytes) is not a ledger header (not a privacy ledger?)", len(first))
	}
	return fmt.Sprintf("header %q, want %q (not a privacy ledger?)", strings.TrimSuffix(string(first), "\r"), strings.TrimSpace(headerLine()))
}

// parseCSV parses and validates a whole ledger file's bytes (not its MAC
// chain, which needs the key: verifyChain).
func parseCSV(path string, b []byte) (*csvFile, error) {
	header := headerLine()
	first, _, _ := bytes.Cut(b, []byte{'\n'})
	switch strings.TrimSuffix(string(first), "\r") {
	case headerV1:
		return nil, &Error{Path: path, Line: 1, Msg: "this is a ledger of the first format, which " +
			"composed only releases with the same mechanism and parameters and did not record which labels " +
			"or people they released, so its rows cannot be converted: move it aside (e.g. rename it to " +
			File + ".v1), keep it with the raw data, and record new releases in a fresh ledger"}
	case headerV2:
		return nil, &Error{Path: path, Line: 1, Msg: "this is a ledger of an earlier format, which " +
			"composed per label column and names each by a plain SHA-256 of its labels (whoever holds it can " +
			"test label guesses: never ship it); it records no people, so its rows cannot be converted to " +
			"per-person totals. Move it aside (e.g. rename it to " + File + ".v2), keep it with the raw " +
			"data or delete it, and record new releases in a fresh ledger; inside a run's output directory, " +
			"the simulation releases are then recorded again from their seeds"}
	case headerV4:
		return nil, &Error{Path: path, Line: 1, Msg: "this is a ledger of the previous format, which kept no chain head (its CSV " +
			"and people file truncated together went unnoticed, forgetting releases) and did not record which id column its people " +
			"were known by (the same people under another column counted again): it cannot be verified against a rollback or bound to " +
			"its id column, so it is not converted. Move it aside with its .key and .people files (e.g. add .v4 to each name), keep " +
			"them with the raw data, and record new releases in a fresh ledger; add the old totals by hand (train ledger of the " +
			"previous version reads it). Inside a run's output directory, the simulation releases are then recorded again from their seeds"}
	case headerV3:
		return nil, &Error{Path: path, Line: 1, Msg: "this is a ledger of an earlier format, which charged " +
			"several rows of one person in one release once and carries no MAC chain: its totals may " +
			"under-count and cannot be verified, so it is not converted. Move it aside with its .key and .people " +
			"files (e.g. add .v3 to each name), keep them with the raw data, and record new releases in a fresh " +
			"ledger; add the old totals by hand (train ledger of this version does not read it). Inside a run's " +
			"output directory, the simulation releases are then recorded again from their seeds"}
	}
	if !bytes.HasPrefix(b, []byte(header)) {
		return nil, &Error{Path: path, Line: 1, Msg: describeForeign(b)}
	}
	cf := &csvFile{}
	rest := b[len(header):]
	seen := map[string]Status{}
	for line := 2; len(rest) > 0; line++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			cf.partial = rest
			break
		}
		raw := rest[:i+1]
		rest = rest[i+1:]
		e, err := parseLine(raw)
		if err != nil {
			return nil, &Error{Path: path, Line: line, Msg: "invalid row", Err: err}
		}
		switch prev, ok := seen[e.ID]; {
		case !ok && e.Status == StatusAborted:
			return nil, formatErr(path, line, "release %q aborted before it was recorded", e.ID)
		case ok && (e.Status == StatusReleased || prev == StatusAborted):
			return nil, formatErr(path, line, "release %q %s twice", e.ID, e.Status)
		}
		seen[e.ID] = e.Status
		cf.rows = append(cf.rows, e)
		cf.lines = append(cf.lines, raw)
	}
	return cf, nil
}

// parseLine parses and validates one row's line (with its '\n').
func parseLine(raw []byte) (Row, error) {
	cr := csv.NewReader(bytes.NewReader(raw))
	cr.FieldsPerRecord = len(columns) + 1
	rec, err := cr.Read()
	if err == nil {
		if _, err2 := cr.Read(); err2 != io.EOF {
			err = errors.New("more than one record on the line")
		}
	}
	if err != nil {
		return Row{}, err
	}
	return parseRow(rec)
}

// parseRow parses and validates one row's fields. Every bad field is
// reported, each named by its column.
func parseRow(rec []string) (Row, error) {
	var e Row
	var errs []error
	for i, c := range columns {
		if err := c.parse(&e, rec[i]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
		}
	}
	e.MAC = rec[len(columns)]
	if len(e.MAC) != 64 || !isHex(e.MAC) {
		errs = append(errs, fmt.Errorf("mac: %q is not 64 lowercase hex digits", e.MAC))
	}
	if e.People > e.Rows {
		errs = append(errs, fmt.Errorf("people: %d people in %d rows", e.People, e.Rows))
	}
	if e.PeopleAtWorst > e.People {
		errs = append(errs, fmt.Errorf("people_at_worst: %d of %d people", e.PeopleAtWorst, e.People))
	}
	if err := e.release().validateFields(); err != nil {
		var pe *ParamError
		if errors.As(err, &pe) {
			err = fmt.Errorf("%s: %s", strings.TrimPrefix(pe.Param, "release."), pe.Msg)
		}
		errs = append(errs, err)
	}
	return e, joinErrs(errs)
}

// joinErrs joins errors on one line ("a; b"), wrapping each.
func joinErrs(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	args := make([]any, len(errs))
	for i, e := range errs {
		args[i] = e
	}
	return fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), args...)
}

// body formats e as one CSV line without its mac field: every column
// followed by a comma (fields quoted where CSV needs it).
func (e *Row) body() []byte {
	rec := make([]string, len(columns)+1) // a last empty field gives the trailing comma
	for i, c := range columns {
		rec[i] = c.put(e)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(rec)
	w.Flush() // cannot fail on a bytes.Buffer
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// rowMAC is the MAC of a row's body chained to the previous row's MAC
// (nil for the first row).
func rowMAC(k *Keys, prev []byte, body []byte) []byte {
	m := k.mac()
	m.Write([]byte("labelprivacy/ledger row\x00"))
	if prev == nil {
		prev = make([]byte, 32)
	}
	m.Write(prev)
	m.Write(body)
	return m.Sum(nil)
}

// seal sets e.MAC for a row following prev (nil: the first row) and
// returns its line.
func (e *Row) seal(k *Keys, prev []byte) []byte {
	body := e.body()
	e.MAC = hex.EncodeToString(rowMAC(k, prev, body))
	return append(append(body, e.MAC...), '\n')
}

// lineMAC returns the MAC a line carries and the body it covers.
func lineMAC(line []byte) (mac []byte, body []byte, ok bool) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	i := bytes.LastIndexByte(line, ',')
	if i < 0 {
		return nil, nil, false
	}
	mac, err := hex.DecodeString(string(line[i+1:]))
	if err != nil || len(mac) != 32 {
		return nil, nil, false
	}
	return mac, line[:i+1], true
}

// verifyLine reports whether line carries the MAC of its body chained to
// prev.
func verifyLine(k *Keys, prev, line []byte) bool {
	mac, body, ok := lineMAC(line)
	return ok && hmac.Equal(mac, rowMAC(k, prev, body))
}

// verifyChain checks every row's MAC; it returns the index of the first
// bad row, or -1.
func verifyChain(k *Keys, lines [][]byte) int {
	var prev []byte
	for i, l := range lines {
		if !verifyLine(k, prev, l) {
			return i
		}
		prev, _, _ = lineMAC(l)
	}
	return -1
}

// formatFloat formats x in its shortest round-trip form, +Inf as "inf".
func formatFloat(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
