package data

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// column is one per-row column of a Frame other than the dense features and
// the sparse indices: the one place that knows its name, Arrow type and Frame
// field, so writing, reading, validation, Slice and Take cannot disagree.
type column interface {
	name() string
	dataType() arrow.DataType
	present(f *Frame) bool
	length(f *Frame) int
	accepts(t arrow.DataType) bool             // can be read from a file column of type t
	setEmpty(f *Frame)                         // a present column of no rows
	reserve(f *Frame, n int)                   // a present column of no rows, room for n
	array(f *Frame) arrow.Array                // zero-copy view of the column
	appendArrow(f *Frame, a arrow.Array) error // append a column read from a file
	slice(dst, src *Frame, i, j int)           // dst's column = src's rows [i, j)
	take(dst, src *Frame, rows []int)          // dst's column = src's rows, copied
}

// typedColumn implements column for a Frame field of element type T.
type typedColumn[T uint8 | int64 | uint64 | float64] struct {
	col   string
	dt    arrow.DataType
	field func(*Frame) *[]T
	conv  func(dst []T, a arrow.Array, name string) ([]T, error)
}

func (c typedColumn[T]) name() string               { return c.col }
func (c typedColumn[T]) dataType() arrow.DataType   { return c.dt }
func (c typedColumn[T]) present(f *Frame) bool      { return *c.field(f) != nil }
func (c typedColumn[T]) length(f *Frame) int        { return len(*c.field(f)) }
func (c typedColumn[T]) setEmpty(f *Frame)          { *c.field(f) = []T{} }
func (c typedColumn[T]) reserve(f *Frame, n int)    { *c.field(f) = make([]T, 0, n) }
func (c typedColumn[T]) array(f *Frame) arrow.Array { return primArray(c.dt, *c.field(f)) }

func (c typedColumn[T]) accepts(t arrow.DataType) bool {
	if _, float := any(*new(T)).(float64); float {
		return isFloat(t)
	}
	return isInteger(t)
}

func (c typedColumn[T]) slice(dst, src *Frame, i, j int) {
	*c.field(dst) = sub(*c.field(src), i, j)
}
func (c typedColumn[T]) take(dst, src *Frame, rows []int) {
	*c.field(dst) = take(*c.field(src), rows)
}

