package simplegofast

import (
	"fmt"
	"math"
	"slices"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"labelprivacy/sgemm"
)

// selfTestProduct is one DotGeneral of the self-test: operand dims and
// their contracting and batch axes.
type selfTestProduct struct {
	name                           string
	lhsDims, lhsContract, lhsBatch []int
	rhsDims, rhsContract, rhsBatch []int
}

// selfTestProducts cover the layouts and edges the models produce: a
// batched product contracting on opposite sides, a product crossing the
// 12×32 tile's edges with two contraction chunks (K > 256), the logit
// layer's N=1 product and its gradient's K=1 outer product, and a weight
// gradient xᵀ·v (contraction over the leading axis of both).
var selfTestProducts = []selfTestProduct{
	{"batched [2,7,5]·[2,9,5]", []int{2, 7, 5}, []int{2}, []int{0}, []int{2, 9, 5}, []int{2}, []int{0}},
	{"[13,300]·[300,35]", []int{13, 300}, []int{1}, nil, []int{300, 35}, []int{0}, nil},
	{"N=1 [25,40]·[40,1]", []int{25, 40}, []int{1}, nil, []int{40, 1}, []int{0}, nil},
	{"K=1 [30,1]·[1,33]", []int{30, 1}, []int{1}, nil, []int{1, 33}, []int{0}, nil},
	{"xᵀ·v [50,14]·[50,20]", []int{50, 14}, []int{0}, nil, []int{50, 20}, []int{0}, nil},
}

// selfTest runs selfTestProducts and a Where, a Slice and a
// GreaterOrEqual on a private backend, first with simplego's executors,
// then with this package's on every assembly kernel sgemm has on this CPU.
// It requires the replacements to have run, each product to agree with
// simplego's within 2·γ_K·Σ|a·b| per element, the kernels to agree with
// one another bit for bit (they compute the same chains of fused
// multiply-adds), and Where, Slice and GreaterOrEqual to give their
// definitions' values.
func selfTest() error {
	be, err := simplego.New("")
	if err != nil {
		return err
	}
	defer be.Finalize()
	sb := be.(*simplego.Backend)
	type operands struct{ lhs, rhs []float32 }
	ops := make([]operands, len(selfTestProducts))
	want := make([][]float32, len(selfTestProducts))
	for i, p := range selfTestProducts {
		lhs, rhs := make([]float32, size(p.lhsDims)), make([]float32, size(p.rhsDims))
		for j := range lhs {
			lhs[j] = float32(math.Sin(float64(j+i)*0.7)) * 3
		}
		for j := range rhs {
			rhs[j] = float32(math.Cos(float64(j+i)*1.3)) - 0.25
		}
		ops[i] = operands{lhs, rhs}
		if want[i], err = product(be, p, lhs, rhs); err != nil {
			return fmt.Errorf("%s on simplego: %w", p.name, err)
		}
	}
	if err := selfTestWhere(be); err != nil { // simplego's, checks the test itself
		return err
	}
	if err := selfTestSlice(be); err != nil {
		return err
	}
	if err := selfTestGE(be); err != nil {
		return err
	}
	var first [][]float32 // the first kernel's products
	for _, kern := range sgemm.Kernels() {
		if kern == sgemm.KernelGo {
			continue
		}
		enable(sb, kern)
		for i, p := range selfTestProducts {
			before := fastCalls.Load()
			got, err := product(be, p, ops[i].lhs, ops[i].rhs)
			if err != nil {
				enabled.Delete(weakKey(sb))
				return fmt.Errorf("%s on sgemm %s: %w", p.name, kern, err)
			}
			if fastCalls.Load() == before {
				enabled.Delete(weakKey(sb))
				return fmt.Errorf("%s: the replacement executor did not run", p.name)
			}
			if err := withinBound(p, ops[i].lhs, ops[i].rhs, got, want[i]); err != nil {
				enabled.Delete(weakKey(sb))
				return fmt.Errorf("%s on sgemm %s: %w", p.name, kern, err)
			}
			if first == nil || len(first) <= i {
				first = append(first, got)
			} else if !slices.Equal(got, first[i]) {
				enabled.Delete(weakKey(sb))
				return fmt.Errorf("%s: sgemm %s differs from %s", p.name, kern, sgemm.Kernels()[0])
			}
		}
	}
	defer enabled.Delete(weakKey(sb))
	before := whereCalls.Load()
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
	return nil
}

func size(dims []int) int {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return n
}

func product(be backends.Backend, p selfTestProduct, lhs, rhs []float32) ([]float32, error) {
	return dotGeneral(be, lhs, p.lhsDims, p.lhsContract, p.lhsBatch, rhs, p.rhsDims, p.rhsContract, p.rhsBatch)
}

// withinBound checks |got − want| ≤ 2·γ_K·Σ_k|a_k·b_k| for every element
// of a product with one contracting axis and at most one batch axis (the
// self-test's), computing the sums from the operands.
func withinBound(p selfTestProduct, lhs, rhs, got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, simplego %d", len(got), len(want))
	}
	strides := func(dims []int) []int {
		s := make([]int, len(dims))
		n := 1
		for ax := len(dims) - 1; ax >= 0; ax-- {
			s[ax], n = n, n*dims[ax]
		}
		return s
	}
	ls, rs := strides(p.lhsDims), strides(p.rhsDims)
	free := func(dims, contract, batch []int) int {
		for ax := range dims {
			if !slices.Contains(contract, ax) && !slices.Contains(batch, ax) {
				return ax
			}
		}
		return -1
	}
	lf, rf := free(p.lhsDims, p.lhsContract, p.lhsBatch), free(p.rhsDims, p.rhsContract, p.rhsBatch)
	batch, lb, rb := 1, 0, 0
	if len(p.lhsBatch) == 1 {
		batch, lb, rb = p.lhsDims[p.lhsBatch[0]], ls[p.lhsBatch[0]], rs[p.rhsBatch[0]]
	}
	k := p.lhsDims[p.lhsContract[0]]
	lk, rk := ls[p.lhsContract[0]], rs[p.rhsContract[0]]
	m, n := p.lhsDims[lf], p.rhsDims[rf]
	gamma := float64(k) * 0x1p-24 / (1 - float64(k)*0x1p-24)
	for e := range batch {
		for i := range m {
			for j := range n {
				var abs float64
				for kk := range k {
					abs += math.Abs(float64(lhs[e*lb+i*ls[lf]+kk*lk]) * float64(rhs[e*rb+j*rs[rf]+kk*rk]))
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
