package sgemm

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Blocking of the algorithm, in elements. The A block (mc×kc, 120 KiB)
// stays in L2 while the kernel streams it against one B panel (kc×16,
// 16 KiB) that stays in L1; kc is the largest contraction chunk.
const (
	mr = 6    // rows of the micro-tile
	nr = 16   // columns of the micro-tile (two ymm registers)
	kc = 256  // largest contraction chunk
	mc = 120  // rows of a packed A block (a multiple of mr)
	nc = 4096 // columns of a packed B block (a multiple of nr)
)

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

// Kernel is a micro-kernel implementation. Every kernel computes each
// element of C the same way (see the package doc), so they give the same
// bits; they differ in speed and in the CPUs that run them.
type Kernel int

const (
	// KernelGo is the portable kernel (plain Go, a 6×16 tile).
	KernelGo Kernel = iota + 1
	// KernelAVX2 is the 6×16 AVX2/FMA assembly kernel (12 ymm accumulators).
	KernelAVX2
	// KernelAVX512 is the 12×32 AVX-512 assembly kernel (24 zmm
	// accumulators; 12×16 and 6×32 at the edges, AVX2's 6×16 in a corner).
	KernelAVX512
)

var kernelNames = map[Kernel]string{KernelGo: "go", KernelAVX2: "avx2", KernelAVX512: "avx512"}

// String is the kernel's name: "go", "avx2" or "avx512".
func (k Kernel) String() string {
	if n, ok := kernelNames[k]; ok {
		return n
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// ParseKernel returns the kernel called name ("go", "avx2", "avx512").
func ParseKernel(name string) (Kernel, error) {
	for k, n := range kernelNames {
		if n == name {
			return k, nil
		}
	}
	return 0, fmt.Errorf("sgemm: unknown kernel %q (want go, avx2 or avx512)", name)
}

// Available reports whether this CPU and build run kernel k: KernelGo
// always; KernelAVX2 on amd64 with AVX2 and FMA (and an OS that saves the
// ymm registers); KernelAVX512 where AVX-512F is there too. The build tag
// purego leaves only KernelGo.
func (k Kernel) Available() bool {
	switch k {
	case KernelGo:
		return true
	case KernelAVX2:
		return hasAVX2
	case KernelAVX512:
		return hasAVX512
	}
	return false
}

// Best is the fastest available kernel: avx512, else avx2, else go.
func Best() Kernel {
	switch {
	case hasAVX512:
		return KernelAVX512
	case hasAVX2:
		return KernelAVX2
	}
	return KernelGo
}

// Kernels lists the available kernels, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	for _, k := range []Kernel{KernelAVX512, KernelAVX2, KernelGo} {
		if k.Available() {
			ks = append(ks, k)
		}
	}
	return ks
}

// HasAVX2 reports whether the AVX2/FMA assembly kernel is available
// (amd64 CPUs with AVX2, FMA and an OS that saves the ymm registers).
func HasAVX2() bool { return hasAVX2 }

// HasAVX512 reports whether the AVX-512 kernel is available.
func HasAVX512() bool { return hasAVX512 }

