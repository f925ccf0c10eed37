//go:build linux || darwin || freebsd

package data

import (
	"errors"
	"syscall"
)

// diskFree returns the bytes available to an unprivileged writer on the
// filesystem holding dir, or -1 if unknown.
func diskFree(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize))
}

// processAlive reports whether a process with this pid exists in our pid
// namespace (signal 0 checks existence; EPERM means it exists under another
// user).
func processAlive(pid int) bool {
	if pid <= 0 {
		return true // not a pid we can judge: keep its files
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
