package memctl

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {1 << 20, 100}, {MinHeadroom, 100}, {2 * MinHeadroom, 50},
		{640 << 20, 10}, {1100 << 20, 10}, // 1.1 GB live: 10%, about 110 MB of garbage
	} {
		if got := Percent(tc.live); got != tc.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

// TestStart: after a collection with 160 MiB live, the collector's
// percentage is Percent of it (40), set by the cleanup that runs after
// each cycle.
func TestStart(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if !Start() {
		t.Fatal("Start refused with GOGC and GOMEMLIMIT unset")
	}
	big := make([]float32, 40<<20) // 160 MiB
	before := tunes.Load()
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for tunes.Load() == before && time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	got := debug.SetGCPercent(100)
	debug.SetGCPercent(got)
	if got > 40 || got < 10 {
		t.Errorf("after a collection with 160 MiB live the percentage is %d, want ≤ 40", got)
	}
	big[len(big)-1] = 1 // live through the collection
	runtime.KeepAlive(big)
	if tunes.Load() == before {
		t.Fatal("no retuning after a collection")
	}
}

// TestAvailable: on Linux the figure is positive and no more than the
// machine's memory.
func TestAvailable(t *testing.T) {
	avail, ok := Available()
	total, tok := meminfo("MemTotal")
	if !ok || !tok {
		t.Skip("no /proc/meminfo here")
	}
	if avail <= 0 || avail > total {
		t.Errorf("Available = %d bytes, MemTotal %d", avail, total)
	}
}
