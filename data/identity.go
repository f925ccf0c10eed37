package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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
