package reporttest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/audit"
	"labelprivacy/internal/stats"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// Synthetic result sets shaped like the paper's Section 4 experiments on a
// Beta(2,30) prior η (skewed, like KDD12): RR ε ∈ {0.25,…,8}, LLP k ∈
// {1,…,512}, LLP+Geom every (k, ε), LLP+Lap a few, 3 learning rates × 3
// trials each. Advantages use the exact closed forms where they are simple
// (none, ⊥, RR) and plausible stand-ins otherwise; posteriors are simulated
// exactly (Poisson-binomial bag sums) for the scatter and CDF figures.

var (
	synthRREps  = []float64{0.25, 0.5, 1, 2, 4, 8}
	synthLLPK   = []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
	synthLRs    = []float64{1e-4, 1e-3, 1e-2}
	synthTrials = 3
)

// gamma draws Gamma(n, 1) for integer n as a sum of exponentials.
func gammaInt(r *rand.Rand, n int) float64 {
	var s float64
	for range n {
		s += r.ExpFloat64()
	}
	return s
}

func betaSample(r *rand.Rand, n int) []float64 {
	eta := make([]float64, n)
	for i := range eta {
		x, y := gammaInt(r, 2), gammaInt(r, 30)
		eta[i] = x / (x + y)
	}
	return eta
}

// rrEadv is the Bayes attacker's expected additive advantage for RR(ε):
// E[min(η,1−η) − Σ_z min(P(y=1,z), P(y=0,z))].
func rrEadv(eta []float64, eps float64) float64 {
	p := 1 / (1 + math.Exp(eps))
	var s float64
	for _, e := range eta {
		s += math.Min(e, 1-e) - (math.Min(e*(1-p), (1-e)*p) + math.Min(e*p, (1-e)*(1-p)))
	}
	return s / float64(len(eta))
}

type synthSetting struct {
	setting      string
	pet          pets.Kind
	k            int
	eps, ldp     float64
	auc          float64 // expected AUC at the best learning rate
	eadv, eadvSE float64
	p98, infFrac float64
}

func synthSettings(eta []float64) []synthSetting {
	clean := stats.ExpectedAUC(eta) - 0.01
	var none float64
	for _, e := range eta {
		none += math.Min(e, 1-e)
	}
	none /= float64(len(eta))
	meanEta := 0.0
	for _, e := range eta {
		meanEta += e
	}
	meanEta /= float64(len(eta))
	inf := math.Inf(1)
	llpAUC := func(k int) float64 { return clean - (clean-0.5)*0.6*math.Log2(float64(k))/9 }
	llpEadv := func(k int) float64 { return none / math.Sqrt(float64(k)) }
	out := []synthSetting{
		{"none", pets.None, 0, 0, inf, clean, none, 0, inf, 1},
		{"bot", pets.Bot, 0, 0, 0, 0.5, 0, 0, 0, 0},
	}
	for _, e := range synthRREps {
		out = append(out, synthSetting{fmt.Sprintf("rr_eps%g", e), pets.RR, 0, e, e,
			0.5 + (clean-0.5)*(1-math.Exp(-e/1.2)), rrEadv(eta, e), 0, e, 0})
	}
	for _, k := range synthLLPK {
		inf := math.Pow(1-meanEta, float64(k)) + math.Pow(meanEta, float64(k))
		p98 := math.Inf(1)
		if inf <= 0.02 {
			p98 = 6 / math.Sqrt(math.Log2(float64(k)))
		}
		out = append(out, synthSetting{fmt.Sprintf("llp_k%d", k), pets.LLP, k, 0, math.Inf(1),
			llpAUC(k), llpEadv(k), 0.0004, p98, inf})
	}
	two := func(pet pets.Kind, k int, e, shrink float64) synthSetting {
		f := 1 - math.Exp(-e*math.Sqrt(float64(k))/1.2)
		return synthSetting{fmt.Sprintf("%s_k%d_eps%g", pet, k, e), pet, k, e, e,
			0.5 + (llpAUC(k)-0.5)*f*shrink, math.Min(rrEadv(eta, e), llpEadv(k)) * 0.9, 0.0003, e * shrink, 0}
	}
	for _, k := range synthLLPK {
		for _, e := range synthRREps {
			out = append(out, two(pets.LLPGeom, k, e, 1))
		}
	}
	for _, k := range []int{8, 64} {
		for _, e := range synthRREps {
			out = append(out, two(pets.LLPLap, k, e, 0.95))
		}
	}
	out = append(out, two(pets.LLPLap, 512, 1, 0.95)) // a single-point curve
	return out
}

// SynthDataset and SynthConfig are the synthetic results' dataset and config.
const SynthDataset, SynthConfig = "sha256:synthbeta2x30", "cfg-mlp"

