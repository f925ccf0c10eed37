package memctl

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Limit is the memory this process can still use and the limit that sets
// it: the smallest of Linux's MemAvailable, what the cgroup's limit leaves,
// and what the address-space limit (RLIMIT_AS, `ulimit -v`) leaves.
type Limit struct {
	Bytes int64 // what is left, ≥ 0
	By    Bound // the limit that leaves the least
	// Cap is that limit's own value in bytes (the cgroup's memory.max, the
	// rlimit; MemAvailable for the machine).
	Cap int64
}

// Bound names the limit a Limit comes from.
type Bound uint8

// The limits Headroom reads.
const (
	ByMachine Bound = iota // MemAvailable: free memory plus what the kernel can reclaim
	ByCgroup               // the cgroup's memory.max (v2) or limit_in_bytes (v1), less its usage
	ByRlimit               // RLIMIT_AS (ulimit -v), less this process's mapped address space (VmSize)
)

// Where says in words which limit leaves l.Bytes (size formats bytes):
// "of memory available on this machine", "available under this process's
// cgroup memory limit of 8 GB (memory.max)", "of address space available
// under this process's limit RLIMIT_AS of 8.19 GB (ulimit -v 8000000)".
func (l Limit) Where(size func(float64) string) string {
	switch l.By {
	case ByCgroup:
		return fmt.Sprintf("available under this process's cgroup memory limit of %s (memory.max)", size(float64(l.Cap)))
	case ByRlimit:
		return fmt.Sprintf("of address space available under this process's limit RLIMIT_AS of %s (ulimit -v %d)", size(float64(l.Cap)), l.Cap>>10)
	}
	return "of memory available on this machine"
}

// Headroom is the memory this process can still use (Limit); ok is false
// where MemAvailable cannot be read (then nothing is known).
func Headroom() (l Limit, ok bool) {
	avail, ok := meminfo("MemAvailable")
	if !ok {
		return Limit{}, false
	}
	l = Limit{Bytes: avail, By: ByMachine, Cap: avail}
	if limit, used, ok := cgroupMemory(); ok && limit-used < l.Bytes {
		l = Limit{Bytes: max(0, limit-used), By: ByCgroup, Cap: limit}
	}
	if limit, ok := addressSpaceLimit(); ok {
		used, _ := selfStatus("VmSize") // unknown: 0, the limit itself bounds what can be mapped
		if limit-used < l.Bytes {
			l = Limit{Bytes: max(0, limit-used), By: ByRlimit, Cap: limit}
		}
	}
	return l, true
}

// Available is Headroom's bytes.
func Available() (bytes int64, ok bool) {
	l, ok := Headroom()
	return l.Bytes, ok
}

// meminfo reads a /proc/meminfo field (kB) in bytes.
func meminfo(field string) (int64, bool) { return procField("/proc/meminfo", field) }

// selfStatus reads a /proc/self/status field (kB) in bytes.
func selfStatus(field string) (int64, bool) { return procField("/proc/self/status", field) }

// procField reads a "Name:  N kB" field of a /proc file in bytes.
func procField(path, field string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		return v << 10, err == nil
	}
	return 0, false
}

// cgroupMemory reads the process's cgroup memory limit and usage (v2, else
// v1); ok is false without a limit.
func cgroupMemory() (limit, used int64, ok bool) {
	for _, p := range [][2]string{
		{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
		{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
	} {
		l, lok := readInt(p[0])
		u, uok := readInt(p[1])
		if lok && uok && l > 0 && l < 1<<60 {
			return l, u, true
		}
	}
	return 0, 0, false
}

func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64) // "max" fails: no limit
	return v, err == nil
}
