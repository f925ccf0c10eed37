//go:build unix

package faultpoint

import "syscall"

func kill() {
	syscall.Kill(syscall.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously
}
