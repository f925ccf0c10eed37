package sgemm

// The logit layer's products are matrix-vector products that a 6×16 (or
// 12×32) tile fills a sixth of, or less: its forward h·w (N = 1, the dot
// path of multiplyDot), its weight gradient hᵀ·v (N = 1 with B's rows
// contiguous: multiplyRow) and its input gradient v·wᵀ (K = 1:
// multiplyOuter). Each computes every element as the packed kernels do
// (chunks of K, fused multiply-adds in k order from zero, chunk sums added
// to C in order), so the results are the same bits.

// useGEMV enables multiplyRow and multiplyOuter (tests may switch it off
// to compare with the packed kernels).
var useGEMV = true

// gemvCols is the columns gemv96 computes at once; rows narrower than that
// go 8 columns at a time (gemv8).
const gemvCols = 96

// multiplyRow computes C = A·B for one row (m = 1) when B's rows are
// contiguous (b.Col == 1, n ≥ 8): C's row is Σ_k A(0, k)·B(k, ·), which
// gemv96 accumulates 96 columns at a time in twelve ymm registers, reading
// B in place. The last block overlaps the one before (its columns are
// computed twice, the same way, and stored once).
func multiplyRow(batch, n, k int, a, b, c Strided, threads int) {
	chunks := (k + kc - 1) / kc
	chunk := (k + chunks - 1) / chunks
	w := gemvCols
	if n < w {
		w = 8
	}
	blocks := (n + w - 1) / w
	flops := 2 * float64(batch) * float64(n) * float64(k)
	workers := max(1, min(threads, int(flops/minTaskFlops)))
	forEach(workers, batch*blocks, func(t int, _ *work) {
		e, jb := t/blocks, t%blocks
		lo := jb * w
		j0 := min(lo, n-w)
		var sum [gemvCols]float32
		for pc := 0; pc < k; pc += chunk {
			kb := min(chunk, k-pc)
			ao := e*a.Batch + pc*a.Col
			bo := e*b.Batch + pc*b.Row + j0
			_, _ = a.Data[ao+(kb-1)*a.Col], b.Data[bo+(kb-1)*b.Row+w-1]
			if w == gemvCols {
				gemv96(kb, &a.Data[ao], a.Col, &b.Data[bo], b.Row, &sum[0])
			} else {
				gemv8(kb, &a.Data[ao], a.Col, &b.Data[bo], b.Row, &sum[0])
			}
			for j := lo; j < min(lo+w, n); j++ {
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

// outerRows is the rows of C one task of multiplyOuter computes.
const outerRows = 64

// multiplyOuter computes C = A·B for K = 1 when B's and C's columns are
// contiguous (b.Col == c.Col == 1, n ≥ 8): C(i, j) = A(i, 0)·B(0, j), one
// fused multiply-add from zero each (outer), stored straight into C.
func multiplyOuter(batch, m, n int, a, b, c Strided, threads int) {
	parts := (m + outerRows - 1) / outerRows
	flops := 2 * float64(batch) * float64(m) * float64(n)
	workers := max(1, min(threads, int(flops/minTaskFlops)))
	forEach(workers, batch*parts, func(t int, _ *work) {
		e, part := t/parts, t%parts
		i0 := part * outerRows
		rows := min(outerRows, m-i0)
		ao, bo, co := e*a.Batch+i0*a.Row, e*b.Batch, e*c.Batch+i0*c.Row
		_, _, _ = a.Data[ao+(rows-1)*a.Row], b.Data[bo+n-1], c.Data[co+(rows-1)*c.Row+n-1]
		outer(rows, n, &a.Data[ao], a.Row, &b.Data[bo], &c.Data[co], c.Row)
	})
}
