package data

import (
	"fmt"
	"os"
	"path/filepath"
)

// createTemp creates a temporary file next to path (same directory, so the
// final rename is atomic on POSIX filesystems), creating the directory.
func createTemp(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return f, nil
}

// commitTemp syncs and closes tmp, then renames it to path and syncs the
// directory. On error tmp is removed and path is untouched.
func commitTemp(tmp *os.File, path string) error {
	err := tmp.Sync()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("data: %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// WriteFileAtomic writes b to path via a temporary file and rename.
func WriteFileAtomic(path string, b []byte) error {
	tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("data: %s: %w", path, err)
	}
	return commitTemp(tmp, path)
}
