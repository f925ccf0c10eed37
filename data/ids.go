package data

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// IDs is an identifier column: one identifier per row, read as canonical
// bytes so that the same identifier gives the same bytes whatever the
// column's type: integers of any width or signedness, and floats holding
// whole numbers (pandas writes an integer column with gaps as float64), in
// decimal; strings and binary without the white space around them, and,
// when what is left is a decimal integer (a sign, leading zeros and a
// fraction of zeros allowed: "+007.0"), as that integer in decimal. So 42
// (int32), 42 (uint64), 42.0 (float64), "42", " 42", "+42" and "042" are
// one identifier. A float column holding a value that is not a whole
// number is refused (a feature named as the id column, or rounded ids).
//
// Merging forms is the safe direction for a privacy ledger: two people
// whose ids differ only in leading zeros are then counted as one, which
// over-counts their ε; one person counted as several ("000001" and "1")
// would be charged a fraction of their releases each.
type IDs struct {
	Column string
	ints   []int64 // integer columns
	uints  []uint64
	strs   []byte  // string, binary and float columns, canonical, concatenated
	off    []int64 // their offsets, len Len()+1
	kind   idKind
	text   bool // a string or binary column
}

type idKind uint8

const (
	idInt idKind = iota + 1
	idUint
	idBytes
)

// Text reports whether the column holds text (string or binary), not
// numbers: what the privacy ledger binds beside the column's name.
func (d *IDs) Text() bool { return d.text }

// Len is the number of rows.
func (d *IDs) Len() int {
	switch d.kind {
	case idInt:
		return len(d.ints)
	case idUint:
		return len(d.uints)
	}
	return max(len(d.off)-1, 0)
}

// Append appends row i's identifier, as canonical bytes, to dst.
func (d *IDs) Append(dst []byte, i int) []byte {
	switch d.kind {
	case idInt:
		return strconv.AppendInt(dst, d.ints[i], 10)
	case idUint:
		return strconv.AppendUint(dst, d.uints[i], 10)
	}
	return append(dst, d.strs[d.off[i]:d.off[i+1]]...)
}

// appendArrow appends a record batch's id column.
func (d *IDs) appendArrow(col arrow.Array) error {
	if n := col.NullN(); n > 0 {
		for i := range col.Len() {
			if col.IsNull(i) {
				return fmt.Errorf("%w: id column %q row %d is null (every row needs an identifier)", ErrInvalid, d.Column, d.Len()+i)
			}
		}
	}
	bytesCol := func(get func(i int) []byte) {
		if d.off == nil {
			d.off = []int64{0}
		}
		for i := range col.Len() {
			d.strs = appendCanonicalID(d.strs, get(i))
			d.off = append(d.off, int64(len(d.strs)))
		}
	}
	switch a := col.(type) {
	case *array.Int64:
		d.kind, d.ints = idInt, append(d.ints, a.Int64Values()...)
	case *array.Int32:
		d.kind, d.ints = idInt, widen(d.ints, a.Int32Values())
	case *array.Int16:
		d.kind, d.ints = idInt, widen(d.ints, a.Int16Values())
	case *array.Int8:
		d.kind, d.ints = idInt, widen(d.ints, a.Int8Values())
	case *array.Uint32:
		d.kind, d.ints = idInt, widen(d.ints, a.Uint32Values())
	case *array.Uint16:
		d.kind, d.ints = idInt, widen(d.ints, a.Uint16Values())
	case *array.Uint8:
		d.kind, d.ints = idInt, widen(d.ints, a.Uint8Values())
	case *array.Uint64:
		d.kind = idUint
		d.uints = append(d.uints, a.Uint64Values()...)
	case *array.Float64, *array.Float32:
		d.kind = idBytes
		if d.off == nil {
			d.off = []int64{0}
		}
		first := d.Len()
		for i := range col.Len() {
			var v float64
			if f, ok := a.(*array.Float64); ok {
				v = f.Value(i)
			} else {
				v = float64(a.(*array.Float32).Value(i))
			}
			if v != math.Trunc(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: id column %q row %d holds %v, not a whole number: a float id column must hold whole numbers "+
					"(an integer column pandas wrote as float); is %q a feature? Name the column of people's ids, or none",
					ErrInvalid, d.Column, first+i, v, d.Column)
			}
			d.strs = strconv.AppendFloat(d.strs, v+0, 'f', 0, 64) // every digit of a whole number (v+0: −0 is 0)
			d.off = append(d.off, int64(len(d.strs)))
		}
	case *array.String:
		d.kind, d.text = idBytes, true
		bytesCol(func(i int) []byte { return []byte(a.Value(i)) })
	case *array.LargeString:
		d.kind, d.text = idBytes, true
		bytesCol(func(i int) []byte { return []byte(a.Value(i)) })
	case *array.Binary:
		d.kind, d.text = idBytes, true
		bytesCol(a.Value)
	case *array.LargeBinary:
		d.kind, d.text = idBytes, true
		bytesCol(a.Value)
	default:
		return fmt.Errorf("%w: id column %q has type %s, want an integer, float, string or binary", ErrSchema, d.Column, col.DataType())
	}
	return nil
}

