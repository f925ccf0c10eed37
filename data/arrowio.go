package data

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// maxBatchRows bounds the rows of one Arrow record batch we write (1<<20 ≈
// 110 MiB of Higgs features): large enough for fast reads, small enough that
// list offsets (int32) never overflow for KDD-like rows.
const maxBatchRows = 1 << 20

// Schema returns the Arrow schema of frames with f's columns, carrying meta
// as schema metadata (keys sorted for byte-stable files).
func Schema(f *Frame, meta map[string]string) *arrow.Schema {
	var fields []arrow.Field
	if f.Label != nil {
		fields = append(fields, arrow.Field{Name: ColLabel, Type: arrow.PrimitiveTypes.Uint8})
	}
	for _, name := range f.Features {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float32})
	}
	if f.Offsets != nil {
		fields = append(fields, arrow.Field{Name: ColIndices, Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Uint32)})
	}
	for _, c := range []struct {
		name string
		ok   bool
		t    arrow.DataType
	}{
		{ColEta, f.Eta != nil, arrow.PrimitiveTypes.Float64},
		{ColBagID, f.BagID != nil, arrow.PrimitiveTypes.Int64},
		{ColLabelRR, f.LabelRR != nil, arrow.PrimitiveTypes.Uint8},
		{ColAlpha, f.Alpha != nil, arrow.PrimitiveTypes.Float64},
		{ColAlphaDebiased, f.AlphaDebiased != nil, arrow.PrimitiveTypes.Float64},
		{ColRow, f.Row != nil, arrow.PrimitiveTypes.Int64},
	} {
		if c.ok {
			fields = append(fields, arrow.Field{Name: c.name, Type: c.t})
		}
	}
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = meta[k]
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(fields, &md)
}

// bytesOf views a numeric slice as bytes without copying.
func bytesOf[T uint8 | uint32 | int32 | int64 | float32 | float64](v []T) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*int(unsafe.Sizeof(z)))
}

// primArray wraps v as an Arrow array without copying; v must stay alive and
// unmodified until the array is released.
func primArray[T uint8 | uint32 | int64 | float32 | float64](dt arrow.DataType, v []T) arrow.Array {
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
	if f.Label != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Uint8, f.Label))
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
	if f.Eta != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Float64, f.Eta))
	}
	if f.BagID != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Int64, f.BagID))
	}
	if f.LabelRR != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Uint8, f.LabelRR))
	}
	if f.Alpha != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Float64, f.Alpha))
	}
	if f.AlphaDebiased != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Float64, f.AlphaDebiased))
	}
	if f.Row != nil {
		cols = append(cols, primArray(arrow.PrimitiveTypes.Int64, f.Row))
	}
	if len(cols) != len(schema.Fields()) {
		return nil, fmt.Errorf("%w: frame has %d columns, schema %d", ErrSchema, len(cols), len(schema.Fields()))
	}
	return array.NewRecordBatch(schema, cols, int64(f.Rows)), nil
}

// Writer writes frames as record batches of one Arrow IPC file. Output goes
// to a temporary file in the destination directory; Commit renames it into
// place, Abort (or a crash) leaves the destination untouched.
type Writer struct {
	path   string
	tmp    *os.File
	w      *ipc.FileWriter
	schema *arrow.Schema
	rows   int64
	done   bool
}

