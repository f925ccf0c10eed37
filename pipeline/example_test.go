package pipeline_test

import (
	"context"
	"fmt"
	"os"

	"labelprivacy/config"
	"labelprivacy/pets"
	"labelprivacy/pipeline"
)

// The quickstart through the library: synthesize data with known η,
// release labels through RR and LLP, train, audit, summarize.
func Example() {
	cfg := config.Defaults()
	cfg.Output, _ = os.MkdirTemp("", "labelprivacy-example")
	defer os.RemoveAll(cfg.Output)
	cfg.Data.Synth.Rows, cfg.Data.Synth.TestRows, cfg.Audit.Examples = 4000, 1000, 800
	cfg.Train.LearningRates = []float64{0.01}
	cfg.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}}, {Mechanism: pets.LLP, K: []int{8}}}

	ctx := context.Background()
	s, err := pipeline.Open(ctx, &cfg, pipeline.Exclusive, nil)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	runs, err := pipeline.Fit(ctx, s, pipeline.FitOptions{})
	if err != nil {
		panic(err)
	}
	audited, err := pipeline.Audit(ctx, s, runs)
	if err != nil {
		panic(err)
	}
	sum, err := pipeline.Report(s, runs, audited)
	if err != nil {
		panic(err)
	}
	for _, r := range sum.Rows {
		fmt.Printf("%-8s learned: %v  attacker gains: %v\n", r.Setting, r.AUCMean > 0.6, r.EAdv > 0)
	}
	// Output:
	// none     learned: true  attacker gains: true
	// rr_eps1  learned: true  attacker gains: true
	// llp_k8   learned: true  attacker gains: true
}
