package audit

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestReliabilityByHand: bins, ECE and Brier of a small table computed by
// hand.
func TestReliabilityByHand(t *testing.T) {
	eta := []float64{0.05, 0.05, 0.15, 0.95, 1, 0.5, 0.55}
	y := []uint8{0, 1, 0, 1, 1, 1, 0}
	c, err := Reliability(eta, y, 10)
	if err != nil {
		t.Fatal(err)
	}
	// Bins: [0,.1): 2 rows, mean .05, rate .5; [.1,.2): 1, .15, 0;
	// [.5,.6): 2, .525, .5; [.9,1]: 2, .975, 1.
	want := map[int][3]float64{0: {2, 0.05, 0.5}, 1: {1, 0.15, 0}, 5: {2, 0.525, 0.5}, 9: {2, 0.975, 1}}
	for b, cb := range c.Bins {
		w, ok := want[b]
		if !ok {
			if cb.N != 0 || !math.IsNaN(cb.MeanEta) || !math.IsNaN(cb.Rate) {
				t.Errorf("bin %d: %+v, want empty", b, cb)
			}
			continue
		}
		if float64(cb.N) != w[0] || math.Abs(cb.MeanEta-w[1]) > 1e-15 || cb.Rate != w[2] || cb.Lo != float64(b)/10 {
			t.Errorf("bin %d: %+v, want %v", b, cb, w)
		}
	}
	ece := (2*0.45 + 1*0.15 + 2*0.025 + 2*0.025) / 7
	brier := (0.05*0.05 + 0.95*0.95 + 0.15*0.15 + 0.05*0.05 + 0 + 0.25 + 0.55*0.55) / 7
	if math.Abs(c.ECE-ece) > 1e-15 || math.Abs(c.Brier-brier) > 1e-15 || c.N != 7 {
		t.Errorf("ECE %v Brier %v N %d, want %v %v 7", c.ECE, c.Brier, c.N, ece, brier)
	}
	for _, bad := range []struct {
		eta []float64
		y   []uint8
	}{{[]float64{0.5}, []uint8{2}}, {[]float64{1.5}, []uint8{1}}, {nil, nil}, {[]float64{0.5}, nil}} {
		if _, err := Reliability(bad.eta, bad.y, 10); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%v %v: err %v", bad.eta, bad.y, err)
		}
	}
}

// TestPlattRecovers: labels drawn from a true η and a score distorted as
// σ((logit η − 0.4)/2) (too flat and shifted low): Platt fitted on 20000
// rows recovers A ≈ 2, B ≈ 0.4 (logit η = 2·logit(score) + 0.4; within 0.1: their SEs are ~0.03), and the
// recalibrated score's ECE on fresh rows is below a third of the raw one.
func TestPlattRecovers(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	draw := func(n int) (score []float64, y []uint8) {
		for range n {
			e := r.Float64()*0.98 + 0.01
			l := math.Log(e / (1 - e))
			score = append(score, 1/(1+math.Exp(-(l-0.4)/2)))
			yy := uint8(0)
			if r.Float64() < e {
				yy = 1
			}
			y = append(y, yy)
		}
		return score, y
	}
	s, y := draw(20000)
	p, err := FitPlatt(s, y)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(p.A-2) > 0.1 || math.Abs(p.B-0.4) > 0.1 {
		t.Fatalf("Platt %+v, want A≈2 B≈0.4", p)
	}
	s2, y2 := draw(20000)
	raw, _ := Reliability(s2, y2, 10)
	fixed, _ := Reliability(p.Apply(s2), y2, 10)
	t.Logf("Platt %+v; ECE %.4f → %.4f", p, raw.ECE, fixed.ECE)
	if fixed.ECE > raw.ECE/3 {
		t.Fatalf("ECE %v → %v", raw.ECE, fixed.ECE)
	}
	if _, err := FitPlatt([]float64{0.2, 0.3}, []uint8{1, 1}); !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("one class: err %v", err)
	}
	id := Platt{A: 1}.Apply([]float64{0.1, 0.7})
	if math.Abs(id[0]-0.1) > 1e-12 || math.Abs(id[1]-0.7) > 1e-12 {
		t.Fatalf("identity Platt %v", id)
	}
}
