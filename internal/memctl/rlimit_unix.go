//go:build unix

package memctl

import "syscall"

// addressSpaceLimit is the soft RLIMIT_AS (`ulimit -v`) in bytes; ok is
// false when there is none (RLIM_INFINITY) or it cannot be read.
func addressSpaceLimit() (int64, bool) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur >= 1<<62 {
		return 0, false
	}
	return int64(r.Cur), true
}
