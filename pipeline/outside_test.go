package pipeline

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/config"
	"labelprivacy/data"
	"labelprivacy/ledger"
	"labelprivacy/model"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// The kinds of outside_kinds_test.go through the whole program, on binary
// labels and on 10 classes: release (the law's frequencies, the columns),
// plan and training (every target at the trainer recomputed here from the
// release by the kind's own definition, and the prior model's), the exact
// audit against brute force, the realized attack and the canaries, the
// ledger (rows and histories by name) and the report.

// outsideRun is one run of the pipeline on a kind: fit (fake executor),
// audit and report.
type outsideRun struct {
	s       *Session
	out     string
	set     *setting
	ex      *fakeExec
	audit   report.Audit
	classes int
}

const outsideEps = 1.0

func runOutside(t *testing.T, kind pets.Kind, classes int) *outsideRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	c := testConfig(out)
	if classes >= 3 {
		c = classesConfig(out, classes)
	}
	c.Train.BatchSize, c.Train.Trials, c.Train.LearningRates = 70, 1, []float64{0.01}
	c.Pets = []config.PetConfig{{Mechanism: pets.None}, {Mechanism: kind, Epsilon: []float64{outsideEps}}}
	c.Audit.Eta, c.Audit.Examples, c.Audit.RealizedDraws, c.Audit.Canaries, c.Audit.CalibrationRows = config.EtaTrue, 150, 5, 300, 0
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	o := &outsideRun{s: openTest(t, c), out: out, ex: &fakeExec{t: t}, classes: max(classes, 2)}
	for _, set := range o.s.settings {
		if set.Kind == kind {
			o.set = set
		}
	}
	runs, err := Fit(context.Background(), o.s, FitOptions{executor: o.ex})
	if err != nil {
		t.Fatal(err)
	}
	audited, err := Audit(context.Background(), o.s, runs)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range audited.Audits {
		if a.Pet == kind {
			o.audit = a
		}
	}
	if _, err := Report(o.s, runs, audited); err != nil {
		t.Fatal(err)
	}
	return o
}

