package audit

import (
	"container/heap"
	"fmt"

	"labelprivacy/internal/par"
)

// KNNEta estimates η(x) = P(y=1|x) for each query row as the mean label of
// its k nearest reference rows (squared Euclidean distance on dense
// features), the nonparametric class-conditional estimator the paper
// compares with the DNN (Section 4, "Estimating class conditionals"; strongly
// consistent as the reference grows with k → ∞, k/n → 0). ref and query are
// row-major with d features per row; labels are 0/1. Ties at the k-th
// distance keep the earlier reference row. Cost O(queries · rows · d),
// parallel over queries (workers ≤ 0: GOMAXPROCS); deterministic.
func KNNEta(ref []float32, labels []uint8, query []float32, d, k, workers int) ([]float64, error) {
	return knnMean(ref, labels, query, d, k, 0, workers)
}

// KNNEtaC is KNNEta for labels of c ≥ 2 classes (0..c−1): each query row's
// η is the mean one-hot label of its k nearest reference rows, c values a
// row (row-major: out[q·c+y] is the share of class y among them, each row
// summing to 1). At c = 2, out[2q+1] is KNNEta's out[q].
func KNNEtaC(ref []float32, labels []uint8, query []float32, d, k, c, workers int) ([]float64, error) {
	if c < 2 || c > 256 {
		return nil, paramErr("classes", fmt.Sprintf("must be in [2, 256], got %d", c))
	}
	for i, y := range labels {
		if int(y) >= c {
			return nil, paramErr("labels", fmt.Sprintf("reference row %d has label %d, not a class below %d", i, y, c))
		}
	}
	return knnMean(ref, labels, query, d, k, c, workers)
}

// knnMean is KNNEta (c = 0: the mean label) and KNNEtaC (c classes: the
// mean one-hot label, c values a query row).
func knnMean(ref []float32, labels []uint8, query []float32, d, k, c, workers int) ([]float64, error) {
	switch {
	case d < 1:
		return nil, paramErr("d", fmt.Sprintf("must be ≥ 1, got %d", d))
	case len(ref)%d != 0 || len(query)%d != 0:
		return nil, paramErr("d", fmt.Sprintf("rows are not multiples of %d features", d))
	case len(ref)/d != len(labels):
		return nil, paramErr("labels", fmt.Sprintf("%d labels for %d reference rows", len(labels), len(ref)/d))
	case k < 1 || k > len(labels):
		return nil, paramErr("k", fmt.Sprintf("must be in [1, %d], got %d", len(labels), k))
	}
	nq := len(query) / d
	w1 := max(c, 1) // values a query row
	out := make([]float64, nq*w1)
	heaps := make([]knnHeap, par.Workers(workers, nq))
	for w := range heaps {
		heaps[w] = make(knnHeap, 0, k)
	}
	par.Each(nq, len(heaps), func(w, q int) {
		h := heaps[w][:0]
		x := query[q*d : (q+1)*d]
		for r := range labels {
			row := ref[r*d : (r+1)*d]
			var dist float32
			for j, v := range x {
				t := v - row[j]
				dist += t * t
			}
			if len(h) < k {
				heap.Push(&h, knnItem{dist, int32(r)})
			} else if dist < h[0].dist {
				h[0] = knnItem{dist, int32(r)}
				heap.Fix(&h, 0)
			}
		}
		if c == 0 {
			var ones int
			for _, it := range h {
				ones += int(labels[it.row])
			}
			out[q] = float64(ones) / float64(len(h))
		} else {
			row := out[q*c : (q+1)*c]
			for _, it := range h {
				row[labels[it.row]]++
			}
			for y := range row {
				row[y] /= float64(len(h))
			}
		}
		heaps[w] = h
	})
	return out, nil
}

type knnItem struct {
	dist float32
	row  int32
}

// knnHeap is a max-heap by distance (the farthest kept neighbour on top).
type knnHeap []knnItem

func (h knnHeap) Len() int { return len(h) }
func (h knnHeap) Less(i, j int) bool {
	if h[i].dist != h[j].dist {
		return h[i].dist > h[j].dist
	}
	return h[i].row > h[j].row
}
func (h knnHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *knnHeap) Push(x any)   { *h = append(*h, x.(knnItem)) }
func (h *knnHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	*h = old[:len(old)-1]
	return it
}
