package pets

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// LedgerFile is the conventional file name of the privacy ledger.
const LedgerFile = "privacy_ledger.csv"

// ledgerHeader lists the ledger's columns in order (documented in doc.go).
var ledgerHeader = []string{"id", "status", "source", "rows", "mechanism", "k", "epsilon", "noise",
	"seed", "path", "sha256", "releases", "eps_total_basic", "eps_total_advanced", "eps_total",
	"eps_total_seed004", "delta_prime", "time", "reason"}

// ledgerHeaderV1 is the header of the first ledger format, which composed
// only releases with the same (mechanism, k, ε) and had no label source.
const ledgerHeaderV1 = "mechanism,k,epsilon,rows,seed,releases,eps_basic,eps_advanced,delta_prime,time"

// LabelSource names a label column by content: "sha256:" + hex SHA-256 over
// the row count (uint64 little-endian) followed by the labels (one byte
// each). It identifies the source in the ledger, which stays with the raw
// data. Never put it in a release file: a hash of the labels lets whoever
// holds the release confirm a guess of them.
func LabelSource(labels []uint8) string {
	h := sha256.New()
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(labels))))
	h.Write(labels)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Noise says how a release's randomness (bags and noise) was drawn.
type Noise string

// The noise kinds of a release.
const (
	NoiseSecure     Noise = "secure"            // crypto/rand (NewSecureRand)
	NoiseSeeded     Noise = "seeded"            // explicit seed: reproducible, and undone by whoever learns the seed
	NoiseSimulation Noise = "seeded-simulation" // seeded from a config inside a measurement run
)

// Valid reports whether n is one of the declared noise kinds.
func (n Noise) Valid() bool { return n == NoiseSecure || n == NoiseSeeded || n == NoiseSimulation }

// Status is the state of a ledger row's release.
type Status string

// The statuses of a ledger row.
const (
	StatusReleased Status = "released" // recorded before the release file was put in place
	StatusAborted  Status = "aborted"  // the release file was never put in place
)

// Release describes a release about to be published. The caller fills it
// and calls Ledger.Record before renaming the release file into place
// (write-ahead), and Ledger.Abort if that then fails.
type Release struct {
	ID     string     // unique release id (caller's; e.g. 128 random bits in hex); no control characters
	Source string     // LabelSource of the released labels
	Rows   int        // labelled rows the release covers, ≥ 1
	Mech   *Mechanism // the mechanism applied
	Noise  Noise      // how its randomness was drawn
	Seed   string     // decimal uint64 seed for the seeded kinds, "" for NoiseSecure
	Path   string     // release file path; no control characters
	SHA256 string     // hex SHA-256 (64 lowercase digits) of the release file's bytes
}

// LedgerEntry is one ledger row. The composition fields cover the releases
// of Source recorded so far and not aborted: for a released row they
// include this release, for an aborted row they exclude it (the totals
// after the abort).
type LedgerEntry struct {
	ID        string
	Status    Status
	Source    string // LabelSource of the labels
	Rows      int
	Mechanism Kind
	K         int     // bag size; 0 outside the LLP family
	Epsilon   float64 // ε of this release (+Inf for none and llp, 0 for bot)
	Noise     Noise
	Seed      string // "" for secure releases
	Path      string
	SHA256    string
	Releases  int // non-aborted releases of Source so far (this one included unless aborted)

	EpsTotalBasic    float64 // Composition.Basic over those releases
	EpsTotalAdvanced float64 // Composition.Advanced
	EpsTotal         float64 // Composition.Total
	EpsTotalSeed004  float64 // Composition.Seed004
	DeltaPrime       float64 // δ' of the advanced bounds, in (0, 1)

	Time   time.Time // written as RFC 3339 with nanoseconds, UTC
	Reason string    // why an aborted release was aborted; "" when released
}

