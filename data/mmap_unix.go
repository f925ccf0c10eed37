//go:build linux || darwin || freebsd

package data

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of fh read-only (nil, error where it
// cannot: the reader then reads with ReadAt).
func mapFile(fh *os.File, size int64) ([]byte, error) {
	if size <= 0 || size != int64(int(size)) {
		return nil, errNoMap
	}
	return unix.Mmap(int(fh.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}

func unmapFile(b []byte) { unix.Munmap(b) }

// dropPages tells the kernel the process is done with b's pages for now:
// they leave its resident set (a file mapping's pages stay in the page
// cache, and a later read maps them again, with the file's bytes).
func dropPages(b []byte) { unix.Madvise(b, unix.MADV_DONTNEED) }
