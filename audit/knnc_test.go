package audit

import (
	"math"
	"math/rand/v2"
	"testing"
)

// KNNEtaC's η is the class shares among the k nearest reference rows:
// checked against KNNEta on each class's indicator labels (the same
// neighbours, ties included), rows summing to 1; at c = 2 its class-1
// column is KNNEta. Bad classes or labels are refused naming them.
func TestKNNEtaC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const d, c, n, nq = 3, 5, 400, 30
	ref, labels := make([]float32, n*d), make([]uint8, n)
	for i := range ref {
		ref[i] = float32(r.IntN(4)) // many ties
	}
	for i := range labels {
		labels[i] = uint8(r.IntN(c))
	}
	query := make([]float32, nq*d)
	for i := range query {
		query[i] = float32(r.NormFloat64() * 2)
	}
	for _, k := range []int{1, 9, 60} {
		got, err := KNNEtaC(ref, labels, query, d, k, c, 2)
		if err != nil {
			t.Fatal(err)
		}
		for y := range c {
			ind := make([]uint8, n)
			for i, l := range labels {
				if int(l) == y {
					ind[i] = 1
				}
			}
			want, err := KNNEta(ref, ind, query, d, k, 2)
			if err != nil {
				t.Fatal(err)
			}
			for q := range nq {
				if math.Abs(got[q*c+y]-want[q]) > 1e-12 {
					t.Fatalf("k=%d query %d class %d: %v, indicator mean %v", k, q, y, got[q*c+y], want[q])
				}
			}
		}
		for q := range nq {
			var s float64
			for y := range c {
				s += got[q*c+y]
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("k=%d query %d: shares sum to %v", k, q, s)
			}
		}
	}
	bin := make([]uint8, n)
	for i, l := range labels {
		bin[i] = l % 2
	}
	two, _ := KNNEtaC(ref, bin, query, d, 7, 2, 1)
	one, _ := KNNEta(ref, bin, query, d, 7, 1)
	for q := range nq {
		if two[2*q+1] != one[q] {
			t.Fatalf("c=2 query %d: %v vs KNNEta %v", q, two[2*q+1], one[q])
		}
	}
	if _, err := KNNEtaC(ref, labels, query, d, 3, 4, 1); err == nil {
		t.Error("a label ≥ c was accepted")
	}
	if _, err := KNNEtaC(ref, labels, query, d, 3, 1, 1); err == nil {
		t.Error("c = 1 was accepted")
	}
}
