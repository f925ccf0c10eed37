//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package atomicfile

import (
	"errors"
	"syscall"
)

// ProcessAlive reports whether a process with this pid exists in our pid
// namespace (signal 0 checks existence; EPERM means it exists under another
// user). A pid it cannot judge (≤ 0) counts as alive.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
