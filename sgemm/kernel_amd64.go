//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2/FMA micro-kernel (cpu.X86.HasAVX2 also checks
// that the OS saves the ymm registers).
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern6x16 is kernel's assembly body (kernel_amd64.s).
//
//go:noescape
func kern6x16(kb int, a *float32, ars, aks int, b *float32, bks int, c *float32, ldc int, acc bool)

// copyRows16 and copyRows6 copy n rows of 16 (6) floats from src, rows ld
// elements apart, to consecutive rows of dst (kernel_amd64.s; SSE2/AVX).
//
//go:noescape
func copyRows16(dst, src *float32, ld, n int)

//go:noescape
func copyRows6(dst, src *float32, ld, n int)
