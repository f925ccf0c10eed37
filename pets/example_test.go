package pets_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

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
		alpha := geom.ReleaseBag(3, 4, r)
		fmt.Printf("released %.2f, debiased %.4f\n", alpha, geom.Debias(alpha, 4))
	}
	// Output:
	// 0.75 0.5
	// released 0.75, debiased 0.7500
	// released 0.75, debiased 0.7500
	// released 1.00, debiased 1.1455
}

func ExampleLedger() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	l, err := pets.NewLedger(filepath.Join(dir, pets.LedgerFile), 1e-6)
	if err != nil {
		panic(err)
	}
	keys, err := l.Keys() // created with the ledger, kept beside it (mode 0600)
	if err != nil {
		panic(err)
	}
	labels := []uint8{0, 1, 1, 0, 1, 0, 0, 0}
	// People known by an id column: user 0 … user 7.
	h := keys.NewPersonHasher()
	people := func(ids ...int) []uint64 {
		out := make([]uint64, len(ids))
		for i, id := range ids {
			out[i] = h.ID([]byte(fmt.Sprint("user", id)))
		}
		return out
	}
	release := func(id string, p pets.Params, who []uint64) pets.Release {
		return pets.Release{ID: id, Input: "train.arrow", Labels: keys.Labels(labels), Rows: len(who), People: who,
			KeyCheck: keys.Check(), Mech: must(pets.New(p)), Noise: pets.NoiseSecure,
			Path: filepath.Join(dir, id+".arrow"), SHA256: "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"}
	}
	// Record each release before renaming its file into place.
	for i, r := range []pets.Release{
		release("r0", pets.Params{Kind: pets.RR, Epsilon: 1}, people(0, 1, 2, 3, 4, 5, 6, 7)),
		release("r1", pets.Params{Kind: pets.LLPGeom, K: 4, Epsilon: 0.5}, people(4, 5, 6, 7)), // half the people
		release("r2", pets.Params{Kind: pets.RR, Epsilon: 2}, people(7, 6, 5, 4, 3, 2, 1, 0)),  // all, reordered
	} {
		e, err := l.Record(r)
		if err != nil {
			panic(err)
		}
		fmt.Printf("r%d: worst person %d releases, basic ε %v, %d people at the worst\n", i, e.Releases, e.EpsTotalBasic, e.PeopleAtWorst)
	}
	// The last rename failed: abort it, and it no longer counts.
	e, err := l.Abort("r2", "rename: no space left on device")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s %s: worst person %d releases, basic ε %v\n", e.ID, e.Status, e.Releases, e.EpsTotalBasic)
	// Output:
	// r0: worst person 1 releases, basic ε 1, 8 people at the worst
	// r1: worst person 2 releases, basic ε 1.5, 4 people at the worst
	// r2: worst person 3 releases, basic ε 3.5, 4 people at the worst
	// r2 aborted: worst person 2 releases, basic ε 1.5
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
