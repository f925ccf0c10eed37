package ledger

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// The key file (KeyPath) is four lines:
//
//	labelprivacy ledger key v2
//	<the key: 64 hex digits>
//	head <rows> <the MAC of row <rows>: 64 hex digits, zeros for 0 rows>
//	<HMAC-SHA-256 under the key of "labelprivacy/ledger head", 0, the
//	 head line without its '\n': 64 hex digits>
//
// The head is the chain's length and last MAC as of the last write: the CSV
// must hold at least that many rows and that MAC at that row, so removing
// the last rows of the CSV together with the matching tail of the people
// file (which leaves both consistent with each other) is refused. Writers
// bring it forward, under the CSV's exclusive lock, after each row (a
// crash between the row and the head leaves it one row behind, which the
// next writer mends); it is rewritten whole (temporary, fsync, rename).
// keyHeaderV1 is the previous format (the key alone), refused.
const (
	keyHeader   = "labelprivacy ledger key v2"
	keyHeaderV1 = "labelprivacy ledger key v1"
)

// head is a ledger's chain head: its rows and the last row's MAC.
type head struct {
	rows int
	mac  [32]byte
}

// line is the head's line in the key file (without '\n').
func (h head) line() string {
	return fmt.Sprintf("head %d %s", h.rows, hex.EncodeToString(h.mac[:]))
}

// headTag is the MAC of a head line.
func (k *Keys) headTag(line string) string {
	m := k.mac()
	m.Write([]byte("labelprivacy/ledger head\x00"))
	m.Write([]byte(line))
	return hex.EncodeToString(m.Sum(nil))
}

// keyFile is the key file's bytes for k with head h.
func keyFile(k *Keys, h head) []byte {
	l := h.line()
	return fmt.Appendf(nil, "%s\n%s\n%s\n%s\n", keyHeader, hex.EncodeToString(k.key[:]), l, k.headTag(l))
}

// ReleaseTag is what a release file records of the ledger that charged it
// beside the release id: the hex HMAC-SHA-256 under the key of
// "labelprivacy/release", 0 and the id. The id is 128 bits from crypto/rand
// drawn apart from the data, and the tag a keyed function of that id
// alone, so neither says anything about the labels or the features; with
// the key, the tag proves the file was recorded by this ledger, so a
// ledger that lacks the id has lost the row (rolled back), while a file
// whose tag fails belongs to another ledger.
func (k *Keys) ReleaseTag(id string) string {
	m := k.mac()
	m.Write([]byte("labelprivacy/release\x00"))
	m.Write([]byte(id))
	return hex.EncodeToString(m.Sum(nil))
}

// Keys is a ledger's secret: 32 random bytes created with the ledger and
// kept beside it (KeyPath, mode 0600). Every identity the ledger stores is
// keyed with it (HMAC-SHA-256), and every row and people record carries a
// MAC under it, so whoever holds the ledger and a release but not the key
// can neither test guesses of labels or people nor edit the ledger
// unnoticed. The key never leaves the machine.
type Keys struct {
	key   [32]byte
	check string // Check
}

func newKeys(key [32]byte) *Keys {
	m := hmac.New(sha256.New, key[:])
	m.Write([]byte("labelprivacy/ledger key-check"))
	return &Keys{key: key, check: hex.EncodeToString(m.Sum(nil)[:16])}
}

// Check is a public fingerprint of the key (32 hex digits of an HMAC of a
// constant): equal checks mean, with overwhelming probability, equal keys.
// It reveals nothing about labels or people.
func (k *Keys) Check() string { return k.check }

// mac returns a new HMAC-SHA-256 under the key.
func (k *Keys) mac() hash.Hash { return hmac.New(sha256.New, k.key[:]) }

// Labels names a label column for the ledger: "hmac-sha256:" and the hex
// HMAC-SHA-256 under the key of "labels", a zero byte, the row count
// (uint64 little-endian) and the labels (one byte each). Without the key
// it cannot be used to test label guesses.
func (k *Keys) Labels(labels []uint8) string {
	m := k.mac()
	m.Write([]byte("labels\x00"))
	m.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(labels))))
	m.Write(labels)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// Values names a column of conversion values for the ledger as Labels
// does a label column: the HMAC under the key of "values", a zero byte,
// the row count and each value's float64 bits (little-endian).
func (k *Keys) Values(values []float64) string {
	m := k.mac()
	m.Write([]byte("values\x00"))
	m.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(values))))
	buf := make([]byte, 0, 8*1024)
	for i, v := range values {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		if len(buf) == cap(buf) || i == len(values)-1 {
			m.Write(buf)
			buf = buf[:0]
		}
	}
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
}

// Identity is a ledger's rule for who a person is. One ledger holds one
// rule: the same people known by two rules would be counted as two people
// each.
type Identity string

