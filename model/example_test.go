package model_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/data"
	"labelprivacy/internal/stats"
	"labelprivacy/model"
)

// Two replicas (two learning rates) of a logistic regression trained in one
// group on the same features, each on its own randomized-response labels.
func ExampleTrainGroup() {
	be, err := model.NewBackend("go")
	if err != nil {
		panic(err)
	}
	// Features only: y = 1 with probability σ(2·x0 − x1).
	const n = 4096
	rng := rand.New(rand.NewPCG(1, 2))
	feat := &data.Features{Rows: n, Names: []string{"x0", "x1"}, X: make([]float32, 2*n)}
	labels := make([]uint8, n)
	for i := range n {
		x0, x1 := rng.NormFloat64(), rng.NormFloat64()
		feat.X[2*i], feat.X[2*i+1] = float32(x0), float32(x1)
		if rng.Float64() < 1/(1+math.Exp(-(2*x0-x1))) {
			labels[i] = 1
		}
	}
	const flip = 0.2 // randomized response, ε = ln 4
	var reps []model.Replica
	for k, lr := range []float64{1e-2, 3e-2} {
		rr := make([]uint8, n)
		for i, y := range labels {
			rr[i] = y
			if rng.Float64() < flip {
				rr[i] = 1 - y
			}
		}
		src, err := data.NewBatchSource(&data.Frame{Rows: n, LabelRR: rr}, data.BatchOptions{
			BatchSize: 256, Shuffle: true, Seed: uint64(k), Target: data.TargetLabelRR,
			DropLast: true, Features: feat, IndexOnly: true})
		if err != nil {
			panic(err)
		}
		reps = append(reps, model.Replica{Name: fmt.Sprintf("lr=%g", lr), Seed: uint64(10 + k), LR: lr,
			Params: model.LossParams{FlipProb: flip}, Source: src})
	}
	g, err := model.TrainGroup(context.Background(), model.GroupConfig{
		Name: "example", Backend: be, Model: model.ModelConfig{Kind: model.KindMLP, InputDim: 2},
		Loss: model.LossDebiasedBCE, Epochs: 2, Features: feat, Replicas: reps})
	if err != nil {
		panic(err)
	}
	defer g.Close()
	probs, err := g.Predict(feat) // one pass for every replica
	if err != nil {
		panic(err)
	}
	for k, r := range g.Results {
		fmt.Printf("%s: %d steps, AUC on clean labels > 0.8: %v\n", r.Name, r.Steps, stats.AUC(probs[k], labels) > 0.8)
	}
	// Output:
	// lr=0.01: 32 steps, AUC on clean labels > 0.8: true
	// lr=0.03: 32 steps, AUC on clean labels > 0.8: true
}

// The C-class metrics on a group's predictions (C probabilities per row,
// row-major): accuracy of the most probable class and the macro one-vs-rest
// AUC.
func ExampleMacroAUC() {
	probs := []float32{
		0.7, 0.2, 0.1, // true class 0
		0.3, 0.3, 0.4, // true class 1
		0.1, 0.6, 0.3, // true class 1
		0.2, 0.3, 0.5, // true class 2
	}
	labels := []uint8{0, 1, 1, 2}
	fmt.Printf("accuracy %.2f, macro AUC %.3f, cross-entropy %.3f\n",
		model.Accuracy(probs, 3, labels), model.MacroAUC(probs, 3, labels), model.CrossEntropy(probs, 3, labels))
	// Output: accuracy 0.75, macro AUC 0.958, cross-entropy 0.691
}
