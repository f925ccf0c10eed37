package model

import (
	"fmt"
	"math"
)

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
