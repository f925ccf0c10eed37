package flock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// flock(2) locks belong to open file descriptions, so a second Acquire in
// the same process conflicts like another process would; the cross-process
// case runs the test binary as a helper.
func TestAcquireModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", ".lock")
	for _, tc := range []struct {
		name        string
		first, then Mode
		conflict    bool
	}{
		{"shared+shared", Shared, Shared, false},
		{"shared+exclusive", Shared, Exclusive, true},
		{"exclusive+shared", Exclusive, Shared, true},
		{"exclusive+exclusive", Exclusive, Exclusive, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Acquire(path, tc.first, false, "first")
			if err != nil {
				t.Fatal(err)
			}
			b, err := Acquire(path, tc.then, false, "second")
			if tc.conflict {
				var he *HeldError
				if !errors.As(err, &he) || !errors.Is(err, ErrHeld) {
					t.Fatalf("err = %v, want a HeldError", err)
				}
				if len(he.Holders) != 1 || !strings.Contains(he.Holders[0], "first") || !strings.Contains(err.Error(), "first") {
					t.Fatalf("holders %q (%v) do not name the first holder", he.Holders, err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			b.Release()
			a.Release()
			c, err := Acquire(path, Exclusive, false, "after")
			if err != nil {
				t.Fatalf("after release: %v", err)
			}
			c.Release()
		})
	}
}

// startHolder runs the test binary as a process holding path in mode
// ("shared" or "exclusive") until killed.
func startHolder(t *testing.T, path, mode, what string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHold$")
	cmd.Env = append(os.Environ(), "FLOCK_HELPER="+path, "FLOCK_MODE="+mode, "FLOCK_WHAT="+what)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	return cmd
}

// TestHelperHold is not a test: the holder process of startHolder.
func TestHelperHold(t *testing.T) {
	path := os.Getenv("FLOCK_HELPER")
	if path == "" {
		t.Skip("helper process")
	}
	m := Shared
	if os.Getenv("FLOCK_MODE") == "exclusive" {
		m = Exclusive
	}
	if _, err := Acquire(path, m, false, os.Getenv("FLOCK_WHAT")); err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
	os.Exit(0)
}

func TestAcquireOtherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := startHolder(t, path, "exclusive", "helper process")
	_, err := Acquire(path, Shared, false, "test")
	var he *HeldError
	if !errors.As(err, &he) || len(he.Holders) != 1 || !strings.Contains(he.Holders[0], "helper process") ||
		!strings.Contains(he.Holders[0], "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Fatalf("err = %v, want it to name the helper", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(path, Exclusive, false, "test")
	if err != nil {
		t.Fatalf("a killed holder's lock is released: %v", err)
	}
	l.Release()
}

// A refused caller is told the truth: the live holders (shared ones too),
// never a holder that has exited. Before, .lock kept the last exclusive
// holder's text, so a user was sent to look at a pid gone minutes ago.
func TestHeldErrorNamesLiveHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".lock")
	// An exclusive holder that finished, then one killed (its record stays).
	a, err := Acquire(path, Exclusive, false, "train run (finished)")
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	killed := startHolder(t, path, "shared", "sweep shard 0 (killed)")
	killed.Process.Kill()
	killed.Wait()
	// Two live shards hold it shared.
	s1 := startHolder(t, path, "shared", "sweep shard 1")
	s2 := startHolder(t, path, "shared", "sweep shard 2")
	_, err = Acquire(path, Exclusive, false, "train fit")
	var he *HeldError
	if !errors.As(err, &he) || len(he.Holders) != 2 || he.Exited != 1 {
		t.Fatalf("err = %v (%+v), want the 2 live shards and 1 exited holder", err, he)
	}
	msg := err.Error()
	for _, want := range []string{"sweep shard 1", "sweep shard 2", "pid " + strconv.Itoa(s1.Process.Pid), "pid " + strconv.Itoa(s2.Process.Pid)} {
		if !strings.Contains(msg, want) {
			t.Fatalf("%q does not name %q", msg, want)
		}
	}
	for _, gone := range []string{"finished", "killed", "pid " + strconv.Itoa(killed.Process.Pid)} {
		if strings.Contains(msg, gone) {
			t.Fatalf("%q names a holder that has exited (%q)", msg, gone)
		}
	}
	// With only a process that recorded nothing, the message says the
	// recorded holders have exited.
	s1.Process.Kill()
	s1.Wait()
	s2.Process.Kill()
	s2.Wait()
	quiet := startHolder(t, path, "exclusive", "quiet")
	os.RemoveAll(path + ".holders") // as a holder of an older version would have recorded nothing
	os.MkdirAll(path+".holders", 0o755)
	os.WriteFile(filepath.Join(path+".holders", hostName()+"~"+strconv.Itoa(s1.Process.Pid)+"~1"), []byte("pid s1"), 0o644)
	_, err = Acquire(path, Shared, false, "test")
	if !errors.As(err, &he) || len(he.Holders) != 0 || !strings.Contains(err.Error(), "the 1 process recorded as holding it has exited") {
		t.Fatalf("err = %v, want it to say the recorded holder has exited", err)
	}
	quiet.Process.Kill()
}

