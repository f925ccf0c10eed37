package simplegofast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"labelprivacy/sgemm"
)

// backendsForTest returns a simplego backend running simplego's own
// DotGeneral and one running sgemm's best kernel (skipping when Install
// refuses, which it must only do without AVX2/FMA).
func backendsForTest(t testing.TB) (plain, fast backends.Backend) {
	return backendsWith(t, sgemm.Best())
}

// asmKernels are the assembly kernels this CPU runs (the ones Enable takes).
func asmKernels() []sgemm.Kernel {
	var ks []sgemm.Kernel
	for _, k := range sgemm.Kernels() {
		if k != sgemm.KernelGo {
			ks = append(ks, k)
		}
	}
	return ks
}

// backendsWith is backendsForTest on kernel kern.
func backendsWith(t testing.TB, kern sgemm.Kernel) (plain, fast backends.Backend) {
	t.Helper()
	if err := Install(); err != nil {
		if sgemm.HasAVX2() {
			t.Fatalf("Install on an AVX2 machine: %v", err)
		}
		t.Skipf("not installed: %v", err)
	}
	var err error
	if plain, err = simplego.New(""); err != nil {
		t.Fatal(err)
	}
	if fast, err = simplego.New(""); err != nil {
		t.Fatal(err)
	}
	if err := Enable(fast, kern); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Finalize(); fast.Finalize() })
	return plain, fast
}

func TestInstall(t *testing.T) {
	err := Install()
	if !sgemm.HasAVX2() {
		if !errors.Is(err, ErrNotInstalled) {
			t.Fatalf("Install without AVX2: %v, want ErrNotInstalled", err)
		}
		return
	}
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if err2 := Install(); err2 != nil {
		t.Fatalf("second Install: %v", err2)
	}
	plain, _ := simplego.New("")
	defer plain.Finalize()
	if Enabled(plain) {
		t.Error("a backend not passed to Enable runs sgemm")
	}
	for _, kern := range asmKernels() {
		if err := Enable(plain, kern); err != nil || !Enabled(plain) {
			t.Errorf("Enable(%s): %v, Enabled %v", kern, err, Enabled(plain))
		}
		if got, ok := Kernel(plain); got != kern || !ok {
			t.Errorf("after Enable(%s), Kernel = %s, %v", kern, got, ok)
		}
	}
	if err := Enable(plain, sgemm.KernelGo); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Enable with the portable kernel: %v, want ErrNotInstalled", err)
	}
	if !sgemm.HasAVX512() {
		if err := Enable(plain, sgemm.KernelAVX512); !errors.Is(err, ErrNotInstalled) {
			t.Errorf("Enable(avx512) without AVX-512: %v, want ErrNotInstalled", err)
		}
	}
	if err := Enable(nil, sgemm.Best()); err == nil {
		t.Error("Enable(nil) succeeded")
	}
}

func TestVersionFrom(t *testing.T) {
	const good = "/root/go/pkg/mod/github.com/gomlx/gomlx@v0.26.0/backends/simplego/dotgeneral.go"
	mod := func(v string, r *debug.Module) []*debug.Module {
		return []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.47.0"}, {Path: gomlxModule, Version: v, Replace: r}}
	}
	for _, tc := range []struct {
		name string
		deps []*debug.Module
		file string
		ok   bool
	}{
		{"build info v0.26.0", mod("v0.26.0", nil), "", true},
		{"build info v0.27.0", mod("v0.27.0", nil), good, false},
		{"build info v0.25.1", mod("v0.25.1", nil), good, false},
		{"replaced", mod("v0.26.0", &debug.Module{Path: "../gomlx"}), good, false},
		{"test binary, module cache path", nil, good, true},
		{"test binary, -trimpath", nil, "github.com/gomlx/gomlx@v0.26.0/backends/simplego/dotgeneral.go", true},
		{"test binary, other version", nil, "/m/github.com/gomlx/gomlx@v0.26.1/backends/simplego/dotgeneral.go", false},
		{"vendored or local checkout", nil, "/src/gomlx/backends/simplego/dotgeneral.go", false},
	} {
		err := versionFrom(tc.deps, tc.file)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrNotInstalled)) {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	// This test binary has no module list: the source path decides.
	if err := checkVersion(original); sgemm.HasAVX2() && err != nil {
		t.Errorf("checkVersion(simplego's executor) in a test binary: %v", err)
	}
	if err := versionFrom(nil, sourceFile(execDotGeneral)); err == nil {
		t.Error("a function outside gomlx@v0.26.0 passed the source check")
	}
}

