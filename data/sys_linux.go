package data

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

// physicalMemory returns the machine's RAM in bytes (0 if unknown).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// statKey identifies the current version of the file at path for the
// identity cache; known is false when it cannot be read.
func statKey(path string) (k fileKey, known bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileKey{}, false
	}
	return fileKey{Size: st.Size, MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(), Dev: uint64(st.Dev), Ino: st.Ino}, true
}

// exchangeDirs atomically swaps the directories tmp (the new dataset) and
// out (the old one), returning where the old one now is (tmp). Filesystems
// without RENAME_EXCHANGE fall back to renameDirs.
func exchangeDirs(tmp, out string) (string, error) {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, out, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) {
		return renameDirs(tmp, out)
	}
	if err != nil {
		return "", err
	}
	return tmp, nil
}
