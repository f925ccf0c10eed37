package pets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LedgerFile is the conventional file name of the privacy ledger.
const LedgerFile = "privacy_ledger.csv"

// LedgerHeader is the CSV header of the ledger, in column order.
var LedgerHeader = []string{"mechanism", "k", "epsilon", "rows", "seed", "releases",
	"eps_basic", "eps_advanced", "delta_prime", "time"}

// LedgerEntry is one ledger row: one release of a dataset's labels.
type LedgerEntry struct {
	Mechanism Kind
	K         int     // bag size; 0 outside the LLP family
	Epsilon   float64 // ε of this release (+Inf for none/llp, 0 for bot)
	Rows      int     // labelled rows the release covers
	Seed      uint64  // noise / partition seed of the run
	// Releases counts the releases of the same labels so far, this one
	// included (≥ 1); the composition columns assume they all had Epsilon.
	Releases    int
	EpsBasic    float64   // BasicComposition(Epsilon, Releases)
	EpsAdvanced float64   // AdvancedComposition(Epsilon, Releases, DeltaPrime)
	DeltaPrime  float64   // δ' of the advanced bound, in (0, 1)
	Time        time.Time // written as RFC 3339 (nanoseconds, UTC)
}

// Ledger appends entries to a CSV privacy ledger. The file is created with
// LedgerHeader if missing (atomically: written to a temporary file and
// hard-linked into place, so it never exists without its header); otherwise
// entries are appended. Every entry is one whole line written by a single
// O_APPEND write under an exclusive flock(2) and fsynced, so concurrent
// writers (goroutines or processes) never interleave within a line and an
// existing file is never rewritten. Append refuses (with an error, writing
// nothing) a file whose header differs or whose last line is incomplete.
// Infinite ε is written as "inf" (read by pandas and strconv.ParseFloat).
// Safe for concurrent use.
type Ledger struct {
	path       string
	deltaPrime float64
	mu         sync.Mutex
	now        func() time.Time
}

// NewLedger returns a ledger writing to path (conventionally LedgerFile in
// the results directory), with δ' ∈ (0, 1) for the eps_advanced column.
// Nothing is touched on disk until the first Append.
func NewLedger(path string, deltaPrime float64) (*Ledger, error) {
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return nil, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	return &Ledger{path: path, deltaPrime: deltaPrime, now: time.Now}, nil
}

// Path returns the ledger file path.
func (l *Ledger) Path() string { return l.path }

// Record builds the entry for one release by m of rows labelled rows
// (releases = releases of the same labels so far, this one included),
// computes the composition columns, stamps the time and appends it.
func (l *Ledger) Record(m *Mechanism, rows int, seed uint64, releases int) (LedgerEntry, error) {
	if releases < 1 {
		return LedgerEntry{}, &ParamError{Param: "releases", Msg: fmt.Sprintf("must be ≥ 1, got %d", releases)}
	}
	if rows < 0 {
		return LedgerEntry{}, &ParamError{Param: "rows", Msg: fmt.Sprintf("must be ≥ 0, got %d", rows)}
	}
	eps := m.Epsilon()
	adv, err := AdvancedComposition(eps, releases, l.deltaPrime)
	if err != nil {
		return LedgerEntry{}, err
	}
	e := LedgerEntry{
		Mechanism: m.Kind(), K: m.K(), Epsilon: eps, Rows: rows, Seed: seed,
		Releases: releases, EpsBasic: BasicComposition(eps, releases), EpsAdvanced: adv,
		DeltaPrime: l.deltaPrime, Time: l.now().UTC(),
	}
	return e, l.Append(e)
}

// Append writes e as one line (fields as given; see Record to compute them).
func (l *Ledger) Append(e LedgerEntry) error {
	if !e.Mechanism.Valid() {
		return &ParamError{Param: "mechanism", Msg: fmt.Sprintf("invalid kind %d", uint8(e.Mechanism))}
	}
	line := []byte(strings.Join(e.fields(), ",") + "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.create(); err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("pets: ledger: %w", err)
	}
	defer f.Close()
	// An exclusive advisory lock serialises check-then-append across
	// processes (a reader could otherwise see another writer's line half
	// written); released by Close.
	if err := lockFile(f); err != nil {
		return fmt.Errorf("pets: ledger: lock %s: %w", l.path, err)
	}
	if err := l.check(f); err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		return fmt.Errorf("pets: ledger: append %s: %w", l.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pets: ledger: fsync %s: %w", l.path, err)
	}
	return f.Close()
}

func ledgerHeaderLine() string { return strings.Join(LedgerHeader, ",") + "\n" }

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

// check verifies an open ledger: our header, last line complete.
func (l *Ledger) check(f *os.File) error {
	header := ledgerHeaderLine()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("pets: ledger: %w", err)
	}
	first := make([]byte, len(header))
	n, err := f.ReadAt(first, 0)
	if err != nil && err != io.EOF {
		return fmt.Errorf("pets: ledger: read %s: %w", l.path, err)
	}
	if string(first[:n]) != header {
		got, _, _ := strings.Cut(string(first[:n]), "\n")
		return fmt.Errorf("pets: ledger: %s has header %q, want %q; refusing to append",
			l.path, got, strings.TrimSpace(header))
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil {
		return fmt.Errorf("pets: ledger: read %s: %w", l.path, err)
	}
	if last[0] != '\n' {
		return fmt.Errorf("pets: ledger: %s does not end with a newline (truncated line?); refusing to append", l.path)
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

func formatFloat(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

func (e LedgerEntry) fields() []string {
	return []string{
		e.Mechanism.String(),
		strconv.Itoa(e.K),
		formatFloat(e.Epsilon),
		strconv.Itoa(e.Rows),
		strconv.FormatUint(e.Seed, 10),
		strconv.Itoa(e.Releases),
		formatFloat(e.EpsBasic),
		formatFloat(e.EpsAdvanced),
		formatFloat(e.DeltaPrime),
		e.Time.UTC().Format(time.RFC3339Nano),
	}
}

// ReadLedger parses a ledger file written by Ledger.
func ReadLedger(path string) ([]LedgerEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: %w", err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: parse %s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(LedgerHeader, ",") {
		return nil, fmt.Errorf("pets: ledger: %s: missing or unexpected header", path)
	}
	out := make([]LedgerEntry, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		e, err := parseEntry(rec)
		if err != nil {
			return nil, fmt.Errorf("pets: ledger: %s line %d: %w", path, i+2, err)
		}
		out = append(out, e)
	}
	return out, nil
}

func parseEntry(rec []string) (LedgerEntry, error) {
	var e LedgerEntry
	var errs []error
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		errs = append(errs, err)
		return v
	}
	atof := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return v
	}
	var err error
	e.Mechanism, err = ParseKind(rec[0])
	errs = append(errs, err)
	e.K, e.Epsilon, e.Rows = atoi(rec[1]), atof(rec[2]), atoi(rec[3])
	e.Seed, err = strconv.ParseUint(rec[4], 10, 64)
	errs = append(errs, err)
	e.Releases, e.EpsBasic, e.EpsAdvanced, e.DeltaPrime = atoi(rec[5]), atof(rec[6]), atof(rec[7]), atof(rec[8])
	e.Time, err = time.Parse(time.RFC3339Nano, rec[9])
	errs = append(errs, err)
	return e, errors.Join(errs...)
}
