package pets

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LedgerFile is the conventional file name of the privacy ledger.
const LedgerFile = "privacy_ledger.csv"

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
// (identities with the ledger's Keys) and calls Ledger.Record before
// renaming the release file into place (write-ahead), and Ledger.Abort if
// that then fails.
type Release struct {
	ID     string // unique release id (caller's; e.g. 128 random bits in hex); no control characters
	Input  string // the labelled file released (for the reader); no control characters
	Labels string // Keys.Labels of the released label column
	// Rows is the number of release rows, ≥ 1.
	Rows int
	// People holds the person key (PersonHasher) of each release row, in
	// any order; rows of one person count once. Record and Check sort and
	// deduplicate it in place (so 1 ≤ len(People) ≤ Rows).
	People   []uint64
	KeyCheck string     // Keys.Check of the key People and Labels were computed with
	Mech     *Mechanism // the mechanism applied
	Noise    Noise      // how its randomness was drawn
	Seed     string     // decimal uint64 seed for the seeded kinds, "" for NoiseSecure
	Path     string     // release file path; no control characters
	SHA256   string     // hex SHA-256 (64 lowercase digits) of the release file's bytes
}

// LedgerEntry is one ledger row. The totals are those of the worst person
// the release covers (the largest EpsTotal; ties broken by EpsTotalBasic),
// over that person's releases recorded so far and not aborted: for a
// released row they include this release, for an aborted row they exclude
// it (the totals after the abort).
type LedgerEntry struct {
	ID        string
	Status    Status
	Input     string // the labelled file released
	Labels    string // keyed digest of the label column (Keys.Labels)
	Rows      int    // release rows
	People    int    // distinct people among them
	Mechanism Kind
	K         int     // bag size; 0 outside the LLP family
	Epsilon   float64 // ε of this release (+Inf for none and llp, 0 for bot)
	Noise     Noise
	Seed      string // "" for secure releases
	Path      string
	SHA256    string

	Releases      int // the worst person's releases (this one included unless aborted)
	PeopleAtWorst int // covered people whose EpsTotal equals the worst

	EpsTotal        float64 // Composition.Total of the worst person
	EpsTotalBasic   float64 // Composition.Basic
	EpsTotalDRV     float64 // Composition.DRV
	EpsTotalDRVQuad float64 // Composition.DRVQuad
	EpsTotalPLD     float64 // Composition.PLD
	DeltaPrime      float64 // δ' of the (ε, δ') totals, in (0, 1)

	Time   time.Time // written as RFC 3339 with nanoseconds, UTC
	Reason string    // why an aborted release was aborted; "" when released
}

// Sentinel errors of the ledger.
var (
	// ErrLedgerFormat is wrapped (via *LedgerError) by every error about a
	// ledger file's content: foreign or old header, unparsable or invalid
	// row, incomplete last line, damaged or stale people file.
	ErrLedgerFormat = errors.New("pets: bad privacy ledger")
	// ErrUnknownRelease: Abort of an id the ledger has no released row for.
	ErrUnknownRelease = errors.New("pets: unknown release")
	// ErrDuplicateRelease: Record of an id already in the ledger, or Abort
	// of an id already aborted.
	ErrDuplicateRelease = errors.New("pets: duplicate release")
	// ErrBudget is wrapped by *BudgetError.
	ErrBudget = errors.New("pets: privacy budget exceeded")
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

// BudgetError refuses a release that would take People people above the
// budget: they would reach Would; the worst of them carries Current now,
// over Releases releases.
type BudgetError struct {
	Budget, DeltaPrime float64
	People             int
	Would, Current     float64
	Releases           int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("pets: release refused by the privacy budget ε ≤ %g (δ' = %g): %d people would reach ε = %.4g; "+
		"they carry ε = %.4g now, over %d releases", e.Budget, e.DeltaPrime, e.People, e.Would, e.Current, e.Releases)
}

// Unwrap makes errors.Is(err, ErrBudget) true.
func (e *BudgetError) Unwrap() error { return ErrBudget }

// Ledger is an append-only CSV privacy ledger of every release of labels,
// composed per person, with its key file (KeyPath) and its people file
// (PeoplePath) beside it. The CSV is created with its header if missing
// (written to a temporary file and hard-linked into place, so it never
// exists without its header) and never rewritten. Record and Abort read the
// whole CSV and the people file, compute the new row and append it as one
// O_APPEND write, all under one exclusive flock(2) on the CSV, then fsync:
// concurrent writers (goroutines or processes) are serialised, so no total
// misses a release. They refuse, writing nothing, a file with another
// header (e.g. an earlier format's) or any invalid row, an incomplete last
// line, a damaged people file, or one that lacks a recorded release.
// Infinite values are written "inf" (pandas and strconv.ParseFloat read
// it). A Ledger is safe for concurrent use.
type Ledger struct {
	path       string
	deltaPrime float64
	budget     float64 // 0: none
	now        func() time.Time
}

// NewLedger returns a ledger writing to path (conventionally LedgerFile
// beside the raw data, never shipped with a release), with δ' ∈ (0, 1) for
// its (ε, δ') totals. Nothing is touched on disk until Keys or Record.
func NewLedger(path string, deltaPrime float64) (*Ledger, error) {
	if !(deltaPrime > 0 && deltaPrime < 1) {
		return nil, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, 1), got %v", deltaPrime)}
	}
	return &Ledger{path: path, deltaPrime: deltaPrime, now: time.Now}, nil
}

