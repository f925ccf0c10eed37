// Package flock takes advisory flock(2) locks on files, recording who holds
// them so that a refused caller can name the live holders (pid, host,
// command, since when). The pipeline uses it for its single-writer stages
// (an exclusive lock on the output directory; sweep shards share it) and for
// making each simulation release once.
//
// Every holder, shared or exclusive, records itself in its own file under
// <path>.holders/ and removes it on Release. A refused caller reads those
// records, drops the ones of this host whose process has exited (a holder
// killed before Release leaves its record), and names the rest; when none is
// left it says that the recorded holders have exited (the lock then belongs
// to a process that recorded nothing, e.g. an older version of this tool).
package flock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"labelprivacy/internal/atomicfile"
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
	Path string
	// Holders describe the live holders ("pid 1234 on host h: train run
	// (since 2026-11-23T15:04:05Z)"); those of other hosts cannot be
	// checked and are listed as recorded. Empty: every recorded holder has
	// exited, or none recorded itself.
	Holders []string
	// Exited counts recorded holders of this host whose process is gone.
	Exited int
}

func (e *HeldError) Error() string {
	if len(e.Holders) > 0 {
		return fmt.Sprintf("%s is locked by %s", e.Path, strings.Join(e.Holders, "; "))
	}
	if e.Exited > 0 {
		return fmt.Sprintf("%s is locked by another process; the %d process(es) recorded as holding it have exited", e.Path, e.Exited)
	}
	return fmt.Sprintf("%s is locked by another process that did not record itself", e.Path)
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held lock; Release (or process exit) frees it.
type Lock struct {
	f      *os.File
	record string // this holder's record file
}

// Acquire locks path (created, with its directory, if missing) in mode m.
// With wait false a lock held in a conflicting mode fails at once with a
// *HeldError naming the live holders; with wait true it blocks. The holder's
// description (pid, host, what, time) is recorded under <path>.holders/.
func Acquire(path string, m Mode, wait bool, what string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("flock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("flock: %w", err)
	}
	if err := lock(f, m, wait); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			live, exited := holders(path)
			return nil, &HeldError{Path: path, Holders: live, Exited: exited}
		}
		return nil, fmt.Errorf("flock: %s: %w", path, err)
	}
	l := &Lock{f: f}
	dir := path + ".holders"
	if err := os.MkdirAll(dir, 0o755); err == nil {
		host := hostName()
		name := fmt.Sprintf("%s~%d~%d", host, os.Getpid(), time.Now().UnixNano())
		info := fmt.Sprintf("pid %d on host %s: %s (%s, since %s)\n", os.Getpid(), host, what,
			map[Mode]string{Shared: "shared", Exclusive: "exclusive"}[m], time.Now().UTC().Format(time.RFC3339))
		if os.WriteFile(filepath.Join(dir, name), []byte(info), 0o644) == nil {
			l.record = filepath.Join(dir, name)
		}
	}
	return l, nil
}

// holders reads the records of path's holders: the live ones (those of
// another host are listed as recorded, since their pids cannot be checked)
// and how many of this host have exited (their records are removed).
func holders(path string) (live []string, exited int) {
	dir := path + ".holders"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, 0
	}
	host := hostName()
	for _, e := range entries {
		parts := strings.Split(e.Name(), "~")
		if len(parts) != 3 {
			continue
		}
		pid, err := strconv.Atoi(parts[1])
		if err != nil {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if parts[0] == host && pid != os.Getpid() && !atomicfile.ProcessAlive(pid) {
			exited++
			os.Remove(p)
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			continue // released meanwhile
		}
		desc := strings.TrimSpace(string(b))
		if parts[0] != host {
			desc += " (another host: not checked)"
		}
		live = append(live, desc)
	}
	slices.Sort(live)
	return live, exited
}

func hostName() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown-host"
	}
	return strings.NewReplacer("~", "_", "/", "_").Replace(h)
}

// Release frees the lock and removes its holder record.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.record != "" {
		os.Remove(l.record)
	}
	err := l.f.Close()
	l.f = nil
	return err
}
