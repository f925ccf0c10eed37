package pets

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
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

// ledgerHeader lists the ledger's columns in order (documented in doc.go).
var ledgerHeader = []string{"id", "status", "input", "labels", "rows", "people", "mechanism", "k", "epsilon",
	"noise", "seed", "path", "sha256", "releases", "people_at_worst", "eps_total", "eps_total_basic",
	"eps_total_drv", "eps_total_drv_quad", "eps_total_pld", "delta_prime", "time", "reason"}

// Headers of earlier ledger formats, refused with an explanation.
const (
	// ledgerHeaderV1 composed only releases with the same (mechanism, k, ε).
	ledgerHeaderV1 = "mechanism,k,epsilon,rows,seed,releases,eps_basic,eps_advanced,delta_prime,time"
	// ledgerHeaderV2 composed per label column, named by a plain SHA-256.
	ledgerHeaderV2 = "id,status,source,rows,mechanism,k,epsilon,noise,seed,path,sha256,releases," +
		"eps_total_basic,eps_total_advanced,eps_total,eps_total_seed004,delta_prime,time,reason"
)

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

// ledgerState is the CSV's rows, indexed.
type ledgerState struct {
	rows    []LedgerEntry
	byID    map[string]*LedgerEntry // the released row of each id
	aborted map[string]bool
}

func (st *ledgerState) live(id string) bool { return st.byID[id] != nil && !st.aborted[id] }

func (st *ledgerState) step(id string) Step {
	e := st.byID[id]
	return Step{Kind: e.Mechanism, Epsilon: e.Epsilon}
}

// load reads and checks every CSV row of f (locked by the caller).
func (l *Ledger) load(f *os.File) (*ledgerState, error) {
	b, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("pets: ledger: read %s: %w", l.path, err)
	}
	rows, err := parseLedger(l.path, b)
	if err != nil {
		return nil, err
	}
	return indexRows(rows), nil
}

func indexRows(rows []LedgerEntry) *ledgerState {
	st := &ledgerState{rows: rows, byID: map[string]*LedgerEntry{}, aborted: map[string]bool{}}
	for i := range rows {
		if rows[i].Status == StatusReleased {
			st.byID[rows[i].ID] = &rows[i]
		} else {
			st.aborted[rows[i].ID] = true
		}
	}
	return st
}

// openPeopleFor opens the people file and checks it against the CSV: its
// key check must be the key's, and it must name every live release.
func (l *Ledger) openPeopleFor(st *ledgerState) (*peopleReader, error) {
	pp := PeoplePath(l.path)
	pr, err := openPeople(pp)
	if err != nil {
		return nil, err
	}
	var known map[string]bool
	if pr != nil {
		k, err := readKey(KeyPath(l.path))
		if err != nil {
			pr.Close()
			return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
		}
		if pr.hdr.keyCheck != keyCheckBytes(k.Check()) {
			pr.Close()
			return nil, fmt.Errorf("%w: %s was recorded with another key than %s (the key was replaced?): "+
				"restore the original key", ErrLedgerKey, pp, KeyPath(l.path))
		}
		known = make(map[string]bool, len(pr.hdr.ids))
		for _, id := range pr.hdr.ids {
			known[id] = true
		}
	}
	for id := range st.byID {
		if st.live(id) && !known[id] {
			if pr != nil {
				pr.Close()
			}
			return nil, &LedgerError{Path: l.path, Msg: fmt.Sprintf("release %q is recorded but %s does not list "+
				"its people (the people file is missing or older than the ledger): refusing, since every "+
				"total would under-count; restore the people file that goes with this ledger", id, pp)}
		}
	}
	return pr, nil
}

// class is a history class with its live history.
type class struct {
	ids   []string // live release ids
	steps []Step
	had   map[string]bool // every id of the stored history (aborted ones too)
	size  uint64
}

// currentClasses returns the people file's classes with live histories
// (full verification of the file when verify).
func (l *Ledger) currentClasses(st *ledgerState, verify bool) ([]class, error) {
	pr, err := l.openPeopleFor(st)
	if err != nil || pr == nil {
		return nil, err
	}
	defer pr.Close()
	if verify {
		if err := merge(pr, nil, func(uint64, int, bool) {}); err != nil {
			return nil, err
		}
	}
	out := make([]class, len(pr.hdr.classes))
	for i, c := range pr.hdr.classes {
		out[i] = class{had: map[string]bool{}, size: c.size}
		for _, id := range idsOf(&pr.hdr, i) {
			out[i].had[id] = true
			if st.live(id) {
				out[i].ids = append(out[i].ids, id)
				out[i].steps = append(out[i].steps, st.step(id))
			}
		}
	}
	return out, nil
}

