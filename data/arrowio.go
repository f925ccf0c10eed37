package data

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"labelprivacy/internal/atomicfile"
	"labelprivacy/internal/offheap"
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
	if labelColumn.present(f) {
		fields = append(fields, arrow.Field{Name: ColLabel, Type: labelColumn.dataType()})
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
	if labelColumn.present(f) {
		cols = append(cols, labelColumn.array(f))
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

// Chunked is a frame made a range of rows at a time, for writing a file
// whose columns need not be held whole (a simulation release's row
// numbers: 80 MB at 10M rows). Chunk(lo, hi) returns rows [lo, hi) with
// the same columns for every range (Chunk(0, 0) gives the schema);
// written, it gives the bytes WriteFrame gives for the whole frame.
type Chunked struct {
	Rows  int
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

// Write appends f's rows (validated) in record batches of at most 1<<20 rows.
// f must have the columns (and classes) of the frame the writer was made
// for.
func (w *Writer) Write(f *Frame) error {
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
	return atomicfile.Commit(w.tmp, w.path)
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

// ReadFrame reads a whole Arrow IPC file (.arrow, .feather, .ipc) or Parquet
// file (.parquet) into memory. Columns are recognized by name (schema.go);
// every other float32/float64 column is a dense feature, in file order.
// A damaged file gives an error wrapping ErrCorrupt that names it.
func ReadFrame(path string) (*Frame, error) {
	fr, err := readFrame(path, 0)
	if err != nil {
		return nil, inFile(path, err)
	}
	return fr.Frame, nil
}

// openRecords opens path as Arrow record batches: a Parquet file by its
// extension, else an Arrow IPC file.
func openRecords(path string) (recordReader, error) {
	if isParquet(path) {
		return openParquet(path)
	}
	return openIPC(path)
}

// isParquet reports whether path names a Parquet file (by extension).
func isParquet(path string) bool { return strings.EqualFold(filepath.Ext(path), ".parquet") }

// readFrame reads path into a frameReader (the frame plus the file's
// fields). classes is the number of classes the file must have (meta.json's,
// for a dataset's file), 0 to take it from the file (resolveClasses).
func readFrame(path string, classes int) (fr *frameReader, err error) {
	defer recoverCorrupt(&err)
	rr, err := openRecords(path)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	return readRecords(rr, classes)
}

// readRecords reads every record batch of rr into a frameReader.
func readRecords(rr recordReader, classes int) (fr *frameReader, err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a mapped file that shrinks: an error, not a crash
	if fr, err = newFrameFor(rr.Schema(), classes); err != nil {
		return nil, err
	}
	if err := fr.reserveFor(rr); err != nil {
		return nil, err
	}
	for i := 0; ; i++ {
		rec, err := rr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, corrupt(fmt.Errorf("record batch %d: %w", i, err))
		}
		if err := fr.appendRecord(rec); err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
		dropRead(rr)
	}
	return fr, fr.Validate()
}

// dropRead releases what rr has read so far from the resident set (a
// mapped IPC file's pages; nothing for other readers).
func dropRead(rr recordReader) {
	if f, ok := rr.(*ipcFile); ok {
		f.dropPages()
	}
}

// reserveFor sizes fr's columns for every row of rr when rr can count them
// cheaply (a mapped IPC file, a Parquet file's metadata), so that reading
// fills buffers of their final size instead of growing them by doubling
// (which held up to twice the features, plus the copy). Counts a damaged file
// inflates beyond what its bytes can hold are ignored (reading then grows
// the buffers and finds the damage).
func (fr *frameReader) reserveFor(rr recordReader) error {
	var rows, values, size int64
	switch r := rr.(type) {
	case *ipcFile:
		listCol := -1
		for c, f := range r.Schema().Fields() {
			if f.Name == ColIndices {
				listCol = c
			}
		}
		var ok bool
		var err error
		if rows, values, ok, err = r.counts(listCol); err != nil || !ok {
			return err
		}
		size = r.size
	case *parquetReader:
		rows, size = r.pf.NumRows(), r.size
	default:
		return nil
	}
	d := int64(fr.Dim())
	if rows < 0 || values < 0 || rows > size || rows*d*4 > size || values*4 > size {
		return nil
	}
	fr.reserve(int(rows), int(values))
	return nil
}

// reserve gives every column of fr room for rows rows (and values sparse
// indices) without reallocating.
//
// The features and sparse indices, a large file's bulk, are allocated
// outside the Go heap when large (package offheap: the collector then
// neither counts them in its goal nor holds their size again in garbage).
func (fr *frameReader) reserve(rows, values int) {
	fr.X = offheapFor[float32](fr.Frame, rows*fr.Dim())
	for _, c := range rowColumns {
		if c.present(fr.Frame) {
			c.reserve(fr.Frame, rows)
		}
	}
	for _, v := range classVecs {
		if v.present(fr.Frame) {
			*v.field(fr.Frame) = make([]float64, 0, rows*v.width(fr.NumClasses()))
		}
	}
	for k := range fr.Keys {
		fr.Keys[k].Values = make([]int64, 0, rows)
	}
	if fr.Offsets != nil {
		fr.Offsets = append(offheapFor[int64](fr.Frame, rows+1), 0)
		fr.Indices = offheapFor[uint32](fr.Frame, values)
	}
}

// offheapFor returns an empty slice with room for n elements, allocated
// with offheap.Alloc; the frame keeps the block.
func offheapFor[T offheap.Elem](f *Frame, n int) []T {
	s, b := offheap.Alloc[T](n)
	if b != nil {
		f.mem = append(f.mem, b)
	}
	return s[:0]
}

// recordReader is an open Arrow IPC or Parquet file read as record batches;
// Read returns io.EOF after the last one.
type recordReader interface {
	Schema() *arrow.Schema
	Read() (arrow.RecordBatch, error)
	Close()
}

// parquetReader is an open Parquet file read as Arrow record batches.
type parquetReader struct {
	fh   *os.File
	size int64
	pf   *file.Reader
	rr   pqarrow.RecordReader
}

// Schema is the file's Arrow schema. A "classes" key that the file holds
// as Parquet key/value metadata but not in a stored Arrow schema (a writer
// that does not store it) is added to its metadata.
func (p *parquetReader) Schema() *arrow.Schema {
	s := p.rr.Schema()
	md := s.Metadata()
	if md.FindKey(MetaClasses) >= 0 {
		return s
	}
	v := p.pf.MetaData().KeyValueMetadata().FindValue(MetaClasses)
	if v == nil {
		return s
	}
	m := arrow.NewMetadata(append(slices.Clone(md.Keys()), MetaClasses), append(slices.Clone(md.Values()), *v))
	return arrow.NewSchema(s.Fields(), &m)
}

func (p *parquetReader) Read() (arrow.RecordBatch, error) {
	rec, err := p.rr.Read()
	if err == nil && rec == nil {
		err = io.EOF // pqarrow's reader ends with (nil, nil) on some files
	}
	return rec, err
}

func (p *parquetReader) Close() {
	p.rr.Release()
	p.pf.Close()
	p.fh.Close()
}

// openParquet opens path for reading in record batches of 64k rows. Only
// flat schemas of primitive and list-of-primitive columns are accepted:
// pqarrow reads nested columns in goroutines, where a panic on a damaged
// file could not be recovered.
func openParquet(path string) (p *parquetReader, err error) {
	fh, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			fh.Close()
		}
	}()
	mem := readAllocator(size)
	pf, err := file.NewParquetReader(fh, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, corrupt(fmt.Errorf("not a Parquet file: %w", err))
	}
	if pf.MetaData().Schema.NumColumns() == 0 {
		pf.Close()
		return nil, fmt.Errorf("%w: the Parquet file has no columns", ErrSchema)
	}
	if v := pf.MetaData().KeyValueMetadata().FindValue("ARROW:schema"); v != nil {
		if err := checkArrowSchemaKey(*v); err != nil {
			pf.Close()
			return nil, err
		}
	}
	rd, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, mem)
	if err == nil {
		var s *arrow.Schema
		if s, err = rd.Schema(); err == nil {
			err = checkFlat(s)
		}
	}
	if err == nil {
		var rr pqarrow.RecordReader
		if rr, err = rd.GetRecordReader(context.Background(), nil, nil); err == nil {
			return &parquetReader{fh: fh, size: size, pf: pf, rr: rr}, nil
		}
	}
	pf.Close()
	return nil, corrupt(err)
}

