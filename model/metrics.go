package model

import (
	"fmt"
	"math"

	"labelprivacy/internal/stats"
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

// checkRows panics unless probs holds classes probabilities for each label
// and every label is below classes (a caller's bug: labels are validated
// when data is read).
func checkRows(fn string, probs []float32, classes int, labels []uint8) {
	if classes < 2 || len(probs) != len(labels)*classes {
		panic(fmt.Sprintf("model.%s: %d probabilities for %d labels of %d classes", fn, len(probs), len(labels), classes))
	}
	for i, y := range labels {
		if int(y) >= classes {
			panic(fmt.Sprintf("model.%s: label %d of row %d is not below %d classes", fn, y, i, classes))
		}
	}
}

// Accuracy is the fraction of rows whose most probable class is the label:
// probs holds classes probabilities per row, row-major (Group.Predict of a
// C-class group), labels are 0..classes−1. Ties go to the lowest class. It
// is NaN for empty input and panics on lengths that do not fit or a label ≥
// classes.
func Accuracy(probs []float32, classes int, labels []uint8) float64 {
	checkRows("Accuracy", probs, classes, labels)
	if len(labels) == 0 {
		return math.NaN()
	}
	hits := 0
	for i, y := range labels {
		row := probs[i*classes : (i+1)*classes]
		best := 0
		for c, p := range row {
			if p > row[best] {
				best = c
			}
		}
		if best == int(y) {
			hits++
		}
	}
	return float64(hits) / float64(len(labels))
}

// MacroAUC is the macro-averaged one-vs-rest AUC: the mean over classes c
// of the exact, tie-aware AUC (internal/stats.AUC) of the scores P(y = c |
// x) against the indicator y = c. Classes with no positive row (or no
// negative row) in labels have no AUC and are left out of the mean; it is
// NaN when no class has one. probs and labels as for Accuracy.
func MacroAUC(probs []float32, classes int, labels []uint8) float64 {
	checkRows("MacroAUC", probs, classes, labels)
	scores, ind := make([]float32, len(labels)), make([]uint8, len(labels))
	var sum float64
	n := 0
	for c := range classes {
		for i, y := range labels {
			scores[i], ind[i] = probs[i*classes+c], 0
			if int(y) == c {
				ind[i] = 1
			}
		}
		if auc := stats.AUC(scores, ind); !math.IsNaN(auc) {
			sum += auc
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// CrossEntropy is the mean multiclass log loss −log p_{y} of the label's
// predicted probability, p clipped to [eps, 1], eps = 1e-7 (LogLoss's
// clipping). probs and labels as for Accuracy; NaN for empty input.
func CrossEntropy(probs []float32, classes int, labels []uint8) float64 {
	checkRows("CrossEntropy", probs, classes, labels)
	if len(labels) == 0 {
		return math.NaN()
	}
	const eps = 1e-7
	var sum float64
	for i, y := range labels {
		sum -= math.Log(max(float64(probs[i*classes+int(y)]), eps))
	}
	return sum / float64(len(labels))
}

// ValueScores returns the test MSE, R² and MAE of a regression's outputs
// pred (in units of 1/scale: the model trains on values times scale) on
// the values: MSE = mean (scale^{-1}·pred − y)², R² = 1 − MSE/Var(y)
// (the test values' variance; NaN when it is 0), MAE = mean |·|. NaN for
// an output that is not finite (training diverged).
func ValueScores(pred []float32, scale float64, values []float64) (mse, r2, mae float64) {
	if len(pred) != len(values) || len(values) == 0 {
		panic(fmt.Sprintf("model: ValueScores: %d predictions for %d values", len(pred), len(values)))
	}
	var mean float64
	for _, y := range values {
		mean += y
	}
	mean /= float64(len(values))
	var vs float64
	for i, y := range values {
		f := float64(pred[i]) / scale
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return math.NaN(), math.NaN(), math.NaN()
		}
		d := f - y
		mse += d * d
		mae += math.Abs(d)
		vs += (y - mean) * (y - mean)
	}
	n := float64(len(values))
	mse, mae = mse/n, mae/n
	r2 = math.NaN()
	if vs > 0 {
		r2 = 1 - mse/(vs/n)
	}
	return mse, r2, mae
}
