package atomicfile

import (
	"os"
	"strings"
)

// pidNamespace identifies the pid namespace we run in ("" if unknown), so
// that containers sharing a host name never judge each other's pids.
func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid") // "pid:[4026531836]"
	if err != nil {
		return ""
	}
	return strings.Trim(strings.TrimPrefix(l, "pid:"), "[]")
}
