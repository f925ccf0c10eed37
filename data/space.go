package data

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// SpaceError reports that an output would not fit on its filesystem.
type SpaceError struct {
	Dir  string // the directory checked (the output's nearest existing one)
	Need int64  // bytes the output needs, margin included
	Free int64  // bytes free for an unprivileged writer
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("data: %s: the output needs about %s (%d bytes, margin included) but only %s (%d bytes) are free",
		e.Dir, humanBytes(e.Need), e.Need, humanBytes(e.Free), e.Free)
}

func (e *SpaceError) Unwrap() error { return ErrNoSpace }

// Space margin, for the estimate's error and for whatever else writes to
// the filesystem meanwhile: 5% of the estimate plus as much again as the
// estimate, at least 1 MiB (file system blocks, meta.json) and at most
// 64 MiB. A 1 MB dataset needs about 2.1 MB; a 10 GB one 10.5 GB + 64 MiB.
const (
	spaceMarginFrac     = 0.05
	spaceMarginMinBytes = 1 << 20
	spaceMarginMaxBytes = 64 << 20
)

// spaceNeeded is what an output estimated at est bytes needs free, margin
// included.
func spaceNeeded(est float64) float64 {
	return est*(1+spaceMarginFrac) + min(spaceMarginMaxBytes, max(spaceMarginMinBytes, est))
}

// checkSpace fails with a *SpaceError when est bytes (plus the margin) do
// not fit in the free space of out's filesystem. Where free space cannot be
// known, it does not fail.
func checkSpace(out string, est float64) error {
	dir := filepath.Clean(out)
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
	return fitsIn(dir, est, diskFree(dir))
}

// fitsIn fails with a *SpaceError when est bytes (plus the margin) do not
// fit in free bytes of dir's filesystem (free < 0: unknown, no failure).
func fitsIn(dir string, est float64, free int64) error {
	if free < 0 {
		return nil
	}
	need := spaceNeeded(est)
	if need <= float64(free) {
		return nil
	}
	return &SpaceError{Dir: dir, Need: int64(min(need, math.MaxInt64)), Free: free}
}

// humanBytes formats n as "12.3 GB" (decimal units, as df -H).
func humanBytes(n int64) string {
	v := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB", "TB"} {
		if v < 1000 {
			return fmt.Sprintf("%.3g %s", v, u)
		}
		v /= 1000
	}
	return fmt.Sprintf("%.3g PB", v)
}
