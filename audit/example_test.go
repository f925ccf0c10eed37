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

func ExampleRunC() {
	// Four examples whose labels are uniform over 3 classes, row-major.
	eta := []float64{
		1.0 / 3, 1.0 / 3, 1.0 / 3,
		1.0 / 3, 1.0 / 3, 1.0 / 3,
		1.0 / 3, 1.0 / 3, 1.0 / 3,
		1.0 / 3, 1.0 / 3, 1.0 / 3,
	}
	opts := audit.OptionsC{Seed: 1, LabelDraws: 100}

	// k-ary randomized response, ε = 1: the released class is right with
	// probability e/(e+2), so EAdv = e/(e+2) − 1/3 and every |MA| is ε.
	rr, err := audit.RunC(eta, mustC(pets.New(pets.Params{Kind: pets.RR, Epsilon: 1, Classes: 3})), opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: EAdv=%.4f |MA| max=%.6g classes=%d\n", rr.Mechanism, rr.EAdv, rr.MAMax, rr.Classes)

	// Bags of 2 releasing their class counts: the attacker is right with
	// probability 1/3 + 2/3·1/2 (a pair of one class reveals it, two
	// classes leave a coin), so EAdv = 2/3 − 1/3; every release rules a
	// class out: |MA| = ∞.
	llp, err := audit.RunC(eta, mustC(pets.New(pets.Params{Kind: pets.LLP, K: 2, Classes: 3})), opts)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: bags=%d EAdv=%.4f exact=%v ∞ fraction=%v\n", llp.Mechanism, llp.NBags, llp.EAdv, !llp.EAdvEstimated, llp.MAInfFrac)

	_, err = audit.RunC([]float64{0.5, 0.5, 0.5}, mustC(pets.New(pets.Params{Kind: pets.Bot, Classes: 3})), opts)
	fmt.Println(err)
	// Output:
	// rr(ε=1, C=3): EAdv=0.2428 |MA| max=1 classes=3
	// llp(k=2, C=3): bags=2 EAdv=0.3333 exact=true ∞ fraction=1
	// audit: invalid eta: example 0: class probabilities sum to 1.5, not 1
}

// mustC returns m, panicking on err.
func mustC(m *pets.Mechanism, err error) *pets.Mechanism {
	if err != nil {
		panic(err)
	}
	return m
}
