package simplegofast

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// selfTest runs one batched product with the contraction on opposite
// sides ([2,7,5]·[2,9,5] → [2,7,9]) and one Where on a private backend,
// first with simplego's executors, then with this package's, and requires
// the replacements to have run, the product to agree within 2·γ_K·Σ|a·b|
// and Where to give its definition's values.
func selfTest() error {
	be, err := simplego.New("")
	if err != nil {
		return err
	}
	defer be.Finalize()
	sb := be.(*simplego.Backend)
	const batch, m, n, k = 2, 7, 9, 5
	lhs, rhs := make([]float32, batch*m*k), make([]float32, batch*n*k)
	for i := range lhs {
		lhs[i] = float32(math.Sin(float64(i)*0.7)) * 3
	}
	for i := range rhs {
		rhs[i] = float32(math.Cos(float64(i)*1.3)) - 0.25
	}
	product := func() ([]float32, error) {
		return dotGeneral(be, lhs, []int{batch, m, k}, []int{2}, []int{0}, rhs, []int{batch, n, k}, []int{2}, []int{0})
	}
	want, err := product()
	if err != nil {
		return err
	}
	before := fastCalls.Load()
	if err := selfTestWhere(be); err != nil { // simplego's, checks the test itself
		return err
	}
	if err := selfTestSlice(be); err != nil {
		return err
	}
	if err := selfTestGE(be); err != nil {
		return err
	}
	enable(sb)
	defer enabled.Delete(weakKey(sb))
	got, err := product()
	if err != nil {
		return err
	}
	if fastCalls.Load() == before {
		return fmt.Errorf("the replacement executor did not run")
	}
	before = whereCalls.Load()
	if err := selfTestWhere(be); err != nil {
		return err
	}
	if whereCalls.Load() == before {
		return fmt.Errorf("the replacement Where did not run")
	}
	before = sliceCalls.Load()
	if err := selfTestSlice(be); err != nil {
		return err
	}
	if sliceCalls.Load() == before {
		return fmt.Errorf("the replacement Slice did not run")
	}
	before = geCalls.Load()
	if err := selfTestGE(be); err != nil {
		return err
	}
	if geCalls.Load() == before {
		return fmt.Errorf("the replacement GreaterOrEqual did not run")
	}
	gamma := float64(k) * 0x1p-24 / (1 - float64(k)*0x1p-24)
	for e := range batch {
		for i := range m {
			for j := range n {
				var abs float64
				for kk := range k {
					abs += math.Abs(float64(lhs[(e*m+i)*k+kk]) * float64(rhs[(e*n+j)*k+kk]))
				}
				o := (e*m+i)*n + j
				if d := math.Abs(float64(got[o]) - float64(want[o])); !(d <= 2*gamma*abs) {
					return fmt.Errorf("element [%d,%d,%d] = %g, simplego %g", e, i, j, got[o], want[o])
				}
			}
		}
	}
	return nil
}

// dotGeneral builds, compiles and runs DotGeneral(lhs, rhs) on be and
// returns the flat float32 result.
func dotGeneral(be backends.Backend, lhs []float32, lhsDims, lhsContracting, lhsBatch []int,
	rhs []float32, rhsDims, rhsContracting, rhsBatch []int) ([]float32, error) {
	return run(be, func(b backends.Builder, p []backends.Op) (backends.Op, error) {
		return b.DotGeneral(p[0], append([]int(nil), lhsContracting...), append([]int(nil), lhsBatch...),
			p[1], append([]int(nil), rhsContracting...), append([]int(nil), rhsBatch...))
	}, []any{lhs, rhs}, []shapes.Shape{shapes.Make(dtypes.Float32, lhsDims...), shapes.Make(dtypes.Float32, rhsDims...)})
}

