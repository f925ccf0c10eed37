package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/release"
)

// A mechanism is one value: a kind registered here, in a test file, and
// nowhere else goes through config, release, training plan, audit and
// report without a line of another package knowing it.
//
// coin releases one label per row: z = 1 with probability ½ if y = 1 and
// e^{−ε}/2 if y = 0. The likelihood ratios are e^ε (z = 1) and
// (1 − e^{−ε}/2)/(1/2)·… ∈ [e^{−ε}, 1] (z = 0), so it is ε-label-DP, and
// unlike rr it is asymmetric: the audit has no closed form for it and uses
// the channel. The model trains with plain BCE on the released labels.
type coinScheme struct{}

func (coinScheme) Spec() pets.Spec {
	return pets.Spec{Name: "coin", Takes: pets.Takes{Epsilon: true}, Privacy: pets.DPRR, Release: pets.ReleaseLabels,
		Train: pets.Train{Loss: pets.LossBCE, Target: pets.TargetLabelRR},
		Look:  pets.Look{Name: "Coin", Color: pets.RGB{R: 0xd6, G: 0x27, B: 0x28}, Marker: pets.MarkerCross}}
}

func (coinScheme) Law(p pets.Params) (pets.Law, error) {
	q := math.Exp(-p.Epsilon) / 2 // P(z = 1 | y = 0)
	return coinLaw{p1: [2]float64{q, 0.5}, ch: pets.Channel{C: 2, Z: 2, P: []float64{1 - q, 0.5, q, 0.5}}}, nil
}

type coinLaw struct {
	p1 [2]float64 // P(z = 1 | y)
	ch pets.Channel
}

func (coinLaw) Classes() int                  { return 2 }
func (l coinLaw) Channel(uint64) pets.Channel { return l.ch }
func (coinLaw) ChannelOf([]float64) uint64    { return 0 }
func (l coinLaw) prob1(y uint8) float64       { return l.p1[y] }
func uniform53(r pets.Rand) float64           { return float64(r.Uint64()>>11) * 0x1p-53 }
func (l coinLaw) release1(y uint8, r pets.Rand) uint8 {
	if uniform53(r) < l.prob1(y) {
		return 1
	}
	return 0
}

func (l coinLaw) Release(dst, labels []uint8, _ []float64, r pets.Rand) {
	for i, y := range labels {
		dst[i] = l.release1(y, r)
	}
}

// coinKind is registered once per test binary.
var coinKind = func() pets.Kind {
	k, err := pets.Register(coinScheme{})
	if err != nil {
		panic(err)
	}
	return k
}()

