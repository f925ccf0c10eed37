package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has exited (and been reaped).
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// livePid starts a process that stays alive until the test ends.
func livePid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBlock$")
	cmd.Env = append(os.Environ(), "LABELPRIVACY_HELPER=block")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

// TestHelperBlock is not a test: the subprocess of livePid.
func TestHelperBlock(t *testing.T) {
	if os.Getenv("LABELPRIVACY_HELPER") != "block" {
		t.Skip("helper process")
	}
	time.Sleep(time.Hour)
}

// A writer removes the temporaries of its own target left by dead processes
// of its host, and nothing else.
func TestStaleTempsRemoved(t *testing.T) {
	host := strings.SplitN(Owner, "~", 2)[0]
	dead, live := deadPid(t), livePid(t)
	name := func(target, host string, pid int) string {
		return "." + target + ".tmp-" + host + "~" + strconv.Itoa(pid) + "~123"
	}
	tests := []struct {
		name   string
		file   string
		age    time.Duration
		remove bool
	}{
		{"this host, dead pid", name("train.arrow", host, dead), 0, true},
		{"this host, live pid", name("train.arrow", host, live), 0, false},
		{"this host, this process", name("train.arrow", host, os.Getpid()), 0, false},
		{"other host, dead pid", name("train.arrow", "other-host@4026531836", dead), 0, false},
		{"same host name, other pid namespace", name("train.arrow", host+"7", dead), 0, false},
		{"other target, dead pid", name("test.arrow", host, dead), 0, false},
		{"legacy name, fresh", ".train.arrow.tmp-2718281828", 0, false},
		{"legacy name, two days old", ".train.arrow.tmp-3141592653", 48 * time.Hour, true},
		{"not our name, old", ".train.arrow.tmp-notes", 48 * time.Hour, false},
	}
	dir := t.TempDir()
	for _, tc := range tests {
		p := filepath.Join(dir, tc.file)
		if err := os.WriteFile(p, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.age > 0 {
			old := time.Now().Add(-tc.age)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := WriteFile(filepath.Join(dir, "train.arrow"), []byte("complete")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := os.Stat(filepath.Join(dir, tc.file))
			if removed := os.IsNotExist(err); removed != tc.remove {
				t.Fatalf("%s: removed = %v, want %v", tc.file, removed, tc.remove)
			}
		})
	}
}

// Temporaries are named after their owner: host and pid.
func TestTempNameNamesOwner(t *testing.T) {
	f, err := Create(filepath.Join(t.TempDir(), "train.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	f.Close()
	rest, ok := strings.CutPrefix(filepath.Base(f.Name()), ".train.arrow.tmp-")
	host, _ := os.Hostname()
	if !ok || !strings.Contains(rest, "~"+strconv.Itoa(os.Getpid())+"~") || !strings.HasPrefix(rest, strings.SplitN(host, ".", 2)[0]) {
		t.Fatalf("temporary %s does not name its owner (host %s, pid %d)", f.Name(), host, os.Getpid())
	}
}

// RemoveStaleFor removes, for every path it is given, the temporaries of
// that path left by dead processes of this host (in several folders), and
// nothing else: not a live writer's, not another host's, not another
// target's.
func TestRemoveStaleFor(t *testing.T) {
	host := strings.SplitN(Owner, "~", 2)[0]
	dead, live := deadPid(t), livePid(t)
	a, b := t.TempDir(), t.TempDir()
	name := func(dir, target, host string, pid int) string {
		return filepath.Join(dir, "."+target+".tmp-"+host+"~"+strconv.Itoa(pid)+"~7")
	}
	remove := []string{name(a, "r1.arrow", host, dead), name(a, "r2.arrow", host, dead), name(b, "s.arrow", host, dead)}
	keep := []string{name(a, "r1.arrow", host, live), name(a, "r1.arrow", "other-host", dead), name(a, "other.arrow", host, dead),
		name(b, "s.arrow", host, os.Getpid()), filepath.Join(a, "r1.arrow")}
	for _, p := range append(slices.Clone(remove), keep...) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	RemoveStaleFor([]string{filepath.Join(a, "r1.arrow"), filepath.Join(a, "r2.arrow"), filepath.Join(b, "s.arrow"),
		filepath.Join(t.TempDir(), "gone", "x.arrow")})
	for _, p := range remove {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was kept", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed", p)
		}
	}
}

// CommitExclusive never replaces: of writers racing to one new path
// exactly one puts its file in place; the others' errors wrap
// fs.ErrExist, what is at path is the winner's, and no temporary is left.
func TestCommitExclusive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.arrow")
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		tmp, err := Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tmp.WriteString("writer " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = CommitExclusive(tmp, path)
		}()
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("writers %d and %d both put their file in place", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), path):
			t.Fatalf("writer %d: %v, want fs.ErrExist naming %s", i, err, path)
		}
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "writer "+strconv.Itoa(won) {
		t.Fatalf("%s holds %q (%v), want writer %d's bytes", path, b, err, won)
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("left in the folder: %v", names)
	}
}