// SetBudget makes Record and Check refuse a release that would take any
// person's total (Composition.Total at the ledger's δ') above eps; 0
// removes the budget. eps must be finite and ≥ 0.
func (l *Ledger) SetBudget(eps float64) error {
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return &ParamError{Param: "budget", Msg: fmt.Sprintf("must be finite and ≥ 0, got %v", eps)}
	}
	l.budget = eps
	return nil
}

// Path returns the ledger file path.
func (l *Ledger) Path() string { return l.path }

// DeltaPrime returns δ' of the ledger's totals.
func (l *Ledger) DeltaPrime() float64 { return l.deltaPrime }

// Keys returns the ledger's key, creating the key file (mode 0600) when
// the ledger is new. A ledger that has rows or people but no key is an
// error wrapping ErrLedgerKey: a new key could not recognise anyone
// already recorded, so every total would under-count.
func (l *Ledger) Keys() (*Keys, error) {
	kp := KeyPath(l.path)
	k, err := readKey(kp)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	_, perr := os.Stat(PeoplePath(l.path))
	rows, rerr := ReadLedger(l.path)
	if rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return nil, rerr // e.g. a ledger of an earlier format: say so, not that a key is missing
	}
	if perr == nil || len(rows) > 0 {
		return nil, fmt.Errorf("%w: the ledger %s exists but its key %s is missing: restore the key from a backup "+
			"(without it, nobody already recorded can be recognised and every total would under-count)", ErrLedgerKey, l.path, kp)
	}
	return createKey(kp)
}

// Record appends a "released" row for r after adding r to the history of
// each person it covers. The row reports the worst covered person's
// totals. With a budget, a release that would take any person above it is
// refused with a *BudgetError and nothing is written. Errors: *ParamError
// for an invalid r, ErrDuplicateRelease if r.ID is already in the ledger,
// ErrLedgerKey if r was keyed with another key, *LedgerError for damaged
// files, *BudgetError, I/O errors.
func (l *Ledger) Record(r Release) (LedgerEntry, error) {
	if err := r.validate(); err != nil {
		return LedgerEntry{}, err
	}
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
	st, err := l.load(f)
	if err != nil {
		return LedgerEntry{}, err
	}
	if st.byID[r.ID] != nil {
		return LedgerEntry{}, fmt.Errorf("%w: id %q is already in %s", ErrDuplicateRelease, r.ID, l.path)
	}
	if err := l.checkKey(r.KeyCheck); err != nil {
		return LedgerEntry{}, err
	}
	r.People = sortKeys(r.People)
	pl, err := l.plan(st, &r)
	if err != nil {
		return LedgerEntry{}, err
	}
	if err := l.writePeople(pl, r.People); err != nil {
		return LedgerEntry{}, err
	}
	e := LedgerEntry{
		ID: r.ID, Status: StatusReleased, Input: r.Input, Labels: r.Labels, Rows: pl.rows, People: len(r.People),
		Mechanism: r.Mech.Kind(), K: r.Mech.K(), Epsilon: r.Mech.Epsilon(),
		Noise: r.Noise, Seed: r.Seed, Path: r.Path, SHA256: r.SHA256,
	}
	l.fill(&e, pl.worst)
	return e, l.appendLine(f, e)
}

