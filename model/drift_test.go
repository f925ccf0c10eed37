package model

import (
	"fmt"
	"math"
	"slices"
	"testing"
)

// On backends that order float sums by shape (XLA picks other GEMM tilings
// and fusions for R = 1 than for R = 8), a replica trained alone and in a
// group differ by rounding, and Adam amplifies it: its first updates move
// each weight by about ±lr whatever the gradient's size (m̂/√v̂), so a
// gradient that cancels to ~0 may change sign with the summation order.
// The drift then grows with every step like any perturbation of training.
// Measured on an H100 (xla:cuda), forward_ce higgs_mlp at lr 5e-3, mean
// |Δp| after 1, 4, 16 and 32 steps: 2.6e-5, 5.7e-4, 3.1e-3, 7.0e-3 (the
// last a sixth of the spread between two trials with other init seeds).
// So on XLA a run's trajectory depends on its group (train.replicas, a
// resume) the way it depends on a seed, while its distribution does not;
// backend go is bit-identical and never gets here.
//
// What a test can hold off go is that the drift starts at rounding: after
// driftSteps step(s) a replica's predictions differ from its in-group self
// by at most driftOfLR of what a 10% learning-rate error does to the same
// replica (so less than a ~1% learning-rate error), and pick the same
// class on ≥ driftAgree of test rows. Measured on the H100 after 1 step:
// at most 0.008 of it (TestGroupDrift). A grouping bug (the learning rate
// 2% off, targets one row off) fails it on every backend
// (TestGroupDriftCatchesWrongReplica). Deterministic given the backend: no
// false failures from sampling.
const (
	driftSteps = 1                // steps of 128 rows before comparing
	driftRows  = 128 * driftSteps // training rows of one epoch
	driftOfLR  = 0.1              // mean |alone − in group| ≤ this × mean |alone − alone with lr × 1.1|
	driftAgree = 0.99             // alone and in group pick the same class on this share of rows
)

// driftStats compares predictions a and b of rows × width probabilities
// (width 1: binary P(y = 1)): mean and max |a − b| and the share of rows
// where both pick the same class.
func driftStats(a, b []float32, width int) (mean, worst, agree float64) {
	for i := range a {
		d := math.Abs(float64(a[i] - b[i]))
		mean += d
		worst = max(worst, d)
	}
	rows := len(a) / width
	for r := range rows {
		if predictedClass(a[r*width:(r+1)*width]) == predictedClass(b[r*width:(r+1)*width]) {
			agree++
		}
	}
	return mean / float64(len(a)), worst, agree / float64(rows)
}

func predictedClass(p []float32) int {
	if len(p) == 1 {
		if p[0] >= 0.5 {
			return 1
		}
		return 0
	}
	best := 0
	for c := range p {
		if p[c] > p[best] {
			best = c
		}
	}
	return best
}

// groupDriftOK is the off-go criterion above for a replica trained alone,
// its predictions inGroup, and lrOff (alone with its learning rate × 1.1).
func groupDriftOK(alone, inGroup, lrOff []float32, width int) error {
	mean, worst, agree := driftStats(alone, inGroup, width)
	ref, _, _ := driftStats(alone, lrOff, width)
	if mean > driftOfLR*ref || agree < driftAgree {
		return fmt.Errorf("alone vs in group: mean |Δp| %.3g (max %.3g), same class on %.1f%% of rows; "+
			"the learning rate 10%% off: mean |Δp| %.3g (want ≤ %g of it and ≥ %.0f%% agreement)",
			mean, worst, 100*agree, ref, driftOfLR, 100*driftAgree)
	}
	return nil
}

// driftCases are the two C-class cases whose alone-vs-group difference
// exceeded 1e-5 on xla:cuda after 32 steps (propmatch_ce k=4: 9.9e-5;
// forward_ce higgs_mlp: 0.018–0.066).
func driftCases(d, c int) []struct {
	name  string
	loss  Loss
	bag   int
	model ModelConfig
} {
	return []struct {
		name  string
		loss  Loss
		bag   int
		model ModelConfig
	}{
		{"propmatch_ce k=4", LossPropMatchCE, 4, ModelConfig{Kind: KindMLP, InputDim: d, Hidden: []int{16, 8}, Classes: c}},
		{"forward_ce higgs_mlp", LossForwardCE, 0, ModelConfig{Kind: KindHiggsMLP, InputDim: d, Classes: c}},
	}
}