// appendCanonicalID appends the canonical bytes of a text identifier: v
// without the white space around it and, when that is a decimal integer
// (an optional sign, digits, an optional '.' and zeros), the integer in
// decimal: no '+', no leading zeros, "0" for any zero.
func appendCanonicalID(dst, v []byte) []byte {
	v = bytes.TrimSpace(v)
	s := v
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	digits := s
	if i := bytes.IndexByte(s, '.'); i >= 0 {
		digits = s[:i]
		if strings.Trim(string(s[i+1:]), "0") != "" {
			return append(dst, v...)
		}
	}
	if len(digits) == 0 || strings.Trim(string(digits), "0123456789") != "" {
		return append(dst, v...)
	}
	digits = bytes.TrimLeft(digits, "0")
	if len(digits) == 0 {
		return append(dst, '0')
	}
	if neg {
		dst = append(dst, '-')
	}
	return append(dst, digits...)
}

func widen[T int8 | int16 | int32 | uint8 | uint16 | uint32](dst []int64, src []T) []int64 {
	for _, v := range src {
		dst = append(dst, int64(v))
	}
	return dst
}

// idTypeOK reports whether an id column of type t can be read.
func idTypeOK(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return true
	}
	return false
}

// ReadFrameWithIDs reads an Arrow IPC or Parquet file like ReadFrame,
// except that column idCol holds identifiers (of people, for the privacy
// ledger), not a feature: it is returned as IDs and is absent from the
// frame (so a release never ships it). An empty idCol reads like ReadFrame
// and returns nil IDs. Errors name the file; a missing id column lists the
// file's columns.
func ReadFrameWithIDs(path, idCol string) (*Frame, *IDs, error) {
	if idCol == "" {
		f, err := ReadFrame(path)
		return f, nil, err
	}
	fr, ids, err := readSplit(path, idCol, true, 0, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("data: %s: %w", path, err)
	}
	return fr.Frame, ids, nil
}

// readSplit reads path with column idCol split off (none when ""); when it
// is absent and !required, the file is read as it is (nil IDs). Columns
// skip accepts (nil: none) are left unread: absent from the frame, their
// pages never touched (the id column too: split off, nil IDs); the frame
// reader's fileFields keep every column but the id column, for
// checkSplits. classes as for readFrame.
func readSplit(path, idCol string, required bool, classes int, skip func(arrow.Field) bool) (fr *frameReader, ids *IDs, err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a mapped file that shrinks: an error, not a crash
	rr, err := openRecords(path)
	if err != nil {
		return nil, nil, err
	}
	defer rr.Close()
	schema := rr.Schema()
	at := schema.FieldIndices(idCol)
	switch {
	case idCol == "":
		at = []int{-1}
	case len(at) == 0 && !required:
		at = []int{-1}
	case len(at) == 0:
		var names []string
		for _, f := range schema.Fields() {
			names = append(names, f.Name)
		}
		return nil, nil, fmt.Errorf("%w: no id column %q (columns: %q)", ErrSchema, idCol, names)
	case len(at) > 1:
		return nil, nil, fmt.Errorf("%w: duplicate column %q", ErrSchema, idCol)
	case reservedName(idCol):
		return nil, nil, fmt.Errorf("%w: %q is a reserved column, not an id column", ErrSchema, idCol)
	case !idTypeOK(schema.Field(at[0]).Type):
		return nil, nil, fmt.Errorf("%w: id column %q has type %s, want an integer, float, string or binary",
			ErrSchema, idCol, schema.Field(at[0]).Type)
	}
	idx := at[0]
	var fields, fileFields []arrow.Field
	var kept []int // the file's column of each projected one
	for i, f := range schema.Fields() {
		if i == idx {
			continue
		}
		fileFields = append(fileFields, f)
		if skip == nil || !skip(f) {
			fields, kept = append(fields, f), append(kept, i)
		}
	}
	md := schema.Metadata()
	proj := arrow.NewSchema(fields, &md)
	if fr, err = newFrameFor(proj, classes); err != nil {
		return nil, nil, err
	}
	if len(fields) != len(fileFields) {
		fr.fileFields = fileFields
	}
	readIDs := idx >= 0 && (skip == nil || !skip(schema.Field(idx)))
	if readIDs {
		ids = &IDs{Column: idCol}
	}
	if err := fr.reserveFor(rr); err != nil {
		return nil, nil, err
	}
	for i := 0; ; i++ {
		rec, err := rr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, corrupt(fmt.Errorf("record batch %d: %w", i, err))
		}
		if int(rec.NumCols()) != len(schema.Fields()) {
			return nil, nil, fmt.Errorf("%w: record batch %d has %d columns, schema %d", ErrCorrupt, i, rec.NumCols(), len(schema.Fields()))
		}
		all := rec.Columns()
		if readIDs {
			if all[idx].Len() != int(rec.NumRows()) {
				return nil, nil, fmt.Errorf("%w: id column %q has %d values in a record batch of %d rows", ErrCorrupt, idCol, all[idx].Len(), rec.NumRows())
			}
			if err := ids.appendArrow(all[idx]); err != nil {
				return nil, nil, fmt.Errorf("record batch %d: %w", i, err)
			}
		}
		cols := make([]arrow.Array, len(kept))
		for j, c := range kept {
			cols[j] = all[c]
		}
		p := array.NewRecordBatch(proj, cols, rec.NumRows())
		err = fr.appendRecord(p)
		p.Release()
		if err != nil {
			return nil, nil, fmt.Errorf("record batch %d: %w", i, err)
		}
		dropRead(rr)
	}
	return fr, ids, fr.Validate()
}

