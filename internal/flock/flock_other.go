//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package flock

import (
	"errors"
	"os"
)

var errWouldBlock = errors.New("would block")

// lock is a no-op where flock(2) is unavailable.
func lock(*os.File, Mode, bool) error { return nil }
