package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"labelprivacy/data"
	"labelprivacy/pets"
)

// RowError is a bad value in one row of a table being read (ReadRuns,
// ReadAudits, ReadPosteriors). It wraps the cause.
type RowError struct {
	Table  string // "runs", "audit", "posteriors"
	Row    int    // 0-based row index
	Column string
	Err    error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("report: %s table row %d, column %q: %v", e.Table, e.Row, e.Column, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// A schema is the one description of a table of Go records T: the
// table's name (in errors) and its columns in file order. The CSV and
// Parquet files are written (toTable) and read (fromTable) through it, and
// Run's JSON record is derived from runSchema (run.go), so a field is
// added in one place: T, plus one column here. README's column lists are
// checked against the schemas (TestREADMEColumns).
type schema[T any] struct {
	name string // "runs", "audit", …
	cols []column[T]
}

// names returns the table's column names, in order (JSON-only fields
// excluded).
func (s schema[T]) names() []string {
	var out []string
	for _, c := range s.cols {
		if !c.jsonOnly {
			out = append(out, c.name)
		}
	}
	return out
}

// column describes one column of a Go record type T: its name, whether a
// table read back must have it (columns added after the first file format
// are optional: missing floats read as NaN, others as zero), how to write
// and read it, and the field it stores (for the JSON form).
type column[T any] struct {
	name     string
	optional bool
	write    func(rows []T) any                    // []string, []float64, []int64 or []bool
	read     func(rows []T, vals any) (int, error) // returns the bad row on error
	missing  func(rows []T)                        // fills rows when an optional column is absent
	field    func(*T) any                          // a pointer to the field the column stores
	// jsonOnly: a field of the JSON record only (tables leave it out);
	// omitEmpty: the JSON record leaves the field out when it is empty.
	jsonOnly, omitEmpty bool
}

// opt marks a column optional when reading.
func opt[T any](c column[T]) column[T] { c.optional = true; return c }

// omitEmpty makes the JSON record leave the column's field out when empty.
func omitEmpty[T any](c column[T]) column[T] { c.omitEmpty = true; return c }

// jsonOnly is a field that only the JSON record holds, under name.
func jsonOnly[T, F any](name string, p func(*T) *F) column[T] {
	return column[T]{name: name, jsonOnly: true, field: func(t *T) any { return p(t) }}
}

// mapCol is a column whose cells are V (string, float64, int64 or bool),
// converted from a field F of T by to and back by from; fill (may be nil)
// sets the field when an optional column is absent.
func mapCol[T, F, V any](name string, p func(*T) *F, to func(F) V, from func(V) (F, error), fill func(*F)) column[T] {
	return column[T]{
		name:  name,
		field: func(t *T) any { return p(t) },
		write: func(rows []T) any {
			v := make([]V, len(rows))
			for i := range rows {
				v[i] = to(*p(&rows[i]))
			}
			return v
		},
		read: func(rows []T, vals any) (int, error) {
			v := vals.([]V)
			for i := range rows {
				f, err := from(v[i])
				if err != nil {
					return i, err
				}
				*p(&rows[i]) = f
			}
			return 0, nil
		},
		missing: func(rows []T) {
			for i := range rows {
				if fill != nil {
					fill(p(&rows[i]))
				}
			}
		},
	}
}

func same[V any](v V) V            { return v }
func sameOK[V any](v V) (V, error) { return v, nil }
func setNaN(f *float64)            { *f = math.NaN() }

func strCol[T any](name string, p func(*T) *string) column[T] {
	return mapCol(name, p, same[string], sameOK[string], nil)
}

func f64Col[T any](name string, p func(*T) *float64) column[T] {
	return mapCol(name, p, same[float64], sameOK[float64], setNaN)
}

func boolCol[T any](name string, p func(*T) *bool) column[T] {
	return mapCol(name, p, same[bool], sameOK[bool], nil)
}

// intCol stores an integer field as an int64 column (a uint64 keeps its
// bits: values ≥ 2^63 read as negative int64 in pandas).
func intCol[T any, I ~int | ~int64 | ~uint64 | ~uint8](name string, p func(*T) *I) column[T] {
	return mapCol(name, p, func(v I) int64 { return int64(v) }, func(v int64) (I, error) { return I(v), nil }, nil)
}

// classesCol stores a class count C as an int64 column: a 0 (binary,
// unset) is written as 2, and a file without the column (written before
// classes existed, all binary) reads as 2.
func classesCol[T any](name string, p func(*T) *int) column[T] {
	return mapCol(name, p, func(v int) int64 { return int64(binaryIs2(v)) }, func(v int64) (int, error) { return int(v), nil },
		func(c *int) { *c = 2 })
}

// nullIntCol stores an integer field whose 0 means "not applicable" (k
// outside the LLP family) as a nullable int64 column: 0 is written as a
// null (an empty CSV field, a Parquet null; NaN in pandas), and a null or
// a 0 of an older file reads as 0.
func nullIntCol[T any](name string, p func(*T) *int) column[T] {
	return nullCol(name, p, func(v int) int64 { return int64(v) }, func(v int64) int { return int(v) })
}

// nullF64Col is nullIntCol for a float field whose 0 means "not
// applicable" (a mechanism's ε where it has none).
func nullF64Col[T any](name string, p func(*T) *float64) column[T] {
	return nullCol(name, p, same[float64], same[float64])
}

// nullCol is a column of data.Nullable[V] cells from a field F whose zero
// value means "not applicable"; a null reads as F's zero value.
func nullCol[T any, F comparable, V int64 | float64](name string, p func(*T) *F, to func(F) V, from func(V) F) column[T] {
	var zero F
	return column[T]{
		name:  name,
		field: func(t *T) any { return p(t) },
		write: func(rows []T) any {
			n := data.Nullable[V]{Values: make([]V, len(rows)), Valid: make([]bool, len(rows))}
			for i := range rows {
				if f := *p(&rows[i]); f != zero {
					n.Values[i], n.Valid[i] = to(f), true
				}
			}
			return n
		},
		read: func(rows []T, vals any) (int, error) {
			n := vals.(data.Nullable[V])
			for i := range rows {
				*p(&rows[i]) = zero
				if n.Valid[i] {
					*p(&rows[i]) = from(n.Values[i])
				}
			}
			return 0, nil
		},
		missing: func([]T) {},
	}
}

// asWanted converts a column's cells read from a file to the type the
// schema writes when the file holds the same values in another form: a
// plain slice for a nullable column (a file written before the column
// became nullable, or one without nulls), and a nullable float or string
// column for a plain one (nulls read as NaN or "").
func asWanted(want, vals any) any {
	switch want.(type) {
	case data.Nullable[int64]:
		if v, ok := vals.([]int64); ok {
			return allValid(v)
		}
	case data.Nullable[float64]:
		if v, ok := vals.([]float64); ok {
			return allValid(v)
		}
	case []float64:
		if v, ok := vals.(data.Nullable[float64]); ok {
			out := slices.Clone(v.Values)
			for i := range out {
				if !v.Valid[i] {
					out[i] = math.NaN()
				}
			}
			return out
		}
	case []string:
		if v, ok := vals.(data.Nullable[string]); ok {
			return v.Values
		}
	}
	return vals
}

func allValid[V int64 | float64](v []V) data.Nullable[V] {
	valid := make([]bool, len(v))
	for i := range valid {
		valid[i] = true
	}
	return data.Nullable[V]{Values: v, Valid: valid}
}

// kindCol stores a mechanism as its canonical name ("rr", "llp_geom", …).
func kindCol[T any](name string, p func(*T) *pets.Kind) column[T] {
	return mapCol(name, p, pets.Kind.String, pets.ParseKind, nil)
}

// toTable writes rows as a table with the schema's columns, in order.
func (s schema[T]) toTable(rows []T, meta map[string]string) *data.Table {
	t := &data.Table{Meta: meta}
	for _, c := range s.cols {
		if !c.jsonOnly {
			t.Columns = append(t.Columns, data.Column{Name: c.name, Values: c.write(rows)})
		}
	}
	return t
}

// fromTable reads a table written by toTable (or an older file lacking the
// optional columns). Extra columns are ignored. A missing required column,
// a column of the wrong type or of the wrong length wraps data.ErrSchema; a
// bad value is a *RowError.
func (s schema[T]) fromTable(t *data.Table) ([]T, error) {
	what := s.name
	if t == nil {
		return nil, fmt.Errorf("report: read %s: nil table", what)
	}
	byName := make(map[string]any, len(t.Columns))
	for _, c := range t.Columns {
		if _, dup := byName[c.Name]; dup {
			return nil, fmt.Errorf("%w: report: %s table has column %q twice", data.ErrSchema, what, c.Name)
		}
		byName[c.Name] = c.Values
	}
	n := t.Rows()
	rows := make([]T, n)
	for _, c := range s.cols {
		if c.jsonOnly {
			continue
		}
		vals, ok := byName[c.name]
		if !ok {
			if !c.optional {
				return nil, fmt.Errorf("%w: report: %s table has no column %q", data.ErrSchema, what, c.name)
			}
			c.missing(rows)
			continue
		}
		want := c.write(nil)
		vals = asWanted(want, vals)
		if fmt.Sprintf("%T", want) != fmt.Sprintf("%T", vals) {
			return nil, fmt.Errorf("%w: report: %s column %q is %T, want %T", data.ErrSchema, what, c.name, vals, want)
		}
		if m := (&data.Table{Columns: []data.Column{{Name: c.name, Values: vals}}}).Rows(); m != n {
			return nil, fmt.Errorf("%w: report: %s column %q has %d rows, want %d", data.ErrSchema, what, c.name, m, n)
		}
		if i, err := c.read(rows, vals); err != nil {
			return nil, &RowError{Table: what, Row: i, Column: c.name, Err: err}
		}
	}
	return rows, nil
}

// sameFloat is == that treats NaN as equal to NaN.
func sameFloat(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// sortedKeys returns the keys of m, sorted.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
