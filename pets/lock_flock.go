//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package pets

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on f, released when f is closed.
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}
