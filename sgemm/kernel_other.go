//go:build !amd64 || purego

package sgemm

// useAsm is false: only amd64 has the assembly kernel.
var useAsm = false

func kern6x16(kb int, a *float32, ars, aks int, b *float32, bks int, c *float32, ldc int, acc bool) {
	panic("sgemm: no assembly kernel")
}

func copyRows16(dst, src *float32, ld, n int) { panic("sgemm: no assembly kernel") }
func copyRows6(dst, src *float32, ld, n int)  { panic("sgemm: no assembly kernel") }
