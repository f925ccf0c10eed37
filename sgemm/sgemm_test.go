package sgemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// u is float32's unit roundoff.
const u = 0x1p-24

// problem is one batched product with operands in some layout.
type problem struct {
	batch, m, n, k int
	a, b           Strided
	// ta/tb: A (B) stored transposed; ba/bb: A (B) broadcast over the batch.
	ta, tb, ba, bb bool
}

// newProblem fills A and B with N(0,1) values in the requested layouts.
// pad adds unused elements between rows so strides differ from widths.
func newProblem(rng *rand.Rand, batch, m, n, k int, ta, tb, ba, bb bool, pad int) problem {
	p := problem{batch: batch, m: m, n: n, k: k, ta: ta, tb: tb, ba: ba, bb: bb}
	p.a = layout(rng, batch, m, k, ta, ba, pad)
	p.b = layout(rng, batch, k, n, tb, bb, pad)
	return p
}

// layout makes a batch of rows×cols matrices, row-major or (t) stored
// transposed, each row padded by pad elements, optionally one matrix
// broadcast over the batch (Batch stride 0).
func layout(rng *rand.Rand, batch, rows, cols int, t, broadcast bool, pad int) Strided {
	inner, outer := cols, rows // row-major: rows of cols elements
	if t {
		inner, outer = rows, cols
	}
	ld := inner + pad
	size := outer * ld
	n := batch
	if broadcast {
		n = 1
	}
	data := make([]float32, max(1, n*size))
	for i := range data {
		data[i] = float32(rng.NormFloat64())
	}
	s := Strided{Data: data, Batch: size, Row: ld, Col: 1}
	if t {
		s.Row, s.Col = 1, ld
	}
	if broadcast {
		s.Batch = 0
	}
	return s
}

func at(s Strided, p, i, j int) float32 { return s.Data[p*s.Batch+i*s.Row+j*s.Col] }

// check compares c with the float64 product: |c − ab| ≤ 2·γ_K·(|a||b|)
// elementwise (twice the bound each float32 dot product meets, see doc.go),
// plus the smallest normal float32 for underflow. It returns the largest
// ratio of error to bound seen.
func check(t *testing.T, name string, p problem, c Strided) float64 {
	t.Helper()
	gamma := float64(p.k) * u / (1 - float64(p.k)*u)
	worst := 0.0
	for e := range p.batch {
		for i := range p.m {
			for j := range p.n {
				var exact, abs float64
				for k := range p.k {
					x := float64(at(p.a, e, i, k)) * float64(at(p.b, e, k, j))
					exact += x
					abs += math.Abs(x)
				}
				got := float64(at(c, e, i, j))
				bound := 2*gamma*abs + 0x1p-126
				if d := math.Abs(got - exact); d > bound || math.IsNaN(got) {
					t.Fatalf("%s: C[%d][%d,%d] = %g, want %g ± %g", name, e, i, j, got, exact, bound)
				} else {
					worst = max(worst, d/bound)
				}
			}
		}
	}
	return worst
}

func outC(batch, m, n int) Strided {
	return RowMajor(make([]float32, max(1, batch*m*n)), m, n)
}

// shapes covers sizes below, at and above the tile (6×16), the chunk (256)
// and the blocks (120, 4096 not reached), empty and 1-wide dimensions.
var testShapes = [][4]int{ // batch, m, n, k
	{1, 1, 1, 1}, {1, 0, 5, 3}, {1, 5, 0, 3}, {0, 4, 4, 4}, {2, 3, 4, 0},
	{1, 6, 16, 1}, {1, 7, 17, 5}, {1, 5, 15, 31}, {3, 13, 33, 7},
	{1, 1, 300, 28}, {1, 300, 1, 28}, {1, 50, 100, 50}, {2, 121, 47, 257},
	{1, 130, 20, 513}, {4, 2, 2, 600}, {1, 64, 50, 1}, {2, 250, 7, 9},
}

// TestMultiplyLayouts checks every available kernel on every layout
// against float64 (the bound of doc.go).
func TestMultiplyLayouts(t *testing.T) {
	for _, kern := range Kernels() {
		t.Run(kern.String(), func(t *testing.T) { testLayouts(t, kern) })
	}
}