// dotCase is one DotGeneral: operand dimensions and axes.
type dotCase struct {
	name                     string
	lhs                      []int
	lhsContracting, lhsBatch []int
	rhs                      []int
	rhsContracting, rhsBatch []int
}

// dotCases claim every layout the replacement handles: plain, transposed
// and batched matrix products with the contraction on either side, batch
// axes anywhere and in any pairing, several contracting or free axes
// (in place or copied), vectors, outer products, sizes not multiples of 6,
// 16 or 32, and 1-wide dimensions.
var dotCases = []dotCase{
	{"matmul", []int{37, 29}, []int{1}, nil, []int{29, 53}, []int{0}, nil},
	{"lhs transposed", []int{29, 37}, []int{0}, nil, []int{29, 53}, []int{0}, nil},
	{"rhs transposed", []int{37, 29}, []int{1}, nil, []int{53, 29}, []int{1}, nil},
	{"both transposed", []int{29, 37}, []int{0}, nil, []int{53, 29}, []int{1}, nil},
	{"dense layer x·W", []int{3, 130, 28}, []int{2}, []int{0}, []int{3, 28, 300}, []int{1}, []int{0}},
	{"grad_x v·Wᵀ", []int{3, 130, 300}, []int{2}, []int{0}, []int{3, 28, 300}, []int{2}, []int{0}},
	{"grad_W xᵀ·v split", []int{2, 2, 65, 28}, []int{2}, []int{0, 1}, []int{2, 2, 65, 50}, []int{2}, []int{0, 1}},
	{"batch axis last", []int{17, 9, 4}, []int{1}, []int{2}, []int{9, 4, 19}, []int{0}, []int{1}},
	{"batch axis middle", []int{17, 4, 9}, []int{2}, []int{1}, []int{19, 4, 9}, []int{2}, []int{1}},
	{"two batch axes swapped", []int{2, 3, 7, 5}, []int{3}, []int{0, 1}, []int{3, 2, 5, 11}, []int{2}, []int{1, 0}},
	{"two contracting axes", []int{13, 4, 6}, []int{1, 2}, nil, []int{4, 6, 21}, []int{0, 1}, nil},
	{"two contracting axes crossed", []int{13, 4, 6}, []int{1, 2}, nil, []int{6, 4, 21}, []int{1, 0}, nil},
	{"free axes apart (copied)", []int{5, 8, 7}, []int{1}, nil, []int{8, 9}, []int{0}, nil},
	{"two free axes each side", []int{5, 3, 8}, []int{2}, nil, []int{8, 2, 9}, []int{0}, nil},
	{"vector·vector", []int{300}, []int{0}, nil, []int{300}, []int{0}, nil},
	{"matrix·vector", []int{41, 300}, []int{1}, nil, []int{300}, []int{0}, nil},
	{"vector·matrix", []int{300}, []int{0}, nil, []int{300, 41}, []int{0}, nil},
	{"outer product", []int{23}, nil, nil, []int{35}, nil, nil},
	{"1-wide dims", []int{1, 1, 40, 1}, []int{2}, []int{0}, []int{1, 40, 1, 33}, []int{1}, []int{0}},
	{"logit n=1", []int{4, 1024, 50}, []int{2}, []int{0}, []int{4, 50, 1}, []int{1}, []int{0}},
	{"kdd 50→100", []int{1, 257, 50}, []int{2}, []int{0}, []int{1, 50, 100}, []int{1}, []int{0}},
	{"long contraction", []int{2, 7, 700}, []int{2}, []int{0}, []int{2, 700, 19}, []int{1}, []int{0}},
}