// release reads the setting's trial-0 release.
func (o *outsideRun) release(t *testing.T) *data.Frame {
	t.Helper()
	f, err := data.ReadFrame(releasePath(o.out, o.set, 0))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// trained returns what the trainer of the setting's run (prior: of its
// prior model) received.
func (o *outsideRun) trained(t *testing.T, prior bool) *received {
	t.Helper()
	for _, rec := range o.ex.seen {
		if rec.run.Setting == o.set && strings.HasPrefix(rec.run.ID, priorModelIDPrefix) == prior {
			return rec
		}
	}
	t.Fatalf("%s: no run (prior model: %v) reached the trainer", o.set.ID, prior)
	return nil
}

// checkTargets checks every target of the first epoch of rec against
// want(release row, dataset row) (C values; binary targets are class 1's),
// to float32 rounding, and that the loss is BCE (ce on C classes) or loss.
func (o *outsideRun) checkTargets(t *testing.T, rec *received, loss model.Loss, rel *data.Frame, want func(i int) []float64) {
	t.Helper()
	if rec.loss != loss {
		t.Fatalf("%s: trained with %s, want %s", rec.run.Name(), rec.loss, loss)
	}
	at := map[int64]int{}
	for i, row := range rel.Row {
		at[row] = i
	}
	c, seen := o.classes, 0
	for _, b := range rec.batches {
		for j, row := range b.RowIDs {
			i, ok := at[int64(row)]
			if !ok {
				t.Fatalf("%s: trained on row %d, which the release does not hold", rec.run.Name(), row)
			}
			w := want(i)
			if c == 2 {
				w = w[1:]
			}
			for k, v := range w {
				if got := b.Target[j*len(w)+k]; math.Abs(float64(got)-v) > 1e-6*max(1, math.Abs(v)) {
					t.Fatalf("%s: row %d target %d is %v, want %v", rec.run.Name(), row, k, got, v)
				}
			}
			seen++
		}
	}
	if seen == 0 {
		t.Fatalf("%s: no target checked", rec.run.Name())
	}
}

// priorRow is release row i's prior over the classes.
func (o *outsideRun) priorRow(rel *data.Frame, i int) []float64 {
	if o.classes >= 3 {
		return rel.PriorC[i*o.classes : (i+1)*o.classes]
	}
	return []float64{1 - rel.Prior[i], rel.Prior[i]}
}

// channelOf is the kind's channel for a prior (its own law, as the test
// file defines it).
func (o *outsideRun) channelOf(prior []float64) pets.Channel {
	ex := o.set.Mech.ExampleLaw()
	return ex.Channel(ex.ChannelOf(prior))
}

// etaRow is audit example i's true η over the classes.
func (o *outsideRun) etaRow(i int) []float64 {
	if o.classes >= 3 {
		return o.s.test.EtaC[i*o.classes : (i+1)*o.classes]
	}
	return []float64{1 - o.s.test.Eta[i], o.s.test.Eta[i]}
}

// checkAuditRest checks what every kind's audit shares: the realized
// attack, the canaries, the ε checks and the bound.
func (o *outsideRun) checkAuditRest(t *testing.T, bags bool) {
	t.Helper()
	a := o.audit.Summary
	if a.NExamples != 150 || a.Classes != o.classes || a.Mechanism != o.set.Mech.String() {
		t.Fatalf("%s: audited %d examples of %d classes as %q", o.set.ID, a.NExamples, a.Classes, a.Mechanism)
	}
	if a.RealizedDraws != 5 || math.IsNaN(a.RealizedGain) || math.IsNaN(a.RealizedZ) || a.Canaries == 0 || math.IsNaN(a.EpsLower) {
		t.Fatalf("%s: realized attack or canaries missing: %+v", o.set.ID, a)
	}
	if a.MAMax > outsideEps+1e-9 || a.EpsLower > outsideEps || !(a.EAdv <= a.EAdvBound+1e-12) {
		t.Fatalf("%s: |MA| max %v, ε ≥ %v, EAdv %v, bound %v at ε = %v", o.set.ID, a.MAMax, a.EpsLower, a.EAdv, a.EAdvBound, outsideEps)
	}
	if !bags && (!math.IsNaN(a.EpsLowerRealBags) || a.NBags != 0 || a.SEUnit != "example") {
		t.Fatalf("%s: a per-example kind audited as bags: %+v", o.set.ID, a)
	}
}

// checkLedgerAndReport: the ledger holds the setting's release as a row of
// its mechanism's name and ε, and every person's history names it; the
// report shows it by its Look.
func (o *outsideRun) checkLedgerAndReport(t *testing.T, look string) {
	t.Helper()
	l, err := ledger.Open(o.s.ledgerPath(), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.State(0)
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range st.Rows {
		if r.Mechanism == o.set.Kind {
			rows++
			if r.Epsilon != outsideEps || r.People != o.s.train.Rows {
				t.Fatalf("%s: ledger row ε %v people %d", o.set.ID, r.Epsilon, r.People)
			}
		}
	}
	if rows != 1 {
		t.Fatalf("%s: %d ledger rows, want 1", o.set.ID, rows)
	}
	for _, c := range st.Classes {
		if len(c.Steps) != 1 || c.Steps[0].Kind != o.set.Kind || c.Steps[0].Epsilon != outsideEps {
			t.Fatalf("%s: a history of %v", o.set.ID, c.Steps)
		}
	}
	md, err := os.ReadFile(filepath.Join(o.out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| "+look+" |") || !strings.Contains(string(md), o.set.ID) {
		t.Fatalf("%s: report.md does not show %q", o.set.ID, look)
	}
	if _, err := os.Stat(filepath.Join(o.out, "figures", "auc_vs_eadv.png")); err != nil {
		t.Fatal(err)
	}
}

// bruteChannels is the exact EAdv of a per-example kind by brute force over
// (z, y) through each audit example's channel: the mean of
// Σ_z max_y η_y·P(z | y) − max_y η_y.
func (o *outsideRun) bruteChannels(t *testing.T) float64 {
	t.Helper()
	n := o.audit.NExamples
	priors, err := o.s.auditPriors(o.set, n)
	if err != nil {
		t.Fatal(err)
	}
	c := o.classes
	tot := 0.0
	for i := range n {
		var prior []float64
		if c == 2 {
			prior = []float64{1 - priors[i], priors[i]}
		} else {
			prior = priors[i*c : (i+1)*c]
		}
		ch := o.channelOf(prior)
		eta := o.etaRow(i)
		bayes, m1 := 0.0, 0.0
		for z := range uint8(ch.Z) {
			best := 0.0
			for y, e := range eta {
				best = max(best, e*ch.Prob(z, uint8(y)))
			}
			bayes += best
		}
		for _, e := range eta {
			m1 = max(m1, e)
		}
		tot += bayes - m1
	}
	return tot / float64(n)
}

// TestOutsideKindALIBI: ALIBI-like soft labels, a kind released per
// example with no bag, registered from a test file: on binary labels its
// release is one noisy count per row in input order (no bag id, no k), its
// model trains with BCE on the posterior of each row, its exact audit
// equals numerical integration of its Laplace law, and the realized
// attack, the canaries (no bag-mates), the ledger and the report serve it;
// on 10 classes its release is 9 noisy counts a row, its model trains with
// ce on the 10-class posterior, and its audit's unbiased estimate agrees
// with a Monte Carlo brute force within 6 combined standard errors (false
// failure < 2e-9).
func TestOutsideKindALIBI(t *testing.T) {
	if testing.Short() {
		t.Skip("fits, audits and reports twice")
	}
	for _, classes := range []int{2, 10} {
		t.Run(map[int]string{2: "binary", 10: "10 classes"}[classes], func(t *testing.T) {
			o := runOutside(t, alibiKind, classes)
			if o.set.ID != "alibi_eps1" {
				t.Fatalf("setting id %q", o.set.ID)
			}
			if err := pets.CheckLaw(o.set.Mech, 20_000, rand.New(rand.NewPCG(1, 2))); err != nil {
				t.Fatal(err)
			}
			c := o.classes
			lam := outsideEps / float64(map[bool]int{true: 2, false: 1}[c >= 3])
			rel := o.release(t)
			alpha := rel.Alpha
			if c >= 3 {
				alpha = rel.AlphaC
			}
			if rel.BagID != nil || rel.Rows != o.s.train.Rows || len(alpha) != rel.Rows*(c-1) || rel.LabelRR != nil {
				t.Fatalf("release: %d rows, bag ids %v, %d proportions", rel.Rows, rel.BagID != nil, len(alpha))
			}
			md, err := data.ReadMetadata(releasePath(o.out, o.set, 0))
			if err != nil || md["mechanism"] != "alibi" || md["k"] != "" || md["epsilon"] != "1" || md["laplace_sampler"] == "" {
				t.Fatalf("release metadata %v (%v)", md, err)
			}
			// Training: the posterior of each row, computed here.
			posterior := func(i int) []float64 {
				w := make([]float64, c)
				w[0] = 1
				s := 1.0
				for j := 1; j < c; j++ {
					a := alpha[i*(c-1)+j-1]
					w[j] = math.Exp(-lam*math.Abs(a-1)) / math.Exp(-lam*math.Abs(a))
					s += w[j]
				}
				for j := range w {
					w[j] /= s
				}
				return w
			}
			loss := model.LossBCE
			if c >= 3 {
				loss = model.LossCE
			}
			o.checkTargets(t, o.trained(t, false), loss, rel, posterior)

			// The audit against brute force.
			a := o.audit
			if c == 2 {
				brute := 0.0
				for i := range a.NExamples {
					brute += lapIEAdv(o.s.test.Eta[i], lam)
				}
				brute /= float64(a.NExamples)
				if math.Abs(a.EAdv-brute) > 1e-6 || !(a.EAdv > 0) || a.EAdvEstimated {
					t.Fatalf("EAdv %v, numerical integration %v", a.EAdv, brute)
				}
			} else {
				brute, se := o.alibiMC(t, lam, 400)
				if tol := 6 * math.Hypot(se, a.EAdvSE); math.Abs(a.EAdv-brute) > tol || !a.EAdvEstimated {
					t.Fatalf("EAdv %v (estimated %v, SE %v), Monte Carlo %v ± %v", a.EAdv, a.EAdvEstimated, a.EAdvSE, brute, se)
				}
			}
			o.checkAuditRest(t, false)
			o.checkLedgerAndReport(t, "ALIBI")
		})
	}
}

// lapIEAdv is IEAdv of a binary example of prior e whose label is released
// as y + Lap(1/λ): min(e, f) − ∫ min(e·g(t−1), f·g(t)) dt, g the Laplace
// density, by Simpson's rule on [−L, 0], [0, 1] and [1, 1+L], L = 40/λ
// (the tails beyond hold e^{−40} of the mass).
func lapIEAdv(e, lam float64) float64 {
	f := 1 - e
	g := func(x float64) float64 { return lam / 2 * math.Exp(-lam*math.Abs(x)) }
	h := func(t float64) float64 { return min(e*g(t-1), f*g(t)) }
	simpson := func(a, b float64, n int) float64 {
		dx := (b - a) / float64(n)
		s := h(a) + h(b)
		for i := 1; i < n; i++ {
			w := 2.0
			if i%2 == 1 {
				w = 4
			}
			s += w * h(a+float64(i)*dx)
		}
		return s * dx / 3
	}
	L := 40 / lam
	lost := simpson(-L, 0, 40_000) + simpson(0, 1, 40_000) + simpson(1, 1+L, 40_000)
	return max(0, min(e, f)-lost)
}

// alibiMC estimates EAdv on 10 classes by brute force: per audit example,
// draws labels from η and releases from the law, and averages
// max_y P(y | release) − max_y η_y; it returns the mean and its standard
// error over the examples.
func (o *outsideRun) alibiMC(t *testing.T, lam float64, draws int) (mean, se float64) {
	t.Helper()
	c := o.classes
	r := rand.New(rand.NewPCG(7, 8))
	law := o.set.Mech.BagLaw()
	counts, alpha, logp := make([]int, c), make([]float64, c-1), make([]float64, c)
	n := o.audit.NExamples
	vals := make([]float64, n)
	for i := range n {
		eta := o.etaRow(i)
		m1, s := 0.0, 0.0
		for _, e := range eta {
			m1 = max(m1, e)
		}
		for range draws {
			u, y := r.Float64(), 0
			for y < c-1 && u >= eta[y] {
				u -= eta[y]
				y++
			}
			clear(counts)
			counts[y] = 1
			law.ReleaseBag(alpha, counts, r)
			hi := math.Inf(-1)
			for k := range c {
				lp := math.Log(eta[k])
				for j, a := range alpha {
					one := 0.0
					if k == j+1 {
						one = 1
					}
					lp -= lam * math.Abs(a-one)
				}
				logp[k] = lp
				hi = max(hi, lp)
			}
			z, best := 0.0, 0.0
			for _, lp := range logp {
				z += math.Exp(lp - hi)
				best = max(best, math.Exp(lp-hi))
			}
			s += best / z
		}
		vals[i] = s/float64(draws) - m1
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(n)
	for _, v := range vals {
		se += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(se / float64(n-1) / float64(n))
}

// TestOutsideKindTemper: RR tempered by a public prior, a second kind
// released with a prior and of no closed form, registered from a test
// file: it is released in two stages (stage 1 through the uniform prior's
// channel, stage 2 through the prior model's priors, each row's prior and
// what its channel shows recorded), its prior model trains with BCE (ce)
// on the posterior under the uniform prior, its runs on the posterior under
// each row's prior, its exact audit equals brute force over each audit
// example's channel, and the realized attack, the canaries, the ledger and
// the report serve it: on binary labels and on 10 classes.
func TestOutsideKindTemper(t *testing.T) {
	if testing.Short() {
		t.Skip("fits, audits and reports twice")
	}
	for _, classes := range []int{2, 10} {
		t.Run(map[int]string{2: "binary", 10: "10 classes"}[classes], func(t *testing.T) {
			o := runOutside(t, temperKind, classes)
			o.checkPriorKind(t, func(ch pets.Channel, prior []float64, z uint8) []float64 {
				return channelPosterior(ch, prior, z)
			}, func(ch pets.Channel, z uint8) []float64 {
				return channelPosterior(ch, pets.UniformPrior(o.classes), z)
			}, false)
			o.checkLedgerAndReport(t, "RR tempered")
		})
	}
}

// TestOutsideKindTopK: RR-Top-k with a fixed k = 3, a kind released with a
// prior whose channels are RR within a set (pets.FormSetRR), registered
// from a test file: on 10 classes its first stage goes through the uniform
// prior's top three classes {0, 1, 2} (RR over some classes only, so its
// prior model trains with ce on the closed-form targets of the set, not a
// flip correction); on binary labels k = 2 is RR over both classes and the
// prior model trains with train.rr_loss corrected by π. Its runs train on
// the closed-form targets (1{z = c} − b)/(q − b) within each row's set
// ((z − π)/(1 − 2π) on two classes), its exact audit equals brute force,
// and the realized attack, canaries, ledger and report serve it.
func TestOutsideKindTopK(t *testing.T) {
	if testing.Short() {
		t.Skip("fits, audits and reports twice")
	}
	for _, classes := range []int{2, 10} {
		t.Run(map[int]string{2: "binary", 10: "10 classes"}[classes], func(t *testing.T) {
			o := runOutside(t, topKind, classes)
			setTarget := func(ch pets.Channel, z uint8) []float64 {
				c := ch.C
				t := make([]float64, c)
				if c == 2 {
					t[1] = (float64(z) - ch.Flip) / (1 - 2*ch.Flip)
					t[0] = 1 - t[1]
					return t
				}
				var members []int
				for y := range c {
					if ch.Support()>>y&1 == 1 {
						members = append(members, y)
					}
				}
				q, b := ch.Prob(uint8(members[0]), uint8(members[0])), ch.Prob(uint8(members[1]), uint8(members[0]))
				for _, y := range members {
					t[y] = -b / (q - b)
				}
				t[z] = (1 - b) / (q - b)
				return t
			}
			o.checkPriorKind(t, func(ch pets.Channel, _ []float64, z uint8) []float64 { return setTarget(ch, z) },
				setTarget, classes == 2)
			o.checkLedgerAndReport(t, "RR-Top-3")
		})
	}
}

// channelPosterior is the Bayes posterior of the label given release z of
// a channel under a prior.
func channelPosterior(ch pets.Channel, prior []float64, z uint8) []float64 {
	p, s := make([]float64, ch.C), 0.0
	for y := range ch.C {
		p[y] = prior[y] * ch.Prob(z, uint8(y))
		s += p[y]
	}
	for y := range p {
		p[y] /= s
	}
	return p
}

// checkPriorKind checks a kind released with a prior: its law, the two
// stages of its release, the targets of its run (target) and of its prior
// model (first; flipped: the prior model trains with train.rr_loss on the
// released labels instead), and its exact audit against brute force.
func (o *outsideRun) checkPriorKind(t *testing.T, target func(ch pets.Channel, prior []float64, z uint8) []float64,
	first func(ch pets.Channel, z uint8) []float64, flipped bool) {
	t.Helper()
	c := o.classes
	if err := pets.CheckLaw(o.set.Mech, 20_000, rand.New(rand.NewPCG(1, 2))); err != nil {
		t.Fatal(err)
	}
	rel := o.release(t)
	if rel.Rows != o.s.train.Rows || rel.LabelRR == nil || rel.Stage == nil {
		t.Fatalf("release of %d rows without its labels or stages", rel.Rows)
	}
	uniform := o.channelOf(pets.UniformPrior(c))
	stage1 := 0
	for i := range rel.Rows {
		prior := o.priorRow(rel, i)
		ch := o.channelOf(prior)
		if rel.Stage[i] == 1 {
			stage1++
			if prior[0] != 1/float64(c) {
				t.Fatalf("stage-1 row %d went through prior %v", i, prior)
			}
		}
		if ch.Prob(rel.LabelRR[i], 0)+ch.Prob(rel.LabelRR[i], 1) == 0 {
			t.Fatalf("row %d released %d, which its channel never releases", i, rel.LabelRR[i])
		}
		switch {
		case c >= 3 && rel.PriorSet[i] != ch.Support():
			t.Fatalf("row %d records the set %b, its channel releases %b", i, rel.PriorSet[i], ch.Support())
		case c == 2 && (rel.Branch[i] == 1) == ch.Informative():
			t.Fatalf("row %d: branch %d for a channel informative %v", i, rel.Branch[i], ch.Informative())
		}
	}
	if stage1 != rel.Rows/2 {
		t.Fatalf("%d stage-1 rows of %d", stage1, rel.Rows)
	}
	loss := model.LossBCE
	if c >= 3 {
		loss = model.LossCE
	}
	o.checkTargets(t, o.trained(t, false), loss, rel, func(i int) []float64 {
		p := o.priorRow(rel, i)
		return target(o.channelOf(p), p, rel.LabelRR[i])
	})
	prior := o.trained(t, true)
	if flipped {
		if prior.loss != model.LossDebiasedBCE || prior.params.FlipProb != uniform.Flip || !(uniform.Flip > 0) {
			t.Fatalf("prior model: %s with π %v, want debiased_bce with %v", prior.loss, prior.params.FlipProb, uniform.Flip)
		}
	} else {
		if prior.params.FlipProb != 0 {
			t.Fatalf("prior model corrects a flip %v its first stage does not have", prior.params.FlipProb)
		}
		o.checkTargets(t, prior, loss, rel, func(i int) []float64 { return first(uniform, rel.LabelRR[i]) })
	}
	if brute := o.bruteChannels(t); math.Abs(o.audit.EAdv-brute) > 1e-12 || !(o.audit.EAdv > 0) {
		t.Fatalf("EAdv %v, brute force %v", o.audit.EAdv, brute)
	}
	o.checkAuditRest(t, false)
}
