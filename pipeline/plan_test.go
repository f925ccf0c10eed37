package pipeline

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/llp"
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
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{0.5}},
				{Mechanism: pets.LLP, K: []int{4}}, {Mechanism: pets.LLPLap, K: []int{8}, Epsilon: []float64{1}},
				{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}, {Mechanism: pets.Bot}}
			s := openTest(t, c)
			ex := &fakeExec{t: t}
			if _, err := Fit(context.Background(), s, FitOptions{executor: ex}); err != nil {
				t.Fatal(err)
			}
			trained := 0
			for _, r := range s.runs {
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
func checkReceived(t *testing.T, s *Session, out string, r *runSpec, got *received, loss model.Loss, column string,
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
			return float64(s.train.Label[row])
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
	n := s.train.Rows
	if rel != nil {
		n = rel.Rows - rel.Rows%max(wantBag, 1)
	}
	if seen != n/wantRows*wantRows {
		t.Fatalf("%s: one epoch trained %d rows, want %d", name, seen, n/wantRows*wantRows)
	}
}

// TestPlanRRPriorAndCuratedBags extends TestPlanTargetsReachTrainer to the
// mechanisms beyond the paper, checked at the trainer through the fake
// executor:
//   - curated bags train like random ones (checkReceived: PropMatch on
//     alpha / alpha_debiased in whole bags of the release), and the
//     release's bags are the rule's: consecutive runs of x1 (sorted), one
//     key per bag (key:group);
//   - rr_prior's prior model is trained once per trial, inside release
//     making, on stage 1's released labels only (train.rr_loss, its flip
//     probability), and its predictions are the priors of stage 2's rows
//     (the fake predicts σ(x0) of each row it is handed) and of the test
//     rows (the file beside the release);
//   - each rr_prior run receives BCE on the targets train.rr_prior_targets
//     prescribes, recomputed here from the release file: (ỹ−π)/(1−2π) on
//     RR-branch rows, and on argmax rows ỹ (argmax), nothing (drop), the
//     prior (prior); ỹ everywhere (noisy).
func TestPlanRRPriorAndCuratedBags(t *testing.T) {
	for _, mode := range []config.PriorTargets{config.PriorTargetsArgmax, config.PriorTargetsDrop, config.PriorTargetsPrior, config.PriorTargetsNoisy} {
		t.Run(string(mode), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			c := curatedConfig(t, out)
			c.Train.RRPriorTargets = mode
			s := openTest(t, c)
			ex := &fakeExec{t: t}
			if _, err := Fit(context.Background(), s, FitOptions{executor: ex}); err != nil {
				t.Fatal(err)
			}
			priorModels := 0
			for id, got := range ex.seen {
				if strings.HasPrefix(id, priorModelIDPrefix) {
					priorModels++
					checkPriorModel(t, s, out, got)
				}
			}
			if priorModels != 2 {
				t.Fatalf("%d prior models trained, want 2 (one per trial)", priorModels)
			}
			for _, r := range s.runs {
				got := ex.seen[r.ID]
				if got == nil {
					t.Fatalf("%s: not trained", r.Name())
				}
				switch {
				case r.Setting.Kind == pets.RRPrior:
					checkPriorTargets(t, s, out, r, got, mode)
				case r.Setting.Kind == pets.LLP:
					checkReceived(t, s, out, r, got, model.LossPropMatch, data.ColAlpha, nil, false)
					checkBagRule(t, s, out, r)
				case r.Setting.Kind == pets.LLPGeom:
					checkReceived(t, s, out, r, got, model.LossPropMatch, data.ColAlphaDebiased, nil, false)
					checkBagRule(t, s, out, r)
				}
			}
		})
	}
}