// NewWriter starts an Arrow IPC file at path whose schema is Schema(like, meta).
func NewWriter(path string, like *Frame, meta map[string]string) (*Writer, error) {
	tmp, err := createTemp(path)
	if err != nil {
		return nil, err
	}
	schema := Schema(like, meta)
	w, err := ipc.NewFileWriter(tmp, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return &Writer{path: path, tmp: tmp, w: w, schema: schema}, nil
}

// Write appends f's rows (validated) in record batches of at most 1<<20 rows.
func (w *Writer) Write(f *Frame) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("data: %s: %w", w.path, err)
	}
	for lo := 0; lo < f.Rows || (lo == 0 && f.Rows == 0 && w.rows == 0); lo += maxBatchRows {
		hi := min(lo+maxBatchRows, f.Rows)
		rec, err := record(w.schema, f.Slice(lo, hi))
		if err != nil {
			return fmt.Errorf("data: %s: %w", w.path, err)
		}
		err = w.w.Write(rec)
		rec.Release()
		if err != nil {
			return fmt.Errorf("data: %s: %w", w.path, err)
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
func (w *Writer) Commit() error {
	if w.done {
		return fmt.Errorf("data: %s: writer already closed", w.path)
	}
	w.done = true
	if err := w.w.Close(); err != nil {
		w.tmp.Close()
		os.Remove(w.tmp.Name())
		return fmt.Errorf("data: %s: %w", w.path, err)
	}
	return commitTemp(w.tmp, w.path)
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
	w, err := NewWriter(path, f, meta)
	if err != nil {
		return err
	}
	if err := w.Write(f); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// ReadFrame reads a whole Arrow IPC file (.arrow, .feather, .ipc) or Parquet
// file (.parquet) into memory. Columns are recognized by name (schema.go);
// every other float32/float64 column is a dense feature, in file order.
func ReadFrame(path string) (*Frame, error) {
	fr, err := readFrame(path)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return fr, nil
}

func readFrame(path string) (*Frame, error) {
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		return readParquet(path)
	}
	r, err := openIPC(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fr, err := newFrameFor(r.Schema())
	if err != nil {
		return nil, err
	}
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
		err = fr.appendRecord(rec)
		if err != nil {
			return nil, fmt.Errorf("record batch %d: %w", i, err)
		}
	}
	return fr.Frame, fr.Validate()
}

// parquetReader is an open Parquet file read as Arrow record batches.
type parquetReader struct {
	pf *file.Reader
	pqarrow.RecordReader
}

func (p *parquetReader) Close() {
	p.Release()
	p.pf.Close()
}

// openParquet opens path for reading in record batches of 64k rows.
func openParquet(path string) (*parquetReader, error) {
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, fmt.Errorf("not a Parquet file: %w", err)
	}
	rd, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 16}, memory.DefaultAllocator)
	if err == nil {
		var rr pqarrow.RecordReader
		if rr, err = rd.GetRecordReader(context.Background(), nil, nil); err == nil {
			return &parquetReader{pf: pf, RecordReader: rr}, nil
		}
	}
	pf.Close()
	return nil, err
}

func readParquet(path string) (*Frame, error) {
	rr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	fr, err := newFrameFor(rr.Schema())
	if err != nil {
		return nil, err
	}
	for {
		rec, err := rr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := fr.appendRecord(rec); err != nil {
			return nil, err
		}
	}
	return fr.Frame, fr.Validate()
}

// frameReader accumulates record batches into a Frame.
type frameReader struct {
	*Frame
	cols []string // column name per schema field
}

func newFrameFor(s *arrow.Schema) (*frameReader, error) {
	fr := &frameReader{Frame: &Frame{Meta: map[string]string{}}}
	md := s.Metadata()
	for i, k := range md.Keys() {
		fr.Meta[k] = md.Values()[i]
	}
	seen := map[string]bool{}
	for _, f := range s.Fields() {
		if seen[f.Name] {
			return nil, fmt.Errorf("%w: duplicate column %q", ErrSchema, f.Name)
		}
		seen[f.Name] = true
		fr.cols = append(fr.cols, f.Name)
		switch f.Name {
		case ColLabel, ColLabelRR, ColBagID, ColEta, ColAlpha, ColAlphaDebiased, ColRow, ColIndices:
		default:
			switch f.Type.ID() {
			case arrow.FLOAT32, arrow.FLOAT64:
				fr.Features = append(fr.Features, f.Name)
			default:
				return nil, fmt.Errorf("%w: column %q has type %s; features must be float32 or float64", ErrSchema, f.Name, f.Type)
			}
		}
	}
	return fr, nil
}

