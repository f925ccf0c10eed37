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
	llp := pets.MustNew(pets.Params{Kind: pets.LLP, K: 4})
	geom := pets.MustNew(pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 1})

	// A bag of 4 rows with 3 positive labels, and a kept remainder bag of 2.
	fmt.Println(llp.ReleaseBag(3, 4, r), llp.ReleaseBag(1, 2, r))
	for range 3 {
		alpha := geom.ReleaseBag(3, 4, r)
		fmt.Printf("released %.2f, debiased %.4f\n", alpha, geom.Debias(alpha, 4))
	}
	// Output:
	// 0.75 0.5
	// released 0.75, debiased 0.7500
	// released 0.75, debiased 0.7500
	// released 1.00, debiased 1.1455
}
