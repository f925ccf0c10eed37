package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// classesConfig is testConfig on a synthetic dataset of c classes.
func classesConfig(out string, c int) *config.Config {
	cfg := testConfig(out)
	cfg.Data.Synth.Kind, cfg.Data.Synth.Classes = data.SynthMulticlass, c
	cfg.Train.BatchSize, cfg.Train.Trials, cfg.Train.LearningRates = 70, 2, []float64{0.01}
	cfg.Audit.Eta = config.EtaTrue
	return cfg
}

// TestPlanTargetsReachTrainerClasses is TestPlanTargetsReachTrainer and
// TestPlanRRPriorAndCuratedBags on labels of C = 4 classes, checked at the
// trainer through the fake executor: the dataset's classes reach the model
// (a softmax head of 4) and every batch (targets of width 4), each loss is
// its C-class member (ce, forward_ce or the configured correction with
// k-ary RR's flip probability 3/(e^ε+3), propmatch_ce), and every target
// vector of the first epoch is recomputed here from the release file and
// the clean labels: one-hot labels (none, rr), per-bag proportion vectors
// (1 − Σα, α_1, α_2, α_3) of alpha_c or alpha_debiased_c, and rr_prior's
// soft target vectors by train.rr_prior_targets (the RR-over-the-set
// estimate (1{z=c} − b)/(q − b) on sets of k ≥ 2, one-hot, nothing or the
// prior on sets of one). rr_prior's prior model trains on stage 1's
// one-hot released labels with the RR correction, and its predictions (4
// per row) are stage 2's priors and the test priors.
func TestPlanTargetsReachTrainerClasses(t *testing.T) {
	const c = 4
	kary := func(eps float64) float64 { return (c - 1) / (math.Exp(eps) + c - 1) }
	for _, tc := range []struct {
		name   string
		rrLoss model.Loss
		modes  config.PriorTargets
		rr     model.Loss
		flip   bool
	}{
		{"forward correction, argmax targets", model.LossDebiasedBCE, config.PriorTargetsArgmax, model.LossForwardCE, true},
		{"backward correction, drop", model.LossBackwardCE, config.PriorTargetsDrop, model.LossBackwardCE, true},
		{"uncorrected, prior", model.LossBCE, config.PriorTargetsPrior, model.LossCE, false},
		{"forward_ce named, noisy", model.LossForwardCE, config.PriorTargetsNoisy, model.LossForwardCE, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := classesConfig(out, c)
			cfg.Train.RRLoss, cfg.Train.RRPriorTargets = tc.rrLoss, tc.modes
			cfg.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{0.5}},
				{Mechanism: pets.LLP, K: []int{4}}, {Mechanism: pets.LLPLap, K: []int{8}, Epsilon: []float64{1}},
				{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}}, {Mechanism: pets.Bot},
				{Mechanism: pets.RRPrior, Epsilon: []float64{1}, StageFraction: new(0.25)}}
			s := openTest(t, cfg)
			if s.classes() != c {
				t.Fatalf("session of %d classes", s.classes())
			}
			ex := &fakeExec{t: t}
			if _, err := Fit(context.Background(), s, FitOptions{executor: ex}); err != nil {
				t.Fatal(err)
			}
			priorModels, trained := 0, 0
			for id, got := range ex.seen {
				if strings.HasPrefix(id, priorModelIDPrefix) {
					priorModels++
					checkPriorModelC(t, s, out, got, tc.rr, kary)
				}
			}
			if priorModels != 2 {
				t.Fatalf("%d prior models, want 2", priorModels)
			}
			for _, r := range s.runs {
				got := ex.seen[r.ID]
				if r.Setting.Kind == pets.Bot {
					if got != nil {
						t.Fatalf("%s: bot was trained", r.Name())
					}
					continue
				}
				if got == nil {
					t.Fatalf("%s: not trained", r.Name())
				}
				trained++
				if r.Setting.Mech.Classes() != c {
					t.Fatalf("%s: mechanism of %d classes", r.Name(), r.Setting.Mech.Classes())
				}
				var flip float64
				switch r.Setting.Kind {
				case pets.None:
					checkReceivedC(t, s, out, r, got, model.LossCE, data.ColLabel, 0)
				case pets.RR:
					if tc.flip {
						flip = kary(0.5)
					}
					checkReceivedC(t, s, out, r, got, tc.rr, data.ColLabelRR, flip)
				case pets.LLP, pets.LLPLap:
					checkReceivedC(t, s, out, r, got, model.LossPropMatchCE, data.ColAlphaPrefix, 0)
				case pets.LLPGeom:
					checkReceivedC(t, s, out, r, got, model.LossPropMatchCE, data.ColAlphaDebiasedPrefix, 0)
				case pets.RRPrior:
					checkSoftTargetsC(t, s, out, r, got, tc.modes)
				}
			}
			if trained != 12 {
				t.Fatalf("%d runs trained, want 12", trained)
			}
		})
	}
}

