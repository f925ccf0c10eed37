package pets_test

import (
	"fmt"
	"math/rand/v2"

	"labelprivacy/pets"
)

func ExampleNew() {
	m, err := pets.New(pets.Params{Kind: pets.RR, Epsilon: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%v: ε=%v π=%.4f\n", m, m.Epsilon(), m.FlipProb())

	_, err = pets.New(pets.Params{Kind: pets.LLP, K: 64, Epsilon: 1})
	fmt.Println(err)
	// Output:
	// rr(ε=1): ε=1 π=0.2689
	// pets: invalid epsilon: llp takes no epsilon (its ε is fixed), got 1
}

func ExampleMechanism_ReleaseBag() {
	r := rand.New(rand.NewPCG(1, 2)) // seeded: reproducible releases
	llp := must(pets.New(pets.Params{Kind: pets.LLP, K: 4}))
	geom := must(pets.New(pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 1}))

	// A bag of 4 rows with 3 positive labels, and a kept remainder bag of 2.
	fmt.Println(llp.ReleaseBag(3, 4, r), llp.ReleaseBag(1, 2, r))
	for range 3 {
		alpha := []float64{geom.ReleaseBag(3, 4, r)}
		target := make([]float64, 1)
		geom.BagLaw().Target(target, alpha, 4) // the bag's training target (alpha_debiased)
		fmt.Printf("released %.2f, debiased %.4f\n", alpha[0], target[0])
	}
	// Output:
	// 0.75 0.5
	// released 0.75, debiased 0.7500
	// released 0.75, debiased 0.7500
	// released 1.00, debiased 1.1455
}

func ExampleExampleLaw() {
	m := must(pets.New(pets.Params{Kind: pets.RRPrior, Epsilon: 1, Classes: 4}))
	ex := m.ExampleLaw()
	// A prior confident in classes 2 and 0: RR over those two classes
	// (k* = 2) releases the true label with probability 0.95·e/(e+1) ≈ 0.69,
	// more than RR over one (0.6), three or four classes.
	ch := ex.Channel(ex.ChannelOf([]float64{0.35, 0.03, 0.6, 0.02}))
	fmt.Printf("releases %04b; keeps a label in them with probability %.4f\n", ch.Support(), ch.Prob(2, 2))
	// Output: releases 0101; keeps a label in them with probability 0.7311
}

func ExampleCompose() {
	// 40 releases of one person's label through rr(ε=0.1), at δ' = 1e-6.
	steps := make([]pets.Step, 40)
	for i := range steps {
		steps[i] = pets.StepOf(must(pets.New(pets.Params{Kind: pets.RR, Epsilon: 0.1})))
	}
	c, err := pets.Compose(steps, 1e-6)
	if err != nil {
		panic(err)
	}
	fmt.Printf("basic %.4f, DRV %.4f, PLD %.4f (+ at most %g): (%.4f, 1e-6)-label-DP\n", c.Basic, c.DRV, c.PLD, c.PLDError, c.Total)
	// Output:
	// basic 4.0000, DRV 3.7452, PLD 2.7754 (+ at most 0.0001): (2.7754, 1e-6)-label-DP
}

// must returns m, panicking on err (parameters an example knows to be valid).
func must(m *pets.Mechanism, err error) *pets.Mechanism {
	if err != nil {
		panic(err)
	}
	return m
}
