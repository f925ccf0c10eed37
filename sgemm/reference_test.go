package sgemm

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// fma32 is float32's fused multiply-add: a·b + c rounded once to nearest,
// ties to even. math.FMA rounds a·b + c (a, b, c float32) once to float64;
// rounding that to float32 again is exact unless it landed on a float32
// midpoint (every midpoint is a float64), and then big.Float decides.
func fma32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	f := float32(r)
	if float64(f) == r || math.IsInf(r, 0) || math.IsNaN(r) {
		return f
	}
	g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-float64(f))))
	if float64(f)+float64(g) != 2*r {
		return f
	}
	x := new(big.Float).SetPrec(256).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetPrec(256).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetPrec(256).SetFloat64(float64(c)))
	f, _ = x.Float32()
	return f
}

// refMultiply is the package doc's definition of every element, written
// out in scalar Go: the contraction split into ⌈K/kc⌉ chunks of near-equal
// length, each a chain of fused multiply-adds in k order from zero, the
// chunk sums added to C in chunk order. The assembly kernels, the dot path
// and the GEMV paths must give exactly these bits.
func refMultiply(p problem) Strided {
	c := outC(p.batch, p.m, p.n)
	if p.k == 0 {
		return c
	}
	chunks := (p.k + kc - 1) / kc
	chunk := (p.k + chunks - 1) / chunks
	for e := range p.batch {
		for i := range p.m {
			for j := range p.n {
				var sum float32
				for pc := 0; pc < p.k; pc += chunk {
					var s float32
					for k := pc; k < min(pc+chunk, p.k); k++ {
						s = fma32(at(p.a, e, i, k), at(p.b, e, k, j), s)
					}
					if pc == 0 {
						sum = s
					} else {
						sum += s
					}
				}
				c.Data[e*c.Batch+i*c.Row+j*c.Col] = sum
			}
		}
	}
	return c
}

// defaultMC is the A block's rows chosen for this CPU (tests change mc
// and put it back).
var defaultMC = mc

// TestMCFor: the A block fills half of L2 in whole 12-row tiles, within
// [120, 1020] rows.
func TestMCFor(t *testing.T) {
	for _, tc := range []struct {
		name string
		l2   int
		want int
	}{
		{"unknown", 0, 120}, {"256 KiB", 256 << 10, 120}, {"512 KiB (Zen 3)", 512 << 10, 252},
		{"1 MiB (Zen 5)", 1 << 20, 504}, {"1.25 MiB", 1280 << 10, 636}, {"2 MiB", 2 << 20, 1020}, {"32 MiB", 32 << 20, 1020},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mcFor(tc.l2); got != tc.want {
				t.Errorf("mcFor(%d) = %d, want %d", tc.l2, got, tc.want)
			}
		})
	}
	t.Logf("this CPU: L2 %d KiB, mc %d", l2Bytes()>>10, mc)
}

func TestFMA32(t *testing.T) {
	one := float32(1)
	eps := float32(math.Nextafter32(1, 2) - 1) // 2⁻²³
	for _, tc := range []struct {
		name    string
		a, b, c float32
		want    float32
	}{
		{"exact", 3, 4, 5, 17},
		{"once, not twice", 1 + eps, 1 + eps, 0, 1 + 2*eps}, // (1+ε)² = 1 + 2ε + ε²: rounds to 1 + 2ε
		// −2⁻²⁴(1 + 2⁻²³)·(1 − 2⁻²³) + (1 + 2⁻²³) = 1 + 2⁻²⁴ + 2⁻⁷⁰ rounds to
		// float64 1 + 2⁻²⁴, a float32 midpoint: rounding that again gives 1
		// (ties to even), rounding once gives 1 + 2⁻²³.
		{"double rounding tie", -(0x1p-24 + 0x1p-47), 1 - 0x1p-23, 1 + 0x1p-23, one + eps},
		{"negative zero sum", -0.0, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fma32(tc.a, tc.b, tc.c); math.Float32bits(got) != math.Float32bits(tc.want) {
				t.Errorf("fma32(%g, %g, %g) = %g (%#x), want %g (%#x)", tc.a, tc.b, tc.c, got, math.Float32bits(got), tc.want, math.Float32bits(tc.want))
			}
		})
	}
}

// referenceShapes cross the strip's edges: m around the 12-row tile and the
// 120-row block (whole strips, a 6-row tile left, a partial panel), n
// around 16 and 32 (a narrower last panel in place and packed), K in one
// chunk and in several, the logit layer's N = 1 and K = 1 and one-row
// products.
var referenceShapes = [][4]int{ // batch, m, n, k
	{1, 24, 32, 40}, {1, 30, 48, 256}, {1, 35, 33, 300}, {2, 125, 47, 29}, {1, 132, 17, 257},
	{1, 241, 20, 9}, {1, 7, 64, 513}, {1, 300, 1, 301}, {2, 77, 1, 40}, {1, 300, 31, 1},
	{1, 1, 300, 64}, {3, 1, 37, 700}, {1, 50, 100, 1}, {2, 13, 1, 5},
}

// TestKernelsMatchReference: every assembly kernel gives exactly
// refMultiply's bits on every layout (A, B transposed or not, C with a
// column stride), one thread and several, with this CPU's A blocks (mc)
// and with blocks of 30 and 12 rows (block edges inside every shape, a
// 6-row tile after the 12-row strips). A kernel that reads a wrong panel,
// drops a tile of a strip, splits K otherwise or rounds twice fails here;
// so does a K = 1 product that multiplies without the FMA's + 0 (the sign
// of a zero product).
func TestKernelsMatchReference(t *testing.T) {
	if !HasAVX2() {
		t.Skip("no assembly kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for _, s := range referenceShapes {
		for _, lay := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			p := newProblem(rng, s[0], s[1], s[2], s[3], lay[0], lay[1], false, false, 0)
			for i := 0; i < len(p.b.Data); i += 13 {
				p.b.Data[i] = 0 // −x·0 + 0 is +0 with one rounding, −0 from a bare multiply
			}
			want := refMultiply(p)
			for _, kern := range Kernels() {
				if kern == KernelGo {
					continue
				}
				for _, run := range []struct{ threads, blockRows int }{{1, defaultMC}, {3, defaultMC}, {1, 30}, {2, 12}} {
					for _, ct := range []bool{false, true} {
						name := fmt.Sprintf("%v transposed %v %s threads=%d mc=%d Cᵀ=%v", s, lay, kern, run.threads, run.blockRows, ct)
						c := outC(p.batch, p.m, p.n)
						if ct {
							c = outC(p.batch, p.n, p.m).T()
						}
						mc = run.blockRows
						MultiplyWith(kern, p.batch, p.m, p.n, p.k, p.a, p.b, c, run.threads)
						mc = defaultMC
						if e, i, j, ok := firstDiff(c, want, p); !ok {
							t.Errorf("%s: C[%d][%d,%d] = %g, reference %g", name, e, i, j, at(c, e, i, j), at(want, e, i, j))
						}
					}
				}
			}
		}
	}
}

// firstDiff finds the first element where c and want differ in their bits.
func firstDiff(c, want Strided, p problem) (e, i, j int, ok bool) {
	for e := range p.batch {
		for i := range p.m {
			for j := range p.n {
				if math.Float32bits(at(c, e, i, j)) != math.Float32bits(at(want, e, i, j)) {
					return e, i, j, false
				}
			}
		}
	}
	return 0, 0, 0, true
}
