package model

import (
	"math"

	"labelprivacy/internal/offheap"
	"labelprivacy/internal/par"
)

// hostEmbedding keeps kdd_embed's tables and their lazy Adam moments in
// host memory (feedSparseHost): the host sums each example's embedding rows,
// the compiled program trains the dense layers and returns the gradient of
// those sums, and the host applies lazy Adam to the rows the step touched.
// On backend "go" this replaces 8 gathers and scatters of generic simplego
// code per step with a few tight loops; on XLA the table stays on the
// device (feedSparseLazy).
//
// Rows are numbered as in the device table: replica r's rows start at
// r·(K+1), row K being its trash row. In memory each row keeps its values,
// first and second moments together ([row][3][E]): a touched row is one
// contiguous 3·E·4 bytes, so lazy Adam's random rows cost one burst of
// cache lines each rather than three.
type hostEmbedding struct {
	r, k, e int
	rows    []float32      // [R·(K+1)][3][E]
	mem     *offheap.Block // rows' memory when outside the heap (300 MB for one kdd_embed replica)
	grad    []float32      // [R·U·E]: per step, the gradient of each touched row

	// Deferred lazy Adam of the last step (see update).
	pend, split []pendingRow
	u           int // slots per replica in grad
	adam        AdamConfig
	stepScale   []float32 // [R]
	vScale      float32
	stamp       []uint32 // [R·(K+1)]: gen when the current batch reads the row
	gen         uint32
	running     bool
	done        chan struct{}
	// threads, when set, is how many goroutines a pass may use now (the
	// backend's share of the cores); nil: GOMAXPROCS.
	threads func() int
}

// parallel runs fn over [0, n) on the goroutines h may use.
func (h *hostEmbedding) parallel(n int, fn func(lo, hi int)) {
	w := 0
	if h.threads != nil {
		w = h.threads()
	}
	parallel(w, n, fn)
}

// newHostEmbedding allocates the tables (outside the Go heap when large:
// free releases them).
func newHostEmbedding(r, k, e, u int) *hostEmbedding {
	rows, mem := offheap.Alloc[float32](r * (k + 1) * 3 * e)
	adviseHugePages(rows)
	return &hostEmbedding{r: r, k: k, e: e, rows: rows, mem: mem, grad: make([]float32, r*u*e)}
}

// free waits for pending work and releases the tables; h must not be used
// afterwards.
func (h *hostEmbedding) free() {
	h.wait()
	h.rows = nil
	h.mem.Free()
}

// get copies part (0: values, 1: first moments, 2: second moments) of every
// row into dst ([R·(K+1)·E], the device table's layout); set is its inverse.
func (h *hostEmbedding) get(part int, dst []float32) {
	h.flush()
	e := h.e
	for i := range len(dst) / e {
		copy(dst[i*e:(i+1)*e], h.rows[(3*i+part)*e:])
	}
}

// row is part (0: values, 1 and 2: moments) of table row i, in place.
func (h *hostEmbedding) row(i, part int) []float32 {
	return h.rows[(3*i+part)*h.e : (3*i+part+1)*h.e]
}

// compactValues moves every row's values to the front of the table (the
// layout of get(0, …)) and returns them; the moments are gone, and their
// pages go back to the system. Only free may follow. After training this
// halves what handing the table over costs: the values are copied from
// 100 MB, not next to 300.
func (h *hostEmbedding) compactValues() []float32 {
	h.flush()
	e := h.e
	n := len(h.rows) / (3 * e)
	for i := range n { // row i moves from 3·i·e to i·e: never over a row not yet moved
		copy(h.rows[i*e:(i+1)*e], h.rows[3*i*e:3*i*e+e])
	}
	h.mem.DropPages(offheap.Bytes(h.rows[n*e:]))
	return h.rows[:n*e]
}

// getRange copies floats [off, off+len(dst)) of get's result into dst,
// without flushing: the caller flushed, and nothing changes the table
// until it is done.
func (h *hostEmbedding) getRange(part int, dst []float32, off int) {
	e := h.e
	for len(dst) > 0 {
		i, c := off/e, off%e
		n := copy(dst, h.rows[(3*i+part)*e+c:(3*i+part+1)*e])
		dst, off = dst[n:], off+n
	}
}

func (h *hostEmbedding) set(part int, src []float32) {
	h.flush()
	e := h.e
	for i := range len(src) / e {
		copy(h.rows[(3*i+part)*e:(3*i+part+1)*e], src[i*e:])
	}
}

// parallel runs fn over [0, n) split in up to w ranges (w ≤ 0:
// GOMAXPROCS).
func parallel(w, n int, fn func(lo, hi int)) { par.Ranges(n, w, func(_, lo, hi int) { fn(lo, hi) }) }

// forward applies the pending updates of the rows it reads (see update),
// then writes each example's embedding sum into f.x ([R·B·E]) from the
// feeder's slots (f.ids, into f.uniq) and mask.
func (h *hostEmbedding) forward(f *feeder) {
	h.takeRead(f)
	s, e := f.s, h.e
	h.parallel(s.r*s.b, func(lo, hi int) {
		for ex := lo; ex < hi; ex++ { // ex = r·B + i
			out := f.x[ex*e : (ex+1)*e]
			clear(out)
			for t := range s.w {
				k := ex*s.w + t
				if f.mask[k] == 0 {
					continue
				}
				row := h.rows[3*int(f.uniq[f.ids[k]])*e:]
				row = row[:len(out)]
				for j, v := range row {
					out[j] += v
				}
			}
		}
	})
}

