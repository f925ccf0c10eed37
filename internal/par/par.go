// Package par runs the project's parallel loops: Each hands out indices one
// at a time to a fixed set of goroutines (uneven work, per-goroutine
// state), Ranges splits an index range into contiguous blocks (even work).
// Neither promises an order: a caller that needs a deterministic result
// keeps each index's output apart and combines them in index order.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns how many goroutines a loop of n items runs on when asked
// for w: GOMAXPROCS for w ≤ 0, never more than n, at least 1.
func Workers(w, n int) int {
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, n))
}

// Each runs fn(w, i) for every i in [0, n) on Workers(workers, n)
// goroutines; w ∈ [0, Workers(workers, n)) names the goroutine, so that fn
// may use per-goroutine state. Each goroutine takes the next index when it
// finishes one. Each returns when every call has.
func Each(n, workers int, fn func(w, i int)) {
	if n <= 0 {
		return
	}
	nw := Workers(workers, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range nw {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(w, i)
			}
		})
	}
	wg.Wait()
}

// Ranges splits [0, n) into Workers(workers, n) contiguous ranges of
// near-equal length and runs fn(w, lo, hi) for range w on a goroutine of
// its own (on the caller's when there is one range). It returns when every
// call has.
func Ranges(n, workers int, fn func(w, lo, hi int)) {
	if n <= 0 {
		return
	}
	nw := Workers(workers, n)
	if nw == 1 {
		fn(0, 0, n)
		return
	}
	var wg sync.WaitGroup
	for w := range nw {
		lo, hi := n*w/nw, n*(w+1)/nw
		wg.Go(func() { fn(w, lo, hi) })
	}
	wg.Wait()
}
