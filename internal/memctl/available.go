package memctl

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// Available is the memory this process can still use, in bytes: Linux's
// MemAvailable (free memory plus what the kernel can reclaim), lowered to
// what the cgroup (v2 memory.max, v1 limit_in_bytes) leaves when the
// process runs in a container. ok is false where it cannot be read.
func Available() (bytes int64, ok bool) {
	avail, ok := meminfo("MemAvailable")
	if !ok {
		return 0, false
	}
	if limit, used, ok := cgroupMemory(); ok && limit-used < avail {
		avail = max(0, limit-used)
	}
	return avail, true
}

// meminfo reads a /proc/meminfo field (kB) in bytes.
func meminfo(field string) (int64, bool) {
	f, err := os.Open("/proc/meminfo")
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