func readRel(t *testing.T, out string, r *runSpec) *data.Frame {
	t.Helper()
	rel, err := data.ReadFrame(filepath.Join(out, "releases", r.Setting.ID, fmt.Sprintf("trial-%d.arrow", r.Trial)))
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// checkPriorModel: the prior model trained on stage-1 rows only, with
// their released labels as targets, debiased BCE at rr_prior's π; the
// release's stage-2 priors are the fake's predictions σ(x0) of exactly
// those rows, and the test priors beside it σ(x0) of the test rows.
func checkPriorModel(t *testing.T, s *Session, out string, got *received) {
	t.Helper()
	r := got.run
	if got.loss != model.LossDebiasedBCE || math.Abs(got.params.FlipProb-r.Setting.Mech.FlipProb()) > 1e-15 {
		t.Fatalf("prior model: loss %s flip %v", got.loss, got.params.FlipProb)
	}
	var rel *data.Frame
	for trial := range s.cfg.Train.Trials {
		f, err := data.ReadFrame(releasePath(out, r.Setting, trial))
		if err != nil {
			t.Fatal(err)
		}
		if deriveSeed(releaseSeed(s.cfg.Seed, r.Setting, trial), "prior-init") == r.Plan.InitSeed {
			rel = f // the trial this prior model belongs to
		}
	}
	if rel == nil {
		t.Fatal("prior model of no trial's release")
	}
	seen := 0
	for _, b := range got.batches {
		for j, row := range b.RowIDs {
			if rel.Stage[row] != 1 {
				t.Fatalf("prior model trained on row %d of stage %d", row, rel.Stage[row])
			}
			if b.Target[j] != float32(rel.LabelRR[row]) {
				t.Fatalf("prior model: row %d target %v, released %d", row, b.Target[j], rel.LabelRR[row])
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatal("prior model saw no row")
	}
	d := s.train.Dim()
	m := r.Setting.Mech
	argmax := 0
	for i := range rel.Rows {
		if rel.Stage[i] == 1 {
			continue
		}
		p := sigmoid32(s.train.X[i*d])
		if rel.Prior[i] != p {
			t.Fatalf("stage-2 row %d: prior %v, the model predicted %v", i, rel.Prior[i], p)
		}
		if lab, am := binaryBranch(m, p); am {
			argmax++
			if rel.Branch[i] != 1 || rel.LabelRR[i] != lab {
				t.Fatalf("row %d: confident prior %v but branch %d label %d", i, p, rel.Branch[i], rel.LabelRR[i])
			}
		}
	}
	if argmax == 0 {
		t.Fatal("no row took the argmax branch: the case does not test it")
	}
	test, err := s.testPriors(r.Setting, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range test {
		if p != sigmoid32(s.test.X[i*d]) {
			t.Fatalf("test prior %d: %v, want %v", i, p, sigmoid32(s.test.X[i*d]))
		}
	}
}

// checkPriorTargets recomputes an rr_prior run's targets from its release.
func checkPriorTargets(t *testing.T, s *Session, out string, r *runSpec, got *received, mode config.PriorTargets) {
	t.Helper()
	rel := readRel(t, out, r)
	md, err := data.ReadMetadata(filepath.Join(out, "releases", r.Setting.ID, fmt.Sprintf("trial-%d.arrow", r.Trial)))
	if err != nil {
		t.Fatal(err)
	}
	if pm := md[metaPriorModel]; s.cfg.Train.Epochs != 1 || !strings.HasSuffix(pm, ", 1 epoch") {
		t.Errorf("%s: prior_model %q after %d epochs, want it to end in \", 1 epoch\"", r.Name(), pm, s.cfg.Train.Epochs)
	}
	pi := r.Setting.Mech.FlipProb()
	if got.loss != model.LossBCE || got.params.FlipProb != 0 || got.params.Prior != 0 {
		t.Fatalf("%s: loss %s params %+v", r.Name(), got.loss, got.params)
	}
	trained, rrRows := 0, 0
	for i := range rel.Rows {
		if rel.Branch[i] == 0 {
			rrRows++
		}
	}
	for _, b := range got.batches {
		if b.Rows != 70 || b.BagSize != 0 {
			t.Fatalf("%s: batch of %d rows in bags of %d", r.Name(), b.Rows, b.BagSize)
		}
		for j, row := range b.RowIDs {
			y := float64(rel.LabelRR[row])
			want := y
			switch {
			case mode == config.PriorTargetsNoisy:
			case rel.Branch[row] == 0:
				want = (y - pi) / (1 - 2*pi)
			case mode == config.PriorTargetsDrop:
				t.Fatalf("%s: argmax row %d trained with drop", r.Name(), row)
			case mode == config.PriorTargetsPrior:
				want = rel.Prior[row]
			}
			if b.Target[j] != float32(want) {
				t.Fatalf("%s (%s): row %d (branch %d, ỹ %v): target %v, want %v", r.Name(), mode, row, rel.Branch[row], y, b.Target[j], want)
			}
			trained++
		}
	}
	wantRows := s.train.Rows
	if mode == config.PriorTargetsDrop {
		wantRows = rrRows
	}
	if trained != wantRows/70*70 {
		t.Fatalf("%s: one epoch trained %d rows, want %d", r.Name(), trained, wantRows/70*70)
	}
}

// checkBagRule: the release's bags follow the setting's rule.
func checkBagRule(t *testing.T, s *Session, out string, r *runSpec) {
	t.Helper()
	rel := readRel(t, out, r)
	byBag := map[int64][]int64{}
	for i, b := range rel.BagID {
		byBag[b] = append(byBag[b], rel.Row[i])
	}
	switch r.Setting.Bags.Kind {
	case llp.RuleSorted:
		d := s.train.Dim()
		type span struct{ lo, hi float32 }
		var spans []span
		for _, rows := range byBag {
			sp := span{float32(math.Inf(1)), float32(math.Inf(-1))}
			for _, row := range rows {
				v := s.train.X[int(row)*d+1]
				sp.lo, sp.hi = min(sp.lo, v), max(sp.hi, v)
			}
			spans = append(spans, sp)
		}
		slices.SortFunc(spans, func(a, b span) int { return int(math.Copysign(1, float64(a.lo-b.lo))) })
		for i := 1; i < len(spans); i++ {
			if spans[i-1].hi > spans[i].lo {
				t.Fatalf("%s: bags overlap in x1: [%v, %v] and [%v, %v]", r.Setting.ID, spans[i-1].lo, spans[i-1].hi, spans[i].lo, spans[i].hi)
			}
		}
	case llp.RuleKey:
		keys := s.train.Key("group")
		for b, rows := range byBag {
			for _, row := range rows {
				if keys[row] != keys[rows[0]] {
					t.Fatalf("%s: bag %d mixes groups %d and %d", r.Setting.ID, b, keys[rows[0]], keys[row])
				}
			}
		}
	default:
		return
	}
	if md, _ := data.ReadMetadata(filepath.Join(out, "releases", r.Setting.ID, fmt.Sprintf("trial-%d.arrow", r.Trial))); md["bag_rule"] != r.Setting.Bags.String() {
		t.Fatalf("%s: release bag_rule %q", r.Setting.ID, md["bag_rule"])
	}
}
