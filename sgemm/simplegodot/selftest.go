package simplegodot

import (
	"fmt"
	"math"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// selfTest runs one batched product with the contraction on opposite
// sides ([2,7,5]·[2,9,5] → [2,7,9]) on a private backend, first with
// simplego's executor, then with this package's, and requires the second
// to have run and to agree within 2·γ_K·Σ|a·b|.
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
	run := func() ([]float32, error) {
		return dotGeneral(be, lhs, []int{batch, m, k}, []int{2}, []int{0}, rhs, []int{batch, n, k}, []int{2}, []int{0})
	}
	want, err := run()
	if err != nil {
		return err
	}
	before := fastCalls.Load()
	enable(sb)
	defer enabled.Delete(weakKey(sb))
	got, err := run()
	if err != nil {
		return err
	}
	if fastCalls.Load() == before {
		return fmt.Errorf("the replacement executor did not run")
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
	b := be.Builder("simplegodot")
	l, err := b.Parameter("lhs", shapes.Make(dtypes.Float32, lhsDims...), nil)
	if err != nil {
		return nil, err
	}
	r, err := b.Parameter("rhs", shapes.Make(dtypes.Float32, rhsDims...), nil)
	if err != nil {
		return nil, err
	}
	out, err := b.DotGeneral(l, append([]int(nil), lhsContracting...), append([]int(nil), lhsBatch...),
		r, append([]int(nil), rhsContracting...), append([]int(nil), rhsBatch...))
	if err != nil {
		return nil, err
	}
	exe, err := b.Compile([]backends.Op{out}, nil)
	if err != nil {
		return nil, err
	}
	defer exe.Finalize()
	lb, err := be.BufferFromFlatData(0, lhs, shapes.Make(dtypes.Float32, lhsDims...))
	if err != nil {
		return nil, err
	}
	rb, err := be.BufferFromFlatData(0, rhs, shapes.Make(dtypes.Float32, rhsDims...))
	if err != nil {
		return nil, err
	}
	res, err := exe.Execute([]backends.Buffer{lb, rb}, nil, 0)
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
