package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func bruteAUC(s []float64, y []uint8) float64 {
	var num, den float64
	for i := range s {
		for j := range s {
			if y[i] == 1 && y[j] == 0 {
				den++
				switch {
				case s[i] > s[j]:
					num++
				case s[i] == s[j]:
					num += 0.5
				}
			}
		}
	}
	return num / den
}

func bruteExpectedAUC(eta []float64) float64 {
	var num, den float64
	for i := range eta {
		for j := range eta {
			if i == j {
				continue
			}
			w := eta[i] * (1 - eta[j])
			den += w
			switch {
			case eta[i] > eta[j]:
				num += w
			case eta[i] == eta[j]:
				num += w / 2
			}
		}
	}
	return num / den
}

func TestAUC(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		scores []float64
		labels []uint8
		want   float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []uint8{0, 0, 1, 1}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []uint8{0, 0, 1, 1}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []uint8{0, 1, 0, 1}, 0.5},
		{"one tie across classes", []float64{0.1, 0.5, 0.5, 0.9}, []uint8{0, 0, 1, 1}, 0.875},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := AUC(tc.scores, tc.labels); math.Abs(got-tc.want) > 1e-12 {
				t.Fatalf("AUC = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("random with ties vs brute force", func(t *testing.T) {
		for trial := range 50 {
			n := 2 + r.IntN(200)
			s := make([]float64, n)
			y := make([]uint8, n)
			for i := range s {
				s[i] = float64(r.IntN(7)) // many ties
				y[i] = uint8(r.IntN(2))
			}
			y[0], y[1] = 0, 1
			if got, want := AUC(s, y), bruteAUC(s, y); math.Abs(got-want) > 1e-12 {
				t.Fatalf("trial %d: AUC = %v, brute force %v", trial, got, want)
			}
		}
	})
	t.Run("undefined with one class", func(t *testing.T) {
		if got := AUC([]float32{1, 2}, []uint8{1, 1}); !math.IsNaN(got) {
			t.Fatalf("AUC = %v, want NaN", got)
		}
	})
}

func TestExpectedAUC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 30 {
		n := 2 + r.IntN(100)
		eta := make([]float64, n)
		for i := range eta {
			eta[i] = float64(r.IntN(11)) / 10 // ties and the extremes 0, 1
		}
		eta[0], eta[1] = 0.3, 0.6
		if got, want := ExpectedAUC(eta), bruteExpectedAUC(eta); math.Abs(got-want) > 1e-12 {
			t.Fatalf("trial %d: ExpectedAUC = %v, brute force %v", trial, got, want)
		}
	}
}
