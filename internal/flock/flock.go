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
//
// An exclusive holder done with a lock's file may remove it
// (ReleaseAndRemove). Acquire keeps only a lock on the file path names, so
// a caller that opened the removed file before it went opens path again
// rather than holding a lock no later caller can see.
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
	"labelprivacy/internal/english"
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
		verb := "have"
		if e.Exited == 1 {
			verb = "has"
		}
		return fmt.Sprintf("%s is locked by another process; the %s recorded as holding it %s exited", e.Path,
			english.CountAs(e.Exited, "process", "processes"), verb)
	}
	return fmt.Sprintf("%s is locked by another process that did not record itself", e.Path)
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Lock is a held lock; Release (or process exit) frees it.
type Lock struct {
	f      *os.File
	path   string
	mode   Mode
	record string // this holder's record file
}

// maxAcquireTries bounds Acquire's retries when the file it locked was
// removed meanwhile (by an exclusive holder's ReleaseAndRemove), or its
// directory was (by a caller removing an empty folder of locks).
const maxAcquireTries = 1000

// openedHook, when set (by tests), runs after Acquire opened path and
// before it locks it.
var openedHook func(path string)

// Acquire locks path (created, with its directory, if missing) in mode m.
// With wait false a lock held in a conflicting mode fails at once with a
// *HeldError naming the live holders; with wait true it blocks. The holder's
// description (pid, host, what, time) is recorded under <path>.holders/.
// The lock it returns is on the file path names: a file removed by its
// holder (ReleaseAndRemove) while this caller waited for it is let go and
// path opened again, so two callers never hold one path through two files.
func Acquire(path string, m Mode, wait bool, what string) (*Lock, error) {
	var f *os.File
	for try := 0; ; try++ {
		if try == maxAcquireTries {
			return nil, fmt.Errorf("flock: %s: removed under each of %d attempts to lock it", path, try)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("flock: %w", err)
		}
		var err error
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, os.ErrNotExist) {
			continue // the directory was removed after MkdirAll
		}
		if err != nil {
			return nil, fmt.Errorf("flock: %w", err)
		}
		if openedHook != nil {
			openedHook(path)
		}
		if err := lock(f, m, wait); err != nil {
			f.Close()
			if errors.Is(err, errWouldBlock) {
				live, exited := holders(path)
				return nil, &HeldError{Path: path, Holders: live, Exited: exited}
			}
			return nil, fmt.Errorf("flock: %s: %w", path, err)
		}
		if same, err := names(path, f); err != nil {
			f.Close()
			return nil, fmt.Errorf("flock: %s: %w", path, err)
		} else if same {
			break
		}
		f.Close() // locked a file its holder removed before letting it go
	}
	l := &Lock{f: f, path: path, mode: m}
	dir := path + ".holders"
	host := hostName()
	name := fmt.Sprintf("%s~%d~%d", host, os.Getpid(), time.Now().UnixNano())
	info := fmt.Sprintf("pid %d on host %s: %s (%s, since %s)\n", os.Getpid(), host, what,
		map[Mode]string{Shared: "shared", Exclusive: "exclusive"}[m], time.Now().UTC().Format(time.RFC3339))
	for range 2 { // twice: the previous holder's ReleaseAndRemove may remove dir, empty, in between
		if os.MkdirAll(dir, 0o755) == nil && os.WriteFile(filepath.Join(dir, name), []byte(info), 0o644) == nil {
			l.record = filepath.Join(dir, name)
			break
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

// names reports whether path still names the open file f.
func names(path string, f *os.File) (bool, error) {
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	now, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return os.SameFile(held, now), nil
}

// ReleaseAndRemove removes the lock's file and its (then empty) holders
// folder, and frees the lock: for a lock whose file has no more use once
// its holder is done. The file is removed while still held, so no other
// caller holds it then; one that opened it meanwhile finds it removed
// once it gets the lock, and opens path again (Acquire). Only an exclusive
// lock may be removed.
func (l *Lock) ReleaseAndRemove() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.mode != Exclusive {
		panic("flock: ReleaseAndRemove of a shared lock")
	}
	rmErr := os.Remove(l.path)
	if l.record != "" {
		os.Remove(l.record)
		l.record = ""
	}
	// Only when empty: the holder of a file made at path since holds it
	// and may have recorded itself there.
	os.Remove(l.path + ".holders")
	err := l.Release()
	if rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		return fmt.Errorf("flock: %w", rmErr)
	}
	return err
}

// ReleaseAndRemoveIfAlone is ReleaseAndRemove for a lock of either mode,
// removing the file only when no other process holds it: a shared holder
// first turns its lock into an exclusive one without waiting (flock(2)
// lets the shared lock go first, so a caller locking path meanwhile may
// find it held); when another process holds path, the lock is only
// released and the file stays. removed says whether the file went.
func (l *Lock) ReleaseAndRemoveIfAlone() (removed bool, err error) {
	if l == nil || l.f == nil {
		return false, nil
	}
	if l.mode == Shared {
		if err := lock(l.f, Exclusive, false); err != nil {
			rerr := l.Release()
			if errors.Is(err, errWouldBlock) {
				return false, rerr
			}
			return false, fmt.Errorf("flock: %s: %w", l.path, err)
		}
		l.mode = Exclusive
	}
	if err := l.ReleaseAndRemove(); err != nil {
		return false, err
	}
	return true, nil
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
