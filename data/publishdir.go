package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"labelprivacy/internal/atomicfile"
)

// A dataset directory is published as a whole: an import or a synthesis
// writes a complete new directory next to its target (a temporary named as
// in atomic.go) and then puts it in place in one step, so no kill leaves a
// directory mixing files of two datasets. Over an existing dataset the
// step is an atomic exchange of the two directories (Linux renameat2
// RENAME_EXCHANGE; elsewhere two renames, between which a kill leaves the
// old dataset intact under its temporary name and no dataset at the
// target). Regular files of the old directory that are not dataset files —
// the privacy ledger and its key, which stay with the raw data — are
// hard-linked into the new directory before the exchange, so they keep
// their inode (an open ledger keeps working) and are never missing.

// datasetFile reports whether name is a file a dataset write owns: its
// data files, meta.json, the identity cache and temporaries.
func datasetFile(name string) bool {
	switch name {
	case TrainFile, TestFile, "train.parquet", "test.parquet", MetaFile, identityCacheFile:
		return true
	}
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// publishDataset runs build on a new temporary directory next to out and
// puts the result in place at out (see above). On error nothing at out
// changes and the temporary is removed.
func publishDataset(out string, build func(dir string) (*Meta, error)) (*Meta, error) {
	tmp, m, err := stageDataset(out, build)
	if err != nil {
		return nil, err
	}
	if err := placeDataset(out, tmp); err != nil {
		return nil, err
	}
	return m, nil
}

// stageDataset runs build on a new temporary directory next to out and
// returns it, complete; nothing at out changes. On error the temporary is
// removed.
func stageDataset(out string, build func(dir string) (*Meta, error)) (string, *Meta, error) {
	out = filepath.Clean(out)
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, fmt.Errorf("data: %w", err)
	}
	if st, err := os.Stat(out); err == nil && !st.IsDir() {
		return "", nil, fmt.Errorf("data: %s exists and is not a directory", out)
	}
	atomicfile.RemoveStale(out)
	tmp, err := os.MkdirTemp(parent, atomicfile.TempPrefix(out)+atomicfile.Owner+"*")
	if err != nil {
		return "", nil, fmt.Errorf("data: %w", err)
	}
	m, err := build(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", nil, fmt.Errorf("data: %w", err)
	}
	return tmp, m, nil
}

// placeDataset puts the complete dataset directory tmp (stageDataset's) in
// place at out (see above). On error nothing at out changes and tmp is
// removed.
func placeDataset(out, tmp string) error {
	out = filepath.Clean(out)
	parent := filepath.Dir(out)
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	switch err := os.Rename(tmp, out); {
	case err == nil: // out did not exist, or was an empty directory
		done = true
		syncDir(parent)
		return nil
	case !errors.Is(err, fs.ErrExist) && !isNotEmpty(err):
		return fmt.Errorf("data: %s: %w", out, err)
	}
	if err := linkExtras(out, tmp); err != nil {
		return err
	}
	old, err := exchangeDirs(tmp, out)
	if err != nil {
		return fmt.Errorf("data: putting the new dataset in place at %s: %w", out, err)
	}
	done = true
	syncDir(parent)
	// old holds the previous dataset. A file created there meanwhile (a
	// first ledger row) joins the new directory before the old one goes.
	if err := linkExtras(old, out); err != nil {
		return fmt.Errorf("%w (the previous dataset is kept at %s)", err, old)
	}
	os.RemoveAll(old)
	return nil
}

// StagedDataset is a complete dataset directory written next to its
// target and not yet in place there: a caller reads it (LoadWith on Dir)
// and checks it before deciding, then Publish puts it in place at Out as
// Synth would have, or Discard removes it, leaving Out as it was. Frames
// loaded from Dir stay valid through Publish (its files keep their inodes).
type StagedDataset struct {
	// Out is where Publish puts the dataset; Dir is where it is meanwhile
	// (a temporary next to Out, removed by the stale-temporary cleanup if
	// its process dies).
	Out, Dir string
	Meta     *Meta
}

// Publish puts the staged dataset in place at Out (an existing dataset
// there is replaced in one step, its non-dataset files kept: see
// publishDataset). On error Out is unchanged and the staged directory is
// removed.
func (st *StagedDataset) Publish() error {
	if st.Dir == "" {
		return fmt.Errorf("data: %s: staged dataset already published or discarded", st.Out)
	}
	dir := st.Dir
	st.Dir = ""
	return placeDataset(st.Out, dir)
}

// Discard removes the staged dataset (nothing after Publish).
func (st *StagedDataset) Discard() error {
	if st == nil || st.Dir == "" {
		return nil
	}
	dir := st.Dir
	st.Dir = ""
	return os.RemoveAll(dir)
}

func isNotEmpty(err error) bool { return errors.Is(err, syscall.ENOTEMPTY) }

// renameDirs is exchangeDirs where the system has no atomic exchange: the
// old directory first moves to a name that no cleanup removes
// (<out>.previous-<pid>), then the new one into place. A kill between the
// two leaves the old dataset complete under that name.
func renameDirs(tmp, out string) (string, error) {
	old := fmt.Sprintf("%s.previous-%d", out, os.Getpid())
	if err := os.Rename(out, old); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, out); err != nil {
		if rerr := os.Rename(old, out); rerr != nil {
			return "", fmt.Errorf("%w (and the previous dataset stays at %s: %v)", err, old, rerr)
		}
		return "", err
	}
	return old, nil
}

// linkExtras hard-links every regular non-dataset file of from into to
// (keeping one already there). A non-dataset entry that is not a regular
// file (a directory, a link) is an error naming it: it would be lost.
func linkExtras(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return fmt.Errorf("data: %w", err)
	}
	for _, e := range entries {
		if datasetFile(e.Name()) {
			continue
		}
		src := filepath.Join(from, e.Name())
		if !e.Type().IsRegular() {
			return fmt.Errorf("data: %s is not a file of a dataset: move it out of the directory, or write the dataset to another one", src)
		}
		dst := filepath.Join(to, e.Name())
		if err := os.Link(src, dst); err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("data: keeping %s with the new dataset: %w", src, err)
		}
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
