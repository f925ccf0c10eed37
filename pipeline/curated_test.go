package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/llp"
	"labelprivacy/pets"
	"labelprivacy/report"
)

func rule(t *testing.T, s string) llp.Rule {
	t.Helper()
	r, err := llp.ParseRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// curatedConfig is testConfig with rr_prior, rr and LLP settings on random,
// sorted and key-curated bags (synthetic data with 5 key groups).
func curatedConfig(t *testing.T, out string) *config.Config {
	c := testConfig(out)
	c.Data.Synth.Groups = 5
	c.Train.BatchSize, c.Train.Trials, c.Train.LearningRates = 70, 2, []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RRPrior, Epsilon: []float64{1}, StageFraction: new(0.25)},
		{Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLP, K: []int{4}, Bags: []llp.Rule{{}, rule(t, "sorted:x1")}},
		{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{2}, Bags: []llp.Rule{rule(t, "key:group")}}}
	c.Audit.Eta = config.EtaTrue
	return c
}

func sigmoid32(x float32) float64 { return float64(float32(1 / (1 + math.Exp(-float64(x))))) }

// TestRRPriorReleasesAndAudit: the ledger charges ε per row once per
// (setting, trial) (rows = every training row); a rerun reuses the
// releases; a missing test-prior file or a changed prior recipe makes the
// release again (a new ledger row: over-counting, the safe direction).
// The audit of rr_prior gives |MA| = 0 exactly to examples whose public
// prior is confident and ε to the others; curated audits bag examples by
// the rule. Run records and summary rows carry the bags column.
func TestRRPriorReleasesAndAudit(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	c := curatedConfig(t, out)
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	runs, err := Fit(context.Background(), s, FitOptions{executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	rows := func() []ledger.Row {
		e, err := ledger.Read(s.ledgerPath())
		if err != nil {
			t.Fatal(err)
		}
		var out []ledger.Row
		for _, x := range e {
			if x.Mechanism == pets.RRPrior {
				out = append(out, x)
			}
		}
		return out
	}
	l := rows()
	if len(l) != 2 {
		t.Fatalf("%d rr_prior ledger rows, want 2", len(l))
	}
	for _, e := range l {
		if e.Rows != s.train.Rows || e.Epsilon != 1 {
			t.Fatalf("ledger row: %d rows ε %v; want %d rows ε 1", e.Rows, e.Epsilon, s.train.Rows)
		}
	}
	for _, r := range runs {
		want := map[pets.Kind]string{pets.LLP: "random", pets.LLPGeom: "key:group"}[r.Pet]
		if strings.Contains(r.Setting, "sorted") {
			want = "sorted:x1"
		}
		if r.Bags != want {
			t.Fatalf("run %s: bags %q, want %q", r.Setting, r.Bags, want)
		}
	}
	// Audit.
	audited, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	audits, post := audited.Audits, audited.Posteriors
	checkCuratedAudit(t, s, audits, post)
	s.Close()

	// A rerun reuses everything; a lost test-prior file remakes its release.
	s2 := openTest(t, c)
	if err := s2.makeReleases(context.Background(), s2.runs, &fakeExec{t: t}); err != nil {
		t.Fatal(err)
	}
	if n := len(rows()); n != 2 {
		t.Fatalf("a rerun wrote %d rr_prior ledger rows, want 2", n)
	}
	set := s2.runs[0].Setting
	for _, r := range s2.runs {
		if r.Setting.Kind == pets.RRPrior {
			set = r.Setting
		}
	}
	if err := os.Remove(testPriorPath(releasePath(out, set, 1))); err != nil {
		t.Fatal(err)
	}
	if err := s2.makeReleases(context.Background(), s2.runs, &fakeExec{t: t}); err != nil {
		t.Fatal(err)
	}
	if n := len(rows()); n != 3 {
		t.Fatalf("after losing a test-prior file: %d rr_prior ledger rows, want 3", n)
	}
	s2.Close()
	c.Train.Epochs = 2 // the prior model's recipe changes: both releases are made again
	s3 := openTest(t, c)
	if err := s3.makeReleases(context.Background(), s3.runs, &fakeExec{t: t}); err != nil {
		t.Fatal(err)
	}
	if n := len(rows()); n != 5 {
		t.Fatalf("after a recipe change: %d rr_prior ledger rows, want 5", n)
	}
}

func checkCuratedAudit(t *testing.T, s *Session, audits []report.Audit, post []report.Posterior) {
	t.Helper()
	var rrp, rr *report.Audit
	for i := range audits {
		switch audits[i].Pet {
		case pets.RRPrior:
			rrp = &audits[i]
		case pets.RR:
			rr = &audits[i]
		}
	}
	if rrp == nil || rr == nil {
		t.Fatal("no rr_prior or rr audit")
	}
	if !(rrp.EAdv <= rr.EAdv+1e-12) || rrp.MAMax != rr.MAMax {
		t.Errorf("rr_prior EAdv %v (|MA| max %v) vs rr %v (%v): rr_prior's RR branch can only remove advantage", rrp.EAdv, rrp.MAMax, rr.EAdv, rr.MAMax)
	}
	var set *setting
	for _, st := range s.settings {
		if st.Kind == pets.RRPrior {
			set = st
		}
	}
	priors, err := s.auditPriors(set, min(s.cfg.Audit.Examples, s.test.Rows))
	if err != nil {
		t.Fatal(err)
	}
	zero, stage1 := 0, 0
	for _, p := range priors {
		if p == 0.5 {
			stage1++
		}
	}
	if want := s.cfg.Audit.Examples / 4; stage1 != want { // stage_fraction 0.25
		t.Errorf("%d audit examples in stage 1, want %d", stage1, want)
	}
	for i, p := range priors {
		if p != 0.5 && p != sigmoid32(s.test.X[i*s.test.Dim()]) {
			t.Fatalf("audit example %d: prior %v is neither ½ nor the prior model's prediction", i, p)
		}
	}
	byBag := map[string]map[int][]int{}
	for _, p := range post {
		switch {
		case p.Pet == pets.RRPrior:
			_, am := binaryBranch(set.Mech, priors[p.Index])
			if am != (p.AbsMA == 0) {
				t.Fatalf("audit example %d: prior %v argmax %v but |MA| %v", p.Index, priors[p.Index], am, p.AbsMA)
			}
			if am {
				zero++
				if p.IEAdv != 0 || p.Sample.Posterior != p.Prior {
					t.Fatalf("argmax example %d: IEAdv %v posterior %v prior %v", p.Index, p.IEAdv, p.Sample.Posterior, p.Prior)
				}
			}
		case p.Pet.IsLLP() && !strings.HasSuffix(p.Setting, "_k4"):
			if byBag[p.Setting] == nil {
				byBag[p.Setting] = map[int][]int{}
			}
			byBag[p.Setting][p.Bag] = append(byBag[p.Setting][p.Bag], p.Index)
		}
	}
	if zero == 0 {
		t.Error("no audit example took the argmax branch")
	}
	keys, d := s.test.Key("group"), s.test.Dim()
	for setting, bags := range byBag {
		for b, idx := range bags {
			for _, i := range idx {
				if strings.Contains(setting, "key-group") && keys[i] != keys[idx[0]] {
					t.Fatalf("%s: audit bag %d mixes groups", setting, b)
				}
			}
			if strings.Contains(setting, "sorted-x1") {
				for b2, idx2 := range bags {
					if b2 <= b {
						continue
					}
					if overlap(s.test.X, d, idx, idx2) {
						t.Fatalf("%s: audit bags %d and %d overlap in x1", setting, b, b2)
					}
				}
			}
		}
	}
	if len(byBag) != 2 {
		t.Fatalf("curated audits of %d settings, want 2", len(byBag))
	}
}

// overlap reports whether two bags' x1 ranges overlap (ties aside).
func overlap(x []float32, d int, a, b []int) bool {
	rng := func(idx []int) (lo, hi float32) {
		lo, hi = float32(math.Inf(1)), float32(math.Inf(-1))
		for _, i := range idx {
			lo, hi = min(lo, x[i*d+1]), max(hi, x[i*d+1])
		}
		return
	}
	alo, ahi := rng(a)
	blo, bhi := rng(b)
	return alo < bhi && blo < ahi
}

// A dataset that cannot support a bag rule is refused at Open, before any
// release, naming the key and the column (config.Validate cannot know a
// dataset directory's columns).
func TestCuratedBagsCheckedAtOpen(t *testing.T) {
	// A dataset directory without the key column: refused at Open.
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthLogistic, Rows: 300, TestRows: 100, Features: 3, Seed: 1, Out: dir}); err != nil {
		t.Fatal(err)
	}
	c := testConfig(filepath.Join(t.TempDir(), "out"))
	c.Data.Path = dir
	c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.LLP, K: []int{4}, Bags: []llp.Rule{{Kind: llp.RuleKey, Column: "campaign"}}})
	if err := c.Validate(); err != nil {
		t.Fatalf("Validate cannot know a dataset directory's columns: %v", err)
	}
	_, err := Open(context.Background(), c, Exclusive, nil)
	var fe *config.FieldError
	if !errors.As(err, &fe) || fe.Key != "pets[4].bags[0]" || !strings.Contains(fe.Msg, `"campaign"`) || !strings.Contains(fe.Msg, dir) {
		t.Fatalf("Open: %v, want a config.FieldError for pets[4].bags[0] naming campaign and the dataset", err)
	}
	if _, err := os.Stat(filepath.Join(c.Output, "releases")); !os.IsNotExist(err) {
		t.Fatal("a release was made before the bag rule was refused")
	}
}

