package data

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"labelprivacy/internal/offheap"
)

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
// with offheap.Alloc; the frame owns the block (owner.go).
func offheapFor[T offheap.Elem](f *Frame, n int) []T {
	s, b := offheap.Alloc[T](n)
	if b != nil {
		m := f.own()
		m.blocks = append(m.blocks, b)
	}
	return s[:0]
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
		c := columnFor(f.Name, f.Type)
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