// Check reports whether Record would accept r under the budget, without
// writing anything (under a shared lock): a *BudgetError if it would take
// anyone above it. Like Record it sorts r.People in place.
func (l *Ledger) Check(r *Release) error {
	c := *r
	if c.SHA256 == "" { // not known before the file is written
		c.SHA256 = strings.Repeat("0", 64)
	}
	if err := c.validate(); err != nil {
		return err
	}
	st := &ledgerState{byID: map[string]*LedgerEntry{}, aborted: map[string]bool{}}
	f, err := os.Open(l.path)
	switch {
	case err == nil:
		defer f.Close()
		if err := lockFile(f, false); err != nil {
			return fmt.Errorf("pets: ledger: lock %s: %w", l.path, err)
		}
		if st, err = l.load(f); err != nil {
			return err
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("pets: ledger: %w", err)
	}
	if err := l.checkKey(r.KeyCheck); err != nil {
		return err
	}
	r.People = sortKeys(r.People)
	_, err = l.plan(st, r)
	return err
}

// Abort appends an "aborted" row for release id (its file was never renamed
// into place): a copy of its released row with the reason (control
// characters replaced by spaces) and the totals of the people it covered
// without it. Aborted releases count in no later total. Errors:
// ErrUnknownRelease if the ledger has no released row for id,
// ErrDuplicateRelease if it is already aborted, *LedgerError for damaged
// files, I/O errors.
func (l *Ledger) Abort(id, reason string) (LedgerEntry, error) {
	reason = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return ' '
		}
		return c
	}, reason)
	if err := l.create(); err != nil {
		return LedgerEntry{}, err
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, true); err != nil {
		return LedgerEntry{}, fmt.Errorf("pets: ledger: lock %s: %w", l.path, err)
	}
	st, err := l.load(f)
	if err != nil {
		return LedgerEntry{}, err
	}
	row := st.byID[id]
	switch {
	case row == nil:
		return LedgerEntry{}, fmt.Errorf("%w: no release %q in %s", ErrUnknownRelease, id, l.path)
	case st.aborted[id]:
		return LedgerEntry{}, fmt.Errorf("%w: id %q is already aborted in %s", ErrDuplicateRelease, id, l.path)
	}
	st.aborted[id] = true // the totals after the abort
	classes, err := l.currentClasses(st, false)
	if err != nil {
		return LedgerEntry{}, err
	}
	var covered []weighted
	for _, c := range classes {
		if c.had[id] {
			covered = append(covered, weighted{steps: c.steps, n: c.size})
		}
	}
	w, err := worstOf(covered, l.deltaPrime)
	if err != nil {
		return LedgerEntry{}, err
	}
	e := *row
	e.Status, e.Reason = StatusAborted, reason
	l.fill(&e, w)
	return e, l.appendLine(f, e)
}

// fill stamps e with the worst person's totals, δ' and the time.
func (l *Ledger) fill(e *LedgerEntry, w worst) {
	e.Releases, e.PeopleAtWorst = w.releases, int(w.people)
	c := w.comp
	e.EpsTotal, e.EpsTotalBasic, e.EpsTotalDRV, e.EpsTotalDRVQuad, e.EpsTotalPLD = c.Total, c.Basic, c.DRV, c.DRVQuad, c.PLD
	e.DeltaPrime = l.deltaPrime
	e.Time = l.now().UTC()
}

// appendLine appends e as one write and fsyncs.
func (l *Ledger) appendLine(f *os.File, e LedgerEntry) error {
	if _, err := f.Write(e.line()); err != nil {
		return fmt.Errorf("pets: ledger: append %s: %w", l.path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("pets: ledger: fsync %s: %w", l.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("pets: ledger: close %s: %w", l.path, err)
	}
	return nil
}

// checkKey refuses a release keyed with another key than the ledger's.
func (l *Ledger) checkKey(check string) error {
	k, err := readKey(KeyPath(l.path))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s is missing (take the keys from Ledger.Keys)", ErrLedgerKey, KeyPath(l.path))
		}
		return err
	}
	if k.Check() != check {
		return fmt.Errorf("%w: the release's people were keyed with key %s, the ledger's key %s is %s",
			ErrLedgerKey, check, KeyPath(l.path), k.Check())
	}
	return nil
}

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
		werr = tmp.Chmod(0o644)
	}
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
			werr = createExclusive(l.path, []byte(header), 0o644)
		}
	}
	os.Remove(tmp.Name())
	if werr != nil && !errors.Is(werr, fs.ErrExist) {
		return fmt.Errorf("pets: ledger: create %s: %w", l.path, werr)
	}
	syncDir(dir)
	return nil
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

