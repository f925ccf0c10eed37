package audit

import (
	"math"
	"math/cmplx"
)

// bagLaws returns, for a bag whose members' laws over the grid are ps,
// each member's bag-mates' total law (index t: a total of t grid steps):
// Q_i = the convolution of the others' laws, as the convolution of the
// prefix and suffix products around member i (an example alone: [1]). The
// prefix and suffix products drop, after each member, the top entries
// holding at most bagTailMass/(4n) of mass, and each Q_i its top entries
// holding at most bagTailMass/4: every Q_i is the true law less at most
// bagTailMass of mass, all of it above the kept totals (entry by entry
// never more than the truth, up to the round-off of the FFT convolutions,
// ~1e-16 of the largest entry, whose negative values are set to 0).
func bagLaws(ps [][]float64) [][]float64 {
	n := len(ps)
	out := make([][]float64, n)
	if n == 1 {
		return [][]float64{{1}}
	}
	step := bagTailMass / (4 * float64(n))
	pre := make([][]float64, n+1) // pre[i]: members 0..i−1
	suf := make([][]float64, n+1) // suf[i]: members i..n−1
	pre[0], suf[n] = []float64{1}, []float64{1}
	for i := range n {
		pre[i+1] = trimTail(convolve(pre[i], ps[i]), step)
	}
	for i := n - 1; i >= 0; i-- {
		suf[i] = trimTail(convolve(suf[i+1], ps[i]), step)
	}
	for i := range n {
		out[i] = trimTail(convolve(pre[i], suf[i+1]), bagTailMass/4)
	}
	return out
}

// trimTail drops the top entries of a law whose total is at most mass
// (keeping at least one).
func trimTail(w []float64, mass float64) []float64 {
	var s float64
	k := len(w)
	for k > 1 && s+w[k-1] <= mass {
		s += w[k-1]
		k--
	}
	return w[:k]
}

// directConvolve is the threshold (in multiply-adds) below which a
// convolution is direct rather than by FFT.
const directConvolve = 1 << 15

// convolve returns the convolution of two non-negative sequences, directly
// when small, else by a float64 FFT whose round-off (~1e-16 of the largest
// entry) is clamped at 0.
func convolve(a, b []float64) []float64 {
	n := len(a) + len(b) - 1
	out := make([]float64, n)
	if len(a)*len(b) <= directConvolve || len(a) == 1 || len(b) == 1 {
		for i, x := range a {
			if x == 0 {
				continue
			}
			for j, y := range b {
				out[i+j] += x * y
			}
		}
		return out
	}
	m := 1
	for m < n {
		m <<= 1
	}
	fa, fb := make([]complex128, m), make([]complex128, m)
	for i, x := range a {
		fa[i] = complex(x, 0)
	}
	for i, x := range b {
		fb[i] = complex(x, 0)
	}
	fft(fa, false)
	fft(fb, false)
	for i := range fa {
		fa[i] *= fb[i]
	}
	fft(fa, true)
	for i := range out {
		out[i] = max(real(fa[i])/float64(m), 0)
	}
	return out
}

// fft is the in-place iterative radix-2 FFT of x (len a power of two),
// the inverse without the 1/n factor when inverse.
func fft(x []complex128, inverse bool) {
	n := len(x)
	for i, j := 1, 0; i < n; i++ {
		bit := n >> 1
		for ; j&bit != 0; bit >>= 1 {
			j ^= bit
		}
		j |= bit
		if i < j {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for size := 2; size <= n; size <<= 1 {
		w := cmplx.Rect(1, sign*2*math.Pi/float64(size))
		half := size / 2
		tw := make([]complex128, half)
		tw[0] = 1
		for k := 1; k < half; k++ {
			if k%64 == 0 { // refresh from the exact angle: no drift
				tw[k] = cmplx.Rect(1, sign*2*math.Pi*float64(k)/float64(size))
			} else {
				tw[k] = tw[k-1] * w
			}
		}
		for start := 0; start < n; start += size {
			for k := range half {
				u, v := x[start+k], x[start+k+half]*tw[k]
				x[start+k], x[start+k+half] = u+v, u-v
			}
		}
	}
}
