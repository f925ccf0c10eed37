//go:build amd64 && !purego

package simplegofast

//go:noescape
func selectFullScalarAVX2(o, t *float32, c *bool, f float32, n int)

//go:noescape
func selectFullFullAVX2(o, t, f *float32, c *bool, n int)

// selectAVX2 does the multiple-of-8 head of selectF32's two common forms
// (the package installs only on AVX2 CPUs) and returns how many it did.
func selectAVX2(o []float32, c []bool, t, f []float32) int {
	n := len(o) &^ 7
	if n == 0 || len(t) != len(o) {
		return 0
	}
	_, _ = c[n-1], t[n-1]
	switch {
	case len(f) == len(o):
		_ = f[n-1]
		selectFullFullAVX2(&o[0], &t[0], &f[0], &c[0], n)
	case len(f) == 1:
		selectFullScalarAVX2(&o[0], &t[0], &c[0], f[0], n)
	default:
		return 0
	}
	return n
}

//go:noescape
func geScalarAVX2(dst *bool, x *float32, c float32, n int, table *[256]uint64)

// bitsToBytes[m] holds bit i of m as byte i (0 or 1).
var bitsToBytes = func() (t [256]uint64) {
	for m := range t {
		for i := range 8 {
			t[m] |= uint64(m>>i&1) << (8 * i)
		}
	}
	return t
}()

// geAVX2 does the multiple-of-8 head of geScalar and returns its length.
func geAVX2(dst []bool, x []float32, c float32) int {
	n := len(x) &^ 7
	if n == 0 {
		return 0
	}
	_ = dst[n-1]
	geScalarAVX2(&dst[0], &x[0], c, n, &bitsToBytes)
	return n
}
