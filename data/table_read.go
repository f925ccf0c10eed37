package data

import (
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

func readTableFile(path string) (*Table, error) {
	rr, err := openParquet(path)
	if err != nil {
		return nil, err
	}
	defer rr.Close()
	pf := rr.pf
	s := rr.Schema()
	t := &Table{Meta: map[string]string{}}
	md := s.Metadata()
	for i, k := range md.Keys() {
		t.Meta[k] = md.Values()[i]
	}
	// pqarrow keeps schema metadata as file key/values.
	if kv := pf.MetaData().KeyValueMetadata(); kv != nil {
		for i, k := range kv.Keys() {
			if k != "ARROW:schema" {
				t.Meta[k] = kv.Values()[i]
			}
		}
	}
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
		t.Columns = append(t.Columns, Column{Name: f.Name, Values: v})
	}
	for {
		rec, err := rr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		for j := range t.Columns {
			c := &t.Columns[j]
			switch a := rec.Column(j).(type) {
			case *array.String:
				vals := c.Values.([]string)
				for i := range a.Len() {
					vals = append(vals, a.Value(i))
				}
				c.Values = vals
			case *array.LargeString:
				vals := c.Values.([]string)
				for i := range a.Len() {
					vals = append(vals, a.Value(i))
				}
				c.Values = vals
			case *array.Float64:
				c.Values = append(c.Values.([]float64), a.Float64Values()...)
			case *array.Int64:
				c.Values = append(c.Values.([]int64), a.Int64Values()...)
			case *array.Boolean:
				vals := c.Values.([]bool)
				for i := range a.Len() {
					vals = append(vals, a.Value(i))
				}
				c.Values = vals
			}
		}
	}
	return t, nil
}
