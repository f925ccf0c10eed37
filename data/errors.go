package data

import (
	"errors"
	"io/fs"
	"strings"
)

// fileError is an error about one file, printed "data: <path>: <err>"
// without repeating what err already says: a *fs.PathError of the same path
// names it already, and this package's sentinels already start with
// "data: ".
type fileError struct {
	path string
	err  error
}

func (e *fileError) Error() string {
	var pe *fs.PathError
	if errors.As(e.err, &pe) && pe.Path == e.path {
		return "data: " + e.err.Error()
	}
	return "data: " + e.path + ": " + strings.TrimPrefix(e.err.Error(), "data: ")
}

func (e *fileError) Unwrap() error { return e.err }

// inFile wraps err (nil stays nil) as an error about the file at path.
func inFile(path string, err error) error {
	if err == nil {
		return nil
	}
	return &fileError{path: path, err: err}
}
