package data

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"labelprivacy/internal/atomicfile"
)

// maxBatchRows bounds the rows of one Arrow record batch we write (1<<20 ≈
// 110 MiB of Higgs features): large enough for fast reads, small enough that
// list offsets (int32) never overflow for KDD-like rows.
const maxBatchRows = 1 << 20

// Schema returns the Arrow schema of frames with f's columns, carrying meta
// as schema metadata (keys sorted for byte-stable files) and, for C ≥ 3
// classes, "classes" (MetaClasses).
func Schema(f *Frame, meta map[string]string) *arrow.Schema {
	var fields []arrow.Field
	if c := firstColumn(f); c != nil {
		fields = append(fields, arrow.Field{Name: ColLabel, Type: c.dataType()})
	}
	for _, name := range f.Features {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float32})
	}
	if f.Offsets != nil {
		fields = append(fields, arrow.Field{Name: ColIndices, Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Uint32)})
	}
	for _, k := range f.Keys {
		fields = append(fields, arrow.Field{Name: k.Name, Type: arrow.PrimitiveTypes.Int64})
	}
	for _, c := range tailColumns {
		if c.present(f) {
			fields = append(fields, arrow.Field{Name: c.name(), Type: c.dataType()})
		}
	}
	fields = append(fields, classFields(f)...)
	md := sortedMetadata(withClasses(f, meta))
	return arrow.NewSchema(fields, &md)
}

// withClasses returns meta with "classes" set for a frame of C ≥ 3 classes
// (a copy; meta itself when binary, so binary files do not change).
func withClasses(f *Frame, meta map[string]string) map[string]string {
	if f.NumClasses() < 3 {
		return meta
	}
	m := make(map[string]string, len(meta)+1)
	maps.Copy(m, meta)
	m[MetaClasses] = strconv.Itoa(f.NumClasses())
	return m
}

// checkMetaClasses refuses schema metadata whose "classes" is not the
// frame's number of classes.
func checkMetaClasses(f *Frame, meta map[string]string) error {
	if v, ok := meta[MetaClasses]; ok && v != strconv.Itoa(f.NumClasses()) {
		return fmt.Errorf("%w: metadata %q is %q for a frame of %d classes", ErrSchema, MetaClasses, v, f.NumClasses())
	}
	return nil
}

// sortedMetadata returns m as Arrow metadata with its keys sorted, so that
// equal maps give byte-identical files.
func sortedMetadata(m map[string]string) arrow.Metadata {
	keys := slices.Sorted(maps.Keys(m))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = m[k]
	}
	return arrow.NewMetadata(keys, vals)
}

// bytesOf views a numeric slice as bytes without copying.
func bytesOf[T uint8 | uint32 | int32 | int64 | uint64 | float32 | float64](v []T) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// primArray wraps v as an Arrow array without copying; v must stay alive and
// unmodified until the array is released.
func primArray[T uint8 | uint32 | int64 | uint64 | float32 | float64](dt arrow.DataType, v []T) arrow.Array {
	d := array.NewData(dt, len(v), []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(v))}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// record builds one record batch from f (f.Rows ≤ maxBatchRows). Dense
// features are transposed into fresh column slices; other columns are shared.
func record(schema *arrow.Schema, f *Frame) (arrow.RecordBatch, error) {
	var cols []arrow.Array
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	if c := firstColumn(f); c != nil {
		cols = append(cols, c.array(f))
	}
	d := f.Dim()
	for j := range d {
		col := make([]float32, f.Rows)
		for i := range col {
			col[i] = f.X[i*d+j]
		}
		cols = append(cols, primArray(arrow.PrimitiveTypes.Float32, col))
	}
	if f.Offsets != nil {
		base := f.Offsets[0]
		if f.Offsets[f.Rows]-base > int64(^uint32(0)>>1) {
			return nil, fmt.Errorf("%w: %d sparse indices in one batch overflow int32 offsets", ErrSchema, f.Offsets[f.Rows]-base)
		}
		off := make([]int32, f.Rows+1)
		for i := range off {
			off[i] = int32(f.Offsets[i] - base)
		}
		vals := primArray(arrow.PrimitiveTypes.Uint32, f.Indices[base:f.Offsets[f.Rows]])
		lt := arrow.ListOfNonNullable(arrow.PrimitiveTypes.Uint32)
		ld := array.NewData(lt, f.Rows, []*memory.Buffer{nil, memory.NewBufferBytes(bytesOf(off))}, []arrow.ArrayData{vals.Data()}, 0, 0)
		vals.Release()
		cols = append(cols, array.MakeFromData(ld))
		ld.Release()
	}
	for _, k := range f.Keys {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Int64, k.Values))
	}
	for _, c := range tailColumns {
		if c.present(f) {
			cols = append(cols, c.array(f))
		}
	}
	cols = append(cols, classArrays(f)...)
	if len(cols) != len(schema.Fields()) {
		return nil, fmt.Errorf("%w: frame has %d columns, schema %d", ErrSchema, len(cols), len(schema.Fields()))
	}
	return array.NewRecordBatch(schema, cols, int64(f.Rows)), nil
}

