//go:build unix

package model

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used so far,
// or 0 where it cannot be read.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
