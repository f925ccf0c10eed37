package simplegofast

import (
	"math"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

var (
	originalWhere executor     // simplego's Where executor
	whereCalls    atomic.Int64 // Wheres run here (tests, self-test)
)

// execWhere is the replacement Where executor for enabled backends: float32
// branches (each of the condition's shape or a scalar) under a non-scalar
// condition, selected without branches. simplego's loop branches on every
// element, which a ReLU's random signs mispredict about half the time
// (~3 ns per element; this loop ~0.3 ns). The values are the same bits.
func execWhere(backend *simplego.Backend, node *simplego.Node, inputs []*simplego.Buffer, owned []bool) (*simplego.Buffer, error) {
	if len(inputs) != 3 || !isEnabled(backend) {
		return originalWhere(backend, node, inputs, owned)
	}
	cs, err1 := backend.BufferShape(inputs[0])
	ts, err2 := backend.BufferShape(inputs[1])
	fs, err3 := backend.BufferShape(inputs[2])
	if err1 != nil || err2 != nil || err3 != nil || cs.DType != dtypes.Bool || ts.DType != dtypes.Float32 ||
		fs.DType != dtypes.Float32 || cs.Size() <= 1 {
		return originalWhere(backend, node, inputs, owned)
	}
	tSame, fSame := sameDims(ts, cs), sameDims(fs, cs)
	if (!tSame && ts.Size() != 1) || (!fSame && fs.Size() != 1) {
		return originalWhere(backend, node, inputs, owned)
	}
	cflat, _ := backend.BufferData(inputs[0])
	tflat, _ := backend.BufferData(inputs[1])
	fflat, _ := backend.BufferData(inputs[2])
	cond, t, f := cflat.([]bool), tflat.([]float32), fflat.([]float32)
	var out *simplego.Buffer
	switch {
	case tSame && owned[1]:
		out, inputs[1] = inputs[1], nil // reused: simplego's convention
	case fSame && owned[2]:
		out, inputs[2] = inputs[2], nil
	default:
		out = backend.NewBuffer(shapes.Make(dtypes.Float32, cs.Dimensions...))
	}
	oflat, _ := backend.BufferData(out)
	o := oflat.([]float32)
	parallel(len(o), threads(backend), func(lo, hi int) {
		selectF32(o[lo:hi], cond[lo:hi], sub(t, tSame, lo, hi), sub(f, fSame, lo, hi))
	})
	whereCalls.Add(1)
	return out, nil
}

func sameDims(a, b shapes.Shape) bool {
	if a.Rank() != b.Rank() {
		return false
	}
	for i, d := range a.Dimensions {
		if d != b.Dimensions[i] {
			return false
		}
	}
	return true
}

// sub is x[lo:hi], or x itself when it is a scalar (len 1) to broadcast.
func sub(x []float32, full bool, lo, hi int) []float32 {
	if full {
		return x[lo:hi]
	}
	return x[:1]
}

// selectF32 sets o[i] = t[i] if c[i] else f[i], where t or f of length 1
// is a scalar, with bit masks instead of branches.
func selectF32(o []float32, c []bool, t, f []float32) {
	if n := selectAVX2(o, c, t, f); n > 0 {
		o, c = o[n:], c[n:]
		if len(t) > 1 {
			t = t[n:]
		}
		if len(f) > 1 {
			f = f[n:]
		}
	}
	cb := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(c))), len(c)) // Go bools are bytes 0 or 1
	switch {
	case len(t) == len(o) && len(f) == len(o):
		for i := range o {
			m := -uint32(cb[i] & 1)
			o[i] = math.Float32frombits(math.Float32bits(t[i])&m | math.Float32bits(f[i])&^m)
		}
	case len(t) == len(o):
		fb := math.Float32bits(f[0])
		for i := range o {
			m := -uint32(cb[i] & 1)
			o[i] = math.Float32frombits(math.Float32bits(t[i])&m | fb&^m)
		}
	case len(f) == len(o):
		tb := math.Float32bits(t[0])
		for i := range o {
			m := -uint32(cb[i] & 1)
			o[i] = math.Float32frombits(tb&m | math.Float32bits(f[i])&^m)
		}
	default:
		tb, fb := math.Float32bits(t[0]), math.Float32bits(f[0])
		for i := range o {
			m := -uint32(cb[i] & 1)
			o[i] = math.Float32frombits(tb&m | fb&^m)
		}
	}
}

// parallelMin is the least number of elements worth splitting.
const parallelMin = 1 << 15

// parallel runs fn over [0, n) in up to threads contiguous parts.
func parallel(n, threads int, fn func(lo, hi int)) {
	parts := min(threads, n/parallelMin)
	if parts <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + parts - 1) / parts
	for lo := step; lo < n; lo += step {
		wg.Add(1)
		go func(lo int) { defer wg.Done(); fn(lo, min(n, lo+step)) }(lo)
	}
	fn(0, min(n, step))
	wg.Wait()
}
