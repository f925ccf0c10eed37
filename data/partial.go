package data

import (
	"fmt"
	"io"
	"runtime/debug"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Reading parts of a split without holding it: a stage that never trains
// (the audit) loads the training split without its features
// (LoadOptions.NoTrainFeatures) and reads what it needs of them here, a
// record batch at a time (a mapped file's pages are dropped after each).

// SplitFile is the file of a dataset directory's split ("train" or
// "test"): its .arrow file, or its .parquet one when only that exists.
func SplitFile(dir, split string) string { return dataFile(dir, split) }

// denseColumns are the file columns of fields holding dense features, and
// their names, in order (an id column excluded).
func denseColumns(fields []arrow.Field, idCol string) (cols []int, names []string) {
	for i, f := range fields {
		if f.Name != idCol && !reservedName(f.Name) && isFloat(f.Type) { // not a named, index or per-class column
			cols, names = append(cols, i), append(names, f.Name)
		}
	}
	return cols, names
}

// denseAt reads row i of a float32 or float64 column as the frame holds it
// (float32).
func denseAt(col arrow.Array, i int) (float32, error) {
	switch a := col.(type) {
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return float32(a.Value(i)), nil
	}
	return 0, fmt.Errorf("%w: a dense column has type %s in a record batch", ErrCorrupt, col.DataType())
}

// eachBatch calls fn with every record batch of path, dropping a mapped
// file's pages after each.
func eachBatch(path string, fn func(schema *arrow.Schema, rec arrow.RecordBatch, first int) error) (err error) {
	defer recoverCorrupt(&err)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a mapped file that shrinks: an error, not a crash
	rr, err := openRecords(path)
	if err != nil {
		return err
	}
	defer rr.Close()
	first := 0
	for i := 0; ; i++ {
		rec, err := rr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return corrupt(fmt.Errorf("record batch %d: %w", i, err))
		}
		if int(rec.NumCols()) != len(rr.Schema().Fields()) {
			return fmt.Errorf("%w: record batch %d has %d columns, schema %d", ErrCorrupt, i, rec.NumCols(), len(rr.Schema().Fields()))
		}
		if err := fn(rr.Schema(), rec, first); err != nil {
			return fmt.Errorf("record batch %d: %w", i, err)
		}
		first += int(rec.NumRows())
		dropRead(rr)
	}
}

// FitStandardizerFile is FitStandardizer of the dense features of the file
// at path (column idCol, when not "", is an id column, not a feature),
// read a record batch at a time: the same Standardizer, bit for bit, as
// fitting the loaded frame, without holding the features.
func FitStandardizerFile(path, idCol string) (*Standardizer, error) {
	var w *welford
	var names []string
	var cols []int
	var row []float32
	err := eachBatch(path, func(schema *arrow.Schema, rec arrow.RecordBatch, _ int) error {
		if w == nil {
			cols, names = denseColumns(schema.Fields(), idCol)
			w, row = newWelford(len(cols)), make([]float32, len(cols))
		}
		for i := range int(rec.NumRows()) {
			for j, c := range cols {
				v, err := denseAt(rec.Column(c), i)
				if err != nil {
					return err
				}
				row[j] = v
			}
			w.add(row)
		}
		return nil
	})
	if err != nil {
		return nil, inFile(path, err)
	}
	if w == nil || w.n == 0 {
		return nil, inFile(path, fmt.Errorf("%w: no rows to standardize from", ErrEmpty))
	}
	s, j := w.standardizer(names)
	if j >= 0 {
		return nil, inFile(path, fmt.Errorf("%w: feature %q has a value that is not finite, or overflows", ErrInvalid, names[j]))
	}
	return s, nil
}

// ReadRows reads the given rows of the file at path (row numbers from 0,
// each at most once, in any order) into a frame holding, in that order,
// their dense features and labels (column idCol, when not "", is an id
// column, not a feature), a record batch at a time.
func ReadRows(path, idCol string, rows []int) (*Frame, error) {
	at := make([]int, len(rows)) // positions by row number
	for i := range at {
		at[i] = i
	}
	slices.SortFunc(at, func(a, b int) int { return rows[a] - rows[b] })
	for k := 1; k < len(at); k++ {
		if rows[at[k]] == rows[at[k-1]] {
			return nil, fmt.Errorf("data: ReadRows: row %d asked twice", rows[at[k]])
		}
	}
	var f *Frame
	var cols []int
	label := -1
	next := 0 // into at
	err := eachBatch(path, func(schema *arrow.Schema, rec arrow.RecordBatch, first int) error {
		if f == nil {
			var names []string
			cols, names = denseColumns(schema.Fields(), idCol)
			label = slices.IndexFunc(schema.Fields(), func(f arrow.Field) bool { return f.Name == ColLabel })
			f = &Frame{Rows: len(rows), Features: names, X: make([]float32, len(rows)*len(cols))}
			if label >= 0 {
				f.Label = make([]uint8, len(rows))
			}
		}
		n, d := int(rec.NumRows()), len(cols)
		var labels []uint8
		if label >= 0 && next < len(at) && rows[at[next]] < first+n {
			var err error
			if labels, err = appendClass(nil, rec.Column(label), ColLabel); err != nil {
				return err
			}
		}
		for ; next < len(at) && rows[at[next]] < first+n; next++ {
			pos, i := at[next], rows[at[next]]-first
			if i < 0 {
				return fmt.Errorf("data: ReadRows: row %d is negative", rows[at[next]])
			}
			for j, c := range cols {
				v, err := denseAt(rec.Column(c), i)
				if err != nil {
					return err
				}
				f.X[pos*d+j] = v
			}
			if labels != nil {
				f.Label[pos] = labels[i]
			}
		}
		return nil
	})
	if err != nil {
		return nil, inFile(path, err)
	}
	if next < len(at) {
		return nil, inFile(path, fmt.Errorf("%w: row %d asked, the file has fewer", ErrInvalid, rows[at[next]]))
	}
	if f == nil {
		f = &Frame{}
	}
	return f, nil
}
