package data

import "labelprivacy/internal/atomicfile"

// WriteChunkedNewAfter is WriteChunkedAfter that never replaces a file: the
// written file is put in place only if nothing is at path by then
// (atomicfile.CommitExclusive), else the error wraps fs.ErrExist and what
// is at path stays as it is (two releases started at once to one new path:
// exactly one lands). before runs as for CommitAfter.
func WriteChunkedNewAfter(path string, c Chunked, meta map[string]string, before func(sha256 string) error) error {
	w, err := NewWriter(path, c.Chunk(0, 0), meta)
	if err != nil {
		return err
	}
	if err := w.writeChunks(c); err != nil {
		w.Abort()
		return err
	}
	return w.commitNewAfter(before)
}

// commitNewAfter is CommitAfter with atomicfile.CommitExclusive for its
// rename.
func (w *Writer) commitNewAfter(before func(sha256 string) error) error {
	return w.finish(before, atomicfile.CommitExclusive)
}
