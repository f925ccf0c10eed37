package data

import (
	"os"
	"strings"
	"syscall"
)

// physicalMemory returns the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// pidNamespace identifies the pid namespace we run in ("" if unknown), so
// that containers sharing a host name never judge each other's pids.
func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(l, "pid:"), "[]")
}
