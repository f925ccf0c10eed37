package flock

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
				if tc.first == Exclusive && !strings.Contains(he.Holder, "first") {
					t.Fatalf("holder %q does not name the first holder", he.Holder)
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

func TestAcquireOtherProcess(t *testing.T) {
	if os.Getenv("FLOCK_HELPER") != "" {
		l, err := Acquire(os.Getenv("FLOCK_HELPER"), Exclusive, false, "helper process")
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(10 * time.Second)
		l.Release()
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), ".lock")
	cmd := exec.Command(os.Args[0], "-test.run=TestAcquireOtherProcess")
	cmd.Env = append(os.Environ(), "FLOCK_HELPER="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	_, err := Acquire(path, Shared, false, "test")
	var he *HeldError
	if !errors.As(err, &he) || !strings.Contains(he.Holder, "helper process") {
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
