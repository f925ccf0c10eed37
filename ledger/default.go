package ledger

import (
	"errors"
	"path/filepath"
)

// File is the conventional file name of a privacy ledger.
const File = "privacy_ledger.csv"

// DefaultDir is the folder of the user's default ledger below the XDG data
// directory.
const DefaultDir = "labelprivacy"

// DefaultPath returns the user's default ledger: File in
// $XDG_DATA_HOME/labelprivacy, or in ~/.local/share/labelprivacy when
// XDG_DATA_HOME is unset or not absolute (as the XDG Base Directory
// specification says). lookup reads the environment (os.LookupEnv). One
// default per user, with one key, is what makes every release of the same
// people compose, whatever folder, copy, link or re-import it was made
// from.
func DefaultPath(lookup func(string) (string, bool)) (string, error) {
	if d, ok := lookup("XDG_DATA_HOME"); ok && filepath.IsAbs(d) {
		return filepath.Join(d, DefaultDir, File), nil
	}
	if h, ok := lookup("HOME"); ok && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "share", DefaultDir, File), nil
	}
	return "", errors.New("ledger: no default privacy ledger: neither XDG_DATA_HOME nor HOME is set to an absolute path; name a ledger (--ledger)")
}