func testLayouts(t *testing.T, kern Kernel) {
	rng := rand.New(rand.NewPCG(1, 2))
	worst := 0.0
	for _, s := range testShapes {
		for _, lay := range []struct {
			ta, tb, ba, bb bool
			pad            int
		}{{}, {ta: true}, {tb: true}, {ta: true, tb: true}, {pad: 3}, {ta: true, tb: true, pad: 1}, {ba: true}, {bb: true, tb: true}} {
			name := fmt.Sprintf("%v %+v", s, lay)
			p := newProblem(rng, s[0], s[1], s[2], s[3], lay.ta, lay.tb, lay.ba, lay.bb, lay.pad)
			c := outC(p.batch, p.m, p.n)
			for i := range c.Data {
				c.Data[i] = float32(math.NaN()) // Multiply must overwrite C
			}
			MultiplyWith(kern, p.batch, p.m, p.n, p.k, p.a, p.b, c, 0)
			worst = max(worst, check(t, name, p, c))
			// C stored transposed (column stride ≠ 1) takes the edge path.
			ct := outC(p.batch, p.n, p.m).T()
			MultiplyWith(kern, p.batch, p.m, p.n, p.k, p.a, p.b, ct, 3)
			worst = max(worst, check(t, name+" Cᵀ", p, ct))
		}
	}
	t.Logf("kernel %s: largest error / bound %.3g", kern, worst)
}

// TestDotPathAgrees: one-row products whose B columns are contiguous in
// k (the logit layer's h·w, computed transposed) skip the packing and run
// dot12; they give the same bits as the packed kernels, alone, in a batch
// and over two contraction chunks, with the tail block overlapping.
func TestDotPathAgrees(t *testing.T) {
	if !HasAVX2() {
		t.Skip("the dot path needs the assembly kernels")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, s := range [][4]int{{1, 1024, 1, 301}, {3, 13, 1, 7}, {2, 12, 1, 513}, {1, 100, 1, 1}, {2, 25, 1, 40}} {
		// A is m×k row-major: the product is computed as Cᵀ = Bᵀ·Aᵀ, one row.
		p := newProblem(rng, s[0], s[1], s[2], s[3], false, false, false, false, 0)
		for _, kern := range Kernels() {
			if kern == KernelGo {
				continue
			}
			got := outC(p.batch, p.m, p.n)
			MultiplyWith(kern, p.batch, p.m, p.n, p.k, p.a, p.b, got, 2)
			useDot = false
			want := outC(p.batch, p.m, p.n)
			MultiplyWith(kern, p.batch, p.m, p.n, p.k, p.a, p.b, want, 2)
			useDot = true
			if !slices.Equal(got.Data, want.Data) {
				t.Errorf("%v %s: the dot path differs from the packed kernel", s, kern)
			}
			check(t, fmt.Sprint(s), p, got)
		}
	}
}

// TestAssemblyKernelsAgree: the AVX-512 and AVX2 kernels compute each
// element as the same chain of fused multiply-adds, so they agree bit for
// bit (which implies the weaker promise, agreement within the
// kernel's error bound 2·γ_K·Σ|a·b|, checked against float64 by
// TestMultiplyLayouts). Shapes cover the 12×32 tile's edges (rows and
// columns of 1, 6, 7, 12, 13, 16, 17, 31, 33), every orientation, the
// Higgs MLP's products (1024×301·301×301 and its gradients) and the two
// contraction chunks of K > 256.
func TestAssemblyKernelsAgree(t *testing.T) {
	if !HasAVX512() {
		t.Skipf("this CPU has no AVX-512 (kernels: %v); the AVX2 kernel is checked by TestMultiplyLayouts", Kernels())
	}
	rng := rand.New(rand.NewPCG(9, 10))
	shapes := [][4]int{{1, 1024, 301, 301}, {1, 301, 301, 1024}, {1, 1024, 1, 301}, {1, 1024, 301, 1}, {1, 29, 301, 1024},
		{3, 13, 33, 7}, {2, 12, 32, 300}, {1, 7, 17, 257}, {1, 6, 16, 1}, {2, 31, 63, 40}, {1, 130, 95, 513}, {4, 1, 31, 12}}
	for _, s := range shapes {
		for _, lay := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			p := newProblem(rng, s[0], s[1], s[2], s[3], lay[0], lay[1], false, false, 0)
			for _, threads := range []int{1, 2} {
				want := outC(p.batch, p.m, p.n)
				MultiplyWith(KernelAVX2, p.batch, p.m, p.n, p.k, p.a, p.b, want, threads)
				got := outC(p.batch, p.m, p.n)
				MultiplyWith(KernelAVX512, p.batch, p.m, p.n, p.k, p.a, p.b, got, threads)
				if !slices.Equal(got.Data, want.Data) {
					i := 0
					for got.Data[i] == want.Data[i] {
						i++
					}
					t.Errorf("%v transposed %v, %d threads: avx512 C[%d] = %g, avx2 %g", s, lay, threads, i, got.Data[i], want.Data[i])
				}
			}
		}
	}
}

