package audit

import (
	"cmp"
	"container/heap"
	"slices"
)

// sampleCand is a candidate sample with its random priority key.
type sampleCand struct {
	key uint64
	s   Sample
}

// sampleHeap keeps the cap candidates with the smallest (key, index): a
// bottom-k sample, i.e. a uniformly random subset whose membership does not
// depend on the order in which examples are processed. It is a max-heap so
// that the worst kept candidate is at the root.
type sampleHeap struct {
	cap   int
	items []sampleCand
}

func candLess(ak uint64, ai int, bk uint64, bi int) bool {
	return ak < bk || (ak == bk && ai < bi)
}

func (h *sampleHeap) Len() int { return len(h.items) }
func (h *sampleHeap) Less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	return candLess(b.key, b.s.Index, a.key, a.s.Index) // max-heap
}
func (h *sampleHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *sampleHeap) Push(x any)    { h.items = append(h.items, x.(sampleCand)) }
func (h *sampleHeap) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}

// wants reports whether a candidate with this key and index would be kept.
func (h *sampleHeap) wants(key uint64, index int) bool {
	if h.cap == 0 {
		return false
	}
	if len(h.items) < h.cap {
		return true
	}
	root := &h.items[0]
	return candLess(key, index, root.key, root.s.Index)
}

// push adds a candidate for which wants returned true.
func (h *sampleHeap) push(key uint64, s Sample) {
	if len(h.items) < h.cap {
		heap.Push(h, sampleCand{key, s})
		return
	}
	h.items[0] = sampleCand{key, s}
	heap.Fix(h, 0)
}

// reduceWorkers ends a pass (binary and C-class alike): it merges the
// workers' |MA| histograms into s's ma_* fields and keeps, of their
// candidate samples, the max with the smallest (key, index), returned in
// example order. The result does not depend on how examples were split.
func reduceWorkers(s *Summary, hists []*maHist, keeps []*sampleHeap, max int) []Sample {
	h := hists[0]
	for _, o := range hists[1:] {
		h.merge(o)
	}
	s.MACount = int64(h.total)
	s.MAP50, s.MAP90, s.MAP98, s.MAP99 = h.quantile(0.50), h.quantile(0.90), h.quantile(0.98), h.quantile(0.99)
	s.MAMax = h.maxValue
	s.MAInfFrac = float64(h.infN) / float64(h.total)
	s.MAMean = h.mean()

	var cands []sampleCand
	for _, k := range keeps {
		cands = append(cands, k.items...)
	}
	slices.SortFunc(cands, func(a, b sampleCand) int {
		if c := cmp.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.s.Index, b.s.Index)
	})
	if len(cands) > max {
		cands = cands[:max]
	}
	out := make([]Sample, len(cands))
	for i, c := range cands {
		out[i] = c.s
	}
	slices.SortFunc(out, func(a, b Sample) int { return cmp.Compare(a.Index, b.Index) })
	return out
}
