package sgemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking of the algorithm, in elements. The A block (mc×kc) stays in L2
// while the kernel streams it against one B panel (kc×16, 16 KiB) that
// stays in L1. kc is the largest contraction chunk: it sets where each
// element's sum restarts, so it is part of the results and fixed (see
// the package doc); mc only orders the work and is chosen at run time.
const (
	mr = 6    // rows of the micro-tile
	nr = 16   // columns of the micro-tile (two ymm registers)
	kc = 256  // largest contraction chunk
	nc = 4096 // columns of a packed B block (a multiple of nr)
)

// mc is the rows of an A block: mcFor this CPU's L2.
var mc = mcFor(l2Bytes())

// mcFor is the rows of an A block that fill half of an L2 cache of l2
// bytes at the largest chunk (the other half holds the B panels streaming
// through and C), a multiple of 12 (whole AVX-512 tiles), from 120 rows
// (a 256 KiB L2, or an unknown one) to 1020 (a 2 MiB L2): 252 on a
// 512 KiB L2 (AMD Zen 3), 504 on 1 MiB (Zen 4, Zen 5, Intel Xeon).
func mcFor(l2 int) int {
	const lo, hi = 120, 1020
	return min(hi, max(lo, l2/2/(kc*4)/12*12))
}

// Strided is a batch of matrices stored in a flat slice: element (i, j) of
// matrix p is Data[p·Batch + i·Row + j·Col]. Strides are in elements and
// may be zero (a broadcast matrix or row).
type Strided struct {
	Data            []float32
	Batch, Row, Col int
}

// T returns the transposed view (rows and columns swapped).
func (s Strided) T() Strided { return Strided{Data: s.Data, Batch: s.Batch, Row: s.Col, Col: s.Row} }

// RowMajor returns batch row-major m×n matrices stored one after the other.
func RowMajor(data []float32, m, n int) Strided {
	return Strided{Data: data, Batch: m * n, Row: n, Col: 1}
}

// Multiply sets C[p] = A[p]·B[p] for p < batch, where A[p] is m×k, B[p] is
// k×n and C[p] is m×n, overwriting C (it need not be zeroed; with k = 0 it
// is set to zeros). threads bounds the goroutines used (≤ 0: GOMAXPROCS);
// results do not depend on it. C must not overlap A or B, and C's views
// must not overlap one another. Multiply panics when a dimension is
// negative or a view reaches outside its Data. It runs the Best kernel.
func Multiply(batch, m, n, k int, a, b, c Strided, threads int) {
	MultiplyWith(Best(), batch, m, n, k, a, b, c, threads)
}

// MultiplyWith is Multiply on kernel kern; it panics when kern is not
// Available. Every kernel gives the same results.
func MultiplyWith(kern Kernel, batch, m, n, k int, a, b, c Strided, threads int) {
	if !kern.Available() {
		panic(fmt.Sprintf("sgemm: kernel %s is not available on this CPU or build", kern))
	}
	if batch < 0 || m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("sgemm: negative dimension (batch %d, m %d, n %d, k %d)", batch, m, n, k))
	}
	checkView("A", a, batch, m, k)
	checkView("B", b, batch, k, n)
	checkView("C", c, batch, m, n)
	if batch == 0 || m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for p := range batch {
			for i := range m {
				for j := range n {
					c.Data[p*c.Batch+i*c.Row+j*c.Col] = 0
				}
			}
		}
		return
	}
	// Compute the transposed product (Cᵀ = Bᵀ·Aᵀ) when it pads clearly
	// less: the tile is 6×16, so C with few columns (n = 1) wastes most of
	// a tile, Cᵀ much less. The orientation with unit column stride in C
	// stores full tiles directly; the other goes through a scatter, worth
	// about transposeCost of the work. Each element's sum is the same
	// either way (the product in a fused multiply-add commutes exactly).
	cost, costT := float64(padded(m, mr)*padded(n, nr)), float64(padded(n, mr)*padded(m, nr))
	if c.Col == 1 {
		costT *= transposeCost
	} else if c.Row == 1 {
		cost *= transposeCost
	}
	if costT < cost {
		m, n, a, b, c = n, m, b.T(), a.T(), c.T()
	}
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	if kern != KernelGo && useGEMV && n >= 8 {
		switch {
		case k == 1 && b.Col == 1 && c.Col == 1:
			multiplyOuter(batch, m, n, a, b, c, threads)
			return
		case m == 1 && b.Col == 1:
			multiplyRow(batch, n, k, a, b, c, threads)
			return
		}
	}
	if m == 1 && b.Row == 1 && n >= dotCols && kern != KernelGo && useDot {
		multiplyDot(batch, n, k, a, b, c, threads)
		return
	}
	plan := newPlan(kern, batch, m, n, k, threads, b.Col == 1)
	var shared *[]float32
	if plan.shareB {
		// Pack each entry's B once for all its row parts.
		shared = getShared(plan.batch * plan.bEntry)
		jcs := (n + nc - 1) / nc
		chunks := (k + plan.chunk - 1) / plan.chunk
		forEach(plan.workers, batch*jcs*chunks, func(t int, _ *work) {
			e, jci, pci := t/(jcs*chunks), t/chunks%jcs, t%chunks
			jc, pc := jci*nc, pci*plan.chunk
			nb, kb := min(nc, n-jc), min(plan.chunk, k-pc)
			bv := b
			bv.Data = b.Data[e*b.Batch:]
			off := e*plan.bEntry + plan.bOffset(jc, pc, nb)
			packB(kern, (*shared)[off:off+kb*padded(nb, nr)], bv, pc, kb, jc, nb)
		})
	}
	forEach(plan.workers, plan.tasks, func(t int, w *work) { plan.run(t, a, b, c, w, shared) })
	if shared != nil {
		sharedPool.Put(shared)
	}
}

