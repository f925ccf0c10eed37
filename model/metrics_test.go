package model

import (
	"math"
	"testing"
)

// bruteAUC counts pairs: 1 for a correctly ordered (pos, neg) pair, ½ for a tie.
func bruteAUC(scores []float32, labels []uint8) float64 {
	var num, pairs float64
	for i := range scores {
		if labels[i] == 0 {
			continue
		}
		for j := range scores {
			if labels[j] != 0 {
				continue
			}
			pairs++
			switch {
			case scores[i] > scores[j]:
				num++
			case scores[i] == scores[j]:
				num += 0.5
			}
		}
	}
	if pairs == 0 {
		return math.NaN()
	}
	return num / pairs
}

func TestAUC(t *testing.T) {
	tests := []struct {
		name   string
		scores []float32
		labels []uint8
		want   float64
	}{
		{"perfect", []float32{0.1, 0.2, 0.8, 0.9}, []uint8{0, 0, 1, 1}, 1},
		{"reversed", []float32{0.9, 0.8, 0.2, 0.1}, []uint8{0, 0, 1, 1}, 0},
		{"all tied", []float32{0.5, 0.5, 0.5, 0.5}, []uint8{0, 1, 0, 1}, 0.5},
		{"one tie across classes", []float32{0.1, 0.5, 0.5, 0.9}, []uint8{0, 0, 1, 1}, 0.875},
		{"ties within class", []float32{0.3, 0.3, 0.7, 0.7, 0.7}, []uint8{0, 0, 1, 1, 0}, (2*2 + 2*0.5) / 6},
		{"unsorted input", []float32{0.7, 0.2, 0.9, 0.4, 0.4}, []uint8{1, 0, 1, 0, 1}, bruteAUC([]float32{0.7, 0.2, 0.9, 0.4, 0.4}, []uint8{1, 0, 1, 0, 1})},
		{"no negatives", []float32{0.1, 0.2}, []uint8{1, 1}, math.NaN()},
		{"no positives", []float32{0.1, 0.2}, []uint8{0, 0}, math.NaN()},
		{"empty", nil, nil, math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := AUC(tc.scores, tc.labels)
			if math.IsNaN(tc.want) {
				if !math.IsNaN(got) {
					t.Fatalf("AUC = %v, want NaN", got)
				}
				return
			}
			if math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("AUC = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLogLoss(t *testing.T) {
	tests := []struct {
		name   string
		probs  []float32
		labels []uint8
		want   float64
	}{
		{"half", []float32{0.5, 0.5}, []uint8{0, 1}, math.Ln2},
		{"mixed", []float32{0.8, 0.25}, []uint8{1, 0}, -(math.Log(0.8) + math.Log(0.75)) / 2},
		{"clipped zero", []float32{0}, []uint8{1}, -math.Log(1e-7)},
		{"clipped one", []float32{1}, []uint8{0}, -math.Log1p(-(1 - 1e-7))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := LogLoss(tc.probs, tc.labels)
			if math.Abs(got-tc.want) > 1e-6*math.Max(1, math.Abs(tc.want)) {
				t.Fatalf("LogLoss = %v, want %v", got, tc.want)
			}
		})
	}
	if !math.IsNaN(LogLoss(nil, nil)) {
		t.Fatal("LogLoss of empty input should be NaN")
	}
}