// checkFlat accepts schemas whose columns are primitive or lists of
// primitives (everything a Frame or Table holds).
func checkFlat(s *arrow.Schema) error {
	for _, f := range s.Fields() {
		t := f.Type
		if l, ok := t.(arrow.ListLikeType); ok && t.ID() != arrow.MAP {
			t = l.Elem()
		}
		if _, nested := t.(arrow.NestedType); nested || t.ID() == arrow.EXTENSION || t.ID() == arrow.DICTIONARY {
			return fmt.Errorf("%w: column %q has type %s; only primitive and list-of-primitive columns are read", ErrSchema, f.Name, f.Type)
		}
	}
	return nil
}

// openFile opens path and returns its size.
func openFile(path string) (*os.File, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, 0, err
	}
	return fh, st.Size(), nil
}

// frameReader accumulates record batches into a Frame.
type frameReader struct {
	*Frame
	fields  []arrow.Field // the columns read
	cols    []column      // per field: its per-row column, or nil (a feature, a key, the indices or a per-class column)
	keyOf   []int         // per field: its index in Frame.Keys, or −1
	classOf []classRef    // per field: its place among the per-class columns, or fam −1
	// fileFields are the file's columns (an id column split off) when some
	// were left unread (readSplit); nil: fields.
	fileFields []arrow.Field
}

