//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// hasAVX2 and hasAVX512 say which assembly kernels this CPU runs
// (cpu.X86.HasAVX2 and HasAVX512F also check that the OS saves the ymm and
// zmm registers).
var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = hasAVX2 && cpu.X86.HasAVX512F
)

// kern6x16 is the AVX2 kernel's assembly body (kernel_amd64.s): a strip
// of `tiles` 6×16 tiles, A panels apan elements apart, against one B panel.
//
//go:noescape
func kern6x16(kb int, a *float32, ars, aks, apan int, b *float32, bks int, c *float32, ldc, tiles int, acc bool)

// kern12x32, kern12x16 and kern6x32 are the AVX-512 kernels
// (kernel512_amd64.s): two A panels apan elements apart (12 rows) and/or
// two B panels bpan elements apart (32 columns), a strip of `tiles` tiles
// down C.
//
//go:noescape
func kern12x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)

//go:noescape
func kern12x16(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)

//go:noescape
func kern6x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool)

// copyRows16 and copyRows6 copy n rows of 16 (6) floats from src, rows ld
// elements apart, to consecutive rows of dst (kernel_amd64.s; SSE2/AVX).
//
//go:noescape
func copyRows16(dst, src *float32, ld, n int)

//go:noescape
func copyRows6(dst, src *float32, ld, n int)

// dot12 computes 12 dot products of A's row with B's columns, each
// contiguous in k (kernel_amd64.s; FMA3 scalar).
//
//go:noescape
func dot12(kb int, a *float32, aks int, b *float32, bcs int, c *float32)

// outer, gemv96 and gemv8 are the logit layer's products (gemv_amd64.s;
// AVX2/FMA): C(i, j) = a[i·ars]·b[j] for K = 1, and 96 (8) columns of a
// one-row product, B's rows bks apart.
//
//go:noescape
func outer(m, n int, a *float32, ars int, b *float32, c *float32, ldc int)

//go:noescape
func gemv96(kb int, a *float32, aks int, b *float32, bks int, c *float32)

//go:noescape
func gemv8(kb int, a *float32, aks int, b *float32, bks int, c *float32)