// checkReceivedC compares one run's batches with its recipe on C classes.
func checkReceivedC(t *testing.T, s *Session, out string, r *runSpec, got *received, loss model.Loss, column string, flip float64) {
	t.Helper()
	const c = 4
	name := r.Name()
	if got.loss != loss || math.Abs(got.params.FlipProb-flip) > 1e-15 {
		t.Fatalf("%s: loss %s flip %v, want %s %v", name, got.loss, got.params.FlipProb, loss, flip)
	}
	var rel *data.Frame
	relRow := map[int64]int{}
	if column != data.ColLabel {
		rel = readRel(t, out, r)
		for i, row := range rel.Row {
			relRow[row] = i
		}
	}
	want := func(row int32) []float64 {
		v := make([]float64, c)
		i := relRow[int64(row)]
		switch column {
		case data.ColLabel:
			v[s.train.Label[row]] = 1
		case data.ColLabelRR:
			v[rel.LabelRR[i]] = 1
		default:
			a := rel.AlphaC
			if column == data.ColAlphaDebiasedPrefix {
				a = rel.AlphaDebiasedC
			}
			v[0] = 1
			for j := 1; j < c; j++ {
				v[j] = a[i*(c-1)+j-1]
				v[0] -= v[j]
			}
		}
		return v
	}
	perBag := column == data.ColAlphaPrefix || column == data.ColAlphaDebiasedPrefix
	wantRows, bag := 70, 0
	if perBag {
		bag = r.Setting.K
		wantRows = 70 / bag * bag
	}
	seen := 0
	for bi, b := range got.batches {
		if b.Rows != wantRows || b.BagSize != bag || b.TargetWidth != c {
			t.Fatalf("%s: batch %d: %d rows in bags of %d, width %d", name, bi, b.Rows, b.BagSize, b.TargetWidth)
		}
		units := b.Rows
		if perBag {
			units = b.Rows / bag
		}
		for u := range units {
			row := b.RowIDs[u*max(bag, 1)]
			if perBag {
				for _, m := range b.RowIDs[u*bag : (u+1)*bag] {
					if rel.BagID[relRow[int64(m)]] != rel.BagID[relRow[int64(row)]] {
						t.Fatalf("%s: batch %d bag %d mixes release bags", name, bi, u)
					}
				}
			}
			for j, w := range want(row) {
				if g := b.Target[u*c+j]; g != float32(w) {
					t.Fatalf("%s: batch %d unit %d (row %d) class %d: target %v, want %s = %v", name, bi, u, row, j, g, column, w)
				}
			}
		}
		seen += b.Rows
	}
	n := s.train.Rows
	if rel != nil {
		n = rel.Rows - rel.Rows%max(bag, 1)
	}
	if seen != n/wantRows*wantRows {
		t.Fatalf("%s: one epoch trained %d rows, want %d", name, seen, n/wantRows*wantRows)
	}
}