// TestGroupDrift measures, off backend go, how the alone-vs-group drift
// grows with training steps against the effect of a 10% learning-rate
// error and the spread between trials, and holds the first driftSteps to
// the criterion above; later steps are measured and logged.
func TestGroupDrift(t *testing.T) {
	if isGoBackend(goBackend(t)) {
		t.Skip("backend go is bit-identical (TestMulticlassGroupInvariance)")
	}
	const d, c = 10, 5
	w, b := trueSoftmax(d, c, 2, 2)
	tr := makeSoftmax(2048, w, b, 5)
	test := denseFrame(makeSoftmax(400, w, b, 6).X, d)
	for _, tc := range driftCases(d, c) {
		for _, steps := range []int{driftSteps, 4, 16, 32} {
			t.Run(fmt.Sprintf("%s/%d steps", tc.name, steps), func(t *testing.T) {
				rows, epochs := 128*min(steps, 16), max(steps/16, 1)
				feat, y := denseFrame(tr.X[:rows*d], d), tr.Y[:rows]
				cfg := GroupConfig{Name: tc.name, Model: tc.model, Loss: tc.loss, Epochs: epochs, Features: feat,
					Replicas: multiReplicas(y, c, 8, tc.loss, tc.bag, 128)}
				all := mustPredict(t, mustTrain(t, cfg), test)
				for _, k := range []int{0, 5} {
					alone := func(mutate func(*Replica)) []float32 {
						cfg.Replicas = multiReplicas(y, c, 8, tc.loss, tc.bag, 128)[k : k+1]
						mutate(&cfg.Replicas[0])
						return mustPredict(t, mustTrain(t, cfg), test)[0]
					}
					p := alone(func(*Replica) {})
					lrOff := alone(func(r *Replica) { r.LR *= 1.1 })
					other := alone(func(r *Replica) { r.Seed += 1000 })
					mean, worst, agree := driftStats(p, all[k], c)
					ref, _, _ := driftStats(p, lrOff, c)
					spread, _, _ := driftStats(p, other, c)
					t.Logf("replica %d: alone vs group mean |Δp| %.3g (%.3g of a 10%% lr error, %.3g of the trial spread) max %.3g, same class %.1f%%",
						k, mean, mean/ref, mean/spread, worst, 100*agree)
					if steps != driftSteps {
						continue // measured, not held: the drift grows as training amplifies it
					}
					if err := groupDriftOK(p, all[k], lrOff, c); err != nil {
						t.Errorf("replica %d: %v", k, err)
					}
				}
			})
		}
	}
}

// TestGroupDriftCatchesWrongReplica: the off-go criterion is not too loose
// to see a grouping bug. Replica k "in the group" here is replica k trained
// driftSteps step(s) with its learning rate 2% off, or with its targets
// one row off (a replica reading at a wrong offset): each must fail the criterion against the true replica k. Runs
// on every backend.
func TestGroupDriftCatchesWrongReplica(t *testing.T) {
	const d, c = 10, 5
	w, b := trueSoftmax(d, c, 2, 2)
	tr := makeSoftmax(2048, w, b, 5)
	feat, y, test := denseFrame(tr.X[:driftRows*d], d), tr.Y[:driftRows], denseFrame(makeSoftmax(400, w, b, 6).X, d)
	for _, tc := range driftCases(d, c) {
		for _, k := range []int{0, 1, 5} {
			reps := func() []Replica { return multiReplicas(y, c, 8, tc.loss, tc.bag, 128) }
			train := func(mutate func(*Replica)) []float32 {
				r := reps()[k : k+1]
				mutate(&r[0])
				cfg := GroupConfig{Name: tc.name, Model: tc.model, Loss: tc.loss, Epochs: 1, Features: feat, Replicas: r}
				return mustPredict(t, mustTrain(t, cfg), test)[0]
			}
			alone := train(func(*Replica) {})
			lrOff := train(func(r *Replica) { r.LR *= 1.1 })
			for _, m := range []struct {
				name  string
				wrong func(*Replica)
			}{
				{"learning rate 2% off", func(r *Replica) { r.LR *= 1.02 }},
				{"targets one row off", func(r *Replica) {
					shifted := append(slices.Clone(y[1:]), y[0])
					r.Source = multiReplicas(shifted, c, 8, tc.loss, tc.bag, 128)[k].Source
				}},
			} {
				t.Run(fmt.Sprintf("%s/replica %d/%s", tc.name, k, m.name), func(t *testing.T) {
					bad := train(m.wrong)
					mean, _, agree := driftStats(alone, bad, c)
					ref, _, _ := driftStats(alone, lrOff, c)
					t.Logf("mean |Δp| %.3g: %.3g of a 10%% lr error, same class %.1f%%", mean, mean/ref, 100*agree)
					if err := groupDriftOK(alone, bad, lrOff, c); err == nil {
						t.Errorf("a replica with its %s passes (mean |Δp| %.3g, %.3g of a 10%% lr error, same class %.1f%%)",
							m.name, mean, mean/ref, 100*agree)
					}
				})
			}
		}
	}
}
