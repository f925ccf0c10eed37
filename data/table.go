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
// []int64 or []bool.
type Column struct {
	Name   string
	Values any
}

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
	}
	return -1
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
			return fmt.Errorf("%w: column %q has unsupported type %T", ErrSchema, c.Name, c.Values)
		} else if m != n {
			return fmt.Errorf("%w: column %q has %d rows, want %d", ErrSchema, c.Name, m, n)
		}
	}
	return nil
}

// WriteCSV writes the table as CSV with a header, atomically. Floats use the
// shortest representation that round-trips; ±Inf is "inf"/"-inf" and NaN
// "nan" (what pandas.read_csv parses as floats).
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
			switch v := c.Values.(type) {
			case []string:
				rec[j] = v[i]
			case []float64:
				rec[j] = FormatFloat(v[i])
			case []int64:
				rec[j] = strconv.FormatInt(v[i], 10)
			case []bool:
				rec[j] = strconv.FormatBool(v[i])
			}
		}
		write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return inFile(path, err)
	}
	return atomicfile.WriteFile(path, buf.Bytes())
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
		switch v := c.Values.(type) {
		case []string:
			cols[j] = build(array.NewStringBuilder(mem), v)
		case []float64:
			cols[j] = build(array.NewFloat64Builder(mem), v)
		case []int64:
			cols[j] = build(array.NewInt64Builder(mem), v)
		case []bool:
			cols[j] = build(array.NewBooleanBuilder(mem), v)
		}
		fields[j] = arrow.Field{Name: c.Name, Type: cols[j].DataType()}
	}
	md := sortedMetadata(t.Meta)
	return array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, int64(t.Rows())), nil
}

// build appends v to a fresh builder and returns the array.
func build[T any, B interface {
	AppendValues([]T, []bool)
	NewArray() arrow.Array
	Release()
}](b B, v []T) arrow.Array {
	defer b.Release()
	b.AppendValues(v, nil)
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
// damaged file gives an error wrapping ErrCorrupt that names it.
func ReadTable(path string) (*Table, error) {
	fr, err := readTableFile(path)
	if err != nil {
		return nil, inFile(path, err)
	}
	return fr, nil
}