// The identity rules.
const (
	// ByID: a person is the value of an id column (PersonHasher.ID); all
	// rows with one id are one person.
	ByID Identity = "id"
	// ByFeatures: a person is the values of a row's features as stored in
	// the dataset's files (PersonHasher.Row); identical rows are one
	// person.
	ByFeatures Identity = "features"
	// ByStandardizedFeatures: the same, on standardized features (the
	// simulation releases of sessions with data.standardize).
	ByStandardizedFeatures Identity = "standardized-features"
)

// IDColumn is the id column by which a ByID ledger knows people: its name
// and the kind of its values. A ledger is bound to the id column of its
// first release: the same people under another column's values (pid, then
// x0) would be other people to it, each total under-counted.
type IDColumn struct {
	Name string
	Type IDType
}

// IDType is the kind of an id column's values.
type IDType string

// The kinds of id columns.
const (
	IDInteger IDType = "integer" // integers of any width, and floats holding whole numbers
	IDText    IDType = "text"    // strings and binary
)

func (c IDColumn) String() string { return fmt.Sprintf("%q (%s)", c.Name, c.Type) }

// valid checks c for a release of rule id: a ByID release names its column
// and type, others neither.
func (c IDColumn) valid(id Identity) error {
	switch {
	case id != ByID && c != IDColumn{}:
		return fmt.Errorf("%s names id column %v: only rule %q has one", id, c, ByID)
	case id != ByID:
		return nil
	case c.Name == "" || hasControl(c.Name) || len(c.Name) > 1<<10:
		return fmt.Errorf("id column name %q: must be non-empty, without control characters", c.Name)
	case c.Type != IDInteger && c.Type != IDText:
		return fmt.Errorf("id column type %q is neither %q nor %q", c.Type, IDInteger, IDText)
	}
	return nil
}

// Valid reports whether id is one of the rules.
func (id Identity) Valid() bool {
	return id == ByID || id == ByFeatures || id == ByStandardizedFeatures
}

// PersonHasher computes person keys: the first 8 bytes (little-endian) of
// an HMAC-SHA-256 under the ledger key. Two different people share a key
// with probability about n²/2^65 (n people); the ledger then composes the
// two histories as one, which over-counts, the safe direction. Not safe for
// concurrent use: make one per goroutine.
type PersonHasher struct {
	mac hash.Hash
	buf []byte
	sum []byte
	idx []uint32
}

// NewPersonHasher returns a hasher for k.
func (k *Keys) NewPersonHasher() *PersonHasher {
	return &PersonHasher{mac: k.mac(), sum: make([]byte, 0, sha256.Size)}
}

func (h *PersonHasher) finish() uint64 {
	h.mac.Reset()
	h.mac.Write(h.buf)
	h.sum = h.mac.Sum(h.sum[:0])
	return binary.LittleEndian.Uint64(h.sum)
}

// ID returns the person key of an identifier (the canonical bytes of an id
// column's value, rule ByID): HMAC(key, "id", 0, id).
func (h *PersonHasher) ID(id []byte) uint64 {
	h.buf = append(append(h.buf[:0], "id\x00"...), id...)
	return h.finish()
}

// Row returns the person key of a row known only by its feature values
// under rule (ByFeatures or ByStandardizedFeatures): HMAC(key, rule, 0,
// len(x) as uint32 LE, each x as float32 bits LE, the sparse indices
// sorted ascending as uint32 LE). −0 is hashed as +0 and every NaN as one
// NaN, so equal values give equal keys; identical rows are one person.
// The rule separates rows seen in different spaces, which must never be
// matched.
func (h *PersonHasher) Row(rule Identity, x []float32, idx []uint32) uint64 {
	b := append(append(h.buf[:0], rule...), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x)))
	for _, v := range x {
		bits := math.Float32bits(v)
		switch {
		case v == 0:
			bits = 0
		case v != v:
			bits = 0x7fc00000
		}
		b = binary.LittleEndian.AppendUint32(b, bits)
	}
	if !slices.IsSorted(idx) {
		h.idx = append(h.idx[:0], idx...)
		slices.Sort(h.idx)
		idx = h.idx
	}
	for _, v := range idx {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	h.buf = b
	return h.finish()
}

// KeyPath is the key file of the ledger at path: path with ".csv" replaced
// by ".key" (privacy_ledger.key beside privacy_ledger.csv), or path+".key".
func KeyPath(ledger string) string { return sibling(ledger, ".key") }

// PeoplePath is the people file of the ledger at path (".people", as
// KeyPath).
func PeoplePath(ledger string) string { return sibling(ledger, ".people") }

func sibling(path, ext string) string {
	if base, ok := strings.CutSuffix(path, ".csv"); ok {
		return base + ext
	}
	return path + ext
}