func randFloats(rng *rand.Rand, dims []int) []float32 {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// absProduct is Σ_k |lhs·rhs| for each output element in simplego's output
// order [batch, lhs free, rhs free], computed in float64 from the axes
// (independently of the code under test).
func absProduct(c dotCase, lhs, rhs []float32) []float64 {
	lv := newAxesView(c.lhs, c.lhsContracting, c.lhsBatch)
	rv := newAxesView(c.rhs, c.rhsContracting, c.rhsBatch)
	out := make([]float64, lv.b*lv.c*rv.c)
	for b := range lv.b {
		for i := range lv.c {
			for j := range rv.c {
				var s float64
				for k := range lv.k {
					s += math.Abs(float64(lhs[lv.at(b, i, k)]) * float64(rhs[rv.at(b, j, k)]))
				}
				out[(b*lv.c+i)*rv.c+j] = s
			}
		}
	}
	return out
}

// axesView maps (batch, free, contracting) flat indices to an operand's
// flat offset by decoding each into its axes (row-major, batch and
// contracting axes in the listed order, free axes in axis order).
type axesView struct {
	dims, strides      []int
	batch, free, contr []int
	b, c, k            int
}

func newAxesView(dims, contracting, batch []int) axesView {
	v := axesView{dims: dims, batch: batch, contr: contracting, b: 1, c: 1, k: 1}
	v.strides = make([]int, len(dims))
	s := 1
	for ax := len(dims) - 1; ax >= 0; ax-- {
		v.strides[ax] = s
		s *= dims[ax]
	}
	for ax, d := range dims {
		switch {
		case slices.Contains(batch, ax):
			v.b *= d
		case slices.Contains(contracting, ax):
			v.k *= d
		default:
			v.free = append(v.free, ax)
			v.c *= d
		}
	}
	return v
}

func (v axesView) decode(axes []int, x int) int {
	off := 0
	for i := len(axes) - 1; i >= 0; i-- {
		d := v.dims[axes[i]]
		off += (x % d) * v.strides[axes[i]]
		x /= d
	}
	return off
}

func (v axesView) at(b, c, k int) int {
	return v.decode(v.batch, b) + v.decode(v.free, c) + v.decode(v.contr, k)
}

// compare runs c on both backends and checks |fast − simplego| ≤
// 2·γ_K·Σ|a·b| elementwise (see doc.go), returning the largest
// error/bound ratio.
func compare(t *testing.T, plain, fast backends.Backend, c dotCase, rng *rand.Rand) float64 {
	t.Helper()
	lhs, rhs := randFloats(rng, c.lhs), randFloats(rng, c.rhs)
	want, err := dotGeneral(plain, lhs, c.lhs, c.lhsContracting, c.lhsBatch, rhs, c.rhs, c.rhsContracting, c.rhsBatch)
	if err != nil {
		t.Fatalf("%s: simplego: %v", c.name, err)
	}
	before := fastCalls.Load()
	got, err := dotGeneral(fast, lhs, c.lhs, c.lhsContracting, c.lhsBatch, rhs, c.rhs, c.rhsContracting, c.rhsBatch)
	if err != nil {
		t.Fatalf("%s: sgemm: %v", c.name, err)
	}
	if fastCalls.Load() == before {
		t.Fatalf("%s: the replacement did not run", c.name)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", c.name, len(got), len(want))
	}
	k := newAxesView(c.lhs, c.lhsContracting, c.lhsBatch).k
	gamma := float64(k) * 0x1p-24 / (1 - float64(k)*0x1p-24)
	worst := 0.0
	for i, abs := range absProduct(c, lhs, rhs) {
		bound := 2*gamma*abs + 0x1p-126
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= bound) {
			t.Fatalf("%s: element %d = %g, simplego %g (bound %g)", c.name, i, got[i], want[i], bound)
		}
		worst = max(worst, d/bound)
	}
	return worst
}

// TestMatchesSimplego runs every layout case on every assembly kernel
// this CPU has (avx2, and avx512 where the CPU has AVX-512).
func TestMatchesSimplego(t *testing.T) {
	if len(asmKernels()) == 0 {
		backendsForTest(t) // skips (or fails on an AVX2 machine)
	}
	for _, kern := range asmKernels() {
		t.Run(kern.String(), func(t *testing.T) {
			plain, fast := backendsWith(t, kern)
			rng := rand.New(rand.NewPCG(7, 8))
			worst := 0.0
			for _, c := range dotCases {
				worst = max(worst, compare(t, plain, fast, c, rng))
			}
			t.Logf("largest |sgemm %s − simplego| / (2·γ_K·Σ|ab|): %.3g", kern, worst)
		})
	}
}

