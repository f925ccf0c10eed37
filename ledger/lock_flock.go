//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ledger

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive (or shared) flock(2) on f, released when f is
// closed.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
