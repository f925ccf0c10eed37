package model

import (
	"testing"
)

// EpochEnd reports every epoch trained: its number, each replica's mean
// loss over it (the last one is the replica's FinalLoss) and predictions
// with the parameters of that moment, which after the last epoch are the
// trained group's, bit for bit; the predictions of an earlier epoch differ.
// Training does not depend on being observed.
func TestEpochEnd(t *testing.T) {
	const d = 6
	w, b := trueModel(d, 2, 3)
	tr := makeLogistic(1024, w, b, 7)
	te := makeLogistic(300, w, b, 8)
	feat, test := denseFrame(tr.X, d), denseFrame(te.X, d)
	cfg := GroupConfig{Name: "curve", Model: ModelConfig{Kind: KindMLP, InputDim: d, Hidden: []int{8}}, Loss: LossDebiasedBCE, Epochs: 3, Features: feat}
	cfg.Replicas = groupReplicas(t, feat, tr.Y, 2, LossDebiasedBCE, 0, 128)
	var epochs []int
	var losses [][]float64
	var preds [][][]float32
	cfg.EpochEnd = func(e EpochEnd) error {
		epochs, losses = append(epochs, e.Epoch), append(losses, e.Losses)
		if e.Predict == nil {
			t.Fatal("no Predict for a dense model")
		}
		p, err := e.Predict(test)
		if err != nil {
			return err
		}
		preds = append(preds, p)
		return nil
	}
	g := mustTrain(t, cfg)
	if len(epochs) != 3 || epochs[0] != 1 || epochs[2] != 3 {
		t.Fatalf("epochs reported %v, want 1 2 3", epochs)
	}
	final := mustPredict(t, g, test)
	for r := range 2 {
		if losses[2][r] != g.Results[r].FinalLoss {
			t.Errorf("replica %d: last epoch's loss %v, FinalLoss %v", r, losses[2][r], g.Results[r].FinalLoss)
		}
		same, moved := true, false
		for i := range final[r] {
			same = same && preds[2][r][i] == final[r][i]
			moved = moved || preds[0][r][i] != final[r][i]
		}
		if !same || !moved {
			t.Errorf("replica %d: last epoch's predictions equal the trained model's: %v; the first epoch's differ: %v", r, same, moved)
		}
	}
	plain := cfg
	plain.EpochEnd = nil
	plain.Replicas = groupReplicas(t, feat, tr.Y, 2, LossDebiasedBCE, 0, 128)
	p := mustPredict(t, mustTrain(t, plain), test)
	for i := range p[0] {
		if p[0][i] != final[0][i] {
			t.Fatalf("row %d: %v unobserved, %v observed", i, p[0][i], final[0][i])
		}
	}
}