// Sentinel errors of the ledger.
var (
	// ErrLedgerFormat is wrapped (via *LedgerError) by every error about a
	// ledger file's content: foreign or old header, unparsable or invalid
	// row, incomplete last line.
	ErrLedgerFormat = errors.New("pets: bad privacy ledger")
	// ErrUnknownRelease: Abort of an id the ledger has no released row for.
	ErrUnknownRelease = errors.New("pets: unknown release")
	// ErrDuplicateRelease: Record of an id already in the ledger, or Abort
	// of an id already aborted.
	ErrDuplicateRelease = errors.New("pets: duplicate release")
)

// LedgerError reports a problem with a ledger file's content. Line is the
// 1-based line of the offending row (1 for the header), 0 for the file as a
// whole. It wraps ErrLedgerFormat and Err (nil or a parse error).
type LedgerError struct {
	Path string
	Line int
	Msg  string
	Err  error
}

func (e *LedgerError) Error() string {
	s := "pets: ledger " + e.Path
	if e.Line > 0 {
		s += " line " + strconv.Itoa(e.Line)
	}
	s += ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap makes errors.Is(err, ErrLedgerFormat) true, and exposes Err.
func (e *LedgerError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrLedgerFormat}
	}
	return []error{ErrLedgerFormat, e.Err}
}

// Ledger is an append-only CSV privacy ledger of every release of labels.
// The file is created with its header if missing (written to a temporary
// file and hard-linked into place, so it never exists without its header)
// and never rewritten. Record and Abort read the whole file, compute the
// new row and append it as one O_APPEND write, all under one exclusive
// flock(2), then fsync: concurrent writers (goroutines or processes) are
// serialised, so counts and totals never miss a release. They refuse, writing
// nothing, a file with another header (e.g. the first format's) or any
// invalid row, or whose last line is incomplete. Infinite values are written
// "inf" (pandas and strconv.ParseFloat read it). A Ledger is safe for
// concurrent use.
type Ledger struct {
	path       string
	deltaPrime float64
	now        func() time.Time
}

// NewLedger returns a ledger writing to path (conventionally LedgerFile next
// to the raw data, never shipped with a release), with δ' ∈ (0, 1) for the
// advanced composition bounds. Nothing is touched on disk until the first
// Record.
func NewLedger(path string, deltaPrime float64) (*Ledger, error) {
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return nil, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	return &Ledger{path: path, deltaPrime: deltaPrime, now: time.Now}, nil
}

// Path returns the ledger file path.
func (l *Ledger) Path() string { return l.path }

// Record appends a "released" row for r: Releases counts the non-aborted
// releases of r.Source including r, and the totals compose their ε (see
// Composition). Reading the rows, counting and appending happen under one
// exclusive flock, then the file is fsynced. Errors: *ParamError for an
// invalid r, ErrDuplicateRelease if r.ID is already in the ledger,
// *LedgerError for a damaged file, I/O errors.
func (l *Ledger) Record(r Release) (LedgerEntry, error) {
	if err := r.validate(); err != nil {
		return LedgerEntry{}, err
	}
	return l.appendRow(func(rows []LedgerEntry) (LedgerEntry, error) {
		for _, e := range rows {
			if e.ID == r.ID {
				return LedgerEntry{}, fmt.Errorf("%w: id %q is already in %s", ErrDuplicateRelease, r.ID, l.path)
			}
		}
		e := LedgerEntry{
			ID: r.ID, Status: StatusReleased, Source: r.Source, Rows: r.Rows,
			Mechanism: r.Mech.Kind(), K: r.Mech.K(), Epsilon: r.Mech.Epsilon(),
			Noise: r.Noise, Seed: r.Seed, Path: r.Path, SHA256: r.SHA256,
		}
		return e, l.total(&e, rows, true)
	})
}

