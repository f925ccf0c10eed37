package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"labelprivacy/data"
)

// A regression head (ModelConfig.Regression, identity output) learns a
// linear target: trained with mse on y + noise per row, and with bag_mse
// on the noisy means of bags of 8, its test MSE against the noiseless
// target is below a fifth of the target's variance (the constant
// predictor's MSE; measured 0.014 and 0.11 of it),
// and Predict returns the output itself (values outside [0, 1]). The
// classifier losses refuse a regression model and mse a classifier.
func TestRegression(t *testing.T) {
	const d, n, nTest = 4, 8192, 1024
	r := rand.New(rand.NewPCG(3, 4))
	w := []float64{0.5, -0.3, 0.2, 0.8}
	draw := func(rows int) ([]float32, []float64) {
		x, y := make([]float32, rows*d), make([]float64, rows)
		for i := range rows {
			for j := range d {
				x[i*d+j] = float32(r.NormFloat64())
				y[i] += w[j] * float64(x[i*d+j])
			}
			y[i] += 1.5
		}
		return x, y
	}
	xs, ys := draw(n)
	xt, yt := draw(nTest)
	feat, test := denseFrame(xs, d), denseFrame(xt, d)
	var mean, vs float64
	for _, y := range yt {
		mean += y / nTest
	}
	for _, y := range yt {
		vs += (y - mean) * (y - mean) / nTest
	}
	for _, tc := range []struct {
		loss Loss
		bag  int
	}{{LossMSE, 0}, {LossBagMSE, 8}} {
		f := &data.Frame{Rows: n}
		bo := data.BatchOptions{BatchSize: 256, Shuffle: true, Seed: 5, DropLast: true, Features: feat, IndexOnly: true}
		if tc.bag > 0 {
			f.BagID, f.BagMean = make([]int64, n), make([]float64, n)
			for b := 0; b < n; b += tc.bag {
				var s float64
				for i := b; i < b+tc.bag; i++ {
					s += ys[i]
				}
				z := s/float64(tc.bag) + 0.3*r.NormFloat64()
				for i := b; i < b+tc.bag; i++ {
					f.BagID[i], f.BagMean[i] = int64(b), z
				}
			}
			bo.Target, bo.BagSize = data.TargetBagMean, tc.bag
		} else {
			f.ValueRR = make([]float64, n)
			for i, y := range ys {
				f.ValueRR[i] = y + r.NormFloat64()
			}
			bo.Target = data.TargetValueRR
		}
		src, err := data.NewBatchSource(f, bo)
		if err != nil {
			t.Fatal(err)
		}
		g := mustTrain(t, GroupConfig{Name: tc.loss.String(), Model: ModelConfig{Kind: KindMLP, InputDim: d, Hidden: []int{16}, Regression: true},
			Loss: tc.loss, Epochs: 8, Features: feat, Replicas: []Replica{{Name: "r", Seed: 1, LR: 5e-3, Source: src}}})
		p := mustPredict(t, g, test)[0]
		mse, r2, _ := ValueScores(p, 1, yt)
		t.Logf("%s: test MSE %.4f (variance %.4f), R² %.3f", tc.loss, mse, vs, r2)
		if !(mse < vs/5) {
			t.Errorf("%s: test MSE %v, the target's variance %v", tc.loss, mse, vs)
		}
		above := false
		for _, v := range p {
			above = above || v > 1.5
		}
		if !above {
			t.Errorf("%s: no output above 1.5: a squashed head", tc.loss)
		}
	}
	bad := func(loss Loss, reg bool) error {
		_, err := TrainGroup(t.Context(), GroupConfig{Name: "x", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: d, Regression: reg},
			Loss: loss, Features: feat, Replicas: []Replica{{Name: "r", Source: source(t, feat, srcOpts{labels: make([]uint8, n), batch: 64})}}})
		return err
	}
	if bad(LossBCE, true) == nil || bad(LossMSE, false) == nil {
		t.Error("a loss trained the other head")
	}
	if mse, _, _ := ValueScores([]float32{float32(math.NaN())}, 1, []float64{1}); !math.IsNaN(mse) {
		t.Error("a diverged output scored")
	}
}
