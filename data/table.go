package data

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"strconv"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"labelprivacy/internal/atomicfile"
)

// Column is one column of a results Table. Values is []string, []float64,
// []int64 or []bool, or a Nullable of one of these for a column whose
// cells may be null (not applicable).
type Column struct {
	Name   string
	Values any
}

// Nullable is the values of a column that may hold nulls: Valid[i] false
// marks row i null (Values[i] is then the zero value). A null is an empty
// CSV field and a Parquet null; pandas reads both as NaN.
type Nullable[T string | float64 | int64 | bool] struct {
	Values []T
	Valid  []bool
}

// NullableOf returns v with row i null where null(v[i]).
func NullableOf[T string | float64 | int64 | bool](v []T, null func(T) bool) Nullable[T] {
	n := Nullable[T]{Values: make([]T, len(v)), Valid: make([]bool, len(v))}
	for i, x := range v {
		if n.Valid[i] = !null(x); n.Valid[i] {
			n.Values[i] = x
		}
	}
	return n
}

func (n Nullable[T]) null(i int) bool { return !n.Valid[i] }

// Table is a small results table (runs, summaries, audits) written as CSV and
// Parquet that pandas/pyarrow read without adaptation.
type Table struct {
	Columns []Column
	Meta    map[string]string // Parquet/Arrow schema metadata
}

// Rows is the common column length (validated by the writers).
func (t *Table) Rows() int {
	if len(t.Columns) == 0 {
		return 0
	}
	return colLen(t.Columns[0].Values)
}

func colLen(v any) int {
	switch c := v.(type) {
	case []string:
		return len(c)
	case []float64:
		return len(c)
	case []int64:
		return len(c)
	case []bool:
		return len(c)
	case Nullable[string]:
		return nullableLen(c)
	case Nullable[float64]:
		return nullableLen(c)
	case Nullable[int64]:
		return nullableLen(c)
	case Nullable[bool]:
		return nullableLen(c)
	}
	return -1
}

// nullableLen is n's length, or -1 when its slices disagree.
func nullableLen[T string | float64 | int64 | bool](n Nullable[T]) int {
	if len(n.Valid) != len(n.Values) {
		return -1
	}
	return len(n.Values)
}

func (t *Table) check() error {
	if len(t.Columns) == 0 {
		return fmt.Errorf("%w: a table needs at least one column", ErrSchema)
	}
	// Parquet stores names and key/values as UTF-8 (thrift strings); other
	// bytes do not survive a round trip.
	for k, v := range t.Meta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return fmt.Errorf("%w: metadata %q: %q is not UTF-8", ErrSchema, k, v)
		}
	}
	n := t.Rows()
	seen := map[string]bool{}
	for _, c := range t.Columns {
		if seen[c.Name] {
			return fmt.Errorf("%w: two columns named %q", ErrSchema, c.Name)
		}
		if !utf8.ValidString(c.Name) {
			return fmt.Errorf("%w: column name %q is not UTF-8", ErrSchema, c.Name)
		}
		seen[c.Name] = true
		if m := colLen(c.Values); m < 0 {
			return fmt.Errorf("%w: column %q has unsupported type %T (or a Nullable whose slices differ in length)", ErrSchema, c.Name, c.Values)
		} else if m != n {
			return fmt.Errorf("%w: column %q has %d rows, want %d", ErrSchema, c.Name, m, n)
		}
	}
	return nil
}