// Lazy Adam of step t is deferred and split so that most of it runs while
// the program of step t+1 does (on backend "go" the program keeps about 1.4
// of 2 cores busy): update only sums the step's row gradients and records
// the touched rows as pending; forward of step t+1 first applies Adam to the
// pending rows its batch reads; startDeferred applies the rest on another
// goroutine while the program runs; wait joins it. Each row still receives
// its updates in step order and every read sees the same values as without
// the split, so results are bit-identical (TestLazyAdam, the resume tests).
// flush applies whatever is pending; call it before reading the table.

// update records the lazy Adam update of this step's rows: grad is the
// gradient of the embedding sums [R·B·E]; stepScale[r] = lr_r/(1−β1^t) and
// vScale = 1/√(1−β2^t), as in the program (same float32 expressions). The
// rows change by the time the next forward reads them, or at flush.
func (h *hostEmbedding) update(f *feeder, grad []float32, stepScale []float32, vScale float32, a AdamConfig) {
	h.flush() // normally a no-op: forward and wait took every pending row
	s, e := f.s, h.e
	// Sum each touched row's gradient. Workers split the embedding columns
	// (any R, no races: a worker owns its columns of every row).
	h.parallel(e, func(c0, c1 int) {
		for r := range s.r {
			for j := range f.nUniq[r] {
				clear(h.grad[(r*s.u+j)*e+c0 : (r*s.u+j)*e+c1])
			}
			for i := range s.b {
				ex := r*s.b + i
				g := grad[ex*e+c0 : ex*e+c1]
				for t := range s.w {
					k := ex*s.w + t
					if f.mask[k] == 0 {
						continue
					}
					dst := h.grad[int(f.ids[k])*e+c0:]
					dst = dst[:len(g)]
					for j, v := range g {
						dst[j] += v
					}
				}
			}
		}
	})
	h.pend = h.pend[:0]
	for r := range s.r {
		for j := range f.nUniq[r] {
			slot := r*s.u + j
			h.pend = append(h.pend, pendingRow{row: f.uniq[slot], slot: int32(slot)})
		}
	}
	h.u, h.adam, h.vScale = s.u, a, vScale
	h.stepScale = append(h.stepScale[:0], stepScale...)
}

// pendingRow is a row whose lazy Adam update is deferred, with its slot in
// grad.
type pendingRow struct{ row, slot int32 }

// takeRead applies the pending updates of the rows the feeder's batch reads
// (all of f.uniq in use), leaving the others pending.
func (h *hostEmbedding) takeRead(f *feeder) {
	if len(h.pend) == 0 {
		return
	}
	if h.stamp == nil {
		h.stamp = make([]uint32, h.r*(h.k+1))
	}
	h.gen++
	if h.gen == 0 { // wrapped: old stamps could collide
		clear(h.stamp)
		h.gen = 1
	}
	s := f.s
	for r := range s.r {
		for _, row := range f.uniq[r*s.u : r*s.u+f.nUniq[r]] {
			h.stamp[row] = h.gen
		}
	}
	now, later := h.split[:0], h.pend[:0]
	for _, p := range h.pend {
		if h.stamp[p.row] == h.gen {
			now = append(now, p)
		} else {
			later = append(later, p)
		}
	}
	h.split, h.pend = now, later
	h.parallel(len(now), func(lo, hi int) { h.adamRows(now[lo:hi]) })
}

// startDeferred applies the remaining pending updates on another goroutine;
// wait joins it. Nothing may touch the table in between.
func (h *hostEmbedding) startDeferred() {
	if len(h.pend) == 0 || h.running {
		return
	}
	h.running = true
	h.done = make(chan struct{})
	go func() {
		defer close(h.done)
		h.adamRows(h.pend)
	}()
}

// wait joins startDeferred's goroutine; the pending rows are then done.
func (h *hostEmbedding) wait() {
	if h.running {
		<-h.done
		h.running = false
		h.pend = h.pend[:0]
	}
}

// flush waits for or applies every pending update.
func (h *hostEmbedding) flush() {
	h.wait()
	if len(h.pend) > 0 {
		pend := h.pend
		h.parallel(len(pend), func(lo, hi int) { h.adamRows(pend[lo:hi]) })
		h.pend = h.pend[:0]
	}
}

// adamRows applies lazy Adam to distinct rows (no races between calls on
// disjoint lists).
func (h *hostEmbedding) adamRows(rows []pendingRow) {
	e := h.e
	b1, b2, eps := float32(1-h.adam.Beta1), float32(1-h.adam.Beta2), float32(h.adam.Epsilon)
	vScale := h.vScale
	for _, pr := range rows {
		sc := h.stepScale[int(pr.slot)/h.u]
		o := 3 * int(pr.row) * e
		row := h.rows[o : o+3*e]
		p, m, v, g := row[:e], row[e:2*e], row[2*e:3*e], h.grad[int(pr.slot)*e:(int(pr.slot)+1)*e]
		if n := lazyAdamVector(p, m, v, g, &[8]float32{b1, b2, sc, vScale, eps}); n > 0 {
			p, m, v, g = p[n:], m[n:], v[n:], g[n:]
		}
		for c, gc := range g {
			dm := b1 * (gc - m[c])
			dv := b2 * (gc*gc - v[c])
			mc, vc := m[c]+dm, v[c]+dv
			m[c], v[c] = mc, vc
			p[c] -= sc * mc / (float32(math.Sqrt(float64(vc)))*vScale + eps)
		}
	}
}
