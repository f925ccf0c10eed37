package audit

import "container/heap"

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
