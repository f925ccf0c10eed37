package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"labelprivacy/data"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// Every mechanism's training recipe, checked where it matters: at the
// trainer. For each run the fake executor receives, the loss, the loss
// parameters, the batch shape and every target value of the first epoch
// are compared with what the mechanism prescribes (Section 4, Appendix C),
// recomputed here from the release file on disk and the clean labels, not
// from the plan. A plan that trains llp_geom on alpha, RR with a wrong flip
// probability, LLP with a wrong bag or batch size, or easyllp with another
// prior fails it.
func TestPlanTargetsReachTrainer(t *testing.T) {
	type want struct {
		loss   model.Loss
		column string // where the targets come from: label, label_rr, alpha, alpha_debiased
		flip   func(eps float64) float64
		prior  bool // easyllp: the mean released target of the run's release
	}
	rrFlip := func(eps float64) float64 { return 1 / (1 + math.Exp(eps)) }
	for _, tc := range []struct {
		name    string
		rrLoss  model.Loss
		llpLoss model.Loss
		want    map[pets.Kind]want
	}{
		{"paper losses", model.LossDebiasedBCE, model.LossPropMatch, map[pets.Kind]want{
			pets.None:    {model.LossBCE, data.ColLabel, nil, false},
			pets.RR:      {model.LossDebiasedBCE, data.ColLabelRR, rrFlip, false},
			pets.LLP:     {model.LossPropMatch, data.ColAlpha, nil, false},
			pets.LLPLap:  {model.LossPropMatch, data.ColAlpha, nil, false},
			pets.LLPGeom: {model.LossPropMatch, data.ColAlphaDebiased, nil, false},
		}},
		{"baselines", model.LossBCE, model.LossEasyLLP, map[pets.Kind]want{
			pets.None:    {model.LossBCE, data.ColLabel, nil, false},
			pets.RR:      {model.LossBCE, data.ColLabelRR, nil, false},
			pets.LLP:     {model.LossEasyLLP, data.ColAlpha, nil, true},
			pets.LLPLap:  {model.LossEasyLLP, data.ColAlpha, nil, true},
			pets.LLPGeom: {model.LossEasyLLP, data.ColAlphaDebiased, nil, true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			c := testConfig(out)
			c.Train.RRLoss, c.Train.LLPLoss = tc.rrLoss, tc.llpLoss
			c.Train.BatchSize, c.Train.Trials, c.Train.LearningRates = 70, 2, []float64{0.01}
			c.Pets = []PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{0.5}},
				{Mechanism: pets.LLP, K: []int{4}}, {Mechanism: pets.LLPLap, K: []int{8}, Epsilon: []float64{1}},
				{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}, {Mechanism: pets.Bot}}
			s := openTest(t, c)
			ex := &fakeExec{t: t}
			if _, err := Fit(context.Background(), s, FitOptions{Executor: ex}); err != nil {
				t.Fatal(err)
			}
			trained := 0
			for _, r := range s.Runs {
				got := ex.seen[r.ID]
				if r.Setting.Kind == pets.Bot {
					if got != nil || r.Plan.Loss != 0 {
						t.Fatalf("%s: bot was trained", r.Name())
					}
					continue
				}
				trained++
				w, ok := tc.want[r.Setting.Kind]
				if got == nil || !ok {
					t.Fatalf("%s: not trained", r.Name())
				}
				checkReceived(t, s, out, r, got, w.loss, w.column, w.flip, w.prior)
			}
			if trained != 10 {
				t.Fatalf("%d runs trained, want 10", trained)
			}
		})
	}
}