// tile is the kernel's register tile in A panels (mr rows) and B panels
// (nr columns).
func (k Kernel) tile() (rp, cp int) {
	if k == KernelAVX512 {
		return 2, 2
	}
	return 1, 1
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
	a    []float32                // packed A block: mc×kc in panels of mr rows
	b    []float32                // packed B block: kc×nc in panels of nr columns
	tile [2 * mr * 2 * nr]float32 // the largest tile (12×32), row-major
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

// panel is one A panel (mr rows) or B panel (nr columns) of a block, where
// the kernel reads it: A(i, k) = data[off + i·rs + k·ks], B(k, j) =
// data[off + k·ks + j]. Panels of the same src (0: the operand read in
// place, 1: packed) lie a fixed distance apart, so a kernel can take two
// of them at once. n is how many of its rows (columns) are real; the rest
// are zero padding.
type panel struct {
	data   []float32
	off    int
	rs, ks int
	src    int
	n      int
}

// macro multiplies A[ic:ic+mb, pc:pc+kb] by the packed block b
// (kb×nb) into C[ic:ic+mb, jc:jc+nb], adding to C when acc, else
// overwriting it. A is read in place when its rows are contiguous (the
// kernel takes A's strides and reads a panel's six rows as six streams);
// otherwise (A with contiguous columns reads a new cache line per k: it is
// faster packed), and for a last panel of fewer than six rows, it is packed
// into w.a first.
//
// B is the packed block bp, or with directB, B read in place (whole
// 16-column panels) and bp the packed last panel when nb is not a multiple
// of 16.
//
// The kernel's tile covers rp A panels and cp B panels (kern.tile); two
// neighbouring panels go to the kernel together when they live in the same
// place (both in place, or both packed), else one at a time.
func macro(kern Kernel, w *work, a, b Strided, bp []float32, directB bool, c Strided, ic, mb, jc, nb, pc, kb int, acc bool) {
	direct := a.Col == 1
	full := mb / mr * mr // rows in whole panels
	switch {
	case !direct:
		w.a = grow(w.a, kb*padded(mb, mr))
		packA(kern, w.a, a, ic, mb, pc, kb)
	case full < mb:
		w.a = grow(w.a, kb*mr)
		packA(kern, w.a, a, ic+full, mb-full, pc, kb)
	}
	aPanel := func(ir int) panel {
		rows := min(mr, mb-ir)
		switch {
		case !direct:
			return panel{w.a, ir * kb, 1, mr, 1, rows}
		case ir < full:
			return panel{a.Data, (ic+ir)*a.Row + pc*a.Col, a.Row, a.Col, 0, mr}
		}
		return panel{w.a, 0, 1, mr, 1, rows}
	}
	bPanel := func(jr int) panel {
		cols := min(nr, nb-jr)
		switch {
		case !directB:
			return panel{bp, jr * kb, 0, nr, 1, cols}
		case cols == nr:
			return panel{b.Data, pc*b.Row + jc + jr, 0, b.Row, 0, nr}
		}
		return panel{bp, 0, 0, nr, 1, cols}
	}
	rp, cp := kern.tile()
	var as, bs [2]panel
	for jr := 0; jr < nb; jr += cp * nr {
		nbp := 1
		bs[0] = bPanel(jr)
		if cp == 2 && jr+nr < nb {
			bs[1], nbp = bPanel(jr+nr), 2
		}
		for ir := 0; ir < mb; ir += rp * mr {
			nap := 1
			as[0] = aPanel(ir)
			if rp == 2 && ir+mr < mb {
				as[1], nap = aPanel(ir+mr), 2
			}
			for ai := 0; ai < nap; {
				na := 1
				if ai == 0 && nap == 2 && as[0].src == as[1].src {
					na = 2
				}
				for bi := 0; bi < nbp; {
					nbb := 1
					if bi == 0 && nbp == 2 && bs[0].src == bs[1].src {
						nbb = 2
					}
					tileAt(kern, w, as[ai:ai+na], bs[bi:bi+nbb], c, ic+ir+ai*mr, jc+jr+bi*nr, kb, acc)
					bi += nbb
				}
				ai += na
			}
		}
	}
}

// tileAt runs the kernel on A panels as (rows from i0) and B panels bs
// (columns from j0), one or two of each, and stores (or, with acc, adds)
// the real rows and columns into C: directly when the whole tile is real
// and C's rows are contiguous, else through w.tile.
func tileAt(kern Kernel, w *work, as, bs []panel, c Strided, i0, j0, kb int, acc bool) {
	a0, b0 := as[0], bs[0]
	tr, tc := len(as)*mr, len(bs)*nr
	rows, cols := tr-mr+as[len(as)-1].n, tc-nr+bs[len(bs)-1].n
	apan, bpan := as[len(as)-1].off-a0.off, bs[len(bs)-1].off-b0.off
	a, bv := a0.data[a0.off:], b0.data[b0.off:]
	off := i0*c.Row + j0*c.Col
	if rows == tr && cols == tc && c.Col == 1 {
		kernel(kern, kb, a, a0.rs, a0.ks, apan, len(as), bv, b0.ks, bpan, len(bs), c.Data[off:off+(tr-1)*c.Row+tc], c.Row, acc)
		return
	}
	kernel(kern, kb, a, a0.rs, a0.ks, apan, len(as), bv, b0.ks, bpan, len(bs), w.tile[:tr*tc], tc, false)
	for i := range rows {
		row := c.Data[off+i*c.Row:]
		t := w.tile[i*tc : i*tc+cols]
		if acc {
			for j, v := range t {
				row[j*c.Col] += v
			}
		} else {
			for j, v := range t {
				row[j*c.Col] = v
			}
		}
	}
}

// kernel computes the (rp·mr)×(cp·nr) tile Σ_k A(i,k)·B(k,j) (k < kb, in k
// order, fused multiply-adds from zero) and stores it to c[i·ldc+j], or
// adds it there when acc. A(i,k) = a[(i/mr)·apan + (i%mr)·ars + k·aks],
// B(k,j) = b[(j/nr)·bpan + k·bks + j%nr]; rp, cp ∈ {1, 2} (1 and 1 for the
// go and avx2 kernels). The callers' slicing makes a, b and c long enough
// (checked here once more before the assembly).
func kernel(kern Kernel, kb int, a []float32, ars, aks, apan, rp int, b []float32, bks, bpan, cp int, c []float32, ldc int, acc bool) {
	_ = a[(rp-1)*apan+(mr-1)*ars+(kb-1)*aks]
	_ = b[(cp-1)*bpan+(kb-1)*bks+nr-1]
	_ = c[(rp*mr-1)*ldc+cp*nr-1]
	switch {
	case kern == KernelGo:
		for g := range rp {
			for h := range cp {
				kernelGo(kb, a[g*apan:], ars, aks, b[h*bpan:], bks, c[g*mr*ldc+h*nr:], ldc, acc)
			}
		}
	case rp == 2 && cp == 2:
		kern12x32(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, acc)
	case rp == 2:
		kern12x16(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, acc)
	case cp == 2:
		kern6x32(kb, &a[0], ars, aks, apan, &b[0], bks, bpan, &c[0], ldc, acc)
	default:
		kern6x16(kb, &a[0], ars, aks, &b[0], bks, &c[0], ldc, acc)
	}
}

// kernelGo is the portable micro-kernel.
func kernelGo(kb int, a []float32, ars, aks int, b []float32, bks int, c []float32, ldc int, acc bool) {
	var t [mr][nr]float32
	for k := range kb {
		bk := (*[nr]float32)(b[k*bks : k*bks+nr])
		for i := range mr {
			ai, ti := a[i*ars+k*aks], &t[i]
			for j, bj := range bk {
				ti[j] += ai * bj
			}
		}
	}
	for i := range mr {
		row := (*[nr]float32)(c[i*ldc : i*ldc+nr])
		if acc {
			for j := range nr {
				row[j] += t[i][j]
			}
		} else {
			*row = t[i]
		}
	}
}
