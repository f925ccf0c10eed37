// Package sgemm multiplies batches of float32 matrices (C = A·B) with a
// packed, register-blocked kernel chosen at run time (Kernel, Best,
// MultiplyWith): on amd64 CPUs with AVX-512F a 12×32 micro-kernel in Go
// assembly (24 of the 32 zmm registers hold the tile; 12×16 and 6×32
// variants at the edges), on CPUs with AVX2 and FMA a 6×16 one (12 of the
// 16 ymm registers), elsewhere the same algorithm in plain Go. The wide
// kernel reads two neighbouring 6-row A panels and two 16-column B panels
// at once, so the packed formats are the same for every kernel.
//
// The logit layer's matrix-vector products skip the packing (gemv.go):
// one-row products whose B columns are contiguous in k (its forward h·w,
// computed transposed) run as twelve scalar FMA chains reading B in place
// (dot12); one-row products whose B rows are contiguous (its weight
// gradient hᵀ·v) accumulate 96 columns at a time in twelve ymm registers
// (gemv96); products with K = 1 (its input gradient v·wᵀ) are one fused
// multiply-add per element, stored straight into C (outer).
//
// The algorithm is the one of BLIS and GotoBLAS (Goto & van de Geijn,
// "Anatomy of high-performance matrix multiplication", ACM TOMS 34(3),
// 2008): B is packed in blocks of KC×NC into panels of 16 columns, A in
// blocks of MC×KC into panels of 6 rows, zero-padded at the edges, so the
// micro-kernel reads both operands with unit stride whatever their layout
// (an operand whose rows are already contiguous is read in place). One
// assembly call walks a whole strip: every A panel of an MC-row block
// against one B panel, prefetching each tile's C, so the Go code around
// the kernel runs once per strip, not per tile. MC is half of the CPU's L2
// (CPUID, at run time); KC is fixed, since it decides the chunks below.
// Operands are strided views (any row, column and batch stride, including
// transposes and broadcast batches), so callers never transpose first.
//
// Results are deterministic: element C(i, j) is computed the same way
// whatever its position, the batch size, the thread count or which operand
// the driver packs as A. The contraction is split into ⌈K/256⌉ chunks of
// near-equal length that depend on K only; inside a chunk the products are
// accumulated in k order with fused multiply-adds (a·b + acc rounded once)
// starting from zero, and the chunk sums are added to C in chunk order.
// The rounding error is therefore that of a plain dot product:
// |C − A·B| ≤ γ_K·(|A|·|B|) elementwise, γ_K = K·u/(1 − K·u), u = 2⁻²⁴
// (Higham, "Accuracy and Stability of Numerical Algorithms", §3.1).
// Two implementations that each meet this bound differ by at most twice it;
// that is the tolerance the tests use against float64 references.
//
// The AVX-512 and AVX2 kernels (and dot12, gemv96, outer) compute every
// element as the same chain of fused multiply-adds, so they give the same
// bits (TestKernelsMatchReference checks them against that chain written
// out in scalar Go, with an exactly rounded FMA): a result
// does not depend on which of them a CPU runs. The portable kernel (other
// architectures, or CPUs without AVX2/FMA) computes a·b + acc with two
// roundings, so its results differ in the last bits from the assembly
// kernels'; it is deterministic on its own. Best reports which one
// Multiply runs.
package sgemm