// SynthResults returns runs and audits for the synthetic settings.
func SynthResults(seed uint64) ([]report.Run, []report.Audit) {
	r := rand.New(rand.NewPCG(seed, 7))
	eta := betaSample(r, 20000)
	ss := synthSettings(eta)
	penalty := map[float64]float64{1e-4: 0.012, 1e-3: 0, 1e-2: 0.02}
	var runs []report.Run
	for _, s := range ss {
		for _, l := range synthLRs {
			for t := range synthTrials {
				runs = append(runs, report.Run{
					RunID: fmt.Sprintf("%s-lr%g-t%d", s.setting, l, t), Dataset: SynthDataset, ConfigID: SynthConfig,
					Model: "mlp", Setting: s.setting, Pet: s.pet, K: s.k, Epsilon: s.eps, LabelDPEpsilon: s.ldp,
					Loss: "bce", LR: l, Trial: t, Seed: uint64(1000 + t), Backend: "go",
					TestAUC: s.auc - penalty[l] + 0.004*r.NormFloat64(),
				})
			}
		}
	}
	var audits []report.Audit
	for _, s := range ss {
		a := report.Audit{Dataset: SynthDataset, ConfigID: SynthConfig, Setting: s.setting, Pet: s.pet, K: s.k, Epsilon: s.eps, EtaSource: "true"}
		a.Kind, a.Summary.K, a.NExamples = s.pet, s.k, len(eta)
		a.EAdv, a.EAdvSE, a.MAP98, a.MAInfFrac, a.MAMax = s.eadv, s.eadvSE, s.p98, s.infFrac, s.p98*1.5
		audits = append(audits, a)
	}
	return runs, audits
}

// poissonBinomial returns P(Σ y_j = s), y_j ~ Bernoulli(eta_j).
func poissonBinomial(eta []float64) []float64 {
	p := []float64{1}
	for _, e := range eta {
		q := make([]float64, len(p)+1)
		for s, v := range p {
			q[s] += v * (1 - e)
			q[s+1] += v * e
		}
		p = q
	}
	return p
}

// geomLik is P(release z | bag sum S) for LLP+Geom: S + (G⁺−G⁻) clipped to
// [0,k], a = e^{−ε}.
func geomLik(z, s, k int, a float64) float64 {
	switch z {
	case 0:
		return math.Pow(a, float64(s)) / (1 + a)
	case k:
		return math.Pow(a, float64(k-s)) / (1 + a)
	}
	d := z - s
	if d < 0 {
		d = -d
	}
	return (1 - a) / (1 + a) * math.Pow(a, float64(d))
}

func logit(p float64) float64 { return math.Log(p) - math.Log1p(-p) }

// SynthPosteriors simulates n examples per setting: prior η, sampled
// posterior after the release, the exact individual expected advantage and
// |Δ log-odds| (+Inf when the posterior is 0 or 1).
func SynthPosteriors(seed uint64, n int) []report.Posterior {
	r := rand.New(rand.NewPCG(seed, 11))
	var out []report.Posterior
	for _, sp := range synthPostSpecs() {
		name := sp.setting()
		law := newSynthLaw(sp)
		bag := max(sp.k, 1)
		for start := 0; start < n; start += bag {
			eta, y, sum, z := law.drawBag(r, bag)
			for i, e := range eta {
				l1, l0, zs, zi := law.release(r, eta, y, i, sum, z)
				adv, pp := bayes(e, l1, l0, zs, zi)
				out = append(out, report.Posterior{Dataset: SynthDataset, ConfigID: SynthConfig, Setting: name, Pet: sp.pet, K: sp.k, Epsilon: sp.eps,
					Sample: audit.Sample{Index: len(out), Prior: e, Label: uint8(y[i]), Release: float64(zi), Posterior: pp, IEAdv: math.Max(adv, 0),
						AbsMA: math.Abs(logit(pp) - logit(e))}})
			}
		}
	}
	return out
}

// synthSpec is one simulated setting: the mechanism, its bag size k (0:
// none) and ε (0: none).
type synthSpec struct {
	pet pets.Kind
	k   int
	eps float64
}

// synthPostSpecs are SynthPosteriors' settings: none, ⊥, RR ε ∈ {0.5, 1,
// 2, 4}, LLP k ∈ {2, 8, 32}, LLP+Geom k = 8 with ε ∈ {0.5, 1, 2}.
func synthPostSpecs() []synthSpec {
	specs := []synthSpec{{pets.None, 0, 0}, {pets.Bot, 0, 0}}
	for _, e := range []float64{0.5, 1, 2, 4} {
		specs = append(specs, synthSpec{pets.RR, 0, e})
	}
	for _, k := range []int{2, 8, 32} {
		specs = append(specs, synthSpec{pets.LLP, k, 0})
	}
	for _, e := range []float64{0.5, 1, 2} {
		specs = append(specs, synthSpec{pets.LLPGeom, 8, e})
	}
	return specs
}

