package audit_test

import (
	"fmt"

	"labelprivacy/audit"
	"labelprivacy/pets"
)

func ExampleRun() {
	// An audit set of 9 examples whose labels are fair coins (η = ½).
	eta := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
	opts := audit.Options{Seed: 1, LabelDraws: 100, MaxSamples: 2}

	// LLP with bags of 2: one example is dropped; the proportion reveals
	// the labels unless it is ½, so EAdv = ½ − E[min(α, 1−α)] = ½ − ¼
	// (Theorem 3.2), and |MA| is infinite for homogeneous bags.
	llp, err := audit.Run(eta, must(pets.New(pets.Params{Kind: pets.LLP, K: 2})), opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: n=%d dropped=%d EAdv=%.4f\n", llp.Mechanism, llp.NExamples, llp.NDropped, llp.EAdv)

	// Randomized response with ε = 1: EAdv = ½ − 1/(1+e) (Theorem 3.5) and
	// every |MA| is ε.
	rr, err := audit.Run(eta, must(pets.New(pets.Params{Kind: pets.RR, Epsilon: 1})), opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: EAdv=%.4f |MA| p99=%v, %d samples\n", rr.Mechanism, rr.EAdv, rr.MAP99, len(rr.Samples))

	_, err = audit.Run([]float64{0.2, 1.5}, must(pets.New(pets.Params{Kind: pets.Bot})), opts)
	fmt.Println(err)
	// Output:
	// llp(k=2): n=8 dropped=1 EAdv=0.2500
	// rr(ε=1): EAdv=0.2311 |MA| p99=1, 2 samples
	// audit: eta[1] = 1.5: must be finite and in [0, 1]
}

// must returns m, panicking on err (parameters an example knows to be valid).
func must(m *pets.Mechanism, err error) *pets.Mechanism {
	if err != nil {
		panic(err)
	}
	return m
}
