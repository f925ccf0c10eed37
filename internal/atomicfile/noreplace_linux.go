package atomicfile

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames tmp to path unless path exists (renameat2 with
// RENAME_NOREPLACE; an error wrapping fs.ErrExist); errors.ErrUnsupported
// where the filesystem or kernel lacks it.
func renameNoReplace(tmp, path string) error {
	err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, path, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.ENOTSUP):
		return errors.ErrUnsupported
	}
	return fmt.Errorf("rename %s %s: %w", tmp, path, err) // EEXIST is fs.ErrExist
}