// allFields are the file's columns, read or not (an id column split off).
func (fr *frameReader) allFields() []arrow.Field {
	if fr.fileFields != nil {
		return fr.fileFields
	}
	return fr.fields
}

// featureNames are the dense features among fields, in order (as
// newFrameFor reads them).
func featureNames(fields []arrow.Field) []string {
	var names []string
	for _, f := range fields {
		if !reservedName(f.Name) && isFloat(f.Type) { // not a named, index or per-class column
			names = append(names, f.Name)
		}
	}
	return names
}

// newFrameFor returns an empty frameReader for files of schema s; classes
// as for readFrame.
func newFrameFor(s *arrow.Schema, classes int) (*frameReader, error) {
	fr := &frameReader{Frame: &Frame{Meta: map[string]string{}}, fields: s.Fields()}
	if len(fr.fields) == 0 {
		// Nothing would bound the row count: a damaged 2.7 kB file declared
		// 134M rows of no columns.
		return nil, fmt.Errorf("%w: the file has no columns", ErrSchema)
	}
	md := s.Metadata()
	for i, k := range md.Keys() {
		fr.Meta[k] = md.Values()[i]
	}
	seen := map[string]bool{}
	for _, f := range fr.fields {
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: duplicate column %q", ErrSchema, f.Name)
		}
		seen[f.Name] = true
		c := columnNamed(f.Name)
		fr.cols = append(fr.cols, c)
		fr.keyOf = append(fr.keyOf, -1)
		fam, class, isClass, err := classColumnOf(f.Name)
		if err != nil {
			return nil, err
		}
		fr.classOf = append(fr.classOf, classRef{fam: -1})
		switch {
		case isClass:
			if !isFloat(f.Type) {
				return nil, fmt.Errorf("%w: column %q has type %s, want float64", ErrSchema, f.Name, f.Type)
			}
			fr.classOf[len(fr.classOf)-1] = classRef{fam: fam, j: class - classVecs[fam].first}
		case c != nil:
			if !c.accepts(f.Type) {
				return nil, fmt.Errorf("%w: column %q has type %s, want %s", ErrSchema, f.Name, f.Type, c.dataType())
			}
			c.setEmpty(fr.Frame)
		case f.Name == ColIndices:
			if l, ok := f.Type.(*arrow.ListType); !ok || !isInteger(l.Elem()) {
				return nil, fmt.Errorf("%w: column %q has type %s, want list<uint32>", ErrSchema, f.Name, f.Type)
			}
			fr.Offsets = []int64{0}
		case isFloat(f.Type):
			fr.Features = append(fr.Features, f.Name)
		case isInteger(f.Type):
			fr.keyOf[len(fr.keyOf)-1] = len(fr.Keys)
			fr.Keys = append(fr.Keys, KeyColumn{Name: f.Name, Values: []int64{}})
		default:
			return nil, fmt.Errorf("%w: column %q has type %s; features must be float32 or float64 (integer columns are read as keys)", ErrSchema, f.Name, f.Type)
		}
	}
	fr.X = []float32{}
	if err := fr.resolveClasses(md, classes); err != nil {
		return nil, err
	}
	return fr, nil
}

