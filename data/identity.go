package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"labelprivacy/internal/atomicfile"
)

// ErrIdentity is wrapped when a dataset file's bytes are not the ones its
// meta.json records.
var ErrIdentity = errors.New("data: dataset files do not match meta.json")

// IdentityError names the file whose SHA-256 differs from meta.json's.
type IdentityError struct {
	File, Key string // the file, and meta.json's key for it (train_sha256, test_sha256)
	Got, Want string // hex SHA-256 of the file's bytes, and meta.json's
	MetaFile  string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("data: %s: SHA-256 %s, but %s records %s %s: the file changed after it was written, "+
		"or files of different datasets were mixed (import or synthesize the dataset again)",
		e.File, e.Got, e.MetaFile, e.Key, e.Want)
}

// Unwrap makes errors.Is(err, ErrIdentity) true.
func (e *IdentityError) Unwrap() error { return ErrIdentity }

// identityCacheFile caches the digests of a dataset directory's files, keyed
// by what changes whenever a file's bytes can have changed (size, mtime,
// ctime, device and inode), so that opening an unchanged dataset does not
// read it twice. Best effort: a directory that cannot be written has none.
const identityCacheFile = ".identity-cache.json"

// fileKey identifies one version of a file; a zero key (unknown on this
// system) never matches the cache.
type fileKey struct {
	Size, MtimeNs, CtimeNs int64
	Dev, Ino               uint64
}

type cacheEntry struct {
	Key    fileKey `json:"key"`
	SHA256 string  `json:"sha256"`
}

// verifiedIdentity hashes dir's train and test files (or takes a cached
// digest of an unchanged file), checks them against m's recorded digests
// and returns the identity. A meta.json written before digests were
// recorded has nothing to check against: its identity is computed from the
// bytes.
func verifiedIdentity(dir string, m *Meta) (string, error) {
	cachePath := filepath.Join(dir, identityCacheFile)
	cache := map[string]cacheEntry{}
	if b, err := os.ReadFile(cachePath); err == nil {
		json.Unmarshal(b, &cache) // a damaged cache is an empty one
	}
	changed := false
	var sums [2]string
	for i, split := range []string{"train", "test"} {
		path := dataFile(dir, split)
		name := filepath.Base(path)
		key, known := statKey(path)
		if e, ok := cache[name]; known && ok && e.Key == key && len(e.SHA256) == 64 {
			sums[i] = e.SHA256
		} else {
			sum, err := FileSHA256(path)
			if err != nil {
				return "", err
			}
			sums[i] = sum
			if known {
				cache[name] = cacheEntry{Key: key, SHA256: sum}
				changed = true
			}
		}
	}
	if m.Identity() != "" {
		for i, c := range []struct{ key, want string }{{"train_sha256", m.TrainSHA256}, {"test_sha256", m.TestSHA256}} {
			if sums[i] != c.want {
				delete(cache, filepath.Base(dataFile(dir, []string{"train", "test"}[i])))
				writeCache(cachePath, cache)
				return "", &IdentityError{File: dataFile(dir, []string{"train", "test"}[i]), Key: c.key, Got: sums[i], Want: c.want,
					MetaFile: filepath.Join(dir, MetaFile)}
			}
		}
	}
	if changed {
		writeCache(cachePath, cache)
	}
	verified := *m
	verified.setContent(sums[0], sums[1])
	return verified.Identity(), nil
}

func writeCache(path string, cache map[string]cacheEntry) {
	if b, err := json.Marshal(cache); err == nil {
		atomicfile.WriteFile(path, append(b, '\n')) // best effort: a read-only dataset is hashed every time
	}
}

// FileCheck is a file of a dataset directory verified against the SHA-256
// its meta.json records (VerifyFile), to be rechecked once it has been
// read.
type FileCheck struct {
	path  string // the file, links followed
	key   fileKey
	known bool // key is known (statKey)
	fresh bool // changed within freshWindow of VerifyFile: the key may miss a write in the same clock tick
	sum   string
}

// freshWindow: a file whose change time is this close to VerifyFile's is
// rechecked by its bytes, since file times advance by a coarse clock tick
// (a few ms) and a write in the tick of the last one leaves them as they
// were.
var freshWindow = time.Second

// VerifyFile checks path, a file of a dataset directory (its train or test
// file, links followed), against the SHA-256 its meta.json records (an
// *IdentityError when it differs), as opening the dataset does (a digest
// cached for an unchanged file is used; nothing is written to the
// directory), before it is read;
// FileCheck.Recheck then refuses a file rewritten while it was read.
// (nil, nil) for a file meta.json records no digest of (a file outside a
// dataset directory, or of a meta.json written before digests were):
// nothing to check.
func VerifyFile(path string) (*FileCheck, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(real)
	if _, err := os.Stat(filepath.Join(dir, MetaFile)); err != nil {
		return nil, nil
	}
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, err
	}
	var key, want string
	for _, c := range []struct{ split, key, want string }{{"train", "train_sha256", m.TrainSHA256}, {"test", "test_sha256", m.TestSHA256}} {
		if p := dataFile(dir, c.split); p == real {
			key, want = c.key, c.want
		}
	}
	if want == "" {
		return nil, nil
	}
	c := &FileCheck{path: real}
	c.key, c.known = statKey(real)
	c.fresh = !c.known || time.Since(time.Unix(0, c.key.CtimeNs)).Abs() < freshWindow
	cachePath := filepath.Join(dir, identityCacheFile)
	cache := map[string]cacheEntry{}
	if b, err := os.ReadFile(cachePath); err == nil {
		json.Unmarshal(b, &cache) // a damaged cache is an empty one
	}
	name := filepath.Base(real)
	if e, ok := cache[name]; c.known && ok && e.Key == c.key && len(e.SHA256) == 64 {
		c.sum = e.SHA256
	} else if c.sum, err = FileSHA256(real); err != nil {
		return nil, err
	}
	if c.sum != want {
		return nil, &IdentityError{File: path, Key: key, Got: c.sum, Want: want, MetaFile: filepath.Join(dir, MetaFile)}
	}
	return c, nil
}

// ErrChanged is wrapped by Recheck's error: the file changed while it was
// read.
var ErrChanged = errors.New("data: the file changed while it was read")

// Recheck refuses the file if it changed since VerifyFile: its size,
// modification or change time or inode differ, or, for a file changed
// within freshWindow of VerifyFile (or where the system gives no such key),
// its SHA-256 does. A file rewritten in place while it is read gives rows
// that exist in neither version.
func (c *FileCheck) Recheck() error {
	k, ok := statKey(c.path)
	same := !c.known || ok && k == c.key
	if same && c.fresh {
		sum, err := FileSHA256(c.path)
		same = err == nil && sum == c.sum
	}
	if same {
		return nil
	}
	return fmt.Errorf("%w: %s was rewritten or replaced while it was read (its bytes, size, times or inode changed): "+
		"what was read may hold rows of neither version; run again once nothing writes it", ErrChanged, c.path)
}
