//go:build !linux

package model

// adviseHugePages is a no-op outside Linux (see hugepages_linux.go).
func adviseHugePages([]float32) {}
