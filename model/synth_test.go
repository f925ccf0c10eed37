package model

import (
	"math"
	"math/rand/v2"
)

// logisticData is synthetic logistic data: x ~ N(0, I_d), η = σ(w·x + b),
// y ~ Bernoulli(η).
type logisticData struct {
	X   []float32
	Dim int
	Y   []uint8
	Eta []float32
}

// trueModel draws a fixed weight vector (scale sets the signal strength).
func trueModel(d int, seed uint64, scale float64) (w []float64, b float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	w = make([]float64, d)
	for i := range w {
		w[i] = r.NormFloat64() * scale / math.Sqrt(float64(d))
	}
	return w, -0.3
}

func makeLogistic(n int, w []float64, b float64, seed uint64) logisticData {
	d := len(w)
	r := rand.New(rand.NewPCG(seed, 11))
	data := logisticData{X: make([]float32, n*d), Dim: d, Y: make([]uint8, n), Eta: make([]float32, n)}
	for i := range n {
		z := b
		for j := range d {
			x := r.NormFloat64()
			data.X[i*d+j] = float32(x)
			z += w[j] * x
		}
		eta := 1 / (1 + math.Exp(-z))
		data.Eta[i] = float32(eta)
		if r.Float64() < eta {
			data.Y[i] = 1
		}
	}
	return data
}

// randomizedResponse flips each label with probability pi.
func randomizedResponse(y []uint8, pi float64, seed uint64) []uint8 {
	r := rand.New(rand.NewPCG(seed, 13))
	t := make([]uint8, len(y))
	for i, v := range y {
		t[i] = v
		if r.Float64() < pi {
			t[i] = 1 - v
		}
	}
	return t
}

// bagProportions returns the label proportion of consecutive bags of k rows
// (rows must already be in random order; synthetic rows are i.i.d.).
func bagProportions(y []uint8, k int) []float32 {
	t := make([]float32, len(y)/k)
	for i := range t {
		s := 0
		for _, v := range y[i*k : (i+1)*k] {
			s += int(v)
		}
		t[i] = float32(s) / float32(k)
	}
	return t
}
