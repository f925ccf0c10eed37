//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package flock

import (
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

func lock(f *os.File, m Mode, wait bool) error {
	how := syscall.LOCK_SH
	if m == Exclusive {
		how = syscall.LOCK_EX
	}
	if !wait {
		how |= syscall.LOCK_NB
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			return err
		}
	}
}
