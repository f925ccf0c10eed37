package data

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ImportCSV imports a comma-separated file with a header line naming its
// columns (plain, .gz or .bz2): the column LabelColumn is the label —
// conversion values with Values set (a real number each, clipped and
// rounded to the grid, counted), classes otherwise (0/1 or -1/+1; with
// Classes C ≥ 3 the classes 0..C−1) — and every other column is a dense
// float32 feature, in file order. The first TestRows rows are the test
// set. Fields are plain decimals; a line with another number of fields, a
// field that is not a number, and a NaN, ±Inf or negative value are a
// *LineError naming the file and line (a NaN or ±Inf feature is ErrInvalid,
// droppable with DropInvalid).
func ImportCSV(ctx context.Context, opts ImportOptions) (*Meta, error) {
	if err := opts.checkLabels(); err != nil {
		return nil, err
	}
	if opts.TestIn != "" {
		return nil, fmt.Errorf("%w: the csv importer takes one file (its first TestRows rows are the test set)", ErrInvalid)
	}
	names, err := csvHeader(opts.In)
	if err != nil {
		return nil, err
	}
	at := slices.Index(names, opts.LabelColumn)
	if opts.LabelColumn == "" || at < 0 {
		return nil, fmt.Errorf("%w: %s:1: no label column %q in the header (columns: %s)", ErrMalformed, opts.In, opts.LabelColumn, strings.Join(names, ", "))
	}
	feats := slices.Delete(slices.Clone(names), at, at+1)
	for j, n := range feats {
		if n == "" || reservedName(n) || slices.Contains(feats[:j], n) {
			return nil, fmt.Errorf("%w: %s:1: feature column %q is empty, repeated or a reserved name", ErrMalformed, opts.In, n)
		}
	}
	like := opts.labelled(&Frame{Features: feats})
	meta := &Meta{Source: "csv", Input: opts.In, Dims: len(feats)}
	header := true
	x := make([]float32, len(feats))
	parse := func(line []byte, c *Frame) error {
		if header {
			header = false
			return errSkipLine
		}
		fields := bytes.Split(bytes.TrimRight(line, "\r\n"), []byte{','})
		if len(fields) != len(names) {
			return fmt.Errorf("%w: %d fields, the header has %d", ErrMalformed, len(fields), len(names))
		}
		j := 0
		for col, f := range fields {
			f = bytes.TrimSpace(f)
			if col == at {
				continue
			}
			v, err := strconv.ParseFloat(str(f), 64)
			switch {
			case err == nil && notPlainDecimal(f):
				return errNotDecimal(fmt.Sprintf("column %q", names[col]), f)
			case err != nil && !errors.Is(err, strconv.ErrRange):
				return fmt.Errorf("%w: column %q: %q is not a number", ErrMalformed, names[col], f)
			case err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > math.MaxFloat32:
				return fmt.Errorf("%w: column %q is %q", ErrInvalid, names[col], f)
			}
			x[j] = float32(v)
			j++
		}
		tok := bytes.TrimSpace(fields[at])
		if like.Value != nil {
			v, err := parseRealLabel(tok)
			if err == nil {
				v, err = opts.Values.snapValue(v, &meta.ClippedValues, &meta.RoundedValues)
			}
			if err != nil {
				return fmt.Errorf("column %q: %w", opts.LabelColumn, err)
			}
			c.Value = append(c.Value, v)
		} else {
			y, err := parseClassLabel(tok, like.NumClasses())
			if err != nil {
				return fmt.Errorf("column %q: %w", opts.LabelColumn, err)
			}
			c.Label = append(c.Label, y)
		}
		c.X = append(c.X, x...)
		c.Rows++
		return nil
	}
	return runImport(ctx, opts, like, parse, meta)
}

// csvHeader reads the first line of a csv file: its column names.
func csvHeader(path string) ([]string, error) {
	in, err := openInput(path)
	if err != nil {
		return nil, err
	}
	defer in.close()
	line, err := newLineReader(in).next()
	if err != nil {
		return nil, &LineError{File: path, Line: 1, Err: fmt.Errorf("%w: no header line (%v)", ErrMalformed, err)}
	}
	var names []string
	for _, f := range bytes.Split(bytes.TrimRight(line, "\r\n"), []byte{','}) {
		names = append(names, strings.TrimSpace(string(f)))
	}
	return names, nil
}