// Abort appends an "aborted" row for release id (its file was never renamed
// into place): a copy of its released row with the reason (control
// characters replaced by spaces) and the totals of its source without it.
// Aborted releases do not count in later totals. Errors: ErrUnknownRelease
// if the ledger has no released row for id, ErrDuplicateRelease if it is
// already aborted, *LedgerError for a damaged file, I/O errors.
func (l *Ledger) Abort(id, reason string) (LedgerEntry, error) {
	reason = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return ' '
		}
		return c
	}, reason)
	return l.appendRow(func(rows []LedgerEntry) (LedgerEntry, error) {
		var e LedgerEntry
		found := false
		for _, row := range rows {
			if row.ID != id {
				continue
			}
			if row.Status == StatusAborted {
				return LedgerEntry{}, fmt.Errorf("%w: id %q is already aborted in %s", ErrDuplicateRelease, id, l.path)
			}
			e, found = row, true
		}
		if !found {
			return LedgerEntry{}, fmt.Errorf("%w: no release %q in %s", ErrUnknownRelease, id, l.path)
		}
		e.Status, e.Reason = StatusAborted, reason
		return e, l.total(&e, rows, false)
	})
}

// total fills e's count and composition over the non-aborted releases of
// e.Source in rows, plus e itself if include, and stamps the time.
func (l *Ledger) total(e *LedgerEntry, rows []LedgerEntry, include bool) error {
	aborted := make(map[string]bool)
	for _, r := range rows {
		if r.Status == StatusAborted {
			aborted[r.ID] = true
		}
	}
	var eps []float64
	for _, r := range rows {
		if r.Status == StatusReleased && r.Source == e.Source && !aborted[r.ID] && r.ID != e.ID {
			eps = append(eps, r.Epsilon)
		}
	}
	if include {
		eps = append(eps, e.Epsilon)
	}
	c, err := Compose(eps, l.deltaPrime)
	if err != nil {
		return err
	}
	e.Releases = len(eps)
	e.EpsTotalBasic, e.EpsTotalAdvanced, e.EpsTotal, e.EpsTotalSeed004 = c.Basic, c.Advanced, c.Total, c.Seed004
	e.DeltaPrime = l.deltaPrime
	e.Time = l.now().UTC()
	return nil
}

// appendRow creates the ledger if missing, then under an exclusive flock
// reads and checks every row, builds the new row from them and appends it
// in one write, and fsyncs.
func (l *Ledger) appendRow(build func([]LedgerEntry) (LedgerEntry, error)) (LedgerEntry, error) {
	if err := l.create(); err != nil {
		return LedgerEntry{}, err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil { // released by Close
		return LedgerEntry{}, fmt.Errorf("pets: ledger: lock %s: %w", l.path, err)
	}
	b, err := readAll(f)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: read %s: %w", l.path, err)
	}
	rows, err := parseLedger(l.path, b)
	if err != nil {
		return LedgerEntry{}, err
	}
	e, err := build(rows)
	if err != nil {
		return LedgerEntry{}, err
	}
	if _, err := f.Write(e.line()); err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: append %s: %w", l.path, err)
	}
	if err := f.Sync(); err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: fsync %s: %w", l.path, err)
	}
	if err := f.Close(); err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: close %s: %w", l.path, err)
	}
	return e, nil
}

func ledgerHeaderLine() string { return strings.Join(ledgerHeader, ",") + "\n" }

// create creates the ledger with its header if it is missing: the header is
// written to a temporary file, fsynced and hard-linked into place, so the
// ledger never exists without its header.
func (l *Ledger) create() error {
	if _, err := os.Stat(l.path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		if err != nil {
			return fmt.Errorf("pets: ledger: %w", err)
		}
		return nil
	}
	header := ledgerHeaderLine()
	dir := filepath.Dir(l.path)
	tmp, err := os.CreateTemp(dir, ".privacy_ledger-*.tmp")
	if err != nil {
		return fmt.Errorf("pets: ledger: %w", err)
	}
	_, werr := tmp.WriteString(header)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Link(tmp.Name(), l.path) // atomic; fails if another writer won
		if werr != nil && !errors.Is(werr, fs.ErrExist) {
			// No hard links on this filesystem: exclusive create, header
			// in one write.
			werr = createWithHeader(l.path, header)
		}
	}
	os.Remove(tmp.Name())
	if werr != nil && !errors.Is(werr, fs.ErrExist) {
		return fmt.Errorf("pets: ledger: create %s: %w", l.path, werr)
	}
	if d, err := os.Open(dir); err == nil { // persist the directory entry
		d.Sync()
		d.Close()
	}
	return nil
}

