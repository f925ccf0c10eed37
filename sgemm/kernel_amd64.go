//go:build amd64 && !purego

package sgemm

import "golang.org/x/sys/cpu"

// useAsm selects the AVX2/FMA micro-kernel (cpu.X86.HasAVX2 also checks
// that the OS saves the ymm registers).
var useAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// kern6x16 is kernel's assembly body (kernel_amd64.s).
//
//go:noescape
func kern6x16(kb int, a, b, c *float32, ldc int, acc bool)
