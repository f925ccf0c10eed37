package par

import (
	"sync/atomic"
	"testing"
)

// Each and Ranges visit every index exactly once, name goroutines within
// [0, Workers), and use no more of them than asked for or than items.
func TestEveryIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 3}, {1, 0}, {7, 3}, {1000, 4}, {5, 16}, {64, 1}} {
		nw := Workers(tc.workers, tc.n)
		if tc.workers > 0 && nw > tc.workers || tc.n > 0 && nw > tc.n || nw < 1 {
			t.Fatalf("Workers(%d, %d) = %d", tc.workers, tc.n, nw)
		}
		hits := make([]atomic.Int32, tc.n)
		Each(tc.n, tc.workers, func(w, i int) {
			if w < 0 || w >= nw {
				t.Errorf("Each: goroutine %d of %d", w, nw)
			}
			hits[i].Add(1)
		})
		Ranges(tc.n, tc.workers, func(w, lo, hi int) {
			if w < 0 || w >= nw || lo > hi {
				t.Errorf("Ranges: goroutine %d of %d, range [%d, %d)", w, nw, lo, hi)
			}
			for i := lo; i < hi; i++ {
				hits[i].Add(1)
			}
		})
		for i := range hits {
			if h := hits[i].Load(); h != 2 {
				t.Fatalf("n=%d workers=%d: index %d visited %d times, want once by each", tc.n, tc.workers, i, h)
			}
		}
	}
}
