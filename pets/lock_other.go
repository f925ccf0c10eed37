//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package pets

import "os"

// lockFile is a no-op where flock(2) is unavailable: appends stay single
// O_APPEND writes, but concurrent processes may race the newline check.
func lockFile(f *os.File) error { return nil }