// dotCols is the columns dot12 computes at once.
const dotCols = 12

// useDot enables multiplyDot (tests switch it off to compare).
var useDot = true

// multiplyDot computes C = A·B for one row (m = 1) when B's columns are
// contiguous in k (b.Row == 1): C's elements are dot products of A's row
// with B's columns, which dot12 reads in place, twelve at a time, as
// twelve scalar FMA chains. The packed path would transpose B into
// 16-column panels first and fill one row of the kernel's 6 or 12. This is
// the logit layer's forward product (h·w, one output column, computed as
// its transpose). Each element is computed exactly as the packed kernels
// do (chunks of K, FMAs in k order from zero, chunk sums added to C in
// order), so the results are the same bits.
func multiplyDot(batch, n, k int, a, b, c Strided, threads int) {
	chunks := (k + kc - 1) / kc
	chunk := (k + chunks - 1) / chunks
	blocks := (n + dotCols - 1) / dotCols
	flops := 2 * float64(batch) * float64(n) * float64(k)
	workers := max(1, min(threads, int(flops/minTaskFlops)))
	forEach(workers, batch*blocks, func(t int, _ *work) {
		e, jb := t/blocks, t%blocks
		lo := jb * dotCols
		j0 := min(lo, n-dotCols) // the last block overlaps the one before
		var sum [dotCols]float32
		for pc := 0; pc < k; pc += chunk {
			kb := min(chunk, k-pc)
			ao := e*a.Batch + pc*a.Col
			bo := e*b.Batch + j0*b.Col + pc
			_, _ = a.Data[ao+(kb-1)*a.Col], b.Data[bo+(dotCols-1)*b.Col+kb-1]
			dot12(kb, &a.Data[ao], a.Col, &b.Data[bo], b.Col, &sum[0])
			for j := lo; j < min(lo+dotCols, n); j++ {
				o := e*c.Batch + j*c.Col
				if pc > 0 {
					c.Data[o] += sum[j-j0]
				} else {
					c.Data[o] = sum[j-j0]
				}
			}
		}
	})
}

