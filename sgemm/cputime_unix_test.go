//go:build unix

package sgemm

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the process has used so far.
func processCPU() time.Duration {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
