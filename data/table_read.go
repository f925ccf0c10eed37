package data

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// readTableFile reads the Parquet file at path into a Table: its schema
// and file metadata, every column of a supported type (string, float64,
// int64, bool) over all record batches, nullable where a null was seen. A
// corrupt file is an ErrCorrupt (a panic of the reader too).
func readTableFile(path string) (t *Table, err error) {
	defer recoverCorrupt(&err)
	rr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	s := rr.Schema()
	t = &Table{Meta: tableMeta(s, rr)}
	if t.Columns, err = tableColumns(s); err != nil {
		return nil, err
	}
	valid := make([][]bool, len(t.Columns)) // per column: nil until a null is seen
	for b := 0; ; b++ {
		rec, err := rr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, corrupt(fmt.Errorf("record batch %d: %w", b, err))
		}
		if err := t.appendBatch(rec, b, valid); err != nil {
			return nil, err
		}
	}
	t.setNullable(valid)
	return t, t.check()
}

// tableMeta is the file's metadata: the Arrow schema s's, then the Parquet
// file key/values (where pqarrow keeps it) but ARROW:schema.
func tableMeta(s *arrow.Schema, rr *parquetReader) map[string]string {
	meta := map[string]string{}
	md := s.Metadata()
	for i, k := range md.Keys() {
		meta[k] = md.Values()[i]
	}
	// pqarrow keeps schema metadata as file key/values.
	if kv := rr.pf.MetaData().KeyValueMetadata(); kv != nil {
		for i, k := range kv.Keys() {
			if k != "ARROW:schema" {
				meta[k] = kv.Values()[i]
			}
		}
	}
	return meta
}

// tableColumns are the schema's columns, each empty of its Go type; a
// field of another type is an ErrSchema.
func tableColumns(s *arrow.Schema) ([]Column, error) {
	var cols []Column
	for _, f := range s.Fields() {
		var v any
		switch f.Type.ID() {
		case arrow.STRING, arrow.LARGE_STRING:
			v = []string{}
		case arrow.FLOAT64:
			v = []float64{}
		case arrow.INT64:
			v = []int64{}
		case arrow.BOOL:
			v = []bool{}
		default:
			return nil, fmt.Errorf("%w: column %q has type %s", ErrSchema, f.Name, f.Type)
		}
		cols = append(cols, Column{Name: f.Name, Values: v})
	}
	return cols, nil
}

// appendBatch appends record batch b's values to t's columns, and to
// valid[j] each value's validity once column j has had a null (ErrCorrupt
// when the batch does not match the schema).
func (t *Table) appendBatch(rec arrow.RecordBatch, b int, valid [][]bool) error {
	if int(rec.NumCols()) != len(t.Columns) {
		return fmt.Errorf("%w: record batch %d has %d columns, schema %d", ErrCorrupt, b, rec.NumCols(), len(t.Columns))
	}
	for j := range t.Columns {
		c := &t.Columns[j]
		col := rec.Column(j)
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("%w: column %q has %d values in a record batch of %d rows", ErrCorrupt, c.Name, col.Len(), rec.NumRows())
		}
		ok := true
		switch a := col.(type) {
		case *array.String:
			c.Values, ok = appendValues(c.Values, a)
		case *array.LargeString:
			c.Values, ok = appendValues(c.Values, a)
		case *array.Float64:
			c.Values, ok = appendValues(c.Values, a)
		case *array.Int64:
			c.Values, ok = appendValues(c.Values, a)
		case *array.Boolean:
			c.Values, ok = appendValues(c.Values, a)
		default:
			ok = false
		}
		if !ok {
			return fmt.Errorf("%w: column %q has type %s in a record batch, %T in the schema", ErrCorrupt, c.Name, col.DataType(), c.Values)
		}
		if col.NullN() > 0 && valid[j] == nil {
			valid[j] = make([]bool, colLen(c.Values)-col.Len(), colLen(c.Values)) // earlier batches: no nulls
			for i := range valid[j] {
				valid[j][i] = true
			}
		}
		if valid[j] != nil {
			for i := range col.Len() {
				valid[j] = append(valid[j], col.IsValid(i))
			}
		}
	}
	return nil
}

// setNullable makes each column j with valid[j] set a Nullable of its
// values.
func (t *Table) setNullable(valid [][]bool) {
	for j, v := range valid {
		if v == nil {
			continue
		}
		c := &t.Columns[j]
		switch x := c.Values.(type) {
		case []string:
			c.Values = Nullable[string]{Values: x, Valid: v}
		case []float64:
			c.Values = Nullable[float64]{Values: x, Valid: v}
		case []int64:
			c.Values = Nullable[int64]{Values: x, Valid: v}
		case []bool:
			c.Values = Nullable[bool]{Values: x, Valid: v}
		}
	}
}

// appendValues appends a's values to dst, a []T (a null as T's zero
// value); ok is false if dst holds another type.
func appendValues[T any](dst any, a interface {
	Len() int
	Value(int) T
	IsNull(int) bool
}) (any, bool) {
	vals, ok := dst.([]T)
	if !ok {
		return dst, false
	}
	var zero T
	for i := range a.Len() {
		if a.IsNull(i) {
			vals = append(vals, zero)
		} else {
			vals = append(vals, a.Value(i))
		}
	}
	return vals, true
}
