package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"labelprivacy/internal/faultpoint"
	"labelprivacy/pets"
)

// δ' of a ledger's (ε, δ') totals.
const (
	// DefaultDeltaPrime is the δ' of a new ledger unless Options say
	// otherwise.
	DefaultDeltaPrime = 1e-6
	// MaxDeltaPrime bounds δ': a larger one buys small totals with a
	// real chance of failure (δ' = 0.5 turns a (2, 0)-DP history into a
	// "(0, 0.5)" one). Keep δ' well below 1/people (Options warn above).
	MaxDeltaPrime = 1e-3
)

// Options configure a Ledger.
type Options struct {
	// DeltaPrime is the δ' of the totals, in (0, MaxDeltaPrime]; 0: the
	// ledger's own (fixed by its first row; DefaultDeltaPrime for a new
	// ledger). A release at another δ' than the ledger's is refused: one
	// ledger states every total at one δ'.
	DeltaPrime float64
	// Budget refuses a release that would take anyone's total above it
	// (finite, ≥ 0); 0: no budget.
	Budget float64
}

// Ledger is a per-person privacy ledger: an append-only CSV of releases
// (path), whose rows are chained by MACs under the key (KeyPath), and the
// people file (PeoplePath) holding every person's history class. Record,
// Abort, Plan, Check, Rows and State all open, lock and load it through
// one path: the CSV under flock(2) (exclusive to write, shared to read),
// every row's MAC verified, the people file's records verified and
// matched against the CSV's last row (a row a crash kept out of the CSV
// is appended from the people file), and, but for Rows and Abort, every
// person streamed and counted. They refuse, changing nothing, a file of
// another or earlier format, an invalid row, a broken chain (naming the
// first bad row), a CSV or people file that is lost, older or newer than
// the other, a key file others can read, a CSV or people file the world
// can read. A Ledger is safe for concurrent use, also across processes.
type Ledger struct {
	path string
	opt  Options
	now  func() time.Time
}

// Open returns the ledger at path (conventionally File, never shipped with
// a release). Nothing is touched on disk until Keys, Record or a read.
func Open(path string, o Options) (*Ledger, error) {
	if o.DeltaPrime != 0 && !(o.DeltaPrime > 0 && o.DeltaPrime <= MaxDeltaPrime) {
		return nil, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, %g], got %v", MaxDeltaPrime, o.DeltaPrime)}
	}
	if !(o.Budget >= 0) || math.IsInf(o.Budget, 0) {
		return nil, &ParamError{Param: "budget", Msg: fmt.Sprintf("must be finite and ≥ 0, got %v", o.Budget)}
	}
	if path == "" {
		return nil, &ParamError{Param: "path", Msg: "empty ledger path"}
	}
	return &Ledger{path: path, opt: o, now: time.Now}, nil
}

// Path returns the ledger's CSV path.
func (l *Ledger) Path() string { return l.path }

// Keys returns the ledger's key. For a new ledger it creates, in this
// order, the folder (mode 0700), the CSV with its header (0640), the
// people file (0640) and last the key (0600): a key therefore never
// exists without the other two, and a ledger whose CSV or people file is
// missing beside its key is refused as lost, not restarted. A ledger that
// has rows or people but no key is an error wrapping ErrKey: a new key
// could neither recognise anyone recorded nor verify anything.
func (l *Ledger) Keys() (*Keys, error) {
	if err := l.checkHeader(); err != nil {
		return nil, err
	}
	kp := KeyPath(l.path)
	k, _, err := readKey(kp)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if what := l.recorded(); what != "" {
		if k, _, err := readKey(kp); err == nil { // created meanwhile by another process
			return k, nil
		}
		return nil, fmt.Errorf("%w: %s has %s but the key %s is missing: restore the key from a backup "+
			"(without it nobody already recorded can be recognised, and every total would under-count)", ErrKey, l.path, what, kp)
	}
	dir := filepath.Dir(l.path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("ledger: %w", err)
		}
	}
	if err := createFile(l.path, []byte(headerLine()), 0o640); err != nil {
		return nil, fmt.Errorf("ledger: create %s: %w", l.path, err)
	}
	if err := createFile(PeoplePath(l.path), newPeopleHeader(), 0o640); err != nil {
		return nil, fmt.Errorf("ledger: create %s: %w", PeoplePath(l.path), err)
	}
	return createKey(kp)
}