// TestDeterministic: the value of an element does not depend on the thread
// count, the batch it is computed in, its position, or on computing the
// transposed product.
func TestDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][4]int{{3, 300, 300, 300}, {5, 64, 50, 100}, {2, 1024, 1, 300}, {1, 7, 600, 513}} {
		p := newProblem(rng, s[0], s[1], s[2], s[3], false, true, false, false, 0)
		ref := outC(p.batch, p.m, p.n)
		Multiply(p.batch, p.m, p.n, p.k, p.a, p.b, ref, 1)
		for _, threads := range []int{2, 3, 8} {
			c := outC(p.batch, p.m, p.n)
			Multiply(p.batch, p.m, p.n, p.k, p.a, p.b, c, threads)
			if !slices.Equal(c.Data, ref.Data) {
				t.Errorf("%v: %d threads differ from 1", s, threads)
			}
		}
		// Each batch entry alone.
		for e := range p.batch {
			c := outC(1, p.m, p.n)
			a, b := p.a, p.b
			a.Data, b.Data = a.Data[e*a.Batch:], b.Data[e*b.Batch:]
			Multiply(1, p.m, p.n, p.k, a, b, c, 2)
			if !slices.Equal(c.Data, ref.Data[e*p.m*p.n:(e+1)*p.m*p.n]) {
				t.Errorf("%v: batch entry %d alone differs", s, e)
			}
		}
		// Cᵀ = Bᵀ·Aᵀ (the driver may pick the other orientation).
		ct := outC(p.batch, p.n, p.m)
		Multiply(p.batch, p.n, p.m, p.k, p.b.T(), p.a.T(), ct, 2)
		if !slices.Equal(ct.T().Data, ref.Data) && !equalT(ct, ref, p) {
			t.Errorf("%v: Bᵀ·Aᵀ differs from (A·B)ᵀ", s)
		}
		// A row block: rows 5.. of A give rows 5.. of C.
		if p.m > 5 {
			a := p.a
			a.Data = a.Data[5*a.Row:]
			c := outC(p.batch, p.m-5, p.n)
			Multiply(p.batch, p.m-5, p.n, p.k, a, p.b, c, 2)
			for e := range p.batch {
				got := c.Data[e*c.Batch : e*c.Batch+(p.m-5)*p.n]
				want := ref.Data[e*ref.Batch+5*p.n : (e+1)*ref.Batch]
				if !slices.Equal(got, want) {
					t.Errorf("%v: rows from 5 differ", s)
				}
			}
		}
	}
}

func equalT(ct, ref Strided, p problem) bool {
	for e := range p.batch {
		for i := range p.m {
			for j := range p.n {
				if at(ct, e, j, i) != at(ref, e, i, j) {
					return false
				}
			}
		}
	}
	return true
}

func TestMultiplyPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
	}{
		{"negative m", func() { Multiply(1, -1, 1, 1, outC(1, 1, 1), outC(1, 1, 1), outC(1, 1, 1), 1) }},
		{"A too short", func() { Multiply(1, 2, 2, 2, RowMajor(make([]float32, 3), 2, 2), outC(1, 2, 2), outC(1, 2, 2), 1) }},
		{"C batch too short", func() { Multiply(2, 2, 2, 2, outC(2, 2, 2), outC(2, 2, 2), outC(1, 2, 2), 1) }},
		{"kernel not available", func() {
			MultiplyWith(Kernel(99), 1, 1, 1, 1, outC(1, 1, 1), outC(1, 1, 1), outC(1, 1, 1), 1)
		}},
		{"negative stride", func() {
			Multiply(1, 2, 2, 2, Strided{Data: make([]float32, 8), Row: -2, Col: 1}, outC(1, 2, 2), outC(1, 2, 2), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tc.f()
		})
	}
}

// FuzzMultiply draws shapes, layouts and thread counts and checks the
// bound against float64 (and, when it runs, agreement between the assembly
// and portable kernels within twice the bound).
func FuzzMultiply(f *testing.F) {
	for i, s := range testShapes {
		f.Add(uint64(i), uint8(s[0]), uint16(s[1]), uint16(s[2]), uint16(s[3]), uint8(i))
	}
	f.Fuzz(func(t *testing.T, seed uint64, batch uint8, m, n, k uint16, flags uint8) {
		b, mm, nn, kk := int(batch%4), int(m%140), int(n%140), int(k%600)
		if b*mm*nn*kk > 4e6 {
			t.Skip("too large for a fuzz iteration")
		}
		rng := rand.New(rand.NewPCG(seed, 5))
		p := newProblem(rng, b, mm, nn, kk, flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0, int(flags>>6))
		c := outC(p.batch, p.m, p.n)
		if flags&16 != 0 {
			c = outC(p.batch, p.n, p.m).T()
		}
		Multiply(p.batch, p.m, p.n, p.k, p.a, p.b, c, int(flags>>5&3))
		check(t, fmt.Sprintf("%d×%d×%d×%d flags %08b", b, mm, nn, kk, flags), p, c)
	})
}
