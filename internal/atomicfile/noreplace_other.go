//go:build !linux

package atomicfile

import "errors"

func renameNoReplace(tmp, path string) error { return errors.ErrUnsupported }
