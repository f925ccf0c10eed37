package ledger_test

import (
	"fmt"
	"os"
	"path/filepath"

	"labelprivacy/ledger"
	"labelprivacy/pets"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func ExampleLedger() {
	dir, _ := os.MkdirTemp("", "ledger")
	defer os.RemoveAll(dir)
	l := must(ledger.Open(filepath.Join(dir, ledger.File), ledger.Options{Budget: 8}))
	keys := must(l.Keys()) // created with the ledger, kept beside it (mode 0600)
	labels := []uint8{0, 1, 1, 0, 1, 0, 0, 0, 1}
	// People known by an id column: user 0 … user 7; user 7 has two rows.
	h := keys.NewPersonHasher()
	people := func(ids ...int) []uint64 {
		out := make([]uint64, len(ids))
		for i, id := range ids {
			out[i] = h.ID(fmt.Append(nil, "user", id))
		}
		return out
	}
	release := func(id string, p pets.Params, who []uint64, draws []int64) ledger.Release {
		return ledger.Release{ID: id, Input: "train.arrow", Labels: keys.Labels(labels), Identity: ledger.ByID,
			IDColumn: ledger.IDColumn{Name: "user", Type: ledger.IDInteger}, People: who, Draws: draws, KeyCheck: keys.Check(), Mech: must(pets.New(p)), Noise: pets.NoiseSecure,
			Path: filepath.Join(dir, id+".arrow"), SHA256: "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"}
	}
	// Record each release before a byte of its file is written.
	for _, r := range []ledger.Release{
		release("r0", pets.Params{Kind: pets.RR, Epsilon: 1}, people(0, 1, 2, 3, 4, 5, 6, 7, 7), nil),
		// LLP+Geom in bags of 2: user 7's rows share a bag, one draw at 2ε.
		release("r1", pets.Params{Kind: pets.LLPGeom, K: 2, Epsilon: 0.5}, people(4, 5, 6, 3, 7, 7), []int64{0, 0, 1, 1, 2, 2}),
		release("r2", pets.Params{Kind: pets.RR, Epsilon: 2}, people(7, 6, 5, 4, 3, 2, 1, 0), nil), // all, reordered
	} {
		e, err := l.Record(r)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %d rows, %d people; the worst %d: %d releases, basic ε %v\n", e.ID, e.Rows, e.People, e.PeopleAtWorst, e.Releases, e.EpsTotalBasic)
	}
	// A release over the budget is refused, and nothing is written.
	_, err := l.Record(release("r3", pets.Params{Kind: pets.RR, Epsilon: 5}, people(7), nil))
	fmt.Println(err)
	st := must(l.State(0))
	for _, c := range st.Classes {
		fmt.Printf("%d people: %d releases, basic ε %v\n", c.People, c.Releases, c.Comp.Basic)
	}
	// Output:
	// r0: 9 rows, 8 people; the worst 1: 1 releases, basic ε 2
	// r1: 6 rows, 5 people; the worst 1: 2 releases, basic ε 3
	// r2: 8 rows, 8 people; the worst 1: 3 releases, basic ε 5
	// ledger: release refused by the privacy budget ε ≤ 8 (δ' = 1e-06): 1 person would go above it, to ε = 10 (they carry ε = 5 now, over 3 releases)
	// 1 people: 3 releases, basic ε 5
	// 4 people: 3 releases, basic ε 3.5
	// 3 people: 2 releases, basic ε 3
}