func (c typedColumn[T]) appendArrow(f *Frame, a arrow.Array) error {
	p := c.field(f)
	v, err := c.conv(*p, a, c.col)
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// labelColumn comes first in a file; the others follow the features and the
// sparse indices, in tailColumns' order (the order of existing files).
var (
	labelColumn column = typedColumn[uint8]{ColLabel, arrow.PrimitiveTypes.Uint8, func(f *Frame) *[]uint8 { return &f.Label }, appendClass}
	// valueColumn is the label column of conversion values (float64): read
	// for a file's float label column, written for a frame's Value.
	valueColumn column = typedColumn[float64]{ColLabel, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Value }, appendFloat64}
	tailColumns        = []column{
		typedColumn[float64]{ColEta, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Eta }, appendFloat64},
		typedColumn[int64]{ColBagID, arrow.PrimitiveTypes.Int64, func(f *Frame) *[]int64 { return &f.BagID }, appendInt64},
		typedColumn[uint8]{ColLabelRR, arrow.PrimitiveTypes.Uint8, func(f *Frame) *[]uint8 { return &f.LabelRR }, appendClass},
		typedColumn[float64]{ColAlpha, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Alpha }, appendFloat64},
		typedColumn[float64]{ColAlphaDebiased, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.AlphaDebiased }, appendFloat64},
		typedColumn[int64]{ColRow, arrow.PrimitiveTypes.Int64, func(f *Frame) *[]int64 { return &f.Row }, appendInt64},
		typedColumn[float64]{ColPrior, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Prior }, appendFloat64},
		typedColumn[uint8]{ColBranch, arrow.PrimitiveTypes.Uint8, func(f *Frame) *[]uint8 { return &f.Branch }, appendBit},
		typedColumn[uint8]{ColStage, arrow.PrimitiveTypes.Uint8, func(f *Frame) *[]uint8 { return &f.Stage }, appendStage},
		typedColumn[float64]{ColSoftTarget, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.SoftTarget }, appendFloat64},
		// C ≥ 3 only; the per-class float columns follow (classes.go).
		typedColumn[uint64]{ColPriorSet, arrow.PrimitiveTypes.Uint64, func(f *Frame) *[]uint64 { return &f.PriorSet }, appendUint64},
		typedColumn[uint8]{ColPriorSetSize, arrow.PrimitiveTypes.Uint8, func(f *Frame) *[]uint8 { return &f.PriorSetSize }, appendSetSize},
		// Conversion values (values.go).
		typedColumn[float64]{ColP0, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.P0 }, appendFloat64},
		typedColumn[float64]{ColMu, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Mu }, appendFloat64},
		typedColumn[float64]{ColSigma, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.Sigma }, appendFloat64},
		typedColumn[float64]{ColValueRR, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.ValueRR }, appendFloat64},
		typedColumn[float64]{ColBagMean, arrow.PrimitiveTypes.Float64, func(f *Frame) *[]float64 { return &f.BagMean }, appendFloat64},
		typedColumn[uint64]{ColARAState, arrow.PrimitiveTypes.Uint64, func(f *Frame) *[]uint64 { return &f.ARAState }, appendUint64},
	}
	// rowColumns: the label column comes first, as uint8 classes; a frame
	// of values holds valueColumn instead (the last entry, found by
	// columnFor).
	rowColumns = append(append([]column{labelColumn}, tailColumns...), valueColumn)
)

// firstColumn returns the column written first in a file (the label's,
// class or value), or nil.
func firstColumn(f *Frame) column {
	switch {
	case labelColumn.present(f):
		return labelColumn
	case valueColumn.present(f):
		return valueColumn
	}
	return nil
}

// columnFor returns the per-row column a file column called name of type t
// is read into: columnNamed's, except that a float label column holds
// values.
func columnFor(name string, t arrow.DataType) column {
	if name == ColLabel && isFloat(t) {
		return valueColumn
	}
	return columnNamed(name)
}

// columnNamed returns the per-row column called name, or nil (a feature or
// the indices).
func columnNamed(name string) column {
	for _, c := range rowColumns {
		if c.name() == name {
			return c
		}
	}
	return nil
}

// isInteger reports whether appendInt64 reads columns of type t.
func isInteger(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.UINT8, arrow.INT32, arrow.UINT32, arrow.INT64, arrow.UINT64, arrow.BOOL:
		return true
	}
	return false
}

func isFloat(t arrow.DataType) bool { return t.ID() == arrow.FLOAT32 || t.ID() == arrow.FLOAT64 }

// appendInt64 appends an integer column written by any tool (pandas writes
// int64 labels, pyarrow may write int32 bag ids).
func appendInt64(dst []int64, col arrow.Array, name string) ([]int64, error) {
	switch a := col.(type) {
	case *array.Int64:
		return append(dst, a.Int64Values()...), nil
	case *array.Int32:
		return appendConv(dst, a.Int32Values()), nil
	case *array.Uint32:
		return appendConv(dst, a.Uint32Values()), nil
	case *array.Uint8:
		return appendConv(dst, a.Uint8Values()), nil
	case *array.Int8:
		return appendConv(dst, a.Int8Values()), nil
	case *array.Uint64:
		for i, v := range a.Uint64Values() {
			if v > 1<<63-1 {
				return nil, fmt.Errorf("%w: column %q row %d: %d overflows int64", ErrInvalid, name, len(dst)+i, v)
			}
		}
		return appendConv(dst, a.Uint64Values()), nil
	case *array.Boolean:
		for i := range a.Len() {
			if a.Value(i) {
				dst = append(dst, 1)
			} else {
				dst = append(dst, 0)
			}
		}
		return dst, nil
	}
	return nil, fmt.Errorf("%w: column %q has type %s, want an integer", ErrSchema, name, col.DataType())
}

