// Package flock takes advisory flock(2) locks on files, recording who holds
// them so that a refused caller can name the holder (pid, host, command,
// since when). The pipeline uses it for its single-writer stages (an
// exclusive lock on the output directory; sweep shards share it) and for
// making each simulation release once.
package flock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mode is shared or exclusive.
type Mode int

const (
	Shared Mode = iota + 1
	Exclusive
)

// ErrHeld is wrapped by HeldError.
var ErrHeld = errors.New("flock: held by another process")

// HeldError reports a lock that another process holds.
type HeldError struct {
	Path   string
	Holder string // "pid 1234 on host h: train run (since 2026-11-23T15:04:05Z)", or "" if unknown
}

func (e *HeldError) Error() string {
	if e.Holder == "" {
		return fmt.Sprintf("%s is locked by another process", e.Path)
	}
	return fmt.Sprintf("%s is locked by %s", e.Path, e.Holder)
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held lock; Release (or process exit) frees it.
type Lock struct{ f *os.File }

// Acquire locks path (created, with its directory, if missing) in mode m.
// With wait false a lock held in a conflicting mode fails at once with a
// *HeldError naming the holder; with wait true it blocks. The holder's
// description (pid, host, what, time) is written into the file.
func Acquire(path string, m Mode, wait bool, what string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("flock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("flock: %w", err)
	}
	if err := lock(f, m, wait); err != nil {
		holder := ""
		if b, rerr := os.ReadFile(path); rerr == nil {
			holder = strings.TrimSpace(string(b))
		}
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, &HeldError{Path: path, Holder: holder}
		}
		return nil, fmt.Errorf("flock: %s: %w", path, err)
	}
	host, _ := os.Hostname()
	info := fmt.Sprintf("pid %d on host %s: %s (since %s)\n", os.Getpid(), host, what, time.Now().UTC().Format(time.RFC3339))
	if m == Exclusive {
		_ = f.Truncate(0)
		_, _ = f.WriteAt([]byte(info), 0)
	}
	return &Lock{f: f}, nil
}

// Release frees the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
