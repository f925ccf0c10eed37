//go:build unix

package offheap

import "golang.org/x/sys/unix"

func mapAnon(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
}

func unmap(mem []byte) {
	if mem != nil {
		unix.Munmap(mem)
	}
}

func dropPages(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }

// protectNone makes mem inaccessible: any access faults.
func protectNone(mem []byte) error { return unix.Mprotect(mem, unix.PROT_NONE) }
