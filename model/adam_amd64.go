//go:build amd64 && !purego

package model

import "labelprivacy/sgemm"

//go:noescape
func adamAVX2(p, m, v, grad *float32, n int, c *[8]float32)

// adamVector runs adamRange's multiple-of-8 head with AVX (when the CPU
// has AVX2, as sgemm reports) and returns how many values it did. The
// eight-lane square root and division are correctly rounded like the
// scalar ones, so the bits are the same.
func adamVector(p, m, v, g []float32, c *[8]float32) int {
	n := len(g) &^ 7
	if n == 0 || !sgemm.HasAVX2() {
		return 0
	}
	_, _, _ = p[n-1], m[n-1], v[n-1]
	adamAVX2(&p[0], &m[0], &v[0], &g[0], n, c)
	return n
}

//go:noescape
func lazyAdamAVX2(p, m, v, grad *float32, n int, c *[8]float32)

// lazyAdamVector runs the multiple-of-8 head of adamRows' row loop with
// AVX and returns how many values it did (same bits, see adamVector).
func lazyAdamVector(p, m, v, g []float32, c *[8]float32) int {
	n := len(g) &^ 7
	if n == 0 || !sgemm.HasAVX2() {
		return 0
	}
	_, _, _ = p[n-1], m[n-1], v[n-1]
	lazyAdamAVX2(&p[0], &m[0], &v[0], &g[0], n, c)
	return n
}