func createWithHeader(path, header string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(header)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadLedger parses a ledger file (under a shared flock, so it never sees a
// row half written). Errors: *LedgerError (wrapping ErrLedgerFormat) for a
// file that is not a valid ledger of this format, I/O errors.
func ReadLedger(path string) ([]LedgerEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, false); err != nil {
		return nil, fmt.Errorf("pets: ledger: lock %s: %w", path, err)
	}
	b, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: read %s: %w", path, err)
	}
	return parseLedger(path, b)
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
	switch {
	case strings.TrimSuffix(first, "\r") == ledgerHeaderV1:
		return nil, &LedgerError{Path: path, Line: 1, Msg: "this is a ledger of the first format, which " +
			"composed only releases with the same mechanism and parameters and did not record which labels " +
			"they released, so its rows cannot be converted: move it aside (e.g. rename it to " +
			LedgerFile + ".v1) and record new releases in a fresh ledger; add the ε of the old rows that " +
			"released the same labels by hand"}
	case !strings.HasPrefix(string(b), header):
		return nil, &LedgerError{Path: path, Line: 1, Msg: fmt.Sprintf("header %q, want %q (not a privacy ledger?)",
			first, strings.TrimSpace(header))}
	case b[len(b)-1] != '\n':
		return nil, &LedgerError{Path: path, Msg: "last line is incomplete (truncated write?); repair it by hand"}
	}
	cr := csv.NewReader(bytes.NewReader(b[len(header):]))
	cr.FieldsPerRecord = len(ledgerHeader)
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
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write([]string{
		e.ID, string(e.Status), e.Source, strconv.Itoa(e.Rows), e.Mechanism.String(), strconv.Itoa(e.K),
		formatFloat(e.Epsilon), string(e.Noise), e.Seed, e.Path, e.SHA256, strconv.Itoa(e.Releases),
		formatFloat(e.EpsTotalBasic), formatFloat(e.EpsTotalAdvanced), formatFloat(e.EpsTotal),
		formatFloat(e.EpsTotalSeed004), formatFloat(e.DeltaPrime),
		e.Time.UTC().Format(time.RFC3339Nano), e.Reason,
	})
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

// parseEntry parses and validates one row's fields (as Record writes them).
func parseEntry(rec []string) (LedgerEntry, error) {
	var e LedgerEntry
	var errs []error
	bad := func(col, msg string) { errs = append(errs, fmt.Errorf("%s: %s", col, msg)) }
	atoi := func(col, s string, lo int) int {
		v, err := strconv.Atoi(s)
		if err != nil || v < lo {
			bad(col, fmt.Sprintf("%q is not an integer ≥ %d", s, lo))
		}
		return v
	}
	atof := func(col, s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) {
			bad(col, fmt.Sprintf("%q is not a number ≥ 0", s))
		}
		return v
	}
	e.ID, e.Status, e.Source = rec[0], Status(rec[1]), rec[2]
	e.Rows = atoi("rows", rec[3], 1)
	var err error
	if e.Mechanism, err = ParseKind(rec[4]); err != nil || rec[4] != e.Mechanism.String() {
		bad("mechanism", fmt.Sprintf("%q is not a mechanism name", rec[4]))
	}
	e.K, e.Epsilon, e.Noise, e.Seed = atoi("k", rec[5], 0), atof("epsilon", rec[6]), Noise(rec[7]), rec[8]
	e.Path, e.SHA256 = rec[9], rec[10]
	e.Releases = atoi("releases", rec[11], 0)
	e.EpsTotalBasic, e.EpsTotalAdvanced = atof("eps_total_basic", rec[12]), atof("eps_total_advanced", rec[13])
	e.EpsTotal, e.EpsTotalSeed004 = atof("eps_total", rec[14]), atof("eps_total_seed004", rec[15])
	if e.DeltaPrime = atof("delta_prime", rec[16]); !(e.DeltaPrime > 0 && e.DeltaPrime < 1) {
		bad("delta_prime", fmt.Sprintf("%q is not in (0, 1)", rec[16]))
	}
	if e.Time, err = time.Parse(time.RFC3339Nano, rec[17]); err != nil {
		bad("time", err.Error())
	}
	e.Time = e.Time.UTC()
	e.Reason = rec[18]
	if e.Status != StatusReleased && e.Status != StatusAborted {
		bad("status", fmt.Sprintf("%q is neither %q nor %q", rec[1], StatusReleased, StatusAborted))
	}
	if err := e.release().validate(); err != nil {
		errs = append(errs, err)
	}
	return e, errors.Join(errs...)
}