func (fr *frameReader) appendRecord(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	if n < 0 || int(rec.NumCols()) != len(fr.cols) {
		return fmt.Errorf("%w: record batch of %d rows and %d columns, schema has %d", ErrCorrupt, n, rec.NumCols(), len(fr.cols))
	}
	for c := range fr.cols {
		if l := rec.Column(c).Len(); l != n {
			return fmt.Errorf("%w: column %q has %d values in a record batch of %d rows", ErrCorrupt, fr.fields[c].Name, l, n)
		}
	}
	d := fr.Dim()
	base := fr.Rows
	fr.X = slices.Grow(fr.X, n*d)[:(base+n)*d]
	for _, v := range classVecs {
		if p := v.field(fr.Frame); *p != nil {
			w := v.width(fr.NumClasses())
			*p = slices.Grow(*p, n*w)[:(base+n)*w]
		}
	}
	feat := 0
	for c, spec := range fr.cols {
		col := rec.Column(c)
		name := fr.fields[c].Name
		if col.NullN() > 0 {
			return fmt.Errorf("%w: column %q has %d nulls", ErrSchema, name, col.NullN())
		}
		var err error
		switch {
		case fr.classOf[c].fam >= 0:
			err = fr.appendClassColumn(fr.classOf[c], col, base, name)
		case spec != nil:
			err = spec.appendArrow(fr.Frame, col)
		case name == ColIndices:
			err = fr.appendIndices(col)
		case fr.keyOf[c] >= 0:
			k := &fr.Keys[fr.keyOf[c]]
			k.Values, err = appendInt64(k.Values, col, name)
		default:
			x := fr.X[base*d:]
			switch a := col.(type) {
			case *array.Float32:
				for i, v := range a.Float32Values() {
					x[i*d+feat] = v
				}
			case *array.Float64:
				for i, v := range a.Float64Values() {
					x[i*d+feat] = float32(v)
				}
			default:
				err = fmt.Errorf("%w: column %q has type %s in a record batch, %s in the schema", ErrCorrupt, name, col.DataType(), fr.fields[c].Type)
			}
			feat++
		}
		if err != nil {
			return err
		}
	}
	fr.Rows += n
	return nil
}

// appendIndices appends a list<integer> column, checking what arrow-go does
// not: offsets that start at 0 or more, never decrease and stay within the
// values.
func (fr *frameReader) appendIndices(col arrow.Array) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("%w: column %q has type %s, want list<uint32>", ErrSchema, ColIndices, col.DataType())
	}
	offs := l.Offsets() // len l.Len()+1 (arrow-go slices them from the array's offset)
	if len(offs) != l.Len()+1 {
		return fmt.Errorf("%w: column %q has %d offsets for %d rows", ErrCorrupt, ColIndices, len(offs), l.Len())
	}
	if u, ok := l.ListValues().(*array.Uint32); ok {
		// The files this package writes: check the offsets, then copy the
		// values in one piece (no per-batch temporary).
		vals := u.Uint32Values()
		for i := range l.Len() {
			s, e := int64(offs[i]), int64(offs[i+1])
			if s < 0 || e < s || e > int64(len(vals)) {
				return fmt.Errorf("%w: column %q row %d: offsets [%d, %d) outside the %d values", ErrCorrupt, ColIndices, fr.Rows+i, s, e, len(vals))
			}
		}
		if l.Len() == 0 {
			return nil
		}
		base := int64(len(fr.Indices)) - int64(offs[0])
		fr.Indices = append(fr.Indices, vals[offs[0]:offs[l.Len()]]...)
		for _, o := range offs[1:] {
			fr.Offsets = append(fr.Offsets, base+int64(o))
		}
		return nil
	}
	vals, err := appendInt64(nil, l.ListValues(), ColIndices)
	if err != nil {
		return err
	}
	for i := range l.Len() {
		s, e := int64(offs[i]), int64(offs[i+1])
		if s < 0 || e < s || e > int64(len(vals)) {
			return fmt.Errorf("%w: column %q row %d: offsets [%d, %d) outside the %d values", ErrCorrupt, ColIndices, fr.Rows+i, s, e, len(vals))
		}
		for _, v := range vals[s:e] {
			if v < 0 || v > int64(^uint32(0)) {
				return fmt.Errorf("%w: column %q row %d: index %d out of uint32 range", ErrInvalid, ColIndices, fr.Rows+i, v)
			}
			fr.Indices = append(fr.Indices, uint32(v))
		}
		fr.Offsets = append(fr.Offsets, int64(len(fr.Indices)))
	}
	return nil
}

