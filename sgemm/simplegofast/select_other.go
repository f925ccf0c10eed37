//go:build !amd64 || purego

package simplegofast

// selectAVX2 is a no-op off amd64 (the package does not install there).
func selectAVX2(o []float32, c []bool, t, f []float32) int { return 0 }

// geAVX2 is a no-op off amd64.
func geAVX2(dst []bool, x []float32, c float32) int { return 0 }
