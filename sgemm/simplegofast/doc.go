// Package simplegofast runs the float32 DotGeneral of GoMLX's pure-Go
// backend (simplego) on package sgemm's packed AVX-512 or AVX2/FMA kernel, and
// three float32 ops that simplego runs element by element (Where, Slice,
// GreaterOrEqual) without its per-element branches and index walks.
//
// simplego v0.26.0 computes every matrix product with a scalar kernel on
// zero-padded 32×32 blocks (≈ 3 GFLOP/s per core); sgemm reaches 90–125
// GFLOP/s per core on the same products with AVX2 and 200–240 with
// AVX-512 (AMD Zen 5). simplego has no public way to plug
// in an op implementation: it keeps its executors in an unexported table.
// This package reaches that table with //go:linkname, so it is written for
// one GoMLX version and guards itself:
//
//   - Install replaces four executors (DotGeneral, Where, Slice and
//     GreaterOrEqual) once per process, all or none, and only
//     when GoMLX is v0.26.0 (the module version in the binary's build info,
//     or, where build info lists no modules as in test binaries, the
//     source path of simplego's own executor), the CPU has AVX2 and FMA,
//     the unexported structures it reads have the expected fields and
//     types, and a self-test passes: five products (batched, contraction
//     on either side, across the 12×32 tile's edges with K > 256, N = 1,
//     K = 1) match simplego's within the bound below on every assembly
//     kernel the CPU runs, and the kernels agree bit for bit. Otherwise it
//     changes nothing and says why (package model says it once on stderr).
//   - The replacements run only for backends passed to Enable, with the
//     kernel given there (Kernel reports it), and only for float32; every
//     other backend, dtype or call runs simplego's own code.
//
// Operands are read in place whenever their batch, free and contracting
// axes each collapse to one stride (every layout a dense layer and its
// gradients produce: transposes, batch axes anywhere, contraction on either
// side); other layouts are first copied into simplego's normalized
// [batch, free, contracting] order. The output is [batch, lhs free, rhs
// free], as simplego's.
//
// Accuracy: each output element is a float32 dot product accumulated with
// fused multiply-adds; simplego's own kernel accumulates with separate
// multiplies and adds. Each meets |c − a·b| ≤ γ_K·Σ|a_k·b_k| with
// γ_K = K·u/(1 − K·u), u = 2⁻²⁴, so the two differ by at most 2·γ_K·Σ|a_k·b_k|
// per element (the tolerance of this package's tests). Results are
// deterministic and do not depend on the batch size, the thread count or
// an element's position (see package sgemm).
package simplegofast