// WriteCSV writes the table as CSV with a header, atomically. Floats use the
// shortest representation that round-trips; ±Inf is "inf"/"-inf" and NaN
// "nan" (what pandas.read_csv parses as floats); a null cell is empty.
func (t *Table) WriteCSV(path string) error {
	if err := t.check(); err != nil {
		return inFile(path, err)
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	head := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		head[j] = c.Name
	}
	write := func(rec []string) {
		if len(rec) == 1 && rec[0] == "" {
			// encoding/csv writes an empty line here, which CSV readers
			// (pandas included) skip: the row would vanish.
			w.Flush()
			buf.WriteString("\"\"\n")
			return
		}
		w.Write(rec)
	}
	write(head)
	rec := make([]string, len(t.Columns))
	for i := range t.Rows() {
		for j, c := range t.Columns {
			rec[j] = csvCell(c.Values, i)
		}
		write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return inFile(path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
}

// csvCell formats row i of a column's values ("" for a null).
func csvCell(vals any, i int) string {
	switch v := vals.(type) {
	case []string:
		return v[i]
	case []float64:
		return FormatFloat(v[i])
	case []int64:
		return strconv.FormatInt(v[i], 10)
	case []bool:
		return strconv.FormatBool(v[i])
	case Nullable[string]:
		return nullCell(v, i)
	case Nullable[float64]:
		return nullCell(v, i)
	case Nullable[int64]:
		return nullCell(v, i)
	case Nullable[bool]:
		return nullCell(v, i)
	}
	return ""
}

func nullCell[T string | float64 | int64 | bool](n Nullable[T], i int) string {
	if n.null(i) {
		return ""
	}
	return csvCell(n.Values, i)
}

// FormatFloat formats v for CSV: shortest round-trip form, "inf", "-inf", "nan".
func FormatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// record converts the table to one Arrow record batch (metadata keys
// sorted, so one table always gives the same bytes).
func (t *Table) record() (arrow.RecordBatch, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	mem := memory.DefaultAllocator
	fields := make([]arrow.Field, len(t.Columns))
	cols := make([]arrow.Array, len(t.Columns))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j, c := range t.Columns {
		nullable := false
		switch v := c.Values.(type) {
		case []string:
			cols[j] = build(array.NewStringBuilder(mem), v, nil)
		case []float64:
			cols[j] = build(array.NewFloat64Builder(mem), v, nil)
		case []int64:
			cols[j] = build(array.NewInt64Builder(mem), v, nil)
		case []bool:
			cols[j] = build(array.NewBooleanBuilder(mem), v, nil)
		case Nullable[string]:
			cols[j], nullable = build(array.NewStringBuilder(mem), v.Values, v.Valid), true
		case Nullable[float64]:
			cols[j], nullable = build(array.NewFloat64Builder(mem), v.Values, v.Valid), true
		case Nullable[int64]:
			cols[j], nullable = build(array.NewInt64Builder(mem), v.Values, v.Valid), true
		case Nullable[bool]:
			cols[j], nullable = build(array.NewBooleanBuilder(mem), v.Values, v.Valid), true
		}
		fields[j] = arrow.Field{Name: c.Name, Type: cols[j].DataType(), Nullable: nullable}
	}
	md := sortedMetadata(t.Meta)
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, int64(t.Rows())), nil
}

// build appends v (valid: nil, or false for a null) to a fresh builder
// and returns the array.
func build[T any, B interface {
	AppendValues([]T, []bool)
	NewArray() arrow.Array
	Release()
}](b B, v []T, valid []bool) arrow.Array {
	defer b.Release()
	b.AppendValues(v, valid)
	return b.NewArray()
}

// WriteParquet writes the table as a Snappy-compressed Parquet file,
// atomically.
func (t *Table) WriteParquet(path string) error {
	rec, err := t.record()
	if err != nil {
		return inFile(path, err)
	}
	defer rec.Release()
	tmp, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy))
	w, err := pqarrow.NewFileWriter(rec.Schema(), tmp, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return inFile(path, err)
	}
	// pqarrow's Close closed tmp; reopen to sync before the rename.
	f, err := os.OpenFile(tmp.Name(), os.O_RDWR, 0)
	if err != nil {
		os.Remove(tmp.Name())
		return inFile(path, err)
	}
	return atomicfile.Commit(f, path)
}

// ReadTable reads a Parquet file written by WriteParquet (or any Parquet
// file of string, float64, int64 and bool columns) back into a Table. A
// column holding a null reads as a Nullable, any other as a plain slice. A
// damaged file gives an error wrapping ErrCorrupt that names it.
func ReadTable(path string) (*Table, error) {
	fr, err := readTableFile(path)
	if err != nil {
		return nil, inFile(path, err)
	}
	return fr, nil
}