// checkMode refuses a ledger file whose permissions give others more than
// allowed (mask: the bits that must be clear; 0o077 for the key, 0o007 for
// the CSV and people file). Not checked where the OS has no Unix modes.
func checkMode(path string, st fs.FileInfo, mask fs.FileMode, what, fix string) error {
	if runtime.GOOS == "windows" || st.Mode().Perm()&mask == 0 {
		return nil
	}
	msg := fmt.Sprintf("mode %04o: a %s must not be readable by others (run: chmod %s %s)", st.Mode().Perm(), what, fix, path)
	if what == "key" {
		return fmt.Errorf("%w: %s has %s", ErrKey, path, msg)
	}
	return &Error{Path: path, Msg: msg}
}

// readKey reads a key file and its head. Errors wrap ErrKey (and
// fs.ErrNotExist when it is missing); a head whose MAC fails is an *Error.
func readKey(path string) (*Keys, head, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, head{}, fmt.Errorf("%w: %w", ErrKey, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, head{}, fmt.Errorf("%w: %w", ErrKey, err)
	}
	if err := checkMode(path, st, 0o077, "key", "600"); err != nil {
		return nil, head{}, err
	}
	b := make([]byte, 512)
	n, _ := f.Read(b)
	lines := strings.Split(strings.TrimRight(string(b[:n]), "\n"), "\n")
	if len(lines) == 2 && lines[0] == keyHeaderV1 {
		return nil, head{}, fmt.Errorf("%w: %s is a key file of the previous format, which keeps no chain head, beside a ledger of this "+
			"format: it was replaced by an older copy, or the files of two ledgers were mixed; restore this ledger's key file from a backup", ErrKey, path)
	}
	var key [32]byte
	if len(lines) != 4 || lines[0] != keyHeader || len(lines[1]) != 64 {
		return nil, head{}, fmt.Errorf("%w: %s is not a ledger key file (want %q, 64 hex digits, a head line and its MAC)", ErrKey, path, keyHeader)
	}
	if _, err := hex.Decode(key[:], []byte(lines[1])); err != nil {
		return nil, head{}, fmt.Errorf("%w: %s: %v", ErrKey, path, err)
	}
	k := newKeys(key)
	h, ok := parseHead(lines[2])
	if !ok {
		return nil, head{}, &Error{Path: path, Msg: fmt.Sprintf("the key file's head line %q is damaged", lines[2])}
	}
	if !hmac.Equal([]byte(k.headTag(lines[2])), []byte(lines[3])) {
		return nil, head{}, &Error{Path: path, Msg: "the key file's chain head fails its MAC: it was edited, or written with another key; " +
			"restore this ledger's key file from a backup"}
	}
	return k, h, nil
}

// parseHead parses a canonical head line.
func parseHead(line string) (head, bool) {
	var h head
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "head" || len(f[2]) != 64 || !isHex(f[2]) {
		return h, false
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 {
		return h, false
	}
	h.rows = n
	hex.Decode(h.mac[:], []byte(f[2]))
	return h, h.line() == line
}

// createKey writes a new random key to path (mode 0600), with the head of
// an empty chain, unless a key is already there: the key is written to a
// temporary file, fsynced and hard-linked into place, so concurrent
// creators agree on the winner's key.
func createKey(path string) (*Keys, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("%w: crypto/rand: %v", ErrKey, err)
	}
	if err := createFile(path, keyFile(newKeys(key), head{}), 0o600); err != nil {
		return nil, fmt.Errorf("%w: create %s: %v", ErrKey, path, err)
	}
	k, _, err := readKey(path) // the winner's key when another creator was first
	return k, err
}

// writeHead rewrites the key file at path with head h (temporary, mode
// 0600, fsync, rename, folder fsync): the key never changes, and a crash
// leaves the old file or the new one whole. Called under the CSV's
// exclusive lock, it first removes the temporaries a crashed writer left.
func writeHead(path string, k *Keys, h head) error {
	dir := filepath.Dir(path)
	prefix := "." + filepath.Base(path) + ".head-"
	if stale, err := filepath.Glob(filepath.Join(dir, prefix+"*")); err == nil {
		for _, p := range stale {
			os.Remove(p)
		}
	}
	tmp, err := os.CreateTemp(dir, prefix+"*") // mode 0600
	if err != nil {
		return err
	}
	_, err = tmp.Write(keyFile(k, h))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	syncDir(dir)
	return nil
}

// createFile creates path with content b and mode unless it exists: b is
// written to a temporary file, fsynced and hard-linked into place (atomic;
// no file ever exists half written), or created exclusively where hard
// links are not supported. An existing file is not an error.
func createFile(path string, b []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".new-*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.Write(b)
	if werr == nil {
		werr = tmp.Chmod(mode)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Link(tmp.Name(), path)
		if werr != nil && !errors.Is(werr, fs.ErrExist) {
			werr = createExclusive(path, b, mode)
		}
	}
	if werr != nil && !errors.Is(werr, fs.ErrExist) {
		return werr
	}
	syncDir(dir)
	return nil
}

func createExclusive(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(mode) // whatever the umask
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir persists directory entries (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
