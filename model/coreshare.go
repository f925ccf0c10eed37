package model

import (
	"runtime"
	"slices"
	"sync"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/sgemm/simplegofast"
)

// CoreShare divides a process's cores among the backends that train at
// once, so that groups trained concurrently (each on its own backend "go")
// run side by side on separate cores instead of splitting every matrix
// product across all of them: with k backends active each runs its
// products (and this package's host-side Adam and embedding passes) on
// cores/k goroutines, the first cores mod k one more, at least one. On
// the Higgs MLP a step split across two cores spends about a third of its
// time outside the split products (element-wise passes, the executor, the
// fork and join of every product); two groups on one core each run
// nothing in series. Results never depend on the share (the kernels give
// the same bits on any number of goroutines). Backends other than "go"
// are counted but not capped. A nil *CoreShare does nothing.
type CoreShare struct {
	mu     sync.Mutex
	cores  int
	active []backends.Backend
}

// NewCoreShare shares cores (≤ 0: GOMAXPROCS) among the backends that
// Enter it.
func NewCoreShare(cores int) *CoreShare {
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	return &CoreShare{cores: cores}
}

// Enter counts be as training until the returned function is called (once),
// and re-divides the cores among the backends then active.
func (c *CoreShare) Enter(be backends.Backend) (leave func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	c.active = append(c.active, be)
	c.rebalance()
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if i := slices.Index(c.active, be); i >= 0 {
				c.active = slices.Delete(c.active, i, i+1)
			}
			simplegofast.SetThreads(be, 0)
			c.rebalance()
		})
	}
}

// rebalance sets each active backend's goroutine cap (c.mu held).
func (c *CoreShare) rebalance() {
	k := len(c.active)
	for i, be := range c.active {
		n := c.cores / k
		if i < c.cores%k {
			n++
		}
		simplegofast.SetThreads(be, max(n, 1))
	}
}

// threadsOf is the number of goroutines be's products use now: its
// CoreShare cap, parallelism option and GOMAXPROCS on backend "go";
// GOMAXPROCS elsewhere. The host-side passes (Adam on the host, the
// embedding table) follow it.
func threadsOf(be backends.Backend) int { return simplegofast.Threads(be) }
