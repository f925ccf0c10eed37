//go:build !unix

package model

import "time"

// processCPU is not measured outside Unix (see cputime_unix.go).
func processCPU() time.Duration { return 0 }