// release rebuilds the Release a row records (for validation; Mech is
// rebuilt from the row's kind, k and ε where they form a valid mechanism).
func (e LedgerEntry) release() Release {
	p := Params{Kind: e.Mechanism, K: e.K}
	if e.Mechanism.NeedsEpsilon() {
		p.Epsilon = e.Epsilon
	}
	m, err := New(p)
	if err == nil && m.Epsilon() != e.Epsilon && !(math.IsInf(m.Epsilon(), 1) && math.IsInf(e.Epsilon, 1)) {
		m = nil
	}
	return Release{ID: e.ID, Source: e.Source, Rows: e.Rows, Mech: m, Noise: e.Noise, Seed: e.Seed,
		Path: e.Path, SHA256: e.SHA256}
}

// validate checks a Release; errors are *ParamError naming "release.<field>".
func (r Release) validate() error {
	bad := func(field, msg string) error { return &ParamError{Param: "release." + field, Msg: msg} }
	switch {
	case r.ID == "" || hasControl(r.ID):
		return bad("id", fmt.Sprintf("%q: must be non-empty, without control characters", r.ID))
	case !isHexDigest(strings.TrimPrefix(r.Source, "sha256:")) || !strings.HasPrefix(r.Source, "sha256:"):
		return bad("source", fmt.Sprintf("%q is not a LabelSource (sha256: and 64 lowercase hex digits)", r.Source))
	case r.Rows < 1:
		return bad("rows", fmt.Sprintf("must be ≥ 1, got %d", r.Rows))
	case r.Mech == nil:
		return bad("mech", "nil mechanism (or mechanism, k and epsilon that do not form one)")
	case !r.Noise.Valid():
		return bad("noise", fmt.Sprintf("%q is not one of %q, %q, %q", r.Noise, NoiseSecure, NoiseSeeded, NoiseSimulation))
	case r.Noise == NoiseSecure && r.Seed != "":
		return bad("seed", "a secure release has no seed")
	case r.Noise != NoiseSecure && !isSeed(r.Seed):
		return bad("seed", fmt.Sprintf("%q is not a decimal uint64 (required for %s noise)", r.Seed, r.Noise))
	case r.Path == "" || hasControl(r.Path):
		return bad("path", fmt.Sprintf("%q: must be non-empty, without control characters", r.Path))
	case !isHexDigest(r.SHA256):
		return bad("sha256", fmt.Sprintf("%q is not 64 lowercase hex digits", r.SHA256))
	}
	return nil
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f })
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isSeed reports whether s is a canonical decimal uint64.
func isSeed(s string) bool {
	v, err := strconv.ParseUint(s, 10, 64)
	return err == nil && strconv.FormatUint(v, 10) == s
}
