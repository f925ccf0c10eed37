package memctl

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// MinHeadroom is the least garbage the collector lets accumulate, in bytes.
const MinHeadroom = 64 << 20

// Percent is the GOGC percentage that lets MinHeadroom bytes of garbage
// accumulate over a live heap of live bytes, within [10, 100]: the
// runtime's default 100 up to MinHeadroom live, 10 (a tenth of the heap)
// from ten times that.
func Percent(live uint64) int {
	if live == 0 {
		return 100
	}
	p := int(100 * uint64(MinHeadroom) / live)
	return max(10, min(100, p))
}

var (
	startOnce sync.Once
	started   atomic.Bool
	tunes     atomic.Int64 // retunings so far (tests)
)

// Start makes every garbage collection end by setting the collector's
// percentage to Percent of the live heap it found (a cleanup run after each
// cycle re-arms itself). It does nothing when the user set GOGC or
// GOMEMLIMIT (their choice stands); it returns whether tuning is on. Safe
// to call many times, from any goroutine.
func Start() bool {
	startOnce.Do(func() {
		if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
			return
		}
		started.Store(true)
		retune()
		arm()
	})
	return started.Load()
}

// sentinel is an object whose collection marks the end of a GC cycle (large
// enough to stay out of the tiny allocator, which can keep it alive).
type sentinel struct{ _ [32]byte }

func arm() {
	runtime.AddCleanup(new(sentinel), func(struct{}) { retune(); arm() }, struct{}{})
}

// retune sets the percentage from the live heap of the last cycle.
func retune() {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(Percent(s[0].Value.Uint64()))
	tunes.Add(1)
}
