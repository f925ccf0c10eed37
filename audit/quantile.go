package audit

import "math"

// maHist collects |MA| values in O(1) memory for quantiles.
//
// Finite values in [2^-40, 2^11) fall into bins keyed by their exponent and
// the 12 leading mantissa bits (4096 bins per octave, 208,896 bins), so two
// values share a bin only if they agree to a relative 2^-12 ≈ 2.4e-4. Each
// bin keeps its count and the largest value it received. Values below 2^-40
// (≈ 9.1e-13, zero included) share one "tiny" bin, finite values ≥ 2^11
// (impossible for a log-likelihood ratio of float64 probabilities, whose
// magnitude is < 1500) one "huge" bin, and +Inf is counted apart. A quantile
// is reported as the largest value in the bin that holds the requested order
// statistic: it is ≥ the exact order statistic and exceeds it by at most a
// relative 2^-12 (by at most 9.1e-13 in the tiny bin), and it is exact when
// the bin holds one distinct value (e.g. every |MA| = ε for rr). Counts add
// and maxima commute, so merging per-worker histograms is order-independent.
type maHist struct {
	count    []uint64
	max      []float64
	tinyN    uint64
	tinyMax  float64
	hugeN    uint64
	hugeMax  float64
	infN     uint64
	total    uint64
	maxValue float64
}

const (
	histShift = 52 - 12 // keep 12 mantissa bits
	histLo    = -40     // smallest binned octave: [2^-40, 2^-39)
	histHi    = 11      // values ≥ 2^11 go to the huge bin
)

var (
	histLoKey = math.Float64bits(math.Ldexp(1, histLo)) >> histShift
	histHiKey = math.Float64bits(math.Ldexp(1, histHi)) >> histShift
	histBins  = int(histHiKey - histLoKey)
)

func newMAHist() *maHist {
	return &maHist{count: make([]uint64, histBins), max: make([]float64, histBins)}
}

// add records |MA| = v (v ≥ 0 or +Inf; never NaN).
func (h *maHist) add(v float64) {
	h.total++
	if v > h.maxValue {
		h.maxValue = v
	}
	switch {
	case math.IsInf(v, 1):
		h.infN++
		return
	case v < 0x1p-40:
		h.tinyN++
		if v > h.tinyMax {
			h.tinyMax = v
		}
		return
	case v >= 0x1p11:
		h.hugeN++
		if v > h.hugeMax {
			h.hugeMax = v
		}
		return
	}
	i := math.Float64bits(v)>>histShift - histLoKey
	h.count[i]++
	if v > h.max[i] {
		h.max[i] = v
	}
}

// addN records n copies of v.
func (h *maHist) addN(v float64, n uint64) {
	if n == 0 {
		return
	}
	h.add(v)
	n--
	h.total += n
	switch {
	case math.IsInf(v, 1):
		h.infN += n
	case v < 0x1p-40:
		h.tinyN += n
	case v >= 0x1p11:
		h.hugeN += n
	default:
		h.count[math.Float64bits(v)>>histShift-histLoKey] += n
	}
}

func (h *maHist) merge(o *maHist) {
	h.total += o.total
	h.infN += o.infN
	h.tinyN += o.tinyN
	h.hugeN += o.hugeN
	h.maxValue = math.Max(h.maxValue, o.maxValue)
	h.tinyMax = math.Max(h.tinyMax, o.tinyMax)
	h.hugeMax = math.Max(h.hugeMax, o.hugeMax)
	for i, c := range o.count {
		if c != 0 {
			h.count[i] += c
			h.max[i] = math.Max(h.max[i], o.max[i])
		}
	}
}

// quantile returns the nearest-rank q-quantile (the order statistic of rank
// ⌈q·N⌉, at least 1), reported as described on maHist; NaN if empty.
func (h *maHist) quantile(q float64) float64 {
	if h.total == 0 {
		return math.NaN()
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.total {
		rank = h.total
	}
	seen := h.tinyN
	if rank <= seen {
		return h.tinyMax
	}
	for i, c := range h.count {
		if c == 0 {
			continue
		}
		seen += c
		if rank <= seen {
			return h.max[i]
		}
	}
	seen += h.hugeN
	if rank <= seen {
		return h.hugeMax
	}
	return math.Inf(1)
}

// mean returns the mean of the recorded values, each counted at its bin's
// largest value (so it is ≥ the exact mean by at most a relative 2^-12, and
// exact when every bin holds one distinct value, e.g. rr's |MA| = ε and
// rr_prior's 0 or ε); +Inf if any value is +Inf; NaN if empty. Bins are
// summed in a fixed order, so the result does not depend on merge order.
func (h *maHist) mean() float64 {
	switch {
	case h.total == 0:
		return math.NaN()
	case h.infN > 0:
		return math.Inf(1)
	}
	sum := float64(h.tinyN)*h.tinyMax + float64(h.hugeN)*h.hugeMax
	for i, c := range h.count {
		if c != 0 {
			sum += float64(c) * h.max[i]
		}
	}
	return sum / float64(h.total)
}