// LoadWithIDs is Load for a dataset whose files carry an id column: the
// column is split off both files (the test file may lack it) and the
// training rows' identifiers returned. An empty idCol is Load.
func LoadWithIDs(dir, idCol string) (*Dataset, *IDs, error) {
	return LoadWith(dir, LoadOptions{IDColumn: idCol})
}

// LoadOptions choose what LoadWith reads of the training split (the test
// split is always read whole).
type LoadOptions struct {
	// IDColumn is split off both files and the training rows' identifiers
	// returned (LoadWithIDs); "" for none.
	IDColumn string
	// NoTrainEta leaves the training rows' η (synthetic data) unread: only
	// the test rows' η is ever used (the audit). 80 MB at 10M rows.
	NoTrainEta bool
	// NoTrainFeatures leaves the training rows' dense features, sparse
	// indices, η and identifiers unread (Train keeps its labels and key
	// columns, Dim 0, and no IDs are returned): what a stage that never
	// trains needs (the audit, the report). Dataset.TrainSchema still
	// names every column; FitStandardizerFile fits on the features.
	NoTrainFeatures bool
}

// LoadWith is Load with o's choices of what to read; the checks of the
// files against each other and against meta.json cover every column,
// read or not, except the sparse index range of training rows whose
// indices are unread.
func LoadWith(dir string, o LoadOptions) (*Dataset, *IDs, error) {
	m, err := ReadMeta(dir)
	if err != nil {
		return nil, nil, err
	}
	paths := [2]string{dataFile(dir, "train"), dataFile(dir, "test")}
	var splits [2]*frameReader
	var ids *IDs
	for i, p := range paths {
		var skip func(arrow.Field) bool
		if i == 0 {
			skip = o.trainSkip()
		}
		if o.IDColumn == "" && skip == nil {
			splits[i], err = readFrame(p, m.NumClasses())
		} else {
			var got *IDs
			splits[i], got, err = readSplit(p, o.IDColumn, i == 0 && o.IDColumn != "", m.NumClasses(), skip)
			if i == 0 {
				ids = got
			}
		}
		if err != nil {
			return nil, nil, inFile(p, err)
		}
	}
	if err := checkSplits(filepath.Join(dir, MetaFile), m, paths, splits); err != nil {
		return nil, nil, err
	}
	if err := checkLabelColumns(m, paths, splits); err != nil {
		return nil, nil, err
	}
	schema, err := newFrameFor(arrow.NewSchema(splits[0].allFields(), nil), m.NumClasses())
	if err != nil {
		return nil, nil, inFile(paths[0], err)
	}
	ds := &Dataset{Dir: dir, Meta: m, Train: splits[0].Frame, Test: splits[1].Frame, TrainSchema: schema.Frame}
	if ds.ID, err = verifiedIdentity(dir, m); err != nil {
		return nil, nil, err
	}
	return ds, ids, nil
}

// trainSkip is the training split's columns o leaves unread (nil: none).
func (o LoadOptions) trainSkip() func(arrow.Field) bool {
	if !o.NoTrainEta && !o.NoTrainFeatures {
		return nil
	}
	return func(f arrow.Field) bool {
		fam, _, perClass, _ := classColumnOf(f.Name)
		switch c := columnNamed(f.Name); {
		case f.Name == ColEta || perClass && classVecs[fam].prefix == ColEtaPrefix: // η, or η_c of C classes
			return true
		case f.Name == ColP0 || f.Name == ColMu || f.Name == ColSigma: // the law of values
			return true
		case perClass:
			return false
		case !o.NoTrainFeatures:
			return false
		case f.Name == ColIndices:
			return true
		case c == nil && isFloat(f.Type): // a dense feature
			return true
		}
		return f.Name == o.IDColumn
	}
}

// checkLabelColumns checks each split's label column against meta.json's
// label kind: values (a float label column on the grid) for a dataset of
// values, classes otherwise.
func checkLabelColumns(m *Meta, paths [2]string, splits [2]*frameReader) error {
	values := m.LabelKind() == LabelsValues
	for i, f := range splits {
		switch {
		case values && f.Label != nil, !values && f.Value != nil:
			return fmt.Errorf("%w: %s: meta.json says the labels are %s, the file's label column is %s", ErrMismatch, paths[i],
				m.LabelKind().Words(m.NumClasses()), map[bool]string{true: "of classes (integers)", false: "of values (floats)"}[f.Label != nil])
		case values:
			if err := f.CheckValues(m.ValueGrid()); err != nil {
				return inFile(paths[i], err)
			}
		}
	}
	return nil
}
