package simplegofast

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSelectF32: every form (full or scalar branches) and length 0–70
// (the assembly does multiples of 8, Go the rest) gives the definition's
// bits, including NaNs and signed zeros.
func TestSelectF32(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vals := []float32{0, float32(negZero()), 1.5, -2, float32(nan())}
	for n := range 71 {
		c := make([]bool, n)
		full := func() []float32 {
			x := make([]float32, n)
			for i := range x {
				x[i] = vals[rng.IntN(len(vals))] + float32(rng.IntN(3))
			}
			return x
		}
		for i := range c {
			c[i] = rng.IntN(2) == 0
		}
		for _, form := range []struct{ tFull, fFull bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
			tv, fv := []float32{vals[rng.IntN(len(vals))]}, []float32{vals[rng.IntN(len(vals))]}
			if form.tFull {
				tv = full()
			}
			if form.fFull {
				fv = full()
			}
			o := make([]float32, n)
			selectF32(o, c, tv, fv)
			for i := range o {
				want := fv[0]
				if form.fFull {
					want = fv[i]
				}
				if c[i] {
					want = tv[0]
					if form.tFull {
						want = tv[i]
					}
				}
				if bits(o[i]) != bits(want) {
					t.Fatalf("n=%d %+v: o[%d] = %v, want %v", n, form, i, o[i], want)
				}
			}
		}
	}
}

func negZero() float64      { return math.Copysign(0, -1) }
func nan() float64          { return math.NaN() }
func bits(x float32) uint32 { return math.Float32bits(x) }
