package pets

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
	"slices"
	"strings"
)

// keyHeader is the first line of a ledger key file; the second is the key
// in hex.
const keyHeader = "labelprivacy ledger key v1"

// ErrLedgerKey is wrapped by errors about a ledger's key file: missing
// beside an existing ledger, unreadable, or not the key the ledger's people
// were recorded with.
var ErrLedgerKey = errors.New("pets: ledger key")

// Keys is a ledger's secret: 32 random bytes created with the ledger and
// kept beside it (KeyPath, mode 0600). Every identity the ledger stores is
// keyed with it (HMAC-SHA-256), so whoever holds the ledger and a release
// but not the key cannot test guesses of labels or of people against it.
type Keys struct {
	key   [32]byte
	check string // KeyCheck
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

// Labels names a label column for the ledger: "hmac-sha256:" and the hex
// HMAC-SHA-256 under the key of "labels", a zero byte, the row count
// (uint64 little-endian) and the labels (one byte each). Without the key
// it cannot be used to test label guesses.
func (k *Keys) Labels(labels []uint8) string {
	m := hmac.New(sha256.New, k.key[:])
	m.Write([]byte("labels\x00"))
	m.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(labels))))
	m.Write(labels)
	return "hmac-sha256:" + hex.EncodeToString(m.Sum(nil))
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
	return &PersonHasher{mac: hmac.New(sha256.New, k.key[:]), sum: make([]byte, 0, sha256.Size)}
}

func (h *PersonHasher) finish() uint64 {
	h.mac.Reset()
	h.mac.Write(h.buf)
	h.sum = h.mac.Sum(h.sum[:0])
	return binary.LittleEndian.Uint64(h.sum)
}

// ID returns the person key of an identifier (the canonical bytes of an id
// column's value): HMAC(key, "id", 0, id).
func (h *PersonHasher) ID(id []byte) uint64 {
	h.buf = append(append(h.buf[:0], "id\x00"...), id...)
	return h.finish()
}

// Row returns the person key of a row known only by its feature values:
// HMAC(key, domain, 0, len(x) as uint32 LE, each x as float32 bits LE, the
// sparse indices sorted ascending as uint32 LE). −0 is hashed as +0 and
// every NaN as one NaN, so equal values give equal keys; identical rows are
// one person (over-counting, the safe direction). domain separates rows
// seen in different spaces (e.g. raw and standardized features), which
// must never be matched.
func (h *PersonHasher) Row(domain string, x []float32, idx []uint32) uint64 {
	b := append(append(h.buf[:0], domain...), 0)
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

// readKey reads a key file.
func readKey(path string) (*Keys, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var key [32]byte
	if len(lines) != 2 || lines[0] != keyHeader || len(lines[1]) != 64 {
		return nil, fmt.Errorf("%w: %s is not a ledger key file (want %q and 64 hex digits)", ErrLedgerKey, path, keyHeader)
	}
	if _, err := hex.Decode(key[:], []byte(lines[1])); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLedgerKey, path, err)
	}
	return newKeys(key), nil
}

// createKey writes a new random key to path (mode 0600) unless a key is
// already there: the key is written to a temporary file, fsynced and
// hard-linked into place, so concurrent creators agree on the winner's key.
func createKey(path string) (*Keys, error) {
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		return nil, fmt.Errorf("%w: crypto/rand: %v", ErrLedgerKey, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
	}
	tmp, err := os.CreateTemp(dir, ".ledger-key-*.tmp") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLedgerKey, err)
	}
	defer os.Remove(tmp.Name())
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%s\n%s\n", keyHeader, hex.EncodeToString(key[:]))
	_, werr := tmp.Write(buf.Bytes())
	if werr == nil {
		werr = tmp.Chmod(0o600)
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
			werr = createExclusive(path, buf.Bytes(), 0o600) // no hard links here
		}
	}
	if werr != nil && !errors.Is(werr, fs.ErrExist) {
		return nil, fmt.Errorf("%w: create %s: %v", ErrLedgerKey, path, werr)
	}
	syncDir(dir)
	return readKey(path) // the winner's key when another creator was first
}

func createExclusive(path string, b []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
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