// plan is the people file after a release, as computed by pass 1.
type plan struct {
	hdr        peopleHeader
	stay, move []int32 // old class → new class (−1: the person is dropped)
	fresh      int32   // class of covered people not yet in the file
	rows       int
	worst      worst
}

// plan walks the people file once (pass 1) to count, for each history
// class, the people r covers and those it does not; builds the classes
// after r (live histories only: aborted and unrecorded releases are
// dropped, identical histories merged); computes the worst covered
// person's totals and applies the budget.
func (l *Ledger) plan(st *ledgerState, r *Release) (*plan, error) {
	pr, err := l.openPeopleFor(st)
	if err != nil {
		return nil, err
	}
	var old peopleHeader
	var stats mergeStats
	if pr != nil {
		old = pr.hdr
		stats.stay = make([]uint64, len(old.classes))
		stats.move = make([]uint64, len(old.classes))
		err = merge(pr, r.People, func(_ uint64, c int, covered bool) {
			switch {
			case c < 0:
				stats.fresh++
			case covered:
				stats.move[c]++
			default:
				stats.stay[c]++
			}
		})
		pr.Close()
		if err != nil {
			return nil, err
		}
	} else {
		stats.fresh = uint64(len(r.People))
	}
	k, err := readKey(KeyPath(l.path))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
	}
	p := &plan{rows: r.Rows, fresh: -1}
	p.hdr.keyCheck = keyCheckBytes(k.Check())
	// Release table: the live ids in recording order, then r.
	remap := make([]int32, len(old.ids))
	for i, id := range old.ids {
		remap[i] = -1
		if st.live(id) {
			remap[i] = int32(len(p.hdr.ids))
			p.hdr.ids = append(p.hdr.ids, id)
		}
	}
	rIdx := uint32(len(p.hdr.ids))
	p.hdr.ids = append(p.hdr.ids, r.ID)
	index := map[string]int32{}
	intern := func(h []uint32, n uint64) int32 {
		var b strings.Builder
		for _, x := range h {
			b.WriteString(strconv.FormatUint(uint64(x), 36))
			b.WriteByte(',')
		}
		c, ok := index[b.String()]
		if !ok {
			c = int32(len(p.hdr.classes))
			index[b.String()] = c
			p.hdr.classes = append(p.hdr.classes, peopleClass{hist: slices.Clone(h)})
		}
		p.hdr.classes[c].size += n
		p.hdr.persons += n
		return c
	}
	p.stay = make([]int32, len(old.classes))
	p.move = make([]int32, len(old.classes))
	withR := map[int32]bool{}
	for c, oc := range old.classes {
		var h []uint32
		for _, x := range oc.hist {
			if remap[x] >= 0 {
				h = append(h, uint32(remap[x]))
			}
		}
		p.stay[c], p.move[c] = -1, -1
		if stats.stay[c] > 0 && len(h) > 0 {
			p.stay[c] = intern(h, stats.stay[c])
		}
		if stats.move[c] > 0 {
			p.move[c] = intern(append(h, rIdx), stats.move[c])
			withR[p.move[c]] = true
		}
	}
	if stats.fresh > 0 {
		p.fresh = intern([]uint32{rIdx}, stats.fresh)
		withR[p.fresh] = true
	}
	// The covered people's totals with r, and without it for the budget.
	rStep := StepOf(r.Mech)
	var after []weighted
	for _, c := range slices.Sorted(maps.Keys(withR)) { // deterministic order
		cl := p.hdr.classes[c]
		steps := make([]Step, 0, len(cl.hist))
		for _, x := range cl.hist[:len(cl.hist)-1] {
			steps = append(steps, st.step(p.hdr.ids[x]))
		}
		after = append(after, weighted{steps: append(steps, rStep), n: cl.size})
	}
	if p.worst, err = worstOf(after, l.deltaPrime); err != nil {
		return nil, err
	}
	if l.budget > 0 && p.worst.comp.Total > l.budget {
		be := &BudgetError{Budget: l.budget, DeltaPrime: l.deltaPrime}
		for _, w := range after {
			ca, err := Compose(w.steps, l.deltaPrime)
			if err != nil {
				return nil, err
			}
			if ca.Total <= l.budget {
				continue
			}
			be.People += int(w.n)
			cb, err := Compose(w.steps[:len(w.steps)-1], l.deltaPrime)
			if err != nil {
				return nil, err
			}
			if cb.Total > be.Current || be.People == int(w.n) {
				be.Current, be.Releases = cb.Total, len(w.steps)-1
			}
			be.Would = math.Max(be.Would, ca.Total)
		}
		return nil, be
	}
	return p, nil
}

