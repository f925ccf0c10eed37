package simplegofast

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var (
	originalSlice executor     // simplego's Slice executor
	sliceCalls    atomic.Int64 // Slices run here (tests, self-test)
	sliceLayouts  sync.Map     // reflect.Type → [3]int (field indices) or error
)

// execSlice is the replacement Slice executor for enabled backends and
// float32 operands: simplego walks an index odometer per element (~3 ns);
// this copies each output row (the innermost axis, whatever its stride)
// in one loop, a memmove when the stride is 1. It is what the gradient of
// a Concatenate (a folded bias) goes through. The values are the same bits.
func execSlice(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	if len(inputs) != 1 || !isEnabled(backend) {
		return originalSlice(backend, node, inputs, owned)
	}
	shape, err := backend.BufferShape(inputs[0])
	if err != nil || shape.DType != dtypes.Float32 || shape.Rank() == 0 {
		return originalSlice(backend, node, inputs, owned)
	}
	starts, limits, strides, err := readSlice(node)
	if err != nil {
		return nil, fmt.Errorf("simplegofast: %w", err)
	}
	rank := shape.Rank()
	if len(starts) != rank || len(limits) != rank || len(strides) != rank {
		return originalSlice(backend, node, inputs, owned)
	}
	outDims := make([]int, rank)
	srcStrides := make([]int, rank)
	s := 1
	for ax := rank - 1; ax >= 0; ax-- {
		st, lim, step := starts[ax], limits[ax], strides[ax]
		if st < 0 || lim > shape.Dimensions[ax] || st > lim || step < 1 {
			return originalSlice(backend, node, inputs, owned)
		}
		outDims[ax] = (lim - st + step - 1) / step
		srcStrides[ax] = s * step
		s *= shape.Dimensions[ax]
	}
	out := backend.NewBuffer(shapes.Make(dtypes.Float32, outDims...))
	inFlat, _ := backend.BufferData(inputs[0])
	outFlat, _ := backend.BufferData(out)
	src, dst := inFlat.([]float32), outFlat.([]float32)
	if len(dst) > 0 {
		base := 0
		for ax := range rank {
			base += starts[ax] * srcStrides[ax] / strides[ax]
		}
		copyRows(dst, src, base, outDims, srcStrides)
	}
	sliceCalls.Add(1)
	return out, nil
}

// copyRows fills dst (row-major dims) from src starting at base with the
// given per-axis source strides, one innermost row at a time.
func copyRows(dst, src []float32, base int, dims, strides []int) {
	rank := len(dims)
	n, step := dims[rank-1], strides[rank-1]
	idx := make([]int, rank-1)
	o := base
	for d := 0; d < len(dst); d += n {
		row := dst[d : d+n]
		if step == 1 {
			copy(row, src[o:o+n])
		} else {
			for j := range row {
				row[j] = src[o+j*step]
			}
		}
		for ax := rank - 2; ax >= 0; ax-- {
			idx[ax]++
			o += strides[ax]
			if idx[ax] < dims[ax] {
				break
			}
			o -= dims[ax] * strides[ax]
			idx[ax] = 0
		}
	}
}

// readSlice reads a Slice node's starts, limits and strides (simplego's
// *sliceNode, unexported) through reflection, validating the type once.
func readSlice(node *simplego.Node) (starts, limits, strides []int, err error) {
	d := reflect.ValueOf(node).Elem().Field(layout.nodeData)
	if d.IsNil() {
		return nil, nil, nil, errors.New("Slice node without data")
	}
	pv := d.Elem()
	idx, err := sliceFields(pv.Type())
	if err != nil {
		return nil, nil, nil, err
	}
	s := pv.Elem()
	ints := func(i int) []int {
		v := s.Field(i)
		out := make([]int, v.Len())
		for j := range out {
			out[j] = int(v.Index(j).Int())
		}
		return out
	}
	return ints(idx[0]), ints(idx[1]), ints(idx[2]), nil
}

func sliceFields(t reflect.Type) ([3]int, error) {
	if v, ok := sliceLayouts.Load(t); ok {
		if err, bad := v.(error); bad {
			return [3]int{}, err
		}
		return v.([3]int), nil
	}
	var idx [3]int
	err := func() error {
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || t.Elem().Name() != "sliceNode" ||
			t.Elem().PkgPath() != gomlxModule+"/backends/simplego" {
			return fmt.Errorf("Slice node data is %v, want *simplego.sliceNode", t)
		}
		for i, name := range []string{"starts", "limits", "strides"} {
			f, ok := t.Elem().FieldByName(name)
			if !ok || f.Type.Kind() != reflect.Slice || f.Type.Elem().Kind() != reflect.Int {
				return fmt.Errorf("sliceNode.%s missing or not []int", name)
			}
			idx[i] = f.Index[0]
		}
		return nil
	}()
	if err != nil {
		sliceLayouts.Store(t, err)
		return idx, err
	}
	sliceLayouts.Store(t, idx)
	return idx, nil
}
