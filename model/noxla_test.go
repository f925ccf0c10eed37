//go:build !cgo || noxla

package model

// xlaAvailable: this test binary has no XLA backend (backend_noxla.go).
const xlaAvailable = false