// writePeople streams the people file again (pass 2), writing each person
// with its class after the release, and renames the result into place.
func (l *Ledger) writePeople(p *plan, keys []uint64) error {
	pp := PeoplePath(l.path)
	pr, err := openPeople(pp)
	if err != nil {
		return err
	}
	if pr != nil {
		defer pr.Close()
	}
	pw, err := newPeopleWriter(pp, &p.hdr)
	if err != nil {
		return err
	}
	err = merge(pr, keys, func(key uint64, old int, covered bool) {
		c := p.fresh
		switch {
		case old >= 0 && covered:
			c = p.move[old]
		case old >= 0:
			c = p.stay[old]
		}
		if c >= 0 {
			pw.put(key, uint32(c))
		}
	})
	if err != nil {
		pw.abort()
		return err
	}
	return pw.commit()
}

// weighted is a history shared by n people.
type weighted struct {
	steps []Step
	n     uint64
}

// worst is the largest total among some people.
type worst struct {
	comp     Composition
	releases int
	people   uint64 // people at that total
}

// worstOf returns the worst of the histories: the largest Total, ties
// broken by Basic then by the number of releases; people counts everyone
// whose Total equals it.
func worstOf(hs []weighted, deltaPrime float64) (worst, error) {
	var w worst
	for i, h := range hs {
		c, err := Compose(h.steps, deltaPrime)
		if err != nil {
			return worst{}, err
		}
		switch {
		case i == 0 || c.Total > w.comp.Total:
			w = worst{comp: c, releases: len(h.steps), people: h.n}
		case c.Total == w.comp.Total:
			w.people += h.n
			if c.Basic > w.comp.Basic || (c.Basic == w.comp.Basic && len(h.steps) > w.releases) {
				w.comp, w.releases = c, len(h.steps)
			}
		}
	}
	return w, nil
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

func ledgerHeaderLine() string { return strings.Join(ledgerHeader, ",") + "\n" }

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
		e.ID, string(e.Status), e.Input, e.Labels, strconv.Itoa(e.Rows), strconv.Itoa(e.People),
		e.Mechanism.String(), strconv.Itoa(e.K), formatFloat(e.Epsilon), string(e.Noise), e.Seed, e.Path, e.SHA256,
		strconv.Itoa(e.Releases), strconv.Itoa(e.PeopleAtWorst),
		formatFloat(e.EpsTotal), formatFloat(e.EpsTotalBasic), formatFloat(e.EpsTotalDRV),
		formatFloat(e.EpsTotalDRVQuad), formatFloat(e.EpsTotalPLD), formatFloat(e.DeltaPrime),
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
	e.ID, e.Status, e.Input, e.Labels = rec[0], Status(rec[1]), rec[2], rec[3]
	e.Rows, e.People = atoi("rows", rec[4], 1), atoi("people", rec[5], 1)
	var err error
	if e.Mechanism, err = ParseKind(rec[6]); err != nil || rec[6] != e.Mechanism.String() {
		bad("mechanism", fmt.Sprintf("%q is not a mechanism name", rec[6]))
	}
	e.K, e.Epsilon, e.Noise, e.Seed = atoi("k", rec[7], 0), atof("epsilon", rec[8]), Noise(rec[9]), rec[10]
	e.Path, e.SHA256 = rec[11], rec[12]
	e.Releases, e.PeopleAtWorst = atoi("releases", rec[13], 0), atoi("people_at_worst", rec[14], 0)
	e.EpsTotal, e.EpsTotalBasic = atof("eps_total", rec[15]), atof("eps_total_basic", rec[16])
	e.EpsTotalDRV, e.EpsTotalDRVQuad = atof("eps_total_drv", rec[17]), atof("eps_total_drv_quad", rec[18])
	e.EpsTotalPLD = atof("eps_total_pld", rec[19])
	if e.DeltaPrime = atof("delta_prime", rec[20]); !(e.DeltaPrime > 0 && e.DeltaPrime < 1) {
		bad("delta_prime", fmt.Sprintf("%q is not in (0, 1)", rec[20]))
	}
	if e.Time, err = time.Parse(time.RFC3339Nano, rec[21]); err != nil {
		bad("time", err.Error())
	}
	e.Time = e.Time.UTC()
	e.Reason = rec[22]
	if e.Status != StatusReleased && e.Status != StatusAborted {
		bad("status", fmt.Sprintf("%q is neither %q nor %q", rec[1], StatusReleased, StatusAborted))
	}
	if e.People > e.Rows {
		bad("people", fmt.Sprintf("%d people in %d rows", e.People, e.Rows))
	}
	if err := e.release().validateFields(); err != nil {
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
