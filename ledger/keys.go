package ledger

import (
	"bytes"
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
	"strings"
)

// keyHeader is the first line of a ledger key file; the second is the key
// in hex.
const keyHeader = "labelprivacy ledger key v1"

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

// readKey reads a key file. Errors wrap ErrKey (and fs.ErrNotExist when
// it is missing).
func readKey(path string) (*Keys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKey, err)
	}
	if err := checkMode(path, st, 0o077, "key", "600"); err != nil {
		return nil, err
	}
	b := make([]byte, 256)
	n, _ := f.Read(b)
	lines := strings.Split(strings.TrimRight(string(b[:n]), "\n"), "\n")
	var key [32]byte
	if len(lines) != 2 || lines[0] != keyHeader || len(lines[1]) != 64 {
		return nil, fmt.Errorf("%w: %s is not a ledger key file (want %q and 64 hex digits)", ErrKey, path, keyHeader)
	}
	if _, err := hex.Decode(key[:], []byte(lines[1])); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKey, path, err)
	}
	return newKeys(key), nil
}

// createKey writes a new random key to path (mode 0600) unless a key is
// already there: the key is written to a temporary file, fsynced and
// hard-linked into place, so concurrent creators agree on the winner's key.
func createKey(path string) (*Keys, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("%w: crypto/rand: %v", ErrKey, err)
	}
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s\n%s\n", keyHeader, hex.EncodeToString(key[:]))
	if err := createFile(path, buf.Bytes(), 0o600); err != nil {
		return nil, fmt.Errorf("%w: create %s: %v", ErrKey, path, err)
	}
	return readKey(path) // the winner's key when another creator was first
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