// Setting ids say the bag rule and rr_prior's non-default parameters;
// the paper's settings keep their ids.
func TestCuratedSettingIDs(t *testing.T) {
	st, err := expandSettings([]config.PetConfig{
		{Mechanism: pets.LLP, K: []int{8}, Bags: []llp.Rule{{}, {Kind: llp.RuleSorted, Column: "x3"}, {Kind: llp.RuleKey, Column: "campaign"}}},
		{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}},
		{Mechanism: pets.RRPrior, Epsilon: []float64{0.5, 2}},
		{Mechanism: pets.RRPrior, Epsilon: []float64{1}, StageFraction: new(0.3), PriorLR: new(float64(0.01))},
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range st {
		ids = append(ids, s.ID)
	}
	want := []string{"llp_k8", "llp_k8_sorted-x3", "llp_k8_key-campaign", "llp_geom_k8_eps1", "rr_prior_eps0.5", "rr_prior_eps2", "rr_prior_eps1_s0.3_plr0.01"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	if st[4].StageFraction != config.DefaultStageFraction || st[4].Mech.Epsilon() != 0.5 {
		t.Fatalf("rr_prior setting %+v", st[4])
	}
}

// rr_prior and curated bags are checked against the production sampler
// like the paper's mechanisms: their realized attacks agree with the exact
// EAdv (true η), and a sampler at 4ε fails the audit of each.
func TestCuratedAndRRPriorSelfChecks(t *testing.T) {
	c := curatedConfig(t, filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Audit.Examples, c.Audit.CalibrationRows = 2000, 4000, 4000, 0
	c.Pets = []config.PetConfig{{Mechanism: pets.RRPrior, Epsilon: []float64{1}, StageFraction: new(0.25)},
		{Mechanism: pets.LLP, K: []int{4}, Bags: []llp.Rule{rule(t, "sorted:x1")}},
		{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{1}, Bags: []llp.Rule{rule(t, "sorted:x1"), rule(t, "key:group")}}}
	s, runs, audits := fitAndAudit(t, c)
	for _, a := range audits {
		// z < 4: a false failure in about 6e-5 per setting.
		t.Logf("%s: realized %v ± %v EAdv %v draws %d", a.Setting, a.RealizedGain, a.RealizedGainSE, a.EAdv, a.RealizedDraws)
		if z := (a.RealizedGain - a.EAdv) / math.Hypot(a.RealizedGainSE, a.EAdvSE); !(math.Abs(z) < 4) || a.RealizedDraws == 0 {
			t.Errorf("%s: realized %v ± %v vs EAdv %v ± %v (z %v)", a.Setting, a.RealizedGain, a.RealizedGainSE, a.EAdv, a.EAdvSE, z)
		}
	}
	s.newSampler = func(part llp.Partitioner, prior []float64) audit.Sampler {
		return scaledSampler{releaseSampler{keepRemainder: s.cfg.Privacy.KeepRemainder, partition: part, prior: prior}, 4}
	}
	all := s.settings
	for _, set := range all {
		if !set.Kind.NeedsEpsilon() {
			continue
		}
		s.settings = []*setting{set}
		if _, err := Audit(context.Background(), s, runs); !errors.Is(err, audit.ErrReleaseMismatch) {
			t.Errorf("%s at 4ε: err = %v, want the releases to disagree with the stated likelihood", set.ID, err)
		}
	}
	s.settings = all
}

// The audit's side figures (E[adv] under the recalibrated η̂, over the
// clean trials' η̂) use the setting's own bags and priors: with the fake
// model every trial predicts the same η̂, so the trial range is exactly
// EAdv. (rr_prior's used to fail for lack of priors, and curated bags were
// re-partitioned at random.)
func TestAuditSideFiguresUseTheSettingsBags(t *testing.T) {
	c := curatedConfig(t, filepath.Join(t.TempDir(), "out"))
	c.Data.Synth.TestRows, c.Audit.Examples, c.Audit.CalibrationRows = 600, 300, 300
	c.Audit.Eta, c.Audit.RealizedDraws = config.EtaCleanModel, 0
	_, _, audits := fitAndAudit(t, c)
	for _, a := range audits {
		if a.Pet == pets.None || a.Pet == pets.Bot {
			continue
		}
		if a.EtaTrials != 2 || a.EAdvTrialMin != a.EAdv || a.EAdvTrialMax != a.EAdv || math.IsNaN(a.EAdvCalibrated) {
			t.Errorf("%s: EAdv %v, over %d trials [%v, %v], calibrated %v", a.Setting, a.EAdv, a.EtaTrials, a.EAdvTrialMin, a.EAdvTrialMax, a.EAdvCalibrated)
		}
	}
}

// fitAndAudit opens c, fits it with the fake model and audits it.
func fitAndAudit(t *testing.T, c *config.Config) (*Session, []report.Run, []report.Audit) {
	t.Helper()
	s, _ := openRec(t, c)
	runs, err := Fit(context.Background(), s, FitOptions{executor: &fakeExec{t: t}})
	if err != nil {
		t.Fatal(err)
	}
	audited, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	audits := audited.Audits
	return s, runs, audits
}

// bags: key:<col> with every group smaller than k (leftovers dropped) is
// refused at Open, naming the rule, k and the largest group, before
// anything is written: no ledger, no key file, no release, no resolved
// config (it once failed at release time and left the ledger's key behind).
// Too few audit examples per group are refused the same way; with
// privacy.keep_remainder the groups' rows form smaller bags and Open passes.
func TestKeyBagsSmallerThanKRefusedAtOpen(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		rows, test, examples int
		msg                  string
	}{
		{"training rows", 300, 2000, 2000, "training rows"},
		{"audit examples", 4000, 2000, 40, "audit examples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			c := testConfig(out)
			c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Data.Synth.Groups = tc.rows, tc.test, 40
			c.Audit.Examples = tc.examples
			c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: pets.LLP, K: []int{4, 16}, Bags: []llp.Rule{{}, rule(t, "key:group")}}}
			_, err := Open(context.Background(), c, Exclusive, nil)
			var fe *config.FieldError
			if !errors.As(err, &fe) || fe.Key != "pets[1].bags[1]" {
				t.Fatalf("Open: %v, want a config.FieldError for pets[1].bags[1]", err)
			}
			for _, w := range []string{"key:group", "k = 16", "pets[1].k[1]", "the largest has", tc.msg, "privacy.keep_remainder"} {
				if !strings.Contains(fe.Msg, w) {
					t.Errorf("message %q lacks %q", fe.Msg, w)
				}
			}
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				if n := e.Name(); n != "data" && !strings.HasPrefix(n, ".lock") {
					t.Errorf("the refused config left %s in its output", n)
				}
			}
			c.Privacy.KeepRemainder = true
			s, err := Open(context.Background(), c, Exclusive, nil)
			if err != nil {
				t.Fatalf("with keep_remainder: %v", err)
			}
			s.Close()
		})
	}
}
