package model

import (
	"math"
	"runtime"
	"sync"
)

// hostEmbedding keeps kdd_embed's tables and their lazy Adam moments in
// host memory (feedSparseHost): the host sums each example's embedding rows,
// the compiled program trains the dense layers and returns the gradient of
// those sums, and the host applies lazy Adam to the rows the step touched.
// On backend "go" this replaces 8 gathers and scatters of generic simplego
// code per step with a few tight loops (issue 12 §2); on XLA the table stays
// on the device (feedSparseLazy).
//
// Rows are numbered as in the device table: replica r's rows start at
// r·(K+1), row K being its trash row. In memory each row keeps its values,
// first and second moments together ([row][3][E]): a touched row is one
// contiguous 3·E·4 bytes, so lazy Adam's random rows cost one burst of
// cache lines each rather than three.
type hostEmbedding struct {
	r, k, e int
	rows    []float32 // [R·(K+1)][3][E]
	grad    []float32 // [R·U·E]: per step, the gradient of each touched row
}

func newHostEmbedding(r, k, e, u int) *hostEmbedding {
	return &hostEmbedding{r: r, k: k, e: e, rows: make([]float32, r*(k+1)*3*e), grad: make([]float32, r*u*e)}
}

// get copies part (0: values, 1: first moments, 2: second moments) of every
// row into dst ([R·(K+1)·E], the device table's layout); set is its inverse.
func (h *hostEmbedding) get(part int, dst []float32) {
	e := h.e
	for i := range len(dst) / e {
		copy(dst[i*e:(i+1)*e], h.rows[(3*i+part)*e:])
	}
}

func (h *hostEmbedding) set(part int, src []float32) {
	e := h.e
	for i := range len(src) / e {
		copy(h.rows[(3*i+part)*e:(3*i+part+1)*e], src[i*e:])
	}
}

// parallel runs fn over [0, n) split in up to GOMAXPROCS ranges.
func parallel(n int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	if w <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for j := range w {
		lo, hi := j*n/w, (j+1)*n/w
		wg.Go(func() { fn(lo, hi) })
	}
	wg.Wait()
}

// forward writes each example's embedding sum into f.x ([R·B·E]) from the
// feeder's slots (f.ids, into f.uniq) and mask.
func (h *hostEmbedding) forward(f *feeder) {
	s, e := f.s, h.e
	parallel(s.r*s.b, func(lo, hi int) {
		for ex := lo; ex < hi; ex++ { // ex = r·B + i
			out := f.x[ex*e : (ex+1)*e]
			clear(out)
			for t := range s.w {
				k := ex*s.w + t
				if f.mask[k] == 0 {
					continue
				}
				row := h.rows[3*int(f.uniq[f.ids[k]])*e:]
				row = row[:len(out)]
				for j, v := range row {
					out[j] += v
				}
			}
		}
	})
}

// update applies lazy Adam to the rows of this step: grad is the gradient
// of the embedding sums [R·B·E]; stepScale[r] = lr_r/(1−β1^t) and vScale =
// 1/√(1−β2^t), as in the program (same float32 expressions).
func (h *hostEmbedding) update(f *feeder, grad []float32, stepScale []float32, vScale float32, a AdamConfig) {
	s, e := f.s, h.e
	b1, b2, eps := float32(1-a.Beta1), float32(1-a.Beta2), float32(a.Epsilon)
	// Sum each touched row's gradient. Workers split the embedding columns
	// (any R, no races: a worker owns its columns of every row).
	parallel(e, func(c0, c1 int) {
		for r := range s.r {
			for j := range f.nUniq[r] {
				clear(h.grad[(r*s.u+j)*e+c0 : (r*s.u+j)*e+c1])
			}
			for i := range s.b {
				ex := r*s.b + i
				g := grad[ex*e+c0 : ex*e+c1]
				for t := range s.w {
					k := ex*s.w + t
					if f.mask[k] == 0 {
						continue
					}
					dst := h.grad[int(f.ids[k])*e+c0:]
					dst = dst[:len(g)]
					for j, v := range g {
						dst[j] += v
					}
				}
			}
		}
	})
	parallel(s.r*s.u, func(lo, hi int) { // Adam on the touched rows (distinct rows: no races)
		for slot := lo; slot < hi; slot++ {
			r, j := slot/s.u, slot%s.u
			if j >= f.nUniq[r] {
				continue
			}
			sc := stepScale[r]
			o := 3 * int(f.uniq[slot]) * e
			row := h.rows[o : o+3*e]
			p, m, v, g := row[:e], row[e:2*e], row[2*e:3*e], h.grad[slot*e:(slot+1)*e]
			for c, gc := range g {
				dm := b1 * (gc - m[c])
				dv := b2 * (gc*gc - v[c])
				mc, vc := m[c]+dm, v[c]+dv
				m[c], v[c] = mc, vc
				p[c] -= sc * mc / (float32(math.Sqrt(float64(vc)))*vScale + eps)
			}
		}
	})
}