// ReleaseAndRemove removes the lock's file and holders folder; a caller
// that opened the file before it went and waited for its lock ends up
// holding the file path names then, so a third caller is refused: without
// Acquire's check the waiter would hold the removed file and the third a
// new one, both "holding" path.
func TestReleaseAndRemove(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks", "g.lock")
	a, err := Acquire(path, Exclusive, false, "a")
	if err != nil {
		t.Fatal(err)
	}
	opened := make(chan struct{}, 1)
	openedHook = func(string) {
		select {
		case opened <- struct{}{}:
		default:
		}
	}
	defer func() { openedHook = nil }()
	type result struct {
		l   *Lock
		err error
	}
	got := make(chan result)
	go func() {
		l, err := Acquire(path, Exclusive, true, "waiter")
		got <- result{l, err}
	}()
	<-opened // the waiter has the file open: a's file
	if err := a.ReleaseAndRemove(); err != nil {
		t.Fatal(err)
	}
	b := <-got
	if b.err != nil {
		t.Fatal(b.err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the waiter holds no file at %s: %v", path, err)
	}
	_, err = Acquire(path, Exclusive, false, "third")
	var he *HeldError
	if !errors.As(err, &he) || len(he.Holders) != 1 || !strings.Contains(he.Holders[0], "waiter") {
		t.Fatalf("a third caller: %v, want it refused, naming the waiter", err)
	}
	if err := b.l.ReleaseAndRemove(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + ".holders"} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		t.Errorf("the lock's folder went too: %v", err)
	}
}

// ReleaseAndRemoveIfAlone removes the lock's file and holders folder when
// its holder is the only one, in either mode; a shared holder beside
// another keeps the file (the other still holds it) and only lets go.
func TestReleaseAndRemoveIfAlone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   Mode
		other  bool // another shared holder
		remove bool
	}{
		{"exclusive alone", Exclusive, false, true},
		{"shared alone", Shared, false, true},
		{"shared beside another", Shared, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".lock")
			var other *Lock
			if tc.other {
				var err error
				if other, err = Acquire(path, Shared, false, "other"); err != nil {
					t.Fatal(err)
				}
				defer other.Release()
			}
			l, err := Acquire(path, tc.mode, false, "me")
			if err != nil {
				t.Fatal(err)
			}
			removed, err := l.ReleaseAndRemoveIfAlone()
			if err != nil || removed != tc.remove {
				t.Fatalf("removed %v (%v), want %v", removed, err, tc.remove)
			}
			_, statErr := os.Stat(path)
			if gone := errors.Is(statErr, os.ErrNotExist); gone != tc.remove {
				t.Fatalf("file gone: %v, want %v", gone, tc.remove)
			}
			entries, _ := os.ReadDir(path + ".holders")
			if tc.remove && entries != nil {
				t.Fatalf("holders folder left: %v", entries)
			}
			if !tc.remove && (len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), hostName())) {
				t.Fatalf("holders %v, want the other's record only", entries)
			}
			if tc.other {
				// The other holder still holds the file: an exclusive caller is refused.
				if _, err := Acquire(path, Exclusive, false, "later"); !errors.Is(err, ErrHeld) {
					t.Fatalf("exclusive Acquire beside the other holder: %v", err)
				}
			}
		})
	}
}
