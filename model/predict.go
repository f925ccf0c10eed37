package model

import (
	"fmt"
	"runtime"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
)

// predictChunk is the rows per prediction step (no gradients: larger than
// a training batch is fine). Fewer rows use one chunk of their size.
const predictChunk = 4096

// Predict returns every replica's predicted probabilities for the rows of
// features, in row order. Binary (Classes() == 2): out[r][i] = σ(logit), the
// probability of class 1 for row i. C ≥ 3 classes: out[r] holds C
// probabilities per row, row-major: out[r][i·C+c] = P(y = c | x_i), the
// softmax of the logits (rows sum to 1 up to rounding). All replicas run in
// one pass over the rows, chunk by chunk.
func (g *Group) Predict(features *data.Features) (out [][]float32, err error) {
	defer recoverErr(g.Name, &err)
	defer runtime.KeepAlive(features) // the chunks are copied from its arrays
	if g.params == nil {
		return nil, fmt.Errorf("%w: %q", ErrClosed, g.Name)
	}
	if err := checkFeatures(g.m, features); err != nil {
		return nil, fmt.Errorf("model: group %q: predict: %w", g.Name, err)
	}
	n := features.Rows
	s := predictShape{model: g.m.key(), r: g.r, c: min(n, predictChunk)}
	if s.sparse = g.m.Kind == KindKDDEmbed; s.sparse {
		s.w = sparseWidth(features)
	} else {
		s.d = features.Dim()
	}
	prog, compileS, fresh, err := program(cacheKey{backend: g.be, shape: s}, buildPredict(g.m, s))
	if err != nil {
		return nil, fmt.Errorf("model: group %q: %w", g.Name, err)
	}
	if fresh {
		g.CompileS += compileS
	}
	h := g.m.heads() // values per row
	out = make([][]float32, g.r)
	for r := range out {
		out[r] = make([]float32, n*h)
	}
	var x []float32
	var ids []int32
	var mask []float32
	if s.sparse {
		ids, mask = make([]int32, s.c*s.w), make([]float32, s.c*s.w)
	} else {
		x = make([]float32, s.c*s.d)
	}
	probs := make([]float32, g.r*s.c*h)
	inputs := make([]backends.Buffer, 0, len(g.params)+2)
	donate := make([]bool, 0, len(g.params)+2)
	for lo := 0; lo < n; lo += s.c {
		k := min(s.c, n-lo) // rows in this chunk; the rest is padding
		var data []backends.Buffer
		if s.sparse {
			clear(ids)
			clear(mask)
			for i := range k {
				row := features.Indices[features.Offsets[lo+i]:features.Offsets[lo+i+1]]
				for t, ix := range row {
					ids[i*s.w+t], mask[i*s.w+t] = int32(ix), 1
				}
			}
			b1, err := g.be.BufferFromFlatData(0, ids, i32(s.c, s.w))
			if err != nil {
				return nil, err
			}
			b2, err := g.be.BufferFromFlatData(0, mask, f32(s.c, s.w))
			if err != nil {
				_ = g.be.BufferFinalize(b1)
				return nil, err
			}
			data = []backends.Buffer{b1, b2}
		} else {
			clear(x[k*s.d:])
			copy(x, features.X[lo*s.d:(lo+k)*s.d])
			b, err := g.be.BufferFromFlatData(0, x, f32(s.c, s.d))
			if err != nil {
				return nil, err
			}
			data = []backends.Buffer{b}
		}
		inputs, donate = append(inputs[:0], g.params...), donate[:0]
		for range g.params {
			donate = append(donate, false)
		}
		for _, b := range data {
			inputs, donate = append(inputs, b), append(donate, true)
		}
		outs, err := runProgram(g.be, prog, inputs, donate)
		if err != nil {
			return nil, fmt.Errorf("model: group %q: predict: %w", g.Name, err)
		}
		err = g.be.BufferToFlatData(outs[0], probs)
		_ = g.be.BufferFinalize(outs[0])
		if err != nil {
			return nil, err
		}
		for r := range g.r {
			copy(out[r][lo*h:(lo+k)*h], probs[r*s.c*h:(r*s.c+k)*h])
		}
	}
	return out, nil
}

// Classes is the number of classes C the group's models predict: 2 for a
// binary model (Predict gives P(y = 1 | x) per row), else C (Predict gives
// C probabilities per row).
func (g *Group) Classes() int { return max(g.m.heads(), 2) }

// Close releases the group's parameters on the backend. It is idempotent;
// Predict fails after it.
func (g *Group) Close() {
	for _, b := range g.params {
		if b != nil && !g.be.IsFinalized() {
			_ = g.be.BufferFinalize(b)
		}
	}
	g.params = nil
}
