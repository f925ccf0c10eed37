// Package atomicfile writes files atomically (a temporary next to the
// target, fsynced, renamed) with temporaries that name their owner, so a
// writer removes what a killed writer of the same target left and never a
// live writer's. It is used by data, pipeline, report and the figures; the
// process checks it needs (ProcessAlive) serve internal/flock too.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"labelprivacy/internal/par"
)

// Temporary files are written next to their target and renamed onto it when
// complete. Their names say who owns them:
//
//	.<target>.tmp-<host>~<pid>~<random>
//
// where <host> is the host name (characters other than letters, digits, '.',
// '-' and '_' replaced by '_'), followed on Linux by "@" and the pid
// namespace's inode, so that containers sharing a host name never judge each
// other's pids. A writer killed before its rename (kill -9, OOM, power loss)
// leaves its temporary behind; every writer first removes the stale
// temporaries of its own target: those of its host whose process no longer
// exists. It never removes another host's, nor one of a live process (two
// sweep shards may write one target concurrently on a shared filesystem).
// Temporaries named by earlier versions (".<target>.tmp-<random>", no owner)
// are removed once untouched for legacyTempAge.
const legacyTempAge = 24 * time.Hour

// Owner is this process's part of its temporaries' names: "<host>~<pid>~".
var Owner = hostID() + "~" + strconv.Itoa(os.Getpid()) + "~"

// hostID returns the sanitized host name, plus "@<pid namespace>" if known.
func hostID() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "unknown-host"
	}
	h = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, h)
	if ns := pidNamespace(); ns != "" {
		h += "@" + ns
	}
	return h
}

// TempPrefix is the start of the names of path's temporaries.
func TempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp-" }

