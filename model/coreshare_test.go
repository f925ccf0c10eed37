package model

import (
	"runtime"
	"testing"

	"labelprivacy/sgemm/simplegofast"
)

// A CoreShare gives each active backend its part of the cores (the first
// ones the remainder, at least one each) and gives them back as backends
// leave; a nil share does nothing.
func TestCoreShare(t *testing.T) {
	if err := simplegofast.Install(); err != nil {
		t.Skipf("sgemm hook not installed: %v", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	a, err := NewBackend("go:parallelism=4")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Finalize()
	b, err := NewBackend("go:parallelism=4")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Finalize()
	want := func(step string, ta, tb int) {
		t.Helper()
		if got, gotB := threadsOf(a), threadsOf(b); got != ta || gotB != tb {
			t.Fatalf("%s: threads %d and %d, want %d and %d", step, got, gotB, ta, tb)
		}
	}
	want("before", 4, 4)
	share := NewCoreShare(3)
	leaveA := share.Enter(a)
	want("a alone", 3, 4)
	leaveB := share.Enter(b)
	want("a and b", 2, 1)
	leaveA()
	want("b alone", 4, 3)
	leaveA() // a second call changes nothing
	want("b alone again", 4, 3)
	leaveB()
	want("after", 4, 4)
	one := NewCoreShare(1)
	l1, l2 := one.Enter(a), one.Enter(b)
	want("one core for two", 1, 1)
	l1()
	l2()
	var none *CoreShare
	none.Enter(a)()
	want("nil share", 4, 4)
}