// checkReceived compares one run's received batches with the mechanism's
// recipe; the release is read from its conventional path.
func checkReceived(t *testing.T, s *Session, out string, r *RunSpec, got *received, loss model.Loss, column string,
	flip func(float64) float64, prior bool) {
	t.Helper()
	name := r.Name()
	if got.loss != loss {
		t.Fatalf("%s: loss %s, want %s", name, got.loss, loss)
	}
	var rel *data.Frame
	relRow := map[int64]int{} // dataset row → release row
	if column != data.ColLabel {
		var err error
		rel, err = data.ReadFrame(filepath.Join(out, "releases", r.Setting.ID, fmt.Sprintf("trial-%d.arrow", r.Trial)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i, row := range rel.Row {
			relRow[row] = i
		}
	}
	target := func(row int32) float64 {
		if column == data.ColLabel {
			return float64(s.Train.Label[row])
		}
		i, ok := relRow[int64(row)]
		if !ok {
			t.Fatalf("%s: row %d trained on is not in its release", name, row)
		}
		switch column {
		case data.ColLabelRR:
			return float64(rel.LabelRR[i])
		case data.ColAlpha:
			return rel.Alpha[i]
		case data.ColAlphaDebiased:
			return rel.AlphaDebiased[i]
		}
		panic(column)
	}
	// Loss parameters.
	wantFlip := 0.0
	if flip != nil {
		wantFlip = flip(r.Setting.Epsilon)
	}
	if math.Abs(got.params.FlipProb-wantFlip) > 1e-15 {
		t.Fatalf("%s: flip probability %v, want %v", name, got.params.FlipProb, wantFlip)
	}
	wantPrior := 0.0
	if prior {
		col := rel.Alpha
		if column == data.ColAlphaDebiased {
			col = rel.AlphaDebiased
		}
		for _, a := range col {
			wantPrior += a / float64(len(col))
		}
		wantPrior = min(max(wantPrior, 0), 1)
	}
	if math.Abs(got.params.Prior-wantPrior) > 1e-12 {
		t.Fatalf("%s: easyllp prior %v, want %v", name, got.params.Prior, wantPrior)
	}
	// Batch shape: 70 rows, or whole bags of k (17 bags of 4, 8 bags of 8).
	perBag := column == data.ColAlpha || column == data.ColAlphaDebiased
	wantRows, wantBag := 70, 0
	if perBag {
		wantBag = r.Setting.K
		wantRows = 70 / wantBag * wantBag
	}
	if len(got.batches) == 0 {
		t.Fatalf("%s: no batches", name)
	}
	seen := 0
	for bi, b := range got.batches {
		if b.Rows != wantRows || b.BagSize != wantBag {
			t.Fatalf("%s: batch %d has %d rows in bags of %d, want %d in bags of %d", name, bi, b.Rows, b.BagSize, wantRows, wantBag)
		}
		for j, v := range b.Target {
			if !perBag {
				if w := target(b.RowIDs[j]); float64(v) != float64(float32(w)) {
					t.Fatalf("%s: batch %d row %d (dataset row %d): target %v, want %s = %v", name, bi, j, b.RowIDs[j], v, column, w)
				}
				continue
			}
			// One bag: its k rows share one bag of the release and its target.
			rows := b.RowIDs[j*wantBag : (j+1)*wantBag]
			bag := rel.BagID[relRow[int64(rows[0])]]
			for _, row := range rows {
				if rel.BagID[relRow[int64(row)]] != bag {
					t.Fatalf("%s: batch %d bag %d mixes release bags", name, bi, j)
				}
			}
			if w := target(rows[0]); float64(v) != float64(float32(w)) {
				t.Fatalf("%s: batch %d bag %d: target %v, want %s = %v", name, bi, j, v, column, w)
			}
		}
		seen += b.Rows
	}
	// One epoch covers all whole batches of the rows the run trains on.
	n := s.Train.Rows
	if rel != nil {
		n = rel.Rows - rel.Rows%max(wantBag, 1)
	}
	if seen != n/wantRows*wantRows {
		t.Fatalf("%s: one epoch trained %d rows, want %d", name, seen, n/wantRows*wantRows)
	}
}