func (fr *frameReader) appendRecord(rec arrow.RecordBatch) error {
	n := int(rec.NumRows())
	d := fr.Dim()
	base := fr.Rows
	fr.X = slices.Grow(fr.X, n*d)[:(base+n)*d]
	feat := 0
	for c, name := range fr.cols {
		col := rec.Column(c)
		if col.NullN() > 0 {
			return fmt.Errorf("%w: column %q has %d nulls", ErrSchema, name, col.NullN())
		}
		var err error
		switch name {
		case ColLabel:
			fr.Label, err = appendUint8(fr.Label, col, name)
		case ColLabelRR:
			fr.LabelRR, err = appendUint8(fr.LabelRR, col, name)
		case ColBagID:
			fr.BagID, err = appendInt64(fr.BagID, col, name)
		case ColEta:
			fr.Eta, err = appendFloat64(fr.Eta, col, name)
		case ColAlpha:
			fr.Alpha, err = appendFloat64(fr.Alpha, col, name)
		case ColAlphaDebiased:
			fr.AlphaDebiased, err = appendFloat64(fr.AlphaDebiased, col, name)
		case ColRow:
			fr.Row, err = appendInt64(fr.Row, col, name)
		case ColIndices:
			err = fr.appendIndices(col)
		default:
			switch a := col.(type) {
			case *array.Float32:
				for i, v := range a.Float32Values() {
					fr.X[(base+i)*d+feat] = v
				}
			case *array.Float64:
				for i, v := range a.Float64Values() {
					fr.X[(base+i)*d+feat] = float32(v)
				}
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

func (fr *frameReader) appendIndices(col arrow.Array) error {
	l, ok := col.(*array.List)
	if !ok {
		return fmt.Errorf("%w: column %q has type %s, want list<uint32>", ErrSchema, ColIndices, col.DataType())
	}
	if fr.Offsets == nil {
		fr.Offsets = []int64{0}
	}
	vals := l.ListValues()
	for i := range l.Len() {
		s, e := l.ValueOffsets(i)
		for j := s; j < e; j++ {
			var v int64
			switch a := vals.(type) {
			case *array.Uint32:
				v = int64(a.Value(int(j)))
			case *array.Int32:
				v = int64(a.Value(int(j)))
			case *array.Int64:
				v = a.Value(int(j))
			case *array.Uint64:
				v = int64(a.Value(int(j)))
			default:
				return fmt.Errorf("%w: column %q has element type %s, want uint32", ErrSchema, ColIndices, vals.DataType())
			}
			if v < 0 || v > int64(^uint32(0)) {
				return fmt.Errorf("%w: column %q row %d: index %d out of uint32 range", ErrInvalid, ColIndices, fr.Rows+i, v)
			}
			fr.Indices = append(fr.Indices, uint32(v))
		}
		fr.Offsets = append(fr.Offsets, int64(len(fr.Indices)))
	}
	return nil
}

// integer columns written by other tools (pandas writes int64 labels).
func appendInt64(dst []int64, col arrow.Array, name string) ([]int64, error) {
	switch a := col.(type) {
	case *array.Int64:
		return append(dst, a.Int64Values()...), nil
	case *array.Int32:
		for _, v := range a.Int32Values() {
			dst = append(dst, int64(v))
		}
	case *array.Uint32:
		for _, v := range a.Uint32Values() {
			dst = append(dst, int64(v))
		}
	case *array.Uint8:
		for _, v := range a.Uint8Values() {
			dst = append(dst, int64(v))
		}
	case *array.Int8:
		for _, v := range a.Int8Values() {
			dst = append(dst, int64(v))
		}
	case *array.Uint64:
		for _, v := range a.Uint64Values() {
			dst = append(dst, int64(v))
		}
	case *array.Boolean:
		for i := range a.Len() {
			if a.Value(i) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
	default:
		return nil, fmt.Errorf("%w: column %q has type %s, want an integer", ErrSchema, name, col.DataType())
	}
	return dst, nil
}

func appendUint8(dst []uint8, col arrow.Array, name string) ([]uint8, error) {
	if a, ok := col.(*array.Uint8); ok {
		return append(dst, a.Uint8Values()...), nil
	}
	base := len(dst)
	vals, err := appendInt64(nil, col, name)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v != 0 && v != 1 {
			return nil, fmt.Errorf("%w: column %q row %d has value %d, want 0 or 1", ErrLabel, name, base+i, v)
		}
		dst = append(dst, uint8(v))
	}
	return dst, nil
}

func appendFloat64(dst []float64, col arrow.Array, name string) ([]float64, error) {
	switch a := col.(type) {
	case *array.Float64:
		return append(dst, a.Float64Values()...), nil
	case *array.Float32:
		for _, v := range a.Float32Values() {
			dst = append(dst, float64(v))
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w: column %q has type %s, want float64", ErrSchema, name, col.DataType())
}

// ipcFile is an open Arrow IPC file.
type ipcFile struct {
	fh *os.File
	*ipc.FileReader
}

func (f *ipcFile) Close() {
	f.FileReader.Close()
	f.fh.Close()
}

// openIPC opens an Arrow IPC file for reading.
func openIPC(path string) (*ipcFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := ipc.NewFileReader(fh, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("not an Arrow IPC file: %w", err)
	}
	return &ipcFile{fh: fh, FileReader: r}, nil
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
	r, err := openIPC(path)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	defer r.Close()
	fr, err := newFrameFor(r.Schema())
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", path, err)
	}
	f := fr.Frame
	for _, c := range fr.cols {
		switch c {
		case ColLabel:
			f.Label = []uint8{}
		case ColLabelRR:
			f.LabelRR = []uint8{}
		case ColEta:
			f.Eta = []float64{}
		case ColBagID:
			f.BagID = []int64{}
		case ColAlpha:
			f.Alpha = []float64{}
		case ColAlphaDebiased:
			f.AlphaDebiased = []float64{}
		case ColRow:
			f.Row = []int64{}
		case ColIndices:
			f.Offsets = []int64{0}
		}
	}
	f.X = []float32{}
	return f, nil
}
