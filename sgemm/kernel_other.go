//go:build !amd64 || purego

package sgemm

// Only amd64 has the assembly kernels.
const (
	hasAVX2   = false
	hasAVX512 = false
)

func kern6x16(kb int, a *float32, ars, aks, apan int, b *float32, bks int, c *float32, ldc, tiles int, acc bool) {
	panic("sgemm: no assembly kernel")
}

func kern12x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool) {
	panic("sgemm: no assembly kernel")
}

func kern12x16(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool) {
	panic("sgemm: no assembly kernel")
}

func kern6x32(kb int, a *float32, ars, aks, apan int, b *float32, bks, bpan int, c *float32, ldc, tiles int, acc bool) {
	panic("sgemm: no assembly kernel")
}

func copyRows16(dst, src *float32, ld, n int) { panic("sgemm: no assembly kernel") }
func copyRows6(dst, src *float32, ld, n int)  { panic("sgemm: no assembly kernel") }

func dot12(kb int, a *float32, aks int, b *float32, bcs int, c *float32) {
	panic("sgemm: no assembly kernel")
}

func outer(m, n int, a *float32, ars int, b *float32, c *float32, ldc int) {
	panic("sgemm: no assembly kernel")
}

func gemv96(kb int, a *float32, aks int, b *float32, bks int, c *float32) {
	panic("sgemm: no assembly kernel")
}

func gemv8(kb int, a *float32, aks int, b *float32, bks int, c *float32) {
	panic("sgemm: no assembly kernel")
}
