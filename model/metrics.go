package model

import (
	"fmt"
	"math"

	"labelprivacy/internal/stats"
)

// AUC is the exact, tie-aware area under the ROC curve of scores against
// 0/1 labels (the Mann–Whitney statistic, O(n log n)); NaN when either class
// is absent. It is internal/stats.AUC, shared with the data and audit
// stages, plus a check: it panics if a score is NaN (a diverged model).
func AUC(scores []float32, labels []uint8) float64 {
	for i, s := range scores {
		if math.IsNaN(float64(s)) {
			panic(fmt.Sprintf("model.AUC: score %d is NaN", i))
		}
	}
	return stats.AUC(scores, labels)
}

// LogLoss is the mean binary cross-entropy −[y log p + (1−y) log(1−p)] of
// probabilities against 0/1 labels, with p clipped to [eps, 1−eps],
// eps = 1e-7. It is NaN for empty input and panics if the lengths differ.
func LogLoss(probs []float32, labels []uint8) float64 {
	if len(probs) != len(labels) {
		panic(fmt.Sprintf("model.LogLoss: %d probabilities but %d labels", len(probs), len(labels)))
	}
	if len(probs) == 0 {
		return math.NaN()
	}
	const eps = 1e-7
	var sum float64
	for i, p32 := range probs {
		p := min(max(float64(p32), eps), 1-eps)
		if labels[i] != 0 {
			sum -= math.Log(p)
		} else {
			sum -= math.Log1p(-p)
		}
	}
	return sum / float64(len(probs))
}