// TestOtherDTypesUntouched: float64 runs simplego's own code, bit for bit.
func TestOtherDTypesUntouched(t *testing.T) {
	plain, fast := backendsForTest(t)
	run := func(be backends.Backend) []float64 {
		b := be.Builder("f64")
		l, _ := b.Parameter("l", shapes.Make(dtypes.Float64, 9, 40), nil)
		r, _ := b.Parameter("r", shapes.Make(dtypes.Float64, 40, 7), nil)
		out, err := b.DotGeneral(l, []int{1}, nil, r, []int{0}, nil)
		if err != nil {
			t.Fatal(err)
		}
		exe, err := b.Compile([]backends.Op{out}, nil)
		if err != nil {
			t.Fatal(err)
		}
		lv, rv := make([]float64, 360), make([]float64, 280)
		for i := range lv {
			lv[i] = math.Sin(float64(i))
		}
		for i := range rv {
			rv[i] = math.Cos(float64(i))
		}
		lb, _ := be.BufferFromFlatData(0, lv, shapes.Make(dtypes.Float64, 9, 40))
		rb, _ := be.BufferFromFlatData(0, rv, shapes.Make(dtypes.Float64, 40, 7))
		res, err := exe.Execute([]backends.Buffer{lb, rb}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		flat := make([]float64, 63)
		if err := be.BufferToFlatData(res[0], flat); err != nil {
			t.Fatal(err)
		}
		return flat
	}
	before := fastCalls.Load()
	if got, want := run(fast), run(plain); !slices.Equal(got, want) {
		t.Errorf("float64 differs: %v vs %v", got[:3], want[:3])
	}
	if fastCalls.Load() != before {
		t.Error("float64 went to sgemm")
	}
}

// TestEmptyDimsRejected: simplego's builder refuses empty operands before
// any executor runs, the same with or without the replacement.
func TestEmptyDimsRejected(t *testing.T) {
	plain, fast := backendsForTest(t)
	for _, be := range []backends.Backend{plain, fast} {
		_, err := dotGeneral(be, nil, []int{0, 5}, []int{1}, nil, make([]float32, 15), []int{5, 3}, []int{0}, nil)
		if err == nil {
			t.Errorf("%v: a 0×5 operand was accepted", be)
		}
	}
}

// FuzzDotGeneral draws random operand ranks, axis roles, permutations and
// sizes (up to 4 axes per role, dims 1–9) and compares with simplego.
func FuzzDotGeneral(f *testing.F) {
	for i := range 12 {
		f.Add(uint64(i))
	}
	plain, fast := backendsForTest(f)
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 9))
		c := randomCase(rng)
		compare(t, plain, fast, c, rng)
	})
}

func randomCase(rng *rand.Rand) dotCase {
	dim := func() int {
		if rng.IntN(4) == 0 {
			return 1
		}
		return 1 + rng.IntN(9)
	}
	nb, nk, nl, nr := rng.IntN(3), rng.IntN(3), rng.IntN(3), rng.IntN(3)
	bd, kd := make([]int, nb), make([]int, nk)
	for i := range bd {
		bd[i] = dim()
	}
	for i := range kd {
		kd[i] = dim()
	}
	// build places batch dims bd, contracting dims kd and nf free dims in
	// a random axis order; batch and contracting axes are listed in a
	// random pairing order shared by both operands.
	bOrder, kOrder := rng.Perm(nb), rng.Perm(nk)
	build := func(nf int) (dims, contracting, batch []int) {
		roles := make([]int, 0, nb+nk+nf) // ≥0: batch i; <0: −(contracting i)−1; nb+nk+…: free
		for i := range nb {
			roles = append(roles, i)
		}
		for i := range nk {
			roles = append(roles, -i-1)
		}
		for range nf {
			roles = append(roles, 1<<20)
		}
		rng.Shuffle(len(roles), func(i, j int) { roles[i], roles[j] = roles[j], roles[i] })
		batch, contracting = make([]int, nb), make([]int, nk)
		for ax, r := range roles {
			switch {
			case r == 1<<20:
				dims = append(dims, dim())
			case r >= 0:
				dims = append(dims, bd[r])
				batch[slices.Index(bOrder, r)] = ax
			default:
				dims = append(dims, kd[-r-1])
				contracting[slices.Index(kOrder, -r-1)] = ax
			}
		}
		return dims, contracting, batch
	}
	var c dotCase
	c.lhs, c.lhsContracting, c.lhsBatch = build(nl)
	c.rhs, c.rhsContracting, c.rhsBatch = build(nr)
	c.name = fmt.Sprintf("lhs %v c%v b%v · rhs %v c%v b%v", c.lhs, c.lhsContracting, c.lhsBatch, c.rhs, c.rhsContracting, c.rhsBatch)
	return c
}