// Writer writes frames as record batches of one Arrow IPC file. Output goes
// to a temporary file in the destination directory; Commit renames it into
// place, Abort (or a crash) leaves the destination untouched.
type Writer struct {
	path    string
	tmp     *os.File
	w       *ipc.FileWriter
	schema  *arrow.Schema
	classes int // the frames' number of classes
	rows    int64
	done    bool
	hash    hash.Hash // SHA-256 of every byte written
	sum     string    // its hex digest, set by Commit
}

// NewWriter starts an Arrow IPC file at path whose schema is Schema(like, meta).
func NewWriter(path string, like *Frame, meta map[string]string) (*Writer, error) {
	if err := checkMetaClasses(like, meta); err != nil {
		return nil, inFile(path, err)
	}
	schema := Schema(like, meta)
	if schema.NumFields() == 0 {
		return nil, inFile(path, fmt.Errorf("%w: a frame with no columns", ErrSchema))
	}
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	w, err := ipc.NewFileWriter(io.MultiWriter(tmp, h), ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, inFile(path, err)
	}
	return &Writer{path: path, tmp: tmp, w: w, schema: schema, classes: like.NumClasses(), hash: h}, nil
}

// Write appends f's rows (validated) in record batches of at most 1<<20 rows.
// f must have the columns (and classes) of the frame the writer was made
// for.
func (w *Writer) Write(f *Frame) error {
	f.checkMemory()
	defer runtime.KeepAlive(f) // the record batches share f's arrays
	if err := f.Validate(); err != nil {
		return inFile(w.path, err)
	}
	if f.NumClasses() != w.classes {
		return inFile(w.path, fmt.Errorf("%w: a frame of %d classes for a file of %d", ErrSchema, f.NumClasses(), w.classes))
	}
	for lo := 0; lo < f.Rows || (lo == 0 && f.Rows == 0 && w.rows == 0); lo += maxBatchRows {
		hi := min(lo+maxBatchRows, f.Rows)
		rec, err := record(w.schema, f.Slice(lo, hi))
		if err != nil {
			return inFile(w.path, err)
		}
		err = w.w.Write(rec)
		rec.Release()
		if err != nil {
			return inFile(w.path, err)
		}
		if f.Rows == 0 {
			break
		}
	}
	w.rows += int64(f.Rows)
	return nil
}

// Rows is the number of rows written so far.
func (w *Writer) Rows() int64 { return w.rows }

// Commit finishes the file, syncs it and renames it into place.
func (w *Writer) Commit() error { return w.CommitAfter(nil) }

// CommitAfter is Commit with a step between finishing the file and renaming
// it into place: before (when not nil) gets the file's hex SHA-256, and an
// error from it discards the file, leaving path untouched. Write-ahead logs
// use it (the privacy ledger records a release before it appears).
func (w *Writer) CommitAfter(before func(sha256 string) error) error {
	return w.finish(before, atomicfile.Commit)
}

// finish closes the file, hashes it, runs before and puts the file at
// w.path with commit (atomicfile.Commit, or CommitExclusive), discarding it
// on any error.
func (w *Writer) finish(before func(sha256 string) error, commit func(tmp *os.File, path string) error) error {
	if w.done {
		return fmt.Errorf("data: %s: writer already closed", w.path)
	}
	w.done = true
	if err := w.w.Close(); err != nil {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
		return inFile(w.path, err)
	}
	w.sum = hex.EncodeToString(w.hash.Sum(nil))
	if before != nil {
		if err := before(w.sum); err != nil {
			w.tmp.Close()
			os.Remove(w.tmp.Name())
			return err
		}
	}
	return commit(w.tmp, w.path)
}

// Abort discards everything written. Safe to call after Commit (no-op).
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.tmp.Close()
	os.Remove(w.tmp.Name())
}

// WriteFrame writes f to path (Arrow IPC file) atomically, with meta as the
// schema metadata.
func WriteFrame(path string, f *Frame, meta map[string]string) error {
	return WriteFrameAfter(path, f, meta, nil)
}

// WriteFrameAfter is WriteFrame committing with CommitAfter(before).
func WriteFrameAfter(path string, f *Frame, meta map[string]string, before func(sha256 string) error) error {
	return WriteChunkedAfter(path, Whole(f), meta, before)
}
