package model

import (
	"math"
	"testing"
)

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