// Create creates a temporary file next to path (same directory, so the
// final rename is atomic on POSIX filesystems), creating the directory, after
// removing path's stale temporaries.
func Create(path string) (*os.File, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	RemoveStale(path)
	f, err := os.CreateTemp(dir, TempPrefix(path)+Owner+"*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return f, nil
}

// RemoveStale removes the temporaries of path left by dead writers of
// this host (see the comment at the top of this file). Best effort: a
// temporary it cannot judge or remove stays.
func RemoveStale(path string) {
	removeStale(filepath.Dir(path), map[string]bool{TempPrefix(path): true})
}

// removeStale is RemoveStale of every target in dir whose TempPrefix is
// in prefixes, reading dir once.
func removeStale(dir string, prefixes map[string]bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	host := strings.SplitN(Owner, "~", 2)[0]
	for _, e := range entries {
		rest, ok := cutTempPrefix(e.Name(), prefixes)
		if !ok || !e.Type().IsRegular() && !e.IsDir() {
			continue
		}
		switch stale, ok := staleTemp(rest, host); {
		case ok && stale && e.IsDir(): // a dataset directory being written (publishDataset)
			os.RemoveAll(filepath.Join(dir, e.Name()))
		case ok && stale || !ok && !e.IsDir() && legacyStale(rest, e):
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// cutTempPrefix returns what follows the one of prefixes name starts with
// (a target's name may itself hold ".tmp-").
func cutTempPrefix(name string, prefixes map[string]bool) (string, bool) {
	for i := 0; ; {
		j := strings.Index(name[i:], ".tmp-")
		if j < 0 {
			return "", false
		}
		i += j + len(".tmp-")
		if prefixes[name[:i]] {
			return name[i:], true
		}
	}
}

// RemoveStaleFor removes the stale temporaries (as RemoveStale) of every
// path in paths, reading each folder once.
func RemoveStaleFor(paths []string) {
	byDir := map[string]map[string]bool{}
	for _, p := range paths {
		d := filepath.Dir(p)
		if byDir[d] == nil {
			byDir[d] = map[string]bool{}
		}
		byDir[d][TempPrefix(p)] = true
	}
	host := strings.SplitN(Owner, "~", 2)[0]
	for dir, prefixes := range byDir {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			i := strings.Index(name, ".tmp-")
			if i < 0 || !e.Type().IsRegular() || !prefixes[name[:i+len(".tmp-")]] {
				continue
			}
			if stale, ok := staleTemp(name[i+len(".tmp-"):], host); ok && stale {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}

// staleTemp judges a temporary named prefix+rest: ok is false when rest
// names no owner (a legacy name); stale when the owner is a dead process of
// this host.
func staleTemp(rest, host string) (stale, ok bool) {
	parts := strings.Split(rest, "~")
	if len(parts) != 3 {
		return false, false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil {
		return false, false
	}
	return parts[0] == host && pid != os.Getpid() && !ProcessAlive(pid), true
}

// legacyStale reports whether an unowned temporary (".<target>.tmp-<digits>",
// written before owners were named) is old enough to be a crash's leftover.
func legacyStale(rest string, e os.DirEntry) bool {
	if _, err := strconv.ParseUint(rest, 10, 64); err != nil {
		return false // not a name we wrote
	}
	info, err := e.Info()
	return err == nil && time.Since(info.ModTime()) > legacyTempAge
}

// Commit syncs and closes tmp, then renames it to path and syncs the
// directory. On error tmp is removed and path is untouched.
func Commit(tmp *os.File, path string) error {
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
		return fmt.Errorf("writing %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// CommitExclusive is Commit that never replaces: tmp is put in place only
// if nothing is at path, atomically (a hard link, or where the filesystem
// has none, rename with RENAME_NOREPLACE), so of two writers racing to one
// new path exactly one succeeds; the other's error wraps fs.ErrExist and
// leaves what is at path untouched. On error tmp is removed.
func CommitExclusive(tmp *os.File, path string) error {
	err := tmp.Sync()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = linkNoReplace(tmp.Name(), path)
	}
	os.Remove(tmp.Name()) // after a link, its second name; after renameat2, gone already
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// linkNoReplace gives the file at tmp the name path unless path exists
// (an error wrapping fs.ErrExist): link(2), else renameNoReplace where the
// filesystem refuses hard links.
func linkNoReplace(tmp, path string) error {
	err := os.Link(tmp, path)
	if err == nil || errors.Is(err, fs.ErrExist) {
		return err
	}
	if rerr := renameNoReplace(tmp, path); !errors.Is(rerr, errors.ErrUnsupported) {
		return rerr
	}
	return fmt.Errorf("this filesystem can neither hard-link nor rename without replacing (%w), so %s cannot be put in place without "+
		"risking another writer's file there; write it to another filesystem", err, path)
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// WriteFile writes b to path via a temporary file and rename.
func WriteFile(path string, b []byte) error {
	tmp, err := Create(path)
	if err != nil {
		return err
	}
	return write(tmp, path, b)
}

// writeFilesAtOnce is how many of WriteFiles's files are written at once:
// each waits for the disk (its sync and its folder's), not for a core.
const writeFilesAtOnce = 16

// WriteFiles writes files[i] to paths[i] as WriteFile does, several at
// once, and sweeps each folder of stale temporaries once rather than once a
// file (RemoveStale reads the whole folder: 10 ms at the 17,680 results of
// the paper's Higgs grid, for each of them). Every file is attempted; the
// errors of those that failed are returned joined.
func WriteFiles(paths []string, files [][]byte) error {
	if len(paths) != len(files) {
		panic("atomicfile: WriteFiles with paths and files of different lengths")
	}
	byDir := map[string]map[string]bool{}
	dirErr := map[string]error{}
	for _, p := range paths {
		d := filepath.Dir(p)
		if byDir[d] == nil {
			byDir[d], dirErr[d] = map[string]bool{}, os.MkdirAll(d, 0o755)
		}
		byDir[d][TempPrefix(p)] = true
	}
	for d, prefixes := range byDir {
		if dirErr[d] == nil {
			removeStale(d, prefixes)
		}
	}
	errs := make([]error, len(paths))
	par.Each(len(paths), writeFilesAtOnce, func(_, i int) {
		if err := dirErr[filepath.Dir(paths[i])]; err != nil {
			errs[i] = fmt.Errorf("writing %s: %w", paths[i], err)
			return
		}
		tmp, err := os.CreateTemp(filepath.Dir(paths[i]), TempPrefix(paths[i])+Owner+"*")
		if err != nil {
			errs[i] = fmt.Errorf("writing %s: %w", paths[i], err)
			return
		}
		errs[i] = write(tmp, paths[i], files[i])
	})
	return errors.Join(errs...)
}

// write writes b to the new temporary tmp and commits it to path.
func write(tmp *os.File, path string, b []byte) error {
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return Commit(tmp, path)
}
