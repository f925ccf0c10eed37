package stats

import (
	"cmp"
	"math"
	"slices"
)

// AUC is the exact, tie-aware area under the ROC curve of scores against
// 0/1 labels: P(s⁺ > s⁻) + ½·P(s⁺ = s⁻) over all positive/negative pairs
// (the Mann–Whitney U statistic with average ranks). O(n log n). It returns
// NaN when the labels are all 0 or all 1 (AUC undefined).
func AUC[S ~float32 | ~float64](scores []S, labels []uint8) float64 {
	if len(scores) != len(labels) {
		panic("stats.AUC: scores and labels differ in length")
	}
	idx := make([]int32, len(scores))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int { return cmp.Compare(scores[a], scores[b]) })
	var pos, neg float64
	var u float64 // Σ over positives of (#negatives below + ½·#negatives tied)
	var negBelow float64
	for i := 0; i < len(idx); {
		j := i
		var p, n float64
		for j < len(idx) && scores[idx[j]] == scores[idx[i]] {
			if labels[idx[j]] != 0 {
				p++
			} else {
				n++
			}
			j++
		}
		u += p * (negBelow + n/2)
		negBelow += n
		pos += p
		neg += n
		i = j
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	return u / (pos * neg)
}

// ExpectedAUC is the AUC of ranking by η when each label is drawn
// independently y_i ~ Bernoulli(η_i), in the large-sample sense: the ratio
// of expected concordant pair mass to expected pair mass,
//
//	Σ_{i≠j} η_i(1−η_j)·[1{η_i>η_j} + ½·1{η_i=η_j}] / Σ_{i≠j} η_i(1−η_j).
//
// It is the Bayes-optimal AUC of a population with these η values. O(n log n).
func ExpectedAUC(eta []float64) float64 {
	e := slices.Clone(eta)
	slices.Sort(e)
	var num, den float64
	var negMassBelow float64 // Σ (1−η_j) over strictly smaller η_j
	var sumEta, sumNeg float64
	for _, v := range e {
		sumEta += v
		sumNeg += 1 - v
	}
	for i := 0; i < len(e); {
		j := i
		var p, n float64
		for j < len(e) && e[j] == e[i] {
			p += e[j]
			n += 1 - e[j]
			j++
		}
		// pairs inside the tie group (i≠j): Σ_{a≠b} η_a(1−η_b) = p·n − Σ η_a(1−η_a)
		var self float64
		for t := i; t < j; t++ {
			self += e[t] * (1 - e[t])
		}
		num += p*negMassBelow + 0.5*(p*n-self)
		negMassBelow += n
		i = j
	}
	var selfAll float64
	for _, v := range e {
		selfAll += v * (1 - v)
	}
	den = sumEta*sumNeg - selfAll
	if den == 0 {
		return math.NaN()
	}
	return num / den
}
