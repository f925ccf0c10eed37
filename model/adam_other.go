//go:build !amd64 || purego

package model

// adamVector does nothing off amd64 (adamRange's loop does all).
func adamVector(p, m, v, g []float32, c *[8]float32) int { return 0 }

// lazyAdamVector does nothing off amd64.
func lazyAdamVector(p, m, v, g []float32, c *[8]float32) int { return 0 }
