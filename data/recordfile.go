package data

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

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
