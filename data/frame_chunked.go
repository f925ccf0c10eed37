package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Chunked is a frame made a range of rows at a time, for writing a file
// whose columns need not be held whole (a simulation release's row
// numbers: 80 MB at 10M rows). Chunk(lo, hi) returns rows [lo, hi) with
// the same columns for every range (Chunk(0, 0) gives the schema);
// written, it gives the bytes WriteFrame gives for the whole frame.
type Chunked struct {
	Rows int
	// Chunk returns rows [lo, hi). Its consumer is done with a range
	// before it asks for the next, so Chunk may make each range in the
	// arrays of the last.
	Chunk func(lo, hi int) *Frame
}

// Whole is f as a Chunked (its slices, sharing f's arrays).
func Whole(f *Frame) Chunked { return Chunked{Rows: f.Rows, Chunk: f.Slice} }

// writeChunks writes c to w in record batches of maxBatchRows, asking c
// for one batch at a time.
func (w *Writer) writeChunks(c Chunked) error {
	if c.Rows == 0 {
		return w.Write(c.Chunk(0, 0))
	}
	for lo := 0; lo < c.Rows; lo += maxBatchRows {
		if err := w.Write(c.Chunk(lo, min(lo+maxBatchRows, c.Rows))); err != nil {
			return err
		}
	}
	return nil
}

// FrameSHA256 returns the hex SHA-256 of the Arrow IPC file that
// WriteFrame would write for f and meta, writing nothing: the writer is
// deterministic, so a write-ahead log can record a file's digest before a
// byte of it exists (WriteFrameAfter then hands over the written file's
// digest to check).
func FrameSHA256(f *Frame, meta map[string]string) (string, error) {
	return ChunkedSHA256(Whole(f), meta)
}

// ChunkedSHA256 is FrameSHA256 of the frame c makes, a chunk at a time.
func ChunkedSHA256(c Chunked, meta map[string]string) (string, error) {
	first := c.Chunk(0, 0)
	if err := checkMetaClasses(first, meta); err != nil {
		return "", err
	}
	schema := Schema(first, meta)
	if schema.NumFields() == 0 {
		return "", fmt.Errorf("%w: a frame with no columns", ErrSchema)
	}
	h := sha256.New()
	w, err := ipc.NewFileWriter(h, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return "", err
	}
	fw := &Writer{path: "(digest)", w: w, schema: schema, classes: first.NumClasses()}
	if err := fw.writeChunks(c); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// WriteChunkedAfter is WriteFrameAfter of the frame c makes, a chunk at a
// time (the same bytes).
func WriteChunkedAfter(path string, c Chunked, meta map[string]string, before func(sha256 string) error) error {
	w, err := NewWriter(path, c.Chunk(0, 0), meta)
	if err != nil {
		return err
	}
	if err := w.writeChunks(c); err != nil {
		w.Abort()
		return err
	}
	return w.CommitAfter(before)
}
