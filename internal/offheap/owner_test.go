package offheap

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// faults reports whether reading s[i] faults (a recovered fault, with
// debug.SetPanicOnFault).
func faults[T Elem](s []T, i int) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			faulted = true
		}
	}()
	sink = float64(s[i])
	return false
}

var sink float64 // keeps faults' read from being optimized away

// TestCheck: Check accepts heap arrays and mapped ones read with their
// Block, and names the rule a view breaks otherwise.
func TestCheck(t *testing.T) {
	n := threshold() / 4 * 2
	a, ba := Alloc[float32](n)
	if ba == nil {
		t.Skip("no anonymous maps here")
	}
	defer ba.Free()
	b, bb := Alloc[float32](n)
	defer bb.Free()
	heap := make([]float32, 100)
	cases := []struct {
		name  string
		s     []float32
		owned []*Block
		want  string // "" = accepted
	}{
		{"heap array, no blocks", heap, nil, ""},
		{"nil", nil, nil, ""},
		{"mapped with its block", a, []*Block{ba}, ""},
		{"mapped part with its block", a[n/2 : n/2+10], []*Block{nil, bb, ba}, ""},
		{"mapped tail, empty, with its block", a[n:], []*Block{ba}, ""},
		{"mapped without any block", a, nil, "does not carry"},
		{"mapped with another's block", a[10:20], []*Block{bb}, "does not carry"},
		{"other mapped with its block", b, []*Block{bb}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Check(c.s, c.owned)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
		})
	}
	runtime.KeepAlive(ba)
	runtime.KeepAlive(bb)
}

// TestFreeUnmaps: Free takes the range out of the registry (it may be
// mapped again) and a second Free does nothing.
func TestFreeUnmaps(t *testing.T) {
	if Debugging() {
		t.Skip("Free poisons under " + EnvDebug + "=debug")
	}
	before := ReadStats()
	a, b := Alloc[uint32](threshold() / 4)
	if b == nil {
		t.Skip("no anonymous maps here")
	}
	if s := ReadStats(); s.Live != before.Live+1 || s.LiveSize < before.LiveSize+int64(threshold()) {
		t.Fatalf("after Alloc: %+v, before %+v", s, before)
	}
	b.Free()
	b.Free()
	if s := ReadStats(); s.Live != before.Live || s.Poisoned != before.Poisoned {
		t.Fatalf("after Free: %+v, before %+v", s, before)
	}
	if err := Check(a, nil); err != nil {
		t.Fatalf("a freed (unmapped) range is no longer known, Check must pass it: %v", err)
	}
}

// TestCollectedBlockPoisons: a Block the collector finds unreachable
// without Free poisons its range: a slice that outlived it faults on every
// read (never reads other bytes), Check names the cause, and Stats counts
// the missing Free.
func TestCollectedBlockPoisons(t *testing.T) {
	before := ReadStats()
	a := func() []float64 {
		a, b := Alloc[float64](threshold() / 8)
		if b == nil {
			t.Skip("no anonymous maps here")
		}
		for i := range a {
			a[i] = 1
		}
		return a // b dropped: nothing keeps the array
	}()
	deadline := time.Now().Add(10 * time.Second)
	for ReadStats().Dropped == before.Dropped {
		if time.Now().After(deadline) {
			t.Fatal("the unreachable Block was not cleaned up within 10 s")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	for _, i := range []int{0, len(a) / 2, len(a) - 1} {
		if !faults(a, i) {
			t.Fatalf("reading element %d of a collected block did not fault", i)
		}
	}
	err := Check(a, nil)
	if err == nil || !strings.Contains(err.Error(), "collected without Free") {
		t.Fatalf("Check of a collected array: %v", err)
	}
	if s := ReadStats(); s.Poisoned != before.Poisoned+1 {
		t.Fatalf("poisoned %d, want %d", s.Poisoned, before.Poisoned+1)
	}
	// The range is never handed out again.
	for range 8 {
		c, cb := Alloc[float64](len(a))
		if unsafeSame(a, c) {
			t.Fatal("a poisoned range was mapped again")
		}
		cb.Free()
	}
}

func unsafeSame(a, b []float64) bool { return len(a) > 0 && len(b) > 0 && &a[0] == &b[0] }

// TestDebugFreePoisons runs itself with LABELPRIVACY_OFFHEAP=debug: small
// arrays are mapped, and a read after Free faults every time.
func TestDebugFreePoisons(t *testing.T) {
	if !Debugging() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDebugFreePoisons$", "-test.v")
		cmd.Env = append(os.Environ(), EnvDebug+"=debug")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestDebugFreePoisons") {
			t.Fatalf("under %s=debug: %v\n%s", EnvDebug, err, out)
		}
		return
	}
	a, b := Alloc[int64](DebugThreshold / 8)
	if b == nil {
		t.Fatalf("a %d-byte array is not mapped under debug", DebugThreshold)
	}
	a[3] = 7
	b.Free()
	if !faults(a, 3) {
		t.Fatal("a read after Free did not fault under debug")
	}
	if err := Check(a, []*Block{b}); err == nil || !strings.Contains(err.Error(), "was freed") {
		t.Fatalf("Check after Free: %v", err)
	}
}

func threshold() int { _, t := settings(); return int(t) }
