package model

import (
	"slices"
	"testing"
)

// TestHostAdamMatchesProgram: on backend go, a group whose Adam runs on the
// host (the default) and the same group with Adam in the program end with
// the same bits, for dense rows (host batches and resident features, 3
// replicas with their own learning rates) and for kdd_embed's host table.
func TestHostAdamMatchesProgram(t *testing.T) {
	if !isGoBackend(goBackend(t)) {
		t.Skip("host Adam is backend go's")
	}
	w, b := trueModel(10, 2, 2)
	tr := makeLogistic(1024, w, b, 5)
	te := makeLogistic(300, w, b, 6)
	feat, test := denseFrame(tr.X, 10), denseFrame(te.X, 10)
	for _, tc := range []struct {
		name     string
		resident ResidentMode
	}{{"host batches", ResidentNever}, {"resident", ResidentAlways}} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() [][]float32 {
				reps := groupReplicas(t, feat, tr.Y, 3, LossDebiasedBCE, 0, 128)
				for i := range reps {
					reps[i].LR = []float64{1e-3, 3e-3, 1e-2}[i]
				}
				cfg := GroupConfig{Name: "adam", Model: ModelConfig{Kind: KindMLP, InputDim: 10, Hidden: []int{16, 8}},
					Loss: LossDebiasedBCE, Epochs: 2, Features: feat, Resident: tc.resident, Replicas: reps}
				return mustPredict(t, mustTrain(t, cfg), test)
			}
			host := run()
			programAdamOnly = true
			defer func() { programAdamOnly = false }()
			prog := run()
			for r := range host {
				if !slices.Equal(host[r], prog[r]) {
					t.Errorf("replica %d: host Adam and program Adam predict differently", r)
				}
			}
			if slices.Equal(host[0], host[1]) {
				t.Error("replicas predict identically: the test trains nothing distinct")
			}
		})
	}
}