// checkHeader refuses, before anything else, a file at the ledger's path
// that is not a ledger of this format (an earlier format, another file).
func (l *Ledger) checkHeader() error {
	f, err := os.Open(l.path)
	if err != nil {
		return nil // missing or unreadable: said later, where it matters
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	if b = b[:n]; bytes.HasPrefix(b, []byte(headerLine())) {
		return nil
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	}
	if _, err := parseCSV(l.path, b); err != nil {
		return err
	}
	return formatErr(l.path, 1, "%s", describeForeign(b))
}

// recorded says what a ledger without a key holds ("" for nothing).
func (l *Ledger) recorded() string {
	if st, err := os.Stat(l.path); err == nil && st.Size() > int64(len(headerLine())) {
		return "rows"
	}
	if st, err := os.Stat(PeoplePath(l.path)); err == nil && st.Size() > int64(peopleHeaderLen) {
		return "a people file with records"
	}
	return ""
}

// loaded is a ledger opened, locked and read.
type loaded struct {
	l        *Ledger
	keys     *Keys
	f        *os.File // the CSV, locked
	csv      *csvFile
	people   *people
	byID     map[string]int // row index of each id's released row
	aborted  map[string]bool
	identity Identity // of the rows; "" for none
	idCol    IDColumn // of the rows (rule ByID)
	delta    float64  // the ledger's δ' (its rows', else the options', else the default)
	head     head     // the key file's chain head, checked against the rows
}

func (ld *loaded) close() {
	ld.people.Close()
	ld.f.Close()
}

// prevMAC is the MAC of the last row (nil for none).
func (ld *loaded) prevMAC() []byte {
	if n := len(ld.csv.lines); n > 0 {
		mac, _, _ := lineMAC(ld.csv.lines[n-1])
		return mac
	}
	return nil
}

// open opens, locks and loads the ledger (see Ledger).
func (l *Ledger) open(write bool) (*loaded, error) {
	if err := l.checkHeader(); err != nil {
		return nil, err
	}
	k, _, err := readKey(KeyPath(l.path))
	if errors.Is(err, fs.ErrNotExist) {
		if what := l.recorded(); what != "" {
			return nil, fmt.Errorf("%w: %s has %s but the key %s is missing: restore the key from a backup", ErrKey, l.path, what, KeyPath(l.path))
		}
		if _, serr := os.Stat(l.path); serr != nil {
			return nil, fmt.Errorf("ledger: no ledger at %s (nothing recorded): %w", l.path, fs.ErrNotExist)
		}
		return nil, fmt.Errorf("%w: the key %s is missing (take the keys from Ledger.Keys)", ErrKey, KeyPath(l.path))
	}
	if err != nil {
		return nil, err
	}
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR | os.O_APPEND
	}
	f, err := os.OpenFile(l.path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		pp := PeoplePath(l.path)
		return nil, &Error{Path: l.path, Msg: fmt.Sprintf("the ledger's CSV is missing while its key %s remains (and %s): "+
			"it was lost or moved; restore it from a backup (a new one would forget every release recorded). Nothing was changed",
			KeyPath(l.path), existence(pp))}
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	ld := &loaded{l: l, keys: k, f: f}
	if err := ld.load(write); err != nil {
		ld.people.Close()
		f.Close()
		return nil, err
	}
	return ld, nil
}

func existence(path string) string {
	if _, err := os.Stat(path); err == nil {
		return "the people file " + path
	}
	return "no people file " + path
}

func (ld *loaded) load(write bool) error {
	l := ld.l
	if err := lockFile(ld.f, write); err != nil {
		return fmt.Errorf("ledger: lock %s: %w", l.path, err)
	}
	st, err := ld.f.Stat()
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	if err := checkMode(l.path, st, 0o007, "ledger CSV", "o-rwx"); err != nil {
		return err
	}
	b, err := readAll(ld.f)
	if err != nil {
		return fmt.Errorf("ledger: read %s: %w", l.path, err)
	}
	if ld.csv, err = parseCSV(l.path, b); err != nil {
		return err
	}
	if bad := verifyChain(ld.keys, ld.csv.lines); bad >= 0 {
		return formatErr(l.path, bad+2, "row %d fails its MAC: the ledger was edited here (a row changed, "+
			"inserted or removed), or it was written with another key. Refusing: totals after this row cannot be trusted; "+
			"restore the ledger from a backup", bad+1)
	}
	pp := PeoplePath(l.path)
	if ld.people, err = openPeople(pp, ld.keys, write); err != nil {
		return err
	}
	if ld.people == nil {
		return &Error{Path: l.path, Msg: fmt.Sprintf("its people file %s is missing: refusing, since every total would "+
			"under-count; restore the people file that goes with this ledger", pp)}
	}
	if err := ld.matchPeople(write); err != nil {
		return err
	}
	ld.byID, ld.aborted = map[string]int{}, map[string]bool{}
	for i, e := range ld.csv.rows {
		if e.Status == StatusReleased {
			ld.byID[e.ID] = i
		} else {
			ld.aborted[e.ID] = true
		}
		switch {
		case i == 0:
			ld.identity, ld.idCol, ld.delta = e.Identity, e.IDColumn, e.DeltaPrime
		case e.Identity != ld.identity || e.IDColumn != ld.idCol || e.DeltaPrime != ld.delta:
			return formatErr(l.path, i+2, "identity %q (id column %q) at δ' %g differs from the first row's %q (%q) at %g",
				e.Identity, e.IDColumn.Name, e.DeltaPrime, ld.identity, ld.idCol.Name, ld.delta)
		}
	}
	if err := ld.checkHead(write); err != nil {
		return err
	}
	if ld.delta == 0 {
		ld.delta = l.opt.DeltaPrime
		if ld.delta == 0 {
			ld.delta = DefaultDeltaPrime
		}
	}
	return nil
}

// checkHead checks the rows against the chain head the key file keeps
// (re-read under the lock): the CSV must hold at least its rows, and its
// MAC at its last row. Truncating the CSV and the people file together
// leaves them consistent with each other but shorter than the head. A
// writer brings a head left behind by a crash forward.
func (ld *loaded) checkHead(write bool) error {
	l, kp := ld.l, KeyPath(ld.l.path)
	k, h, err := readKey(kp)
	if err != nil {
		return err
	}
	if k.Check() != ld.keys.Check() {
		return fmt.Errorf("%w: %s was replaced while the ledger was opened", ErrKey, kp)
	}
	ld.head = h
	n := len(ld.csv.rows)
	switch {
	case h.rows > n:
		return &Error{Path: l.path, Msg: fmt.Sprintf("the ledger holds %d rows, but its key file %s records a chain of %d (its head): "+
			"rows %d–%d were removed from the CSV together with the people file's records of them, or both were restored from an older "+
			"backup. Refusing: the releases of those rows would be forgotten and every total under-count; restore the CSV and the people "+
			"file from a backup that holds row %d (train ledger names each release's row: --check FILE.arrow). Nothing was changed",
			n, kp, h.rows, n+1, h.rows, h.rows)}
	case h.rows > 0 && !bytes.Equal(ld.rowMAC(h.rows-1), h.mac[:]):
		return &Error{Path: l.path, Line: h.rows + 1, Msg: fmt.Sprintf("row %d is not the one its key file %s records at the chain's "+
			"head: the ledger was rewritten or replaced by another of the same key. Refusing; restore the ledger from a backup", h.rows, kp)}
	case write && h.rows < n:
		return ld.advanceHead()
	}
	return nil
}

// rowMAC is the MAC of row i.
func (ld *loaded) rowMAC(i int) []byte {
	mac, _, _ := lineMAC(ld.csv.lines[i])
	return mac
}

// advanceHead brings the key file's head to the CSV's last row. A
// failure leaves the head behind (the next writer mends it): every
// rollback below it is still refused.
func (ld *loaded) advanceHead() error {
	h := head{rows: len(ld.csv.rows)}
	if h.rows > 0 {
		copy(h.mac[:], ld.rowMAC(h.rows-1))
	}
	if err := writeHead(KeyPath(ld.l.path), ld.keys, h); err != nil {
		return fmt.Errorf("%w: write the chain head to %s: %v", ErrKey, KeyPath(ld.l.path), err)
	}
	ld.head = h
	return nil
}

// matchPeople checks that the people file names the CSV's last row, or
// the row after it (a crash between the two writes), which is then
// appended to the CSV (rolled forward; in memory only for a reader).
func (ld *loaded) matchPeople(write bool) error {
	l, p, c := ld.l, ld.people, ld.csv
	n := len(c.rows)
	pending := p.lastRow == n+1 && verifyLine(ld.keys, ld.prevMAC(), p.lastLine) && bytes.HasPrefix(p.lastLine, c.partial)
	if c.partial != nil && !pending {
		return formatErr(l.path, 0, "the last line is incomplete (a torn write?) and the people file does not hold it: repair it by hand")
	}
	switch {
	case p.lastRow == n:
		if n > 0 && !bytes.Equal(p.lastLine, c.lines[n-1]) {
			return formatErr(l.path, n+1, "the people file %s names another row %d: it belongs to another ledger, "+
				"or one of the two was replaced", p.path, n)
		}
		return nil
	case pending:
		e, err := parseLine(p.lastLine)
		if err != nil {
			return err
		}
		if write {
			if c.partial != nil {
				st, err := ld.f.Stat()
				if err != nil {
					return fmt.Errorf("ledger: %w", err)
				}
				if err := ld.f.Truncate(st.Size() - int64(len(c.partial))); err != nil {
					return fmt.Errorf("ledger: %s: %w", l.path, err)
				}
			}
			if err := ld.appendCSV(p.lastLine); err != nil {
				return err
			}
		}
		c.rows, c.lines, c.partial = append(c.rows, e), append(c.lines, p.lastLine), nil
		return nil
	case p.lastRow < n:
		return &Error{Path: l.path, Msg: fmt.Sprintf("the people file %s names row %d but the ledger has %d rows: "+
			"the people file is older than the ledger (restored from a backup?) and lacks the people of later releases; "+
			"refusing, since their totals would under-count. Restore the people file that goes with this ledger", p.path, p.lastRow, n)}
	}
	what := "is missing its rows after row " + fmt.Sprint(n)
	if n == 0 {
		what = "has no rows"
	}
	return &Error{Path: l.path, Msg: fmt.Sprintf("the ledger %s, but its people file %s names row %d: rows were removed, "+
		"or the CSV was lost or replaced by an older copy. Refusing, since a restarted ledger would forget those releases; "+
		"restore %s from a backup. Nothing was changed", what, p.path, p.lastRow, filepath.Base(l.path))}
}

// appendCSV appends one line (O_APPEND, one write) and fsyncs.
func (ld *loaded) appendCSV(line []byte) error {
	if _, err := ld.f.Write(line); err != nil {
		return fmt.Errorf("ledger: append %s: %w", ld.l.path, err)
	}
	if err := ld.f.Sync(); err != nil {
		return fmt.Errorf("ledger: fsync %s: %w", ld.l.path, err)
	}
	return nil
}

// fits refuses a release the ledger cannot compose with its rows: another
// identity rule or id column, another δ', another key.
func (ld *loaded) fits(identity Identity, col IDColumn, keyCheck string) error {
	l := ld.l
	if keyCheck != "" && keyCheck != ld.keys.Check() {
		return fmt.Errorf("%w: the release's people were keyed with key %s, the ledger's key %s is %s",
			ErrKey, keyCheck, KeyPath(l.path), ld.keys.Check())
	}
	if ld.identity != "" && identity != ld.identity {
		return fmt.Errorf("%w: %s knows people by %s, this release by %s: the same people would be counted twice "+
			"(each rule sees other people). Use one rule per ledger (an id column for every release, or none), "+
			"or record this release in another ledger (--ledger)", ErrMismatch, l.path, describeIdentity(ld.identity), describeIdentity(identity))
	}
	if identity == ByID && ld.identity == ByID && col != ld.idCol {
		return fmt.Errorf("%w: %s knows people by the id column %v of its first release, this release by %v: the same people "+
			"under another column's values would be other people to it, each total under-counted. Use the id column %q "+
			"(of that type) for every release of this ledger, or record this release in another ledger (--ledger)",
			ErrMismatch, l.path, ld.idCol, col, ld.idCol.Name)
	}
	if d := l.opt.DeltaPrime; d != 0 && len(ld.csv.rows) > 0 && d != ld.delta {
		return fmt.Errorf("%w: %s states its totals at δ' = %g (fixed by its first release), not %g: "+
			"leave δ' unset to use the ledger's, or use another ledger", ErrMismatch, l.path, ld.delta, d)
	}
	return nil
}

func describeIdentity(id Identity) string {
	switch id {
	case ByID:
		return "an id column"
	case ByFeatures:
		return "their feature values"
	case ByStandardizedFeatures:
		return "their standardized feature values"
	}
	return string(id)
}

// Check verifies the ledger (rows, MAC chain, chain head, people file) and
// that a release of people known by identity (and, for ByID, the id column
// col) at the options' δ' fits it. A ledger that does not exist yet fits.
func (l *Ledger) Check(identity Identity, col IDColumn) error {
	ld, err := l.open(false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer ld.close()
	return ld.fits(identity, col, "")
}

// Rows returns the ledger's rows, verified (MAC chain, people file against
// the last row; not every person: State does that).
func (l *Ledger) Rows() ([]Row, error) {
	ld, err := l.open(false)
	if err != nil {
		return nil, err
	}
	defer ld.close()
	return ld.csv.rows, nil
}

// Read returns the verified rows of the ledger at path.
func Read(path string) ([]Row, error) {
	l, err := Open(path, Options{})
	if err != nil {
		return nil, err
	}
	return l.Rows()
}

// Record appends a "released" row for r, after adding r to the history of
// each person it covers (people file first, then the row: a crash between
// the two is rolled forward by the next writer). The row reports the
// worst covered person's totals. With a budget, a release that would take
// anyone above it is refused with a *BudgetError and nothing is written.
// Errors: *ParamError for an invalid r, ErrDuplicateRelease if r.ID is in
// the ledger, ErrKey if r was keyed with another key, ErrMismatch for
// another identity rule or δ', *Error for damaged or lost files,
// *BudgetError, I/O errors.
func (l *Ledger) Record(r Release) (Row, error) {
	if err := r.validate(); err != nil {
		return Row{}, err
	}
	ld, err := l.open(true)
	if err != nil {
		return Row{}, err
	}
	defer ld.close()
	row, pl, err := ld.plan(&r)
	if err != nil {
		return Row{}, err
	}
	line := row.seal(ld.keys, ld.prevMAC())
	if err := pl.write(ld, line); err != nil {
		return Row{}, err
	}
	faultpoint.Hit("ledger.people-written")
	if err := ld.appendCSV(line); err != nil {
		return Row{}, err
	}
	faultpoint.Hit("ledger.row-written")
	ld.csv.rows, ld.csv.lines = append(ld.csv.rows, row), append(ld.csv.lines, line)
	ld.advanceHead() // best effort: the row is recorded; a head left behind is mended by the next writer
	return row, nil
}

// Plan returns the row Record would append for r (its totals, under the
// budget), writing nothing. Like Record it sorts r.People in place.
func (l *Ledger) Plan(r *Release) (Row, error) {
	c := *r
	if c.SHA256 == "" { // not known before the file is written
		c.SHA256 = strings.Repeat("0", 64)
	}
	if err := c.validate(); err != nil {
		return Row{}, err
	}
	ld, err := l.open(false)
	if err != nil {
		return Row{}, err
	}
	defer ld.close()
	row, _, err := ld.plan(&c)
	return row, err
}

// Abort appends an "aborted" row for release id (its file was never put in
// place): a copy of its released row with the reason (control characters
// replaced by spaces). The release still counts in every total: it was
// recorded before a byte of its file was written, and a partial file may
// have been read (by the same user's backup or sync) before it was
// removed; the ledger never counts less than may have left. Errors:
// ErrUnknownRelease if the ledger has no released row for id,
// ErrDuplicateRelease if it is already aborted, *Error for damaged files,
// I/O errors.
func (l *Ledger) Abort(id, reason string) (Row, error) {
	reason = strings.Map(func(c rune) rune {
		if c < 0x20 || c == 0x7f {
			return ' '
		}
		return c
	}, reason)
	ld, err := l.open(true)
	if err != nil {
		return Row{}, err
	}
	defer ld.close()
	i, ok := ld.byID[id]
	switch {
	case !ok:
		return Row{}, fmt.Errorf("%w: no release %q in %s", ErrUnknownRelease, id, l.path)
	case ld.aborted[id]:
		return Row{}, fmt.Errorf("%w: id %q is already aborted in %s", ErrDuplicateRelease, id, l.path)
	}
	e := ld.csv.rows[i]
	e.Status, e.Reason, e.Time = StatusAborted, reason, l.now().UTC()
	line := e.seal(ld.keys, ld.prevMAC())
	n := uint64(len(ld.csv.rows) + 1)
	if err := ld.people.appendRecord(ld.keys, recAbort, (&dec{}).appendRow(n, line)); err != nil {
		return Row{}, err
	}
	faultpoint.Hit("ledger.people-written")
	if err := ld.appendCSV(line); err != nil {
		return Row{}, err
	}
	ld.csv.rows, ld.csv.lines = append(ld.csv.rows, e), append(ld.csv.lines, line)
	ld.advanceHead() // best effort, as in Record
	return e, nil
}

// Class is the people who share one history, and what it costs each.
type Class struct {
	People   int
	Releases int         // releases covering each of them
	Steps    []pets.Step // the steps charged (one per row, or per group of rows in one draw)
	Comp     pets.Composition
}

// State is a ledger read and verified whole: its rows and its people,
// grouped by history, composed at DeltaPrime.
type State struct {
	Path       string
	DeltaPrime float64 // δ' of the totals
	Own        float64 // the ledger's δ'
	Identity   Identity
	Rows       []Row
	People     int     // people the ledger has seen
	Classes    []Class // the largest Total first
	// Head is the chain's head: its rows and the last row's MAC (hex; ""
	// for none). Kept elsewhere, it lets a later reader see a rollback that
	// restored every file of the ledger from one older backup.
	Head Head
}

// Head is a chain head: a ledger of Rows rows whose last row has MAC.
type Head struct {
	Rows int
	MAC  string
}

func (h Head) String() string {
	if h.Rows == 0 {
		return "0:"
	}
	return fmt.Sprintf("%d:%s", h.Rows, h.MAC)
}

// State reads and verifies the whole ledger (every person streamed and
// counted) and composes each history at δ' = deltaPrime, or the ledger's
// own when 0 (which must be in (0, MaxDeltaPrime]).
func (l *Ledger) State(deltaPrime float64) (*State, error) {
	if deltaPrime != 0 && !(deltaPrime > 0 && deltaPrime <= MaxDeltaPrime) {
		return nil, &ParamError{Param: "delta_prime", Msg: fmt.Sprintf("must be in (0, %g], got %v", MaxDeltaPrime, deltaPrime)}
	}
	ld, err := l.open(false)
	if err != nil {
		return nil, err
	}
	defer ld.close()
	if err := ld.people.walk(ld.keys, nil, func(uint64, int32, int32) {}); err != nil {
		return nil, err
	}
	s := &State{Path: l.path, DeltaPrime: deltaPrime, Own: ld.delta, Identity: ld.identity, Rows: ld.csv.rows}
	if n := len(ld.csv.rows); n > 0 {
		s.Head = Head{Rows: n, MAC: ld.csv.rows[n-1].MAC}
	}
	if deltaPrime == 0 {
		s.DeltaPrime = ld.delta
	}
	h := ld.people.h
	byHist := map[int32]int{}
	for _, c := range ld.people.classes {
		if c.size == 0 {
			continue
		}
		s.People += int(c.size)
		i, ok := byHist[c.hist]
		if !ok {
			comp, err := h.compose(c.hist, s.DeltaPrime)
			if err != nil {
				return nil, err
			}
			x := h.list[c.hist]
			i = len(s.Classes)
			byHist[c.hist] = i
			s.Classes = append(s.Classes, Class{Releases: x.releases, Steps: x.expand(), Comp: comp})
		}
		s.Classes[i].People += int(c.size)
	}
	slices.SortStableFunc(s.Classes, func(a, b Class) int {
		switch {
		case a.Comp.Total > b.Comp.Total:
			return -1
		case a.Comp.Total < b.Comp.Total:
			return 1
		case a.Releases != b.Releases:
			return b.Releases - a.Releases
		}
		return b.People - a.People
	})
	return s, nil
}
