package memctl

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
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

// TestHeadroomRlimit: under an address-space limit (RLIMIT_AS, set in a
// re-executed child, never in this process) the headroom is what the
// limit leaves beyond the mapped size, and it is named as the bound: a
// guard that read only MemAvailable and the cgroup let a model past that
// then died in Go's allocator under `ulimit -v`.
func TestHeadroomRlimit(t *testing.T) {
	if _, ok := Available(); !ok {
		t.Skip("no /proc/meminfo here")
	}
	const extra = 768 << 20
	cmd := exec.Command(os.Args[0], "-test.run=^TestHeadroomRlimitChild$", "-test.v")
	cmd.Env = append(os.Environ(), "MEMCTL_RLIMIT_EXTRA="+strconv.Itoa(extra))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var got struct {
		Bytes, Cap int64
		By         Bound
		Where      string
	}
	line := regexp.MustCompile(`headroom=(\{.*\})`).FindSubmatch(out)
	if line == nil || json.Unmarshal(line[1], &got) != nil {
		t.Fatalf("child printed no headroom:\n%s", out)
	}
	// The child sets the limit to its VmSize + extra; by the time it reads
	// the headroom its runtime may have mapped a little more.
	if got.By != ByRlimit || got.Bytes > extra || got.Bytes < extra/2 {
		t.Fatalf("headroom under RLIMIT_AS = VmSize + %d MiB: %+v, want by RLIMIT_AS, within (%d, %d] MiB", extra>>20, got, extra>>21, extra>>20)
	}
	if !strings.Contains(got.Where, "RLIMIT_AS") || !strings.Contains(got.Where, "ulimit -v "+strconv.FormatInt(got.Cap>>10, 10)) {
		t.Errorf("Where = %q, want RLIMIT_AS and the ulimit -v value named", got.Where)
	}
}

// TestHeadroomRlimitChild is TestHeadroomRlimit's child: it lowers its own
// soft RLIMIT_AS and prints Headroom as JSON.
func TestHeadroomRlimitChild(t *testing.T) {
	extra, err := strconv.ParseInt(os.Getenv("MEMCTL_RLIMIT_EXTRA"), 10, 64)
	if err != nil {
		t.Skip("child of TestHeadroomRlimit")
	}
	vm, ok := selfStatus("VmSize")
	if !ok {
		t.Fatal("no VmSize in /proc/self/status")
	}
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil {
		t.Fatal(err)
	}
	r.Cur = uint64(vm + extra)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &r); err != nil {
		t.Fatal(err)
	}
	l, ok := Headroom()
	if !ok {
		t.Fatal("no headroom")
	}
	b, _ := json.Marshal(map[string]any{"Bytes": l.Bytes, "Cap": l.Cap, "By": l.By, "Where": l.Where(func(b float64) string { return strconv.FormatFloat(b/1e9, 'f', 2, 64) + " GB" })})
	fmt.Printf("headroom=%s\n", b)
}
