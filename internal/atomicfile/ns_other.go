//go:build !linux

package atomicfile

func pidNamespace() string { return "" }