// setting is the setting id: the kind, _k and _eps when set.
func (sp synthSpec) setting() string {
	name := sp.pet.String()
	if sp.k > 0 {
		name += fmt.Sprintf("_k%d", sp.k)
	}
	if sp.eps > 0 {
		name += fmt.Sprintf("_eps%g", sp.eps)
	}
	return name
}

// synthLaw is the law of a release: a per-example channel (ch.Z > 0), or
// the noise on the sum of a bag of k: none, or clipped two-sided geometric
// at a = e^{−λ} (geom).
type synthLaw struct {
	ch   pets.Channel
	geom bool
	a    float64
	k    int
}

// newSynthLaw is setting sp's release law (panics on an invalid spec: a
// bug in synthPostSpecs).
func newSynthLaw(sp synthSpec) synthLaw {
	m, err := pets.New(pets.Params{Kind: sp.pet, K: sp.k, Epsilon: sp.eps})
	if err != nil {
		panic(err)
	}
	l := synthLaw{k: sp.k}
	if ex := m.ExampleLaw(); ex != nil {
		l.ch = ex.Channel(ex.ChannelOf(nil))
	} else {
		l.geom, l.a = m.BagLaw().SumNoise() == pets.SumGeometric, math.Exp(-m.BagLaw().NoiseRate())
	}
	return l
}

// drawBag draws a bag of n examples from r: priors η ~ Beta(2,30), labels
// y ~ Bernoulli(η), their sum, and the released sum z with its clipped
// two-sided geometric noise (0 unless geom).
func (l synthLaw) drawBag(r *rand.Rand, n int) (eta []float64, y []int, sum, z int) {
	eta = betaSample(r, n)
	y = make([]int, n)
	for i, e := range eta {
		if r.Float64() < e {
			y[i] = 1
			sum++
		}
	}
	if l.geom {
		g := func() int {
			c := 0
			for r.Float64() < l.a {
				c++
			}
			return c
		}
		z = min(max(sum+g()-g(), 0), l.k)
	}
	return eta, y, sum, z
}

// release gives example i of a bag its likelihoods l1(z) = P(z | y_i = 1)
// and l0(z) = P(z | y_i = 0), the support zs of z and its release zi.
func (l synthLaw) release(r *rand.Rand, eta []float64, y []int, i, sum, z int) (l1, l0 func(z int) float64, zs []int, zi int) {
	if l.ch.Z > 0 {
		l1 = func(z int) float64 { return l.ch.Prob(uint8(z), 1) }
		l0 = func(z int) float64 { return l.ch.Prob(uint8(z), 0) }
		for z := range l.ch.Z {
			zs = append(zs, z)
		}
		// The release: randomized response flips the label with
		// probability π; a channel that is a function of the label (the
		// identity, the silent one) draws nothing.
		if zi = min(y[i], l.ch.Z-1); l.ch.Flip > 0 && r.Float64() < l.ch.Flip {
			zi = 1 - zi
		}
		return l1, l0, zs, zi
	}
	l1, l0 = l.sumLikelihoods(eta, i)
	for z := 0; z <= l.k; z++ {
		zs = append(zs, z)
	}
	zi = sum
	if l.geom {
		zi = z
	}
	return l1, l0, zs, zi
}

// sumLikelihoods are P(z | y_i = 1) and P(z | y_i = 0) for a released bag
// sum z: over the Poisson-binomial sum of the other members, exact or
// through the geometric noise (geomLik).
func (l synthLaw) sumLikelihoods(eta []float64, i int) (l1, l0 func(z int) float64) {
	others := append(append([]float64{}, eta[:i]...), eta[i+1:]...)
	po := poissonBinomial(others)
	lik := func(z, s int) float64 {
		if !l.geom {
			if z == s {
				return 1
			}
			return 0
		}
		return geomLik(z, s, l.k, l.a)
	}
	l1 = func(z int) float64 {
		var v float64
		for s, q := range po {
			v += q * lik(z, s+1)
		}
		return v
	}
	l0 = func(z int) float64 {
		var v float64
		for s, q := range po {
			v += q * lik(z, s)
		}
		return v
	}
	return l1, l0
}

// bayes is the Bayes attacker's individual expected advantage over the
// support zs, Σ_z max(η l1(z), (1−η) l0(z)) − max(η, 1−η), and its
// posterior P(y = 1 | zi) for prior e.
func bayes(e float64, l1, l0 func(z int) float64, zs []int, zi int) (adv, pp float64) {
	for _, z := range zs {
		adv += math.Max(e*l1(z), (1-e)*l0(z))
	}
	adv -= math.Max(e, 1-e)
	return adv, e * l1(zi) / (e*l1(zi) + (1-e)*l0(zi))
}