// selfTestWhere checks Where(cond, t, scalar f) on be against the
// definition, bit for bit.
func selfTestWhere(be backends.Backend) error {
	const n = 37
	cond, t := make([]bool, n), make([]float32, n)
	for i := range n {
		cond[i], t[i] = i%3 != 1, float32(i)-0.5
	}
	f := []float32{-7}
	got, err := run(be, func(b backends.Builder, p []backends.Op) (backends.Op, error) { return b.Where(p[0], p[1], p[2]) },
		[]any{cond, t, f}, []shapes.Shape{shapes.Make(dtypes.Bool, n), shapes.Make(dtypes.Float32, n), shapes.Make(dtypes.Float32)})
	if err != nil {
		return err
	}
	for i, v := range got {
		want := f[0]
		if cond[i] {
			want = t[i]
		}
		if v != want {
			return fmt.Errorf("Where element %d = %g, want %g", i, v, want)
		}
	}
	return nil
}

// run builds, compiles and runs one op over parameters of the given
// shapes on be, returning its float32 result.
func run(be backends.Backend, op func(backends.Builder, []backends.Op) (backends.Op, error), values []any, inShapes []shapes.Shape) ([]float32, error) {
	b := be.Builder("simplegofast")
	params := make([]backends.Op, len(values))
	for i, s := range inShapes {
		p, err := b.Parameter(fmt.Sprintf("p%d", i), s, nil)
		if err != nil {
			return nil, err
		}
		params[i] = p
	}
	out, err := op(b, params)
	if err != nil {
		return nil, err
	}
	exe, err := b.Compile([]backends.Op{out}, nil)
	if err != nil {
		return nil, err
	}
	defer exe.Finalize()
	bufs := make([]backends.Buffer, len(values))
	for i, v := range values {
		if bufs[i], err = be.BufferFromFlatData(0, v, inShapes[i]); err != nil {
			return nil, err
		}
	}
	res, err := exe.Execute(bufs, nil, 0)
	if err != nil {
		return nil, err
	}
	shape, err := be.BufferShape(res[0])
	if err != nil {
		return nil, err
	}
	flat := make([]float32, shape.Size())
	if err := be.BufferToFlatData(res[0], flat); err != nil {
		return nil, err
	}
	return flat, nil
}

// selfTestSlice checks x[1:4:2, 2:7] of a 5×9 x on be against the
// definition, bit for bit.
func selfTestSlice(be backends.Backend) error {
	x := make([]float32, 45)
	for i := range x {
		x[i] = float32(i) * 1.25
	}
	got, err := run(be, func(b backends.Builder, p []backends.Op) (backends.Op, error) {
		return b.Slice(p[0], []int{1, 2}, []int{4, 7}, []int{2, 1})
	}, []any{x}, []shapes.Shape{shapes.Make(dtypes.Float32, 5, 9)})
	if err != nil {
		return err
	}
	var want []float32
	for i := 1; i < 4; i += 2 {
		want = append(want, x[i*9+2:i*9+7]...)
	}
	if len(got) != len(want) {
		return fmt.Errorf("Slice gave %d values, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			return fmt.Errorf("Slice element %d = %g, want %g", i, got[i], want[i])
		}
	}
	return nil
}

// selfTestGE checks x ≥ 0 on 21 values (NaN, ±0, ±1 among them; the
// assembly does 16, Go 5) against Go's comparison. The result is read as
// float32 (Where picks 1 or 0), so run needs no bool output.
func selfTestGE(be backends.Backend) error {
	x := make([]float32, 21)
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	x[3], x[7], x[11] = float32(math.NaN()), float32(math.Copysign(0, -1)), float32(math.Inf(-1))
	got, err := run(be, func(b backends.Builder, p []backends.Op) (backends.Op, error) {
		ge, err := b.GreaterOrEqual(p[0], p[1])
		if err != nil {
			return nil, err
		}
		return b.Where(ge, p[2], p[1])
	}, []any{x, []float32{0}, []float32{1}}, []shapes.Shape{shapes.Make(dtypes.Float32, 21), shapes.Make(dtypes.Float32), shapes.Make(dtypes.Float32)})
	if err != nil {
		return err
	}
	for i, v := range x {
		want := float32(0)
		if v >= 0 {
			want = 1
		}
		if got[i] != want {
			return fmt.Errorf("GreaterOrEqual(%g, 0) gave %g", v, got[i])
		}
	}
	return nil
}
