package model

import (
	"math"
	"math/rand/v2"
)

// softmaxData is synthetic C-class data: x ~ N(0, I_d), η = softmax(W·x + b),
// y ~ Categorical(η).
type softmaxData struct {
	X       []float32
	Dim, C  int
	Y       []uint8
	Eta     []float64 // n × C
	BayesCl []uint8   // argmax_c η_c per row
}

// trueSoftmax draws W (C × d) and b (C) with signal strength scale.
func trueSoftmax(d, c int, seed uint64, scale float64) (w [][]float64, b []float64) {
	r := rand.New(rand.NewPCG(seed, 17))
	w, b = make([][]float64, c), make([]float64, c)
	for k := range c {
		w[k] = make([]float64, d)
		for j := range d {
			w[k][j] = r.NormFloat64() * scale / math.Sqrt(float64(d))
		}
		b[k] = 0.3 * r.NormFloat64()
	}
	return w, b
}

func makeSoftmax(n int, w [][]float64, b []float64, seed uint64) softmaxData {
	c, d := len(w), len(w[0])
	r := rand.New(rand.NewPCG(seed, 19))
	s := softmaxData{X: make([]float32, n*d), Dim: d, C: c, Y: make([]uint8, n), Eta: make([]float64, n*c), BayesCl: make([]uint8, n)}
	z := make([]float64, c)
	for i := range n {
		x := s.X[i*d : (i+1)*d]
		for j := range x {
			x[j] = float32(r.NormFloat64())
		}
		for k := range c {
			z[k] = b[k]
			for j, v := range x {
				z[k] += w[k][j] * float64(v)
			}
		}
		eta := s.Eta[i*c : (i+1)*c]
		softmax64(eta, z)
		u, acc := r.Float64(), 0.0
		s.Y[i] = uint8(c - 1)
		for k, p := range eta {
			if acc += p; u < acc {
				s.Y[i] = uint8(k)
				break
			}
		}
		for k, p := range eta {
			if p > eta[s.BayesCl[i]] {
				s.BayesCl[i] = uint8(k)
			}
		}
	}
	return s
}

// softmax64 writes softmax(z) into dst.
func softmax64(dst, z []float64) {
	m := math.Inf(-1)
	for _, v := range z {
		m = max(m, v)
	}
	var sum float64
	for k, v := range z {
		dst[k] = math.Exp(v - m)
		sum += dst[k]
	}
	for k := range dst {
		dst[k] /= sum
	}
}

// karyFlip is k-ary RR's flip probability (C−1)/(e^ε+C−1).
func karyFlip(eps float64, c int) float64 {
	return float64(c-1) / (math.Exp(eps) + float64(c-1))
}

// karyRR releases each label: kept with probability 1 − flip, else a
// uniform other class.
func karyRR(y []uint8, c int, flip float64, seed uint64) []uint8 {
	r := rand.New(rand.NewPCG(seed, 23))
	z := make([]uint8, len(y))
	for i, v := range y {
		z[i] = v
		if r.Float64() < flip {
			o := uint8(r.IntN(c - 1))
			if o >= v {
				o++
			}
			z[i] = o
		}
	}
	return z
}

// oneHot is the row-major one-hot encoding of y over c classes.
func oneHot(y []uint8, c int) []float32 {
	t := make([]float32, len(y)*c)
	for i, v := range y {
		t[i*c+int(v)] = 1
	}
	return t
}

// bagVectors is the class-proportion vector of consecutive bags of k rows.
func bagVectors(y []uint8, c, k int) []float32 {
	t := make([]float32, len(y)/k*c)
	for i := range len(y) / k {
		for _, v := range y[i*k : (i+1)*k] {
			t[i*c+int(v)] += 1 / float32(k)
		}
	}
	return t
}

// bayesAccuracy is the accuracy of the Bayes classifier argmax η on labels.
func bayesAccuracy(s softmaxData) float64 {
	hits := 0
	for i, y := range s.Y {
		if s.BayesCl[i] == y {
			hits++
		}
	}
	return float64(hits) / float64(len(s.Y))
}
