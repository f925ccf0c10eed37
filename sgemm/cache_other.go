//go:build !amd64 || purego

package sgemm

// l2Bytes is 0 (unknown) where the package does not read CPUID.
func l2Bytes() int { return 0 }
