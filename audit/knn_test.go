package audit

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Brute force: sort all distances, average the k nearest labels.
func bruteKNN(ref []float32, labels []uint8, x []float32, d, k int) float64 {
	type nd struct {
		dist float32
		row  int
	}
	var all []nd
	for r := range labels {
		var s float32
		for j := range d {
			t := x[j] - ref[r*d+j]
			s += t * t
		}
		all = append(all, nd{s, r})
	}
	slices.SortStableFunc(all, func(a, b nd) int {
		switch {
		case a.dist < b.dist:
			return -1
		case a.dist > b.dist:
			return 1
		}
		return 0
	})
	var ones int
	for _, n := range all[:k] {
		ones += int(labels[n.row])
	}
	return float64(ones) / float64(k)
}

func TestKNNEtaMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	const d = 3
	ref := make([]float32, 500*d)
	labels := make([]uint8, 500)
	for i := range ref {
		ref[i] = float32(r.IntN(5)) // many ties
	}
	for i := range labels {
		labels[i] = uint8(r.IntN(2))
	}
	query := make([]float32, 40*d)
	for i := range query {
		query[i] = float32(r.NormFloat64() * 2)
	}
	for _, k := range []int{1, 7, 50} {
		got, err := KNNEta(ref, labels, query, d, k, 2)
		if err != nil {
			t.Fatal(err)
		}
		for q := range 40 {
			// Ties at the k-th distance may pick other rows than a stable
			// sort; compare only queries without a tie at the boundary.
			if want := bruteKNN(ref, labels, query[q*d:(q+1)*d], d, k); math.Abs(got[q]-want) > 1e-12 && !tieAtK(ref, query[q*d:(q+1)*d], d, k) {
				t.Fatalf("k=%d query %d: %v, brute force %v", k, q, got[q], want)
			}
		}
	}
}

func tieAtK(ref, x []float32, d, k int) bool {
	var ds []float32
	for r := 0; r < len(ref)/d; r++ {
		var s float32
		for j := range d {
			t := x[j] - ref[r*d+j]
			s += t * t
		}
		ds = append(ds, s)
	}
	slices.Sort(ds)
	return k < len(ds) && ds[k-1] == ds[k]
}

// On data with a smooth known η the estimate converges: with 40k reference
// rows in 2-D and k = 200, the mean absolute error over 200 queries is below
// 0.05. (Each estimate's standard deviation is ≤ √(0.25/200) = 0.035, so
// the mean of 200 absolute errors has sd ≤ 0.0025, and the smoothing bias of
// σ(w·x) over a 200-neighbour ball is ≈ 0.01: 0.05 leaves > 10 sd.)
func TestKNNEtaConsistent(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	eta := func(x []float32) float64 { return 1 / (1 + math.Exp(-(1.5*float64(x[0]) - float64(x[1])))) }
	const n, d = 40000, 2
	ref := make([]float32, n*d)
	labels := make([]uint8, n)
	for i := range n {
		ref[i*d], ref[i*d+1] = float32(r.NormFloat64()), float32(r.NormFloat64())
		if r.Float64() < eta(ref[i*d:(i+1)*d]) {
			labels[i] = 1
		}
	}
	query := make([]float32, 200*d)
	for i := range query {
		query[i] = float32(r.NormFloat64())
	}
	got, err := KNNEta(ref, labels, query, d, 200, 0)
	if err != nil {
		t.Fatal(err)
	}
	var mae float64
	for q := range 200 {
		mae += math.Abs(got[q] - eta(query[q*d:(q+1)*d]))
	}
	if mae /= 200; mae > 0.05 {
		t.Fatalf("mean |η̂ − η| = %.4f, want < 0.05", mae)
	}
}

func TestKNNEtaErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ref   []float32
		lab   []uint8
		d, k  int
		param string
	}{
		{"zero d", []float32{1}, []uint8{1}, 0, 1, "d"},
		{"ragged", []float32{1, 2, 3}, []uint8{1}, 2, 1, "d"},
		{"labels", []float32{1, 2}, []uint8{1, 0}, 2, 1, "labels"},
		{"k too big", []float32{1, 2}, []uint8{1}, 2, 2, "k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := KNNEta(tc.ref, tc.lab, []float32{0, 0}, tc.d, tc.k, 1)
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Param != tc.param {
				t.Fatalf("err = %v, want a ParamError on %s", err, tc.param)
			}
		})
	}
}
