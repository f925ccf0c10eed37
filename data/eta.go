package data

import (
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// ReadEta reads the true class probabilities of a synthetic split file,
// a record batch at a time: its eta column (classes < 3: P(y = 1 | x), one
// value per row) or eta_0 … eta_{C−1} (C ≥ 3 classes, row-major), and nil
// when the file has none (imported data). It is for the audit (the model
// attack's prior on training rows, which data.LoadWith leaves unread); no
// trainer reads it.
func ReadEta(path string, classes int) ([]float64, error) {
	names := []string{ColEta}
	if classes >= 3 {
		names = names[:0]
		for c := range classes {
			names = append(names, ColEtaPrefix+strconv.Itoa(c))
		}
	}
	var cols [][]float64
	var idx []int
	err := eachBatch(path, func(schema *arrow.Schema, rec arrow.RecordBatch, _ int) error {
		if idx == nil {
			idx = make([]int, len(names))
			for j, name := range names {
				idx[j] = slices.IndexFunc(schema.Fields(), func(f arrow.Field) bool { return f.Name == name })
				if idx[j] < 0 {
					if j > 0 {
						return fmt.Errorf("%w: column %q missing beside %q", ErrSchema, name, names[0])
					}
					return errNoEta
				}
			}
			cols = make([][]float64, len(names))
		}
		for j, c := range idx {
			var err error
			if cols[j], err = appendFloat64(cols[j], rec.Column(c), names[j]); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoEta):
		return nil, nil
	case err != nil:
		return nil, inFile(path, err)
	case cols == nil:
		return nil, nil // no rows
	}
	if len(names) == 1 {
		return cols[0], nil
	}
	n := len(cols[0])
	out := make([]float64, n*len(names))
	for j, col := range cols {
		for i, v := range col {
			out[i*len(names)+j] = v
		}
	}
	return out, nil
}

// errNoEta stops ReadEta at a file without η.
var errNoEta = errors.New("data: no eta column")