// forEach runs fn(t) for t < tasks on up to workers goroutines (the
// caller's included), each with its own packing space.
func forEach(workers, tasks int, fn func(t int, w *work)) {
	workers = min(workers, tasks)
	if workers <= 1 {
		w := getWork()
		for t := range tasks {
			fn(t, w)
		}
		putWork(w)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	loop := func() {
		w := getWork()
		for t := int(next.Add(1) - 1); t < tasks; t = int(next.Add(1) - 1) {
			fn(t, w)
		}
		putWork(w)
	}
	wg.Add(workers - 1)
	for range workers - 1 {
		go func() { defer wg.Done(); loop() }()
	}
	loop()
	wg.Wait()
}

var sharedPool sync.Pool // *[]float32: B packed for all row parts

func getShared(n int) *[]float32 {
	if p, _ := sharedPool.Get().(*[]float32); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

// padded rounds x up to a multiple of q.
func padded(x, q int) int { return (x + q - 1) / q * q }

// checkView panics when view v of batch rows×cols matrices reaches outside
// its Data or has a negative stride.
func checkView(name string, v Strided, batch, rows, cols int) {
	if v.Batch < 0 || v.Row < 0 || v.Col < 0 {
		panic(fmt.Sprintf("sgemm: %s has a negative stride (%d, %d, %d)", name, v.Batch, v.Row, v.Col))
	}
	if batch == 0 || rows == 0 || cols == 0 {
		return
	}
	last := (batch-1)*v.Batch + (rows-1)*v.Row + (cols-1)*v.Col
	if last >= len(v.Data) {
		panic(fmt.Sprintf("sgemm: %s (%d×%d×%d, strides %d, %d, %d) needs %d elements, has %d",
			name, batch, rows, cols, v.Batch, v.Row, v.Col, last+1, len(v.Data)))
	}
}

// plan splits a product into tasks: each batch entry is cut into parts
// along m or n (whichever duplicates less packing), every part a whole
// number of blocks, so that there are at least as many tasks as workers
// when the work allows it.
type plan struct {
	kern           Kernel
	tm, tn         int // the kernel's tile (rows, columns)
	batch, m, n, k int
	parts          int  // parts per batch entry
	alongM         bool // parts split m (else n)
	step           int  // rows (alongM) or columns per part
	tasks, workers int
	chunk          int // contraction chunk length (K only)
	// shareB: the parts split m and read one packed B per entry, bEntry
	// floats long (packed before the parts start).
	shareB bool
	bEntry int
	// directB: B's rows are contiguous (Col stride 1), so the kernel reads
	// whole 16-column panels in place; only a last narrower panel is packed.
	directB bool
}

// maxSharedB bounds the packed B kept for all parts (floats, 32 MiB).
const maxSharedB = 1 << 23

// bOffset is where the packed block (jc, pc) of width nb starts in an
// entry's shared B: full column blocks of k·nc floats, then the chunks of
// the block, each kb·padded(nb, nr) long.
func (p *plan) bOffset(jc, pc, nb int) int {
	return jc/nc*p.k*nc + pc*padded(nb, nr)
}

// transposeCost is the relative cost of an orientation whose C tiles are
// scattered (column stride ≠ 1) rather than stored directly.
const transposeCost = 1.3

// minTaskFlops is the least work worth a goroutine of its own.
const minTaskFlops = 1 << 20

func newPlan(kern Kernel, batch, m, n, k, threads int, directB bool) plan {
	rp, cp := kern.tile()
	p := plan{kern: kern, tm: rp * mr, tn: cp * nr, batch: batch, m: m, n: n, k: k, parts: 1, directB: directB}
	chunks := (k + kc - 1) / kc
	p.chunk = (k + chunks - 1) / chunks
	flops := 2 * float64(batch) * float64(m) * float64(n) * float64(k)
	workers := max(1, min(threads, int(flops/minTaskFlops)))
	// Splitting m re-packs B per part (k·n each); splitting n re-packs A.
	p.alongM = m >= n
	// Tasks per worker: with several, a worker that finishes early takes
	// another and the uneven last part matters less. Parts along m share
	// one packed B (or read it in place), so four per worker cost little;
	// parts along n each pack their A, so two. A part keeps at least two
	// tiles' rows (columns).
	per := 2
	if p.alongM {
		per = 4
	}
	if batch < per*workers && workers > 1 {
		want := (per*workers + batch - 1) / batch
		if p.alongM {
			want = max(1, min(want, m/(2*p.tm)))
			p.step = padded((m+want-1)/want, p.tm)
			p.parts = (m + p.step - 1) / p.step
		} else {
			want = max(1, min(want, n/(2*p.tn)))
			p.step = padded((n+want-1)/want, p.tn)
			p.parts = (n + p.step - 1) / p.step
		}
	}
	if p.parts == 1 {
		p.step = max(m, n)
	}
	p.tasks = batch * p.parts
	p.workers = min(workers, p.tasks)
	if p.parts > 1 && p.alongM && !p.directB {
		p.bEntry = k * padded(n, nr)
		p.shareB = batch*p.bEntry <= maxSharedB
	}
	return p
}

// work is one goroutine's packing space.
type work struct {
	a     []float32                // packed A block: mc×kc in panels of mr rows
	b     []float32                // packed B block: kc×nc in panels of nr columns
	strip []float32                // a strip of tiles bound for C through a copy
	tile  [2 * mr * 2 * nr]float32 // the largest tile (12×32), row-major
}

var workPool = sync.Pool{New: func() any { return new(work) }}

func getWork() *work  { return workPool.Get().(*work) }
func putWork(w *work) { workPool.Put(w) }

// run computes task t: one part of one batch entry. shared, when not nil,
// holds every entry's packed B.
func (p *plan) run(t int, a, b, c Strided, w *work, shared *[]float32) {
	e, part := t/p.parts, t%p.parts
	i0, i1, j0, j1 := 0, p.m, 0, p.n
	if p.parts > 1 {
		if p.alongM {
			i0, i1 = part*p.step, min(p.m, (part+1)*p.step)
		} else {
			j0, j1 = part*p.step, min(p.n, (part+1)*p.step)
		}
	}
	a.Data = a.Data[e*a.Batch:]
	b.Data = b.Data[e*b.Batch:]
	c.Data = c.Data[e*c.Batch:]
	for jc := j0; jc < j1; jc += nc {
		nb := min(nc, j1-jc)
		for pc := 0; pc < p.k; pc += p.chunk {
			kb := min(p.chunk, p.k-pc)
			var bp []float32
			switch {
			case p.directB:
				if full := nb / nr * nr; full < nb { // pack the last, narrower panel
					w.b = grow(w.b, kb*nr)
					packB(p.kern, w.b, b, pc, kb, jc+full, nb-full)
					bp = w.b
				}
			case shared != nil:
				off := e*p.bEntry + p.bOffset(jc, pc, nb)
				bp = (*shared)[off : off+kb*padded(nb, nr)]
			default:
				w.b = grow(w.b, kb*padded(nb, nr))
				packB(p.kern, w.b, b, pc, kb, jc, nb)
				bp = w.b
			}
			for ic := i0; ic < i1; ic += mc {
				macro(p.kern, w, a, b, bp, p.directB, c, ic, min(mc, i1-ic), jc, nb, pc, kb, pc > 0)
			}
		}
	}
}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}