// TestWhereMatchesSimplego: the branch-free Where gives simplego's bits for
// every operand form it takes (full or scalar branches, a reused
// intermediate buffer, sizes split across threads) and leaves the others
// (scalar condition, float64) to simplego.
func TestWhereMatchesSimplego(t *testing.T) {
	plain, fast := backendsForTest(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, tc := range []struct {
		name          string
		dims          []int
		tFull, fFull  bool
		negT          bool // onTrue is Neg(t): an owned intermediate the executor may reuse
		replacementOK bool
	}{
		{"full branches", []int{3, 7}, true, true, false, true},
		{"scalar false (ReLU)", []int{5, 300}, true, false, false, true},
		{"scalar true", []int{41}, false, true, false, true},
		{"both scalar", []int{2, 3, 4}, false, false, false, true},
		{"reused intermediate", []int{4, 33}, true, false, true, true},
		{"large, split across threads", []int{2, 1024, 61}, true, false, true, true},
		{"scalar condition", nil, true, true, false, false},
	} {
		n := 1
		for _, d := range tc.dims {
			n *= d
		}
		cond := make([]bool, n)
		for i := range cond {
			cond[i] = rng.IntN(2) == 0
		}
		branch := func(full bool) ([]float32, shapes.Shape) {
			if !full {
				return []float32{float32(rng.NormFloat64())}, shapes.Make(dtypes.Float32)
			}
			return randFloats(rng, tc.dims), shapes.Make(dtypes.Float32, tc.dims...)
		}
		tv, ts := branch(tc.tFull)
		fv, fs := branch(tc.fFull)
		op := func(b backends.Builder, p []backends.Op) (backends.Op, error) {
			onTrue := p[1]
			if tc.negT {
				var err error
				if onTrue, err = b.Neg(onTrue); err != nil {
					return nil, err
				}
			}
			return b.Where(p[0], onTrue, p[2])
		}
		in := []any{cond, tv, fv}
		sh := []shapes.Shape{shapes.Make(dtypes.Bool, tc.dims...), ts, fs}
		want, err := run(plain, op, in, sh)
		if err != nil {
			t.Fatalf("%s: simplego: %v", tc.name, err)
		}
		before := whereCalls.Load()
		got, err := run(fast, op, in, sh)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ran := whereCalls.Load() != before; ran != tc.replacementOK {
			t.Errorf("%s: replacement ran %v, want %v", tc.name, ran, tc.replacementOK)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: differs from simplego", tc.name)
		}
	}
}

// TestSliceMatchesSimplego: the row-copying Slice gives simplego's bits for
// strided and unstrided slices of ranks 1–4 (the folded-bias gradients'
// [R, in+1, out+1] → [R, in, out] among them).
func TestSliceMatchesSimplego(t *testing.T) {
	plain, fast := backendsForTest(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for _, tc := range []struct {
		name                   string
		dims                   []int
		starts, limits, stride []int
	}{
		{"folded weight gradient", []int{2, 301, 301}, []int{0, 0, 0}, []int{2, 300, 300}, []int{1, 1, 1}},
		{"folded bias row", []int{2, 301, 301}, []int{0, 300, 0}, []int{2, 301, 300}, []int{1, 1, 1}},
		{"rank 1", []int{50}, []int{3}, []int{47}, []int{1}},
		{"rank 1 strided", []int{50}, []int{3}, []int{48}, []int{4}},
		{"inner stride 3", []int{7, 20}, []int{1, 2}, []int{6, 19}, []int{2, 3}},
		{"rank 4 with 1-wide axes", []int{3, 1, 5, 9}, []int{1, 0, 1, 0}, []int{3, 1, 5, 9}, []int{1, 1, 3, 1}},
		{"whole tensor", []int{4, 6}, []int{0, 0}, []int{4, 6}, []int{1, 1}},
		{"one element", []int{4, 6}, []int{3, 5}, []int{4, 6}, []int{1, 1}},
	} {
		x := randFloats(rng, tc.dims)
		op := func(b backends.Builder, p []backends.Op) (backends.Op, error) {
			return b.Slice(p[0], tc.starts, tc.limits, tc.stride)
		}
		sh := []shapes.Shape{shapes.Make(dtypes.Float32, tc.dims...)}
		want, err := run(plain, op, []any{x}, sh)
		if err != nil {
			t.Fatalf("%s: simplego: %v", tc.name, err)
		}
		before := sliceCalls.Load()
		got, err := run(fast, op, []any{x}, sh)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sliceCalls.Load() == before {
			t.Errorf("%s: the replacement did not run", tc.name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: differs from simplego", tc.name)
		}
	}
}

// TestGreaterOrEqualMatchesSimplego: x ≥ scalar gives simplego's booleans
// (NaN false, −0 ≥ 0 true) for lengths around the 8-lane blocks and
// across threads; other operand forms stay simplego's.
func TestGreaterOrEqualMatchesSimplego(t *testing.T) {
	plain, fast := backendsForTest(t)
	rng := rand.New(rand.NewPCG(15, 16))
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, tc := range []struct {
		name   string
		dims   []int
		rhsDim []int // nil: scalar
		fastOK bool
	}{
		{"ReLU mask", []int{3, 301}, nil, true},
		{"length 7", []int{7}, nil, true},
		{"length 9", []int{9}, nil, true},
		{"large, split", []int{2, 1024, 33}, nil, true},
		{"same shapes (simplego's)", []int{4, 5}, []int{4, 5}, false},
	} {
		x := randFloats(rng, tc.dims)
		for i := range x {
			if rng.IntN(4) == 0 {
				x[i] = special[rng.IntN(len(special))]
			}
		}
		var y []float32
		ys := shapes.Make(dtypes.Float32)
		if tc.rhsDim == nil {
			y = []float32{float32(rng.IntN(3) - 1)}
		} else {
			y, ys = randFloats(rng, tc.rhsDim), shapes.Make(dtypes.Float32, tc.rhsDim...)
		}
		one, zero := []float32{1}, []float32{0}
		op := func(b backends.Builder, p []backends.Op) (backends.Op, error) {
			ge, err := b.GreaterOrEqual(p[0], p[1])
			if err != nil {
				return nil, err
			}
			return b.Where(ge, p[2], p[3])
		}
		in := []any{x, y, one, zero}
		sh := []shapes.Shape{shapes.Make(dtypes.Float32, tc.dims...), ys, shapes.Make(dtypes.Float32), shapes.Make(dtypes.Float32)}
		want, err := run(plain, op, in, sh)
		if err != nil {
			t.Fatalf("%s: simplego: %v", tc.name, err)
		}
		before := geCalls.Load()
		got, err := run(fast, op, in, sh)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if ran := geCalls.Load() != before; ran != tc.fastOK {
			t.Errorf("%s: replacement ran %v, want %v", tc.name, ran, tc.fastOK)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: differs from simplego", tc.name)
		}
	}
}

// SetThreads caps a backend's goroutines below its parallelism option and
// GOMAXPROCS (never above them), 0 lifts the cap, other backends are
// untouched, and a product gives the same bits under any cap.
func TestSetThreads(t *testing.T) {
	if err := Install(); err != nil {
		t.Skipf("not installed: %v", err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	be, err := simplego.New("parallelism=3")
	if err != nil {
		t.Fatal(err)
	}
	other, err := simplego.New("parallelism=3")
	if err != nil {
		t.Fatal(err)
	}
	defer be.Finalize()
	defer other.Finalize()
	if err := Enable(be, sgemm.Best()); err != nil {
		t.Fatal(err)
	}
	c := dotCase{"dense 512×300·300×300", []int{1, 512, 300}, []int{2}, []int{0}, []int{1, 300, 300}, []int{1}, []int{0}}
	rng := rand.New(rand.NewPCG(3, 4))
	lhs, rhs := randFloats(rng, c.lhs), randFloats(rng, c.rhs)
	product := func() []float32 {
		got, err := dotGeneral(be, lhs, c.lhs, c.lhsContracting, c.lhsBatch, rhs, c.rhs, c.rhsContracting, c.rhsBatch)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := product()
	for _, tc := range []struct{ cap, want int }{{0, 3}, {1, 1}, {2, 2}, {8, 3}, {-1, 3}} {
		SetThreads(be, tc.cap)
		if got := Threads(be); got != tc.want {
			t.Errorf("SetThreads(%d): Threads = %d, want %d", tc.cap, got, tc.want)
		}
		if got := Threads(other); got != 3 {
			t.Errorf("SetThreads(%d) on another backend: Threads = %d, want 3", tc.cap, got)
		}
		if got := product(); !slices.Equal(got, want) {
			t.Errorf("SetThreads(%d): the product's bits changed", tc.cap)
		}
	}
	runtime.GOMAXPROCS(2)
	SetThreads(be, 0)
	if got := Threads(be); got != 2 {
		t.Errorf("GOMAXPROCS 2: Threads = %d, want 2", got)
	}
}
