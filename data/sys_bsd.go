//go:build darwin || freebsd

package data

func physicalMemory() int64 { return 0 }
func pidNamespace() string  { return "" }
