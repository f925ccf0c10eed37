package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"labelprivacy/internal/stats"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// chanceOf's standard errors: the formulas, and the binary one against the
// spread of the AUC of scores without signal. 4000 seeded draws estimate an
// SD to ±1.1% (1/√(2·4000)); the tolerance is 5% (4.4 of those SEs: a false
// failure below 1e-5, were the draws not seeded), and an SE 10% wrong fails.
func TestChanceOf(t *testing.T) {
	labels := make([]uint8, 300)
	for i := range 100 {
		labels[i] = 1 // n₁ = 100, n₀ = 200
	}
	ch := chanceOf(labels, 2)
	if want := math.Sqrt(301.0 / (12 * 100 * 200)); ch.metric != "test AUC" || ch.value != 0.5 || math.Abs(ch.se-want) > 1e-12 || ch.rows != 300 {
		t.Fatalf("binary chance %+v, want AUC 0.5 ± %v", *ch, want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	scores := make([]float32, len(labels))
	var sum, sum2 float64
	const draws = 4000
	for range draws {
		for i := range scores {
			scores[i] = r.Float32()
		}
		a := stats.AUC(scores, labels)
		sum, sum2 = sum+a, sum2+a*a
	}
	mean := sum / draws
	sd := math.Sqrt(sum2/draws - mean*mean)
	if math.Abs(sd/ch.se-1) > 0.05 {
		t.Errorf("AUC of random scores: SD %.5f over %d draws, chanceOf's SE %.5f", sd, draws, ch.se)
	}

	multi := []uint8{0, 1, 1, 2, 2, 2, 2, 2, 2, 2} // majority class 2: p = 0.7
	ch = chanceOf(multi, 3)
	if ch.metric != "test accuracy" || ch.value != 0.7 || math.Abs(ch.se-math.Sqrt(0.7*0.3/10)) > 1e-12 {
		t.Fatalf("C-class chance %+v", *ch)
	}
	if chanceOf([]uint8{1, 1, 1}, 2) != nil {
		t.Fatal("a test set of one class has a chance level")
	}
}

// trainingNotes flags models of fewer than minSteps steps and clean models
// within nearChanceSEs SE of chance, at the boundaries; the unbounded-loss
// remark comes once, on the first note, when such a loss was trained.
func TestTrainingNotes(t *testing.T) {
	bin := &chance{metric: "test AUC", value: 0.5, se: 0.01, rows: 10000}
	acc := &chance{metric: "test accuracy", value: 0.3, se: 0.01, rows: 2000}
	run := func(pet pets.Kind, loss string, steps int64, auc float64) report.Run {
		return report.Run{Setting: pet.String(), Pet: pet, Loss: loss, LR: 0.01, Steps: steps, TestAUC: auc, TestAccuracy: auc}
	}
	clean := func(steps int64, auc float64) report.Run { return run(pets.None, "bce", steps, auc) }
	rr := func(steps int64) report.Run { return run(pets.RR, "debiased_bce", steps, 0.7) }
	bot := report.Run{Setting: "bot", Pet: pets.Bot, Loss: "constant", TestAUC: 0.5}
	cases := []struct {
		name     string
		runs     []report.Run
		ch       *chance
		etaClean bool
		want     []string // each note holds its string, in order; nil: no note
	}{
		{"trained", []report.Run{clean(50, 0.531), rr(50), bot}, bin, true, nil},
		{"49 steps", []report.Run{clean(50, 0.8), rr(49), bot},
			bin, true, []string{"1 of 2 models took fewer than 50 optimizer steps (fewest: 49, rr lr=0.01 trial 0)"}},
		{"unbounded loss said on the first note only", []report.Run{clean(4, 0.52), rr(7)}, bin, true,
			[]string{"2 of 2 models took fewer than 50 optimizer steps (fewest: 4, none lr=0.01 trial 0): a model that barely trained measures the training budget, not the mechanism; train more steps (train.epochs × training rows ÷ train.batch_size: raise the epochs or lower the batch size) (debiased_bce is unbounded below: a negative training loss is no divergence)",
				"1 of the clean model's runs score near chance (none lr=0.01 trial 0: test AUC 0.5200; chance 0.5000 ± 0.0100 on 10000 test rows, near: less than 3 SE above it"}},
		{"no unbounded loss, no remark", []report.Run{clean(4, 0.8)}, bin, true, []string{"1 of 1 model took fewer"}},
		{"clean just below 3 SE", []report.Run{clean(100, 0.529)}, bin, true,
			[]string{"score near chance (none lr=0.01 trial 0: test AUC 0.5290; chance 0.5000 ± 0.0100 on 10000 test rows, near: less than 3 SE above it, which a model that learned nothing is 99.87% of the time): the audit's η̂ (audit.eta: clean_model) is then nearly constant"}},
		{"clean just above 3 SE", []report.Run{clean(100, 0.531)}, bin, true, nil},
		{"clean near chance, η not the clean model's", []report.Run{clean(100, 0.51)}, bin, false, []string{"no baseline for the mechanisms'"}},
		{"a mechanism near chance is not flagged", []report.Run{run(pets.LLP, "propmatch", 100, 0.47)}, bin, true, nil},
		{"C classes: accuracy against the majority share", []report.Run{clean(100, 0.329), clean(100, 0.331)}, acc, true,
			[]string{"1 of the clean model's runs score near chance (none lr=0.01 trial 0: test accuracy 0.3290; chance 0.3000 ± 0.0100"}},
		{"without test labels, steps only", []report.Run{clean(10, 0.5)}, nil, true, []string{"1 of 1 model took fewer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := trainingNotes(tc.runs, tc.ch, tc.etaClean)
			if len(got) != len(tc.want) {
				t.Fatalf("notes %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("note %d %q lacks %q", i, got[i], w)
				}
			}
			if n := strings.Count(strings.Join(got, "\n"), "unbounded below"); n > 1 {
				t.Errorf("the unbounded-loss remark %d times", n)
			}
		})
	}
}

// A fit of models that barely trained says so at its end and in report.md
// (testConfig: 600 rows, batch 64, 1 epoch: 9 whole batches, 9 steps per
// model); with 6 epochs (54 steps) the steps note is gone.
func TestBarelyTrainedSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("trains small models")
	}
	for _, tc := range []struct {
		epochs int
		said   bool
	}{{1, true}, {6, false}} {
		c := testConfig(t.TempDir())
		c.Train.Epochs, c.Train.Trials, c.Train.LearningRates = tc.epochs, 1, []float64{0.01}
		s, rec := openRec(t, c)
		runs, err := Fit(context.Background(), s, FitOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Report(s, runs, nil); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(s.Out("report.md"))
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(rec.warns, "\n"), "fit: 4 of 4 models took fewer than 50 optimizer steps (fewest: 9,")
		inReport := strings.Contains(string(md), "**Barely trained:** 4 of 4 models took fewer than 50 optimizer steps")
		unbounded := strings.Contains(string(md), "(debiased_bce is unbounded below")
		if warned != tc.said || inReport != tc.said || unbounded != tc.said {
			t.Errorf("%d epochs: said at the end of fit %v, in report.md %v (unbounded loss %v); want %v\nwarnings %q",
				tc.epochs, warned, inReport, unbounded, tc.said, rec.warns)
		}
		s.Close()
	}
}
