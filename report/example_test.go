package report_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"labelprivacy/pets"
	"labelprivacy/report"
)

// runsOf returns RR(ε=1) runs of one dataset and config, one per (lr, AUC).
func runsOf(dataset string, aucs map[float64][]float64) []report.Run {
	var runs []report.Run
	for _, lr := range []float64{1e-3, 1e-2} {
		for trial, auc := range aucs[lr] {
			runs = append(runs, report.Run{
				RunID: fmt.Sprintf("%s-%g-%d", dataset, lr, trial), Dataset: dataset, ConfigID: "mlp",
				Setting: "rr_eps1", Pet: pets.RR, Epsilon: 1, LabelDPEpsilon: 1, LR: lr, Trial: trial, TestAUC: auc,
			})
		}
	}
	return runs
}

func ExampleBestLR() {
	runs := runsOf("sha256:higgs", map[float64][]float64{1e-3: {0.70, 0.72}, 1e-2: {0.74, 0.66}})
	best := report.BestLR(runs)[report.SettingKey{Dataset: "sha256:higgs", ConfigID: "mlp", Setting: "rr_eps1"}]
	fmt.Printf("best lr %g: AUC %.3f ± %.3f over %d trials\n", best.LR, best.AUC, best.AUCSE, best.N)
	// Output: best lr 0.001: AUC 0.710 ± 0.010 over 2 trials
}

func ExampleSummarize() {
	runs := append(runsOf("sha256:higgs", map[float64][]float64{1e-3: {0.905}}),
		runsOf("sha256:kdd12", map[float64][]float64{1e-3: {0.49, 0.49}})...)
	_, err := report.Summarize(runs, nil, report.Options{})
	fmt.Println(errors.Is(err, report.ErrMixed))

	s, err := report.Summarize(runs, nil, report.Options{AllowMixed: true})
	if err != nil {
		panic(err)
	}
	for _, r := range s.Rows {
		fmt.Printf("%s %s: AUC %.3f, SE %v, %d trials\n", r.Dataset, r.Setting, r.AUCMean, r.AUCSE, r.NTrials)
	}
	// Output:
	// true
	// sha256:higgs rr_eps1: AUC 0.905, SE NaN, 1 trials
	// sha256:kdd12 rr_eps1: AUC 0.490, SE 0, 2 trials
}

func ExampleRun_MarshalJSON() {
	r := report.Run{RunID: "ab12", Setting: "llp_k8", Pet: pets.LLP, K: 8, LabelDPEpsilon: math.Inf(1), TestAUC: math.NaN()}
	b, _ := json.Marshal(r)
	var back report.Run
	if err := json.Unmarshal(b, &back); err != nil {
		panic(err)
	}
	fmt.Println(back.Pet, back.LabelDPEpsilon, back.TestAUC)
	// Output: llp +Inf NaN
}