func TestThrowawayMechanism(t *testing.T) {
	const eps = 1.0
	m, err := pets.New(pets.Params{Kind: coinKind, Epsilon: eps})
	if err != nil {
		t.Fatal(err)
	}
	if k, err := pets.ParseKind("coin"); err != nil || k != coinKind {
		t.Fatalf("ParseKind(coin) = %v, %v", k, err)
	}

	// Release: one label per row, in the law the channel states (each
	// frequency within 6 binomial SE: false failure < 1e-8).
	n := 200_000
	labels := make([]uint8, n)
	for i := range labels {
		labels[i] = uint8(i % 2)
	}
	rel, err := release.Apply(labels, m, release.Options{Noise: pets.NoiseSimulation, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	f := rel.Simulation()
	if f.LabelRR == nil || f.Alpha != nil || rel.Meta()["mechanism"] != "coin" || rel.Meta()["epsilon"] != "1" {
		t.Fatalf("release columns or metadata wrong: %v", rel.Meta())
	}
	var ones [2]int
	for i, z := range f.LabelRR {
		ones[labels[f.Row[i]]] += int(z)
	}
	for y, want := range []float64{math.Exp(-eps) / 2, 0.5} {
		got := float64(ones[y]) / float64(n/2)
		if se := math.Sqrt(want * (1 - want) / float64(n/2)); math.Abs(got-want) > 6*se {
			t.Errorf("P(z=1 | y=%d) = %.4f, want %.4f ± %.4f", y, got, want, 6*se)
		}
	}

	// Config, plan and trainer: plain BCE on label_rr, read from the
	// release on disk.
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	c.Train.BatchSize, c.Train.Trials = 70, 2 // checkReceived's batch
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: coinKind, Epsilon: []float64{eps}}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries = config.EtaTrue, 150, 20, 500
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, c)
	ex := &fakeExec{t: t}
	runs, err := Fit(context.Background(), s, FitOptions{executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	coinRuns := 0
	for _, r := range s.runs {
		if r.Setting.Kind == coinKind {
			coinRuns++
			checkReceived(t, s, out, r, ex.seen[r.ID], model.LossBCE, data.ColLabelRR, nil, false)
		}
	}
	if coinRuns != c.Train.Trials*len(c.Train.LearningRates) {
		t.Fatalf("%d coin runs trained", coinRuns)
	}

	// Audit: the exact EAdv against brute force over (y, z), and the
	// production sampler's releases pass the likelihood, attack and ε
	// checks.
	audited, err := Audit(context.Background(), s, runs)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, a := range audited.Audits {
		if a.Pet != coinKind {
			continue
		}
		found = true
		ch := m.ExampleLaw().Channel(0)
		brute := 0.0
		for _, e := range s.test.Eta[:a.NExamples] {
			bayes := 0.0
			for z := range uint8(2) {
				bayes += max(e*ch.Prob(z, 1), (1-e)*ch.Prob(z, 0))
			}
			brute += bayes - max(e, 1-e)
		}
		brute /= float64(a.NExamples)
		if math.Abs(a.EAdv-brute) > 1e-12 || !(a.EAdv > 0) {
			t.Errorf("EAdv %v, brute force %v", a.EAdv, brute)
		}
		if math.Abs(a.MAMax-eps) > 1e-12 {
			t.Errorf("|MA| max %v, want ε = %v (the ratio of z = 1)", a.MAMax, eps)
		}
		if !(a.EAdv <= a.EAdvBound) || a.RealizedDraws != 20 || math.IsNaN(a.RealizedGain) || a.Canaries == 0 || math.IsNaN(a.EpsLower) {
			t.Errorf("audit figures: %+v", a.Summary)
		}
	}
	if !found {
		t.Fatal("no audit of the coin setting")
	}

	// Report: tables and figures name it by its Look.
	if _, err := Report(s, runs, audited); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| Coin |") || !strings.Contains(string(md), "coin_eps1") {
		t.Errorf("report.md does not show the coin setting by its display name")
	}
	if _, err := os.Stat(filepath.Join(out, "figures", "auc_vs_eadv.png")); err != nil {
		t.Errorf("no AUC-vs-advantage figure: %v", err)
	}
}

// Every registered kind (coin included) has a training plan whose target
// column the data layer reads, and trains exactly when its spec says.
func TestPlanForEveryKind(t *testing.T) {
	c := testConfig(t.TempDir())
	for _, k := range pets.Kinds() {
		sp := k.Spec()
		if k.OfValues() {
			continue // TestPlanForEveryValueKind
		}
		p := pets.PrivacyParams(k, 0, 1) // every parameter a kind takes set (ara_event's source, ara_summary's split)
		if sp.Takes.K {
			p.K = 4
		}
		m, err := pets.New(p)
		if err != nil {
			t.Fatal(err)
		}
		s := &setting{Setting: config.Setting{Params: p}, Mech: m}
		s.ID = s.Setting.ID()
		plan, err := planFor(c, s, 0, 1, 600, stageRun)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if int(sp.Train.Target) >= len(dataTargets) || plan.Target.String() != map[pets.Target]string{
			pets.TargetNone: "none", pets.TargetLabel: data.ColLabel, pets.TargetLabelRR: data.ColLabelRR,
			pets.TargetAlpha: data.ColAlpha, pets.TargetAlphaDebiased: data.ColAlphaDebiased, pets.TargetSoft: data.ColSoftTarget,
		}[sp.Train.Target] {
			t.Fatalf("%s: target %v for %v", k, plan.Target, sp.Train.Target)
		}
		if (plan.Loss != 0) != s.Trains() || (plan.Release != "") != s.Releases() || plan.Loss.PerBag() != sp.Train.Loss.PerBag() {
			t.Fatalf("%s: plan %+v for %+v", k, plan, sp.Train)
		}
	}
}