func appendConv[S uint8 | int8 | int32 | uint32 | uint64 | float32, D int64 | float64](dst []D, src []S) []D {
	for _, v := range src {
		dst = append(dst, D(v))
	}
	return dst
}

// appendUint8 appends a small integer column as uint8, refusing values
// outside lo..hi with err (a sentinel) and what the values should be.
func appendUint8(dst []uint8, col arrow.Array, name string, lo, hi int64, err error, want string) ([]uint8, error) {
	base := len(dst)
	if a, ok := col.(*array.Uint8); ok {
		for i, v := range a.Uint8Values() {
			if int64(v) < lo || int64(v) > hi {
				return nil, fmt.Errorf("%w: column %q row %d has value %d, want %s", err, name, base+i, v, want)
			}
		}
		return append(dst, a.Uint8Values()...), nil
	}
	vals, e := appendInt64(nil, col, name)
	if e != nil {
		return nil, e
	}
	for i, v := range vals {
		if v < lo || v > hi {
			return nil, fmt.Errorf("%w: column %q row %d has value %d, want %s", err, name, base+i, v, want)
		}
		dst = append(dst, uint8(v))
	}
	return dst, nil
}

// appendClass reads a label column: classes 0..MaxClasses−1 (Validate then
// checks them against the frame's classes).
func appendClass(dst []uint8, col arrow.Array, name string) ([]uint8, error) {
	if a, ok := col.(*array.Uint8); ok {
		return append(dst, a.Uint8Values()...), nil
	}
	return appendUint8(dst, col, name, 0, MaxClasses-1, ErrLabel, fmt.Sprintf("a class in 0..%d", MaxClasses-1))
}

// appendBit reads rr_prior's branch column (0 or 1).
func appendBit(dst []uint8, col arrow.Array, name string) ([]uint8, error) {
	return appendUint8(dst, col, name, 0, 1, ErrLabel, "0 or 1")
}

// appendSetSize reads rr_prior's prior_set_size column (1..MaxClasses).
func appendSetSize(dst []uint8, col arrow.Array, name string) ([]uint8, error) {
	return appendUint8(dst, col, name, 1, MaxClasses, ErrInvalid, fmt.Sprintf("a set size in 1..%d", MaxClasses))
}

// appendUint64 reads rr_prior's prior_set masks (any non-negative integer
// column; uint64 as written).
func appendUint64(dst []uint64, col arrow.Array, name string) ([]uint64, error) {
	if a, ok := col.(*array.Uint64); ok {
		return append(dst, a.Uint64Values()...), nil
	}
	base := len(dst)
	vals, err := appendInt64(nil, col, name)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v < 0 {
			return nil, fmt.Errorf("%w: column %q row %d has value %d, want a set of classes (a bit mask ≥ 0)", ErrInvalid, name, base+i, v)
		}
		dst = append(dst, uint64(v))
	}
	return dst, nil
}

// appendStage reads rr_prior's stage column (1 or 2).
func appendStage(dst []uint8, col arrow.Array, name string) ([]uint8, error) {
	base := len(dst)
	vals, err := appendInt64(nil, col, name)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v != 1 && v != 2 {
			return nil, fmt.Errorf("%w: column %q row %d has value %d, want 1 or 2", ErrInvalid, name, base+i, v)
		}
		dst = append(dst, uint8(v))
	}
	return dst, nil
}

func appendFloat64(dst []float64, col arrow.Array, name string) ([]float64, error) {
	switch a := col.(type) {
	case *array.Float64:
		return append(dst, a.Float64Values()...), nil
	case *array.Float32:
		return appendConv(dst, a.Float32Values()), nil
	}
	return nil, fmt.Errorf("%w: column %q has type %s, want float64", ErrSchema, name, col.DataType())
}