// ipcFile is an open Arrow IPC file. Where the system allows it the file
// is memory-mapped and read in place (ipc.NewMappedFileReader): a record
// batch's buffers are the file's pages, not a copy on the heap, and
// dropPages gives the pages of the batches read so far back (they leave the
// resident set; the page cache keeps them), so reading a file of any size
// holds about one record batch of it at a time.
type ipcFile struct {
	fh     *os.File
	size   int64
	mapped []byte // nil: read with ReadAt
	*ipc.FileReader
}

func (f *ipcFile) Close() {
	f.FileReader.Close()
	if f.mapped != nil {
		unmapFile(f.mapped)
	}
	f.fh.Close()
}

// dropPages releases the mapped pages read so far from the resident set.
func (f *ipcFile) dropPages() {
	if f.mapped != nil {
		dropPages(f.mapped)
	}
}

// counts returns the file's rows and, when the list column at index
// listCol (−1: none) is present, its values, from the record batches'
// metadata (with a mapped file no data page is read). ok is false when the
// file is not mapped (counting would read every batch twice).
func (f *ipcFile) counts(listCol int) (rows, values int64, ok bool, err error) {
	if f.mapped == nil {
		return 0, 0, false, nil
	}
	for i := range f.NumRecords() {
		rec, err := f.RecordBatchAt(i)
		if err != nil {
			return 0, 0, false, corrupt(fmt.Errorf("record batch %d: %w", i, err))
		}
		rows += rec.NumRows()
		if listCol >= 0 && listCol < int(rec.NumCols()) {
			if l, isList := rec.Column(listCol).(*array.List); isList {
				values += int64(l.ListValues().Len())
			}
		}
		rec.Release()
	}
	return rows, values, true, nil
}

// errNoMap: the file is read with ReadAt instead.
var errNoMap = errors.New("data: not memory-mapped")

// openIPC opens an Arrow IPC file for reading (its footer and schema),
// memory-mapped where possible.
func openIPC(path string) (*ipcFile, error) {
	fh, size, err := openFile(path)
	if err != nil {
		return nil, err
	}
	if err := checkIPCFooter(fh, size); err != nil {
		fh.Close()
		return nil, err
	}
	f := &ipcFile{fh: fh, size: size}
	var r *ipc.FileReader
	if m, merr := mapFile(fh, size); merr == nil {
		f.mapped = m
		r, err = ipc.NewMappedFileReader(m, ipc.WithAllocator(readAllocator(size)))
	} else {
		r, err = ipc.NewFileReader(fh, ipc.WithAllocator(readAllocator(size)))
	}
	if err != nil {
		if f.mapped != nil {
			unmapFile(f.mapped)
		}
		fh.Close()
		return nil, corrupt(fmt.Errorf("not an Arrow IPC file: %w", err))
	}
	f.FileReader = r
	return f, nil
}

// ReadMetadata returns the schema metadata of an Arrow IPC file without
// reading its record batches.
func ReadMetadata(path string) (map[string]string, error) {
	f, err := ReadSchema(path)
	if err != nil {
		return nil, err
	}
	return f.Meta, nil
}

// ReadSchema returns an empty frame (no rows) with the columns of an Arrow
// IPC file: its feature names, and a non-nil (empty) column for each known
// column present. It reads only the schema, for callers that need a
// dataset's shape without its rows (e.g. run ids for a sweep's status).
func ReadSchema(path string) (*Frame, error) {
	fr, err := readSchema(path)
	if err != nil {
		return nil, inFile(path, err)
	}
	return fr.Frame, nil
}

func readSchema(path string) (fr *frameReader, err error) {
	defer recoverCorrupt(&err)
	r, err := openIPC(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return newFrameFor(r.Schema(), 0)
}