// HistoryClass is the people who share one release history, and what it
// costs each of them.
type HistoryClass struct {
	People   int
	Releases []string // live release ids, in recording order
	Steps    []Step   // their mechanisms
	Comp     Composition
}

// LedgerState is a ledger read whole: its rows and its people, grouped by
// release history.
type LedgerState struct {
	Path       string
	DeltaPrime float64
	Rows       []LedgerEntry
	People     int            // people with at least one live release
	Classes    []HistoryClass // the largest Total first
}

// ReadLedgerState reads a ledger, its key check and its people file (fully
// verified), under a shared flock, and composes every history at δ'.
func ReadLedgerState(path string, deltaPrime float64) (*LedgerState, error) {
	l, err := NewLedger(path, deltaPrime)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, false); err != nil {
		return nil, fmt.Errorf("pets: ledger: lock %s: %w", path, err)
	}
	st, err := l.load(f)
	if err != nil {
		return nil, err
	}
	classes, err := l.currentClasses(st, true)
	if err != nil {
		return nil, err
	}
	s := &LedgerState{Path: path, DeltaPrime: deltaPrime, Rows: st.rows}
	byHist := map[string]int{}
	for _, c := range classes {
		if len(c.ids) == 0 {
			continue
		}
		name := histName(c.ids)
		i, ok := byHist[name]
		if !ok {
			comp, err := Compose(c.steps, deltaPrime)
			if err != nil {
				return nil, err
			}
			i = len(s.Classes)
			byHist[name] = i
			s.Classes = append(s.Classes, HistoryClass{Releases: c.ids, Steps: c.steps, Comp: comp})
		}
		s.Classes[i].People += int(c.size)
		s.People += int(c.size)
	}
	slices.SortStableFunc(s.Classes, func(a, b HistoryClass) int {
		switch {
		case a.Comp.Total > b.Comp.Total:
			return -1
		case a.Comp.Total < b.Comp.Total:
			return 1
		}
		return b.People - a.People
	})
	return s, nil
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
	return Release{ID: e.ID, Input: e.Input, Labels: e.Labels, Mech: m, Noise: e.Noise, Seed: e.Seed,
		Path: e.Path, SHA256: e.SHA256}
}

// validate checks a Release about to be recorded; errors are *ParamError
// naming "release.<field>".
func (r *Release) validate() error {
	if err := r.validateFields(); err != nil {
		return err
	}
	switch {
	case len(r.People) == 0 || len(r.People) > r.Rows:
		return &ParamError{Param: "release.people", Msg: fmt.Sprintf("%d person keys for %d rows: want 1 to rows", len(r.People), r.Rows)}
	case !isHexDigest(r.KeyCheck + r.KeyCheck):
		return &ParamError{Param: "release.key_check", Msg: fmt.Sprintf("%q is not a Keys.Check", r.KeyCheck)}
	}
	return nil
}

// validateFields checks the fields a ledger row stores.
func (r Release) validateFields() error {
	bad := func(field, msg string) error { return &ParamError{Param: "release." + field, Msg: msg} }
	switch {
	case r.ID == "" || hasControl(r.ID) || len(r.ID) > 1<<12:
		return bad("id", fmt.Sprintf("%q: must be non-empty, without control characters", r.ID))
	case hasControl(r.Input):
		return bad("input", fmt.Sprintf("%q has control characters", r.Input))
	case !isHexDigest(strings.TrimPrefix(r.Labels, "hmac-sha256:")) || !strings.HasPrefix(r.Labels, "hmac-sha256:"):
		return bad("labels", fmt.Sprintf("%q is not a Keys.Labels digest (hmac-sha256: and 64 lowercase hex digits)", r.Labels))
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
