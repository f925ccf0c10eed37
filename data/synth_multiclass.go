package data

import (
	"math"
	"math/rand/v2"
)

// MulticlassLogitNorm is the norm of each row of SynthMulticlass's weight
// matrix W: the logits W·x, x ~ N(0, I_D), are then N(0, 25·UUᵀ) for unit
// rows U. At C = 10 classes and D = 16 features the Bayes classifier's
// accuracy E[max_c η_c(x)] is about 0.77 (0.768–0.779 over seeds 1–5, 40,000
// draws each): learnable (the model is a linear softmax, which an MLP holds
// exactly) but far from trivial, and hard under C-ary randomized response.
// Measured at the same norm: ≈ 0.89 at C = 3, D = 16 and ≈ 0.60 at C = 64,
// D = 16; fewer features lower it (≈ 0.70 at C = 10, D = 4).
const MulticlassLogitNorm = 5.0

// multiclassModel is SynthMulticlass: η(x) = softmax(W·x), no bias, so the
// classes are alike in law; the rows of W are independent uniform
// directions scaled to MulticlassLogitNorm (drawn from the parameter
// stream, row by row).
type multiclassModel struct {
	c, d int
	w    []float64 // C×D, row-major
	bias []float64 // C logits added to W·x (kind conversions); nil: none
}

func newMulticlassModel(classes, d int, seed uint64) *multiclassModel {
	r := rand.New(rand.NewPCG(seed, streamSynthParams))
	m := &multiclassModel{c: classes, d: d, w: make([]float64, classes*d)}
	for c := range classes {
		row := m.w[c*d : (c+1)*d]
		var norm float64
		for j := range row {
			row[j] = r.NormFloat64()
			norm += row[j] * row[j]
		}
		scale := MulticlassLogitNorm / math.Sqrt(norm)
		for j := range row {
			row[j] *= scale
		}
	}
	return m
}

// weightRows returns W as rows (meta.json's class_weights).
func (m *multiclassModel) weightRows() [][]float64 {
	rows := make([][]float64, m.c)
	for c := range rows {
		rows[c] = m.w[c*m.d : (c+1)*m.d]
	}
	return rows
}

// eta writes softmax(W·x) into dst (len C), in float64 with the largest
// logit subtracted: entries in [0, 1] summing to 1 within a few ulps.
func (m *multiclassModel) eta(x []float32, dst []float64) {
	mx := math.Inf(-1)
	for c := range dst {
		var t float64
		for j, v := range x {
			t += m.w[c*m.d+j] * float64(v)
		}
		if m.bias != nil {
			t += m.bias[c]
		}
		dst[c] = t
		mx = max(mx, t)
	}
	var sum float64
	for c, t := range dst {
		dst[c] = math.Exp(t - mx)
		sum += dst[c]
	}
	for c := range dst {
		dst[c] /= sum
	}
}

// frame draws n rows from r: D standard normal features, then the label
// from η(x) by one uniform u (the first class c with u < η_0 + … + η_c).
// With C ≥ 3 the frame holds EtaC; with C = 2 it is a binary frame whose
// `eta` is η_1.
func (m *multiclassModel) frame(names []string, n int, r *rand.Rand, groups int) *Frame {
	d, c := len(names), m.c
	f := &Frame{Rows: n, Features: names, X: make([]float32, n*d), Label: make([]uint8, n)}
	eta := make([]float64, n*c)
	for i := range n {
		x := f.X[i*d : (i+1)*d]
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		e := eta[i*c : (i+1)*c]
		m.eta(x, e)
		u := r.Float64()
		y, cum := c-1, 0.0
		for k := range c - 1 {
			if cum += e[k]; u < cum {
				y = k
				break
			}
		}
		f.Label[i] = uint8(y)
	}
	if c >= 3 {
		f.Classes, f.EtaC = c, eta
	} else {
		f.Eta = make([]float64, n)
		for i := range f.Eta {
			f.Eta[i] = eta[2*i+1]
		}
	}
	addGroups(f, groups)
	return f
}

// BayesAccuracy returns, for a frame with true class probabilities (EtaC,
// or the binary Eta) and labels, the Bayes classifier's expected accuracy
// mean_i max_c η_c(x_i) and its accuracy on the frame's labels (argmax η,
// ties to the smaller class). Both are NaN for a frame without η or rows.
func BayesAccuracy(f *Frame) (expected, empirical float64) {
	c := f.NumClasses()
	if f.Rows == 0 || (f.EtaC == nil && f.Eta == nil) {
		return math.NaN(), math.NaN()
	}
	var sum float64
	var hits int
	row := make([]float64, c)
	for i := range f.Rows {
		if f.EtaC != nil {
			copy(row, f.EtaC[i*c:(i+1)*c])
		} else {
			row[0], row[1] = 1-f.Eta[i], f.Eta[i]
		}
		best := 0
		for k, v := range row {
			if v > row[best] {
				best = k
			}
		}
		sum += row[best]
		if f.Label != nil && int(f.Label[i]) == best {
			hits++
		}
	}
	n := float64(f.Rows)
	if f.Label == nil {
		return sum / n, math.NaN()
	}
	return sum / n, float64(hits) / n
}

// classRates returns counts[c]/rows.
func classRates(counts []int64, rows int) []float64 {
	out := make([]float64, len(counts))
	for c, k := range counts {
		out[c] = float64(k) / float64(rows)
	}
	return out
}