// checkPriorModelC: the C-class prior model trains on stage-1 rows only,
// on their one-hot released classes, with the configured RR correction and
// k-ary RR's flip probability; stage 2's priors and the test priors are
// its predictions (renormalized in float64), and each stage-2 row went
// through the channel its prior chooses (RRWithPrior's set).
func checkPriorModelC(t *testing.T, s *Session, out string, got *received, loss model.Loss, kary func(float64) float64) {
	t.Helper()
	const c = 4
	r := got.run
	wantFlip := 0.0
	if loss != model.LossCE {
		wantFlip = kary(r.Setting.Epsilon)
	}
	if got.loss != loss || math.Abs(got.params.FlipProb-wantFlip) > 1e-15 {
		t.Fatalf("prior model: loss %s flip %v, want %s %v", got.loss, got.params.FlipProb, loss, wantFlip)
	}
	var rel *data.Frame
	for trial := range s.cfg.Train.Trials {
		if deriveSeed(releaseSeed(s.cfg.Seed, r.Setting, trial), "prior-init") == r.Plan.InitSeed {
			var err error
			if rel, err = data.ReadFrame(releasePath(out, r.Setting, trial)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rel == nil || rel.NumClasses() != c {
		t.Fatal("prior model of no trial's 4-class release")
	}
	for _, b := range got.batches {
		for j, row := range b.RowIDs {
			if rel.Stage[row] != 1 {
				t.Fatalf("prior model trained on row %d of stage %d", row, rel.Stage[row])
			}
			for k := range c {
				if w := float32(b2f(int(rel.LabelRR[row]) == k)); b.Target[j*c+k] != w {
					t.Fatalf("prior model: row %d class %d target %v, released %d", row, k, b.Target[j*c+k], rel.LabelRR[row])
				}
			}
		}
	}
	d := s.train.Dim()
	ex := r.Setting.Mech.ExampleLaw()
	singles := 0
	for i := range rel.Rows {
		p := rel.PriorC[i*c : (i+1)*c]
		want := fakeProbsC(s.train.X[i*d], c)
		if rel.Stage[i] == 1 {
			want = []float32{0.25, 0.25, 0.25, 0.25}
		}
		for k := range c {
			if math.Abs(p[k]-float64(want[k])) > 1e-6 {
				t.Fatalf("row %d (stage %d): prior %v, the model predicted %v", i, rel.Stage[i], p, want)
			}
		}
		ch := ex.Channel(ex.ChannelOf(p))
		set := ch.Support()
		if rel.PriorSet[i] != set || int(rel.PriorSetSize[i]) != bits.OnesCount64(set) || set>>rel.LabelRR[i]&1 == 0 {
			t.Fatalf("row %d: set %b (%d) released %d, its channel releases %b", i, rel.PriorSet[i], rel.PriorSetSize[i], rel.LabelRR[i], set)
		}
		if bits.OnesCount64(set) == 1 {
			singles++
		}
	}
	if singles == 0 {
		t.Fatal("no row had a set of one: the case does not test the argmax branch")
	}
	test, err := s.testPriors(r.Setting, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.test.Rows {
		for k, w := range fakeProbsC(s.test.X[i*d], c) {
			if math.Abs(test[i*c+k]-float64(w)) > 1e-6 {
				t.Fatalf("test prior %d: %v, want %v", i, test[i*c:(i+1)*c], fakeProbsC(s.test.X[i*d], c))
			}
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// checkSoftTargetsC recomputes an rr_prior run's target vectors from its
// release with the definitions of softTargetsC, q and b from ε here.
func checkSoftTargetsC(t *testing.T, s *Session, out string, r *runSpec, got *received, mode config.PriorTargets) {
	t.Helper()
	const c = 4
	rel := readRel(t, out, r)
	if got.loss != model.LossCE || got.params.FlipProb != 0 {
		t.Fatalf("%s: loss %s params %+v", r.Name(), got.loss, got.params)
	}
	e := math.Exp(r.Setting.Epsilon)
	trained, kept := 0, 0
	for i := range rel.Rows {
		if rel.PriorSetSize[i] > 1 {
			kept++
		}
	}
	for _, b := range got.batches {
		for j, row := range b.RowIDs {
			z, k := int(rel.LabelRR[row]), int(rel.PriorSetSize[row])
			want := make([]float64, c)
			switch {
			case mode == config.PriorTargetsNoisy:
				want[z] = 1
			case k >= 2:
				q, bb := e/(e+float64(k-1)), 1/(e+float64(k-1))
				for y := range c {
					if rel.PriorSet[row]>>y&1 == 1 {
						want[y] = (b2f(y == z) - bb) / (q - bb)
					}
				}
			case mode == config.PriorTargetsDrop:
				t.Fatalf("%s: row %d with a set of one trained under drop", r.Name(), row)
			case mode == config.PriorTargetsPrior:
				copy(want, rel.PriorC[int(row)*c:(int(row)+1)*c])
			default:
				want[z] = 1
			}
			var sum float64
			for y := range c {
				sum += want[y]
				if g := b.Target[j*c+y]; math.Abs(float64(g)-want[y]) > 1e-6*max(1, math.Abs(want[y])) {
					t.Fatalf("%s (%s): row %d (set %b, z %d) class %d: target %v, want %v", r.Name(), mode, row, rel.PriorSet[row], z, y, g, want[y])
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("%s: row %d: the target vector sums to %v", r.Name(), row, sum)
			}
			trained++
		}
	}
	wantRows := s.train.Rows
	if mode == config.PriorTargetsDrop {
		wantRows = kept
	}
	if trained != wantRows/70*70 {
		t.Fatalf("%s: one epoch trained %d rows, want %d", r.Name(), trained, wantRows/70*70)
	}
}

// TestClassesRefused: a mechanism, loss or model that does not take the
// dataset's classes, or a class count out of range, is one error naming
// the key (or the file), given before anything is written (no resolved
// config, no release, no ledger).
func TestClassesRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		edit func(*config.Config)
	}{
		{"easyllp on 4 classes", "train.llp_loss", func(c *config.Config) {
			c.Train.LLPLoss = model.LossEasyLLP
			c.Pets = []config.PetConfig{{Mechanism: pets.LLP, K: []int{4}}}
		}},
		{"forward_ce on binary labels", "train.rr_loss", func(c *config.Config) {
			c.Data.Synth.Kind, c.Data.Synth.Classes = data.SynthLogistic, 0
			c.Train.RRLoss = model.LossForwardCE
			c.Pets = []config.PetConfig{{Mechanism: pets.RR, Epsilon: []float64{1}}}
		}},
		{"65 classes", "data.synth.classes", func(c *config.Config) { c.Data.Synth.Classes = 65 }},
		{"classes on a binary kind", "data.synth.classes", func(c *config.Config) { c.Data.Synth.Kind = data.SynthLogistic }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			cfg := classesConfig(out, 4)
			tc.edit(cfg)
			_, err := Open(context.Background(), cfg, Exclusive, nil)
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Key != tc.key {
				t.Fatalf("err = %v, want one naming %s", err, tc.key)
			}
			for _, f := range []string{"config.resolved.yaml", "releases", "privacy_ledger.csv"} {
				if _, err := os.Stat(filepath.Join(out, f)); err == nil {
					t.Errorf("%s written before the refusal", f)
				}
			}
		})
	}
}

// A binary-only mechanism (a kind registered from outside, without a
// C-class law) on a dataset of C ≥ 3 classes is refused naming its pets
// entry and "classes".
func TestBinaryOnlyMechanismRefused(t *testing.T) {
	k := binaryOnlyKind(t)
	cfg := classesConfig(filepath.Join(t.TempDir(), "out"), 3)
	cfg.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: k, Epsilon: []float64{1}}}
	_, err := Open(context.Background(), cfg, Exclusive, nil)
	if err == nil || !strings.Contains(err.Error(), "pets[1]") || !strings.Contains(err.Error(), "classes") ||
		!errors.Is(err, config.ErrConfig) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Output, "config.resolved.yaml")); err == nil {
		t.Error("config.resolved.yaml written before the refusal")
	}
}

var binaryOnly pets.Kind

// binaryOnlyKind registers (once per process) rr's scheme under another
// name without a C-class law.
func binaryOnlyKind(t *testing.T) pets.Kind {
	t.Helper()
	if binaryOnly == 0 {
		sp := pets.RR.Spec()
		sp.Name, sp.Takes.Classes, sp.Look.Family = "rr_binary_only", false, ""
		k, err := pets.Register(schemeOf{sp, pets.RR.Scheme()})
		if err != nil {
			t.Fatal(err)
		}
		binaryOnly = k
	}
	return binaryOnly
}

// schemeOf is a scheme with a given spec and another scheme's law.
type schemeOf struct {
	sp  pets.Spec
	law pets.Scheme
}

func (s schemeOf) Spec() pets.Spec                     { return s.sp }
func (s schemeOf) Law(p pets.Params) (pets.Law, error) { return s.law.Law(p) }
func (s schemeOf) String() string                      { return fmt.Sprint(s.sp.Name) }
