//go:build cgo && !noxla

package model

// xlaAvailable: this test binary has the XLA backend (backend_xla.go).
const xlaAvailable = true
