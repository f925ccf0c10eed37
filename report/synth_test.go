package report

import (
	"fmt"
	"math"
	"math/rand/v2"

	"labelprivacy/data"
	"labelprivacy/internal/stats"
)

// Synthetic result sets shaped like the paper's Section 4 experiments on a
// Beta(2,30) prior η (skewed, like KDD12): RR ε ∈ {0.25,…,8}, LLP k ∈
// {1,…,512}, LLP+Geom every (k, ε), LLP+Lap a few, 3 learning rates × 3
// trials each. Advantages use the exact closed forms where they are simple
// (none, ⊥, RR) and plausible stand-ins otherwise; posteriors are simulated
// exactly (Poisson-binomial bag sums) for the scatter and CDF figures.

var (
	synthRREps  = []float64{0.25, 0.5, 1, 2, 4, 8}
	synthLLPK   = []int64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
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
	setting, pet string
	k            int64
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
	llpAUC := func(k int64) float64 { return clean - (clean-0.5)*0.6*math.Log2(float64(k))/9 }
	llpEadv := func(k int64) float64 { return none / math.Sqrt(float64(k)) }
	out := []synthSetting{
		{"none", "none", 0, 0, inf, clean, none, 0, inf, 1},
		{"bot", "bot", 0, 0, 0, 0.5, 0, 0, 0, 0},
	}
	for _, e := range synthRREps {
		out = append(out, synthSetting{fmt.Sprintf("rr_eps%g", e), "rr", 0, e, e,
			0.5 + (clean-0.5)*(1-math.Exp(-e/1.2)), rrEadv(eta, e), 0, e, 0})
	}
	for _, k := range synthLLPK {
		inf := math.Pow(1-meanEta, float64(k)) + math.Pow(meanEta, float64(k))
		p98 := math.Inf(1)
		if inf <= 0.02 {
			p98 = 6 / math.Sqrt(math.Log2(float64(k)))
		}
		out = append(out, synthSetting{fmt.Sprintf("llp_k%d", k), "llp", k, 0, math.Inf(1),
			llpAUC(k), llpEadv(k), 0.0004, p98, inf})
	}
	two := func(pet string, k int64, e, shrink float64) synthSetting {
		f := 1 - math.Exp(-e*math.Sqrt(float64(k))/1.2)
		return synthSetting{fmt.Sprintf("%s_k%d_eps%g", pet, k, e), pet, k, e, e,
			0.5 + (llpAUC(k)-0.5)*f*shrink, math.Min(rrEadv(eta, e), llpEadv(k)) * 0.9, 0.0003, e * shrink, 0}
	}
	for _, k := range synthLLPK {
		for _, e := range synthRREps {
			out = append(out, two("llp_geom", k, e, 1))
		}
	}
	for _, k := range []int64{8, 64} {
		for _, e := range synthRREps {
			out = append(out, two("llp_lap", k, e, 0.95))
		}
	}
	out = append(out, two("llp_lap", 512, 1, 0.95)) // a single-point curve
	return out
}

// synthTables returns runs and audit tables for the synthetic settings.
func synthTables(seed uint64) (runs, audit *data.Table) {
	r := rand.New(rand.NewPCG(seed, 7))
	eta := betaSample(r, 20000)
	ss := synthSettings(eta)
	var (
		setting, pet, runID, loss, backend []string
		k, trial, sd                       []int64
		eps, ldp, lr, aucs                 []float64
	)
	penalty := map[float64]float64{1e-4: 0.012, 1e-3: 0, 1e-2: 0.02}
	for _, s := range ss {
		for _, l := range synthLRs {
			for t := range synthTrials {
				setting, pet, k, eps, ldp = append(setting, s.setting), append(pet, s.pet), append(k, s.k), append(eps, s.eps), append(ldp, s.ldp)
				lr, trial, sd = append(lr, l), append(trial, int64(t)), append(sd, int64(1000+t))
				runID = append(runID, fmt.Sprintf("%s-lr%g-t%d", s.setting, l, t))
				loss, backend = append(loss, "bce"), append(backend, "go")
				aucs = append(aucs, s.auc-penalty[l]+0.004*r.NormFloat64())
			}
		}
	}
	runs = &data.Table{Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "pet", Values: pet}, {Name: "k", Values: k},
		{Name: "epsilon", Values: eps}, {Name: "label_dp_epsilon", Values: ldp}, {Name: "loss", Values: loss},
		{Name: "lr", Values: lr}, {Name: "trial", Values: trial}, {Name: "seed", Values: sd},
		{Name: "test_auc", Values: aucs}, {Name: "backend", Values: backend}, {Name: "run_id", Values: runID},
	}}
	var (
		aSetting, aPet, src                     []string
		aK, nEx                                 []int64
		aEps, eadv, eadvSE, p98, infFrac, maxMA []float64
	)
	for _, s := range ss {
		aSetting, aPet, src = append(aSetting, s.setting), append(aPet, s.pet), append(src, "true_eta")
		aK, nEx, aEps = append(aK, s.k), append(nEx, int64(len(eta))), append(aEps, s.eps)
		eadv, eadvSE, p98, infFrac = append(eadv, s.eadv), append(eadvSE, s.eadvSE), append(p98, s.p98), append(infFrac, s.infFrac)
		maxMA = append(maxMA, s.p98*1.5)
	}
	audit = &data.Table{Columns: []data.Column{
		{Name: "setting", Values: aSetting}, {Name: "pet", Values: aPet}, {Name: "k", Values: aK},
		{Name: "epsilon", Values: aEps}, {Name: "eta_source", Values: src}, {Name: "n_examples", Values: nEx},
		{Name: "eadv", Values: eadv}, {Name: "eadv_se", Values: eadvSE}, {Name: "ma_p98", Values: p98},
		{Name: "ma_max", Values: maxMA}, {Name: "ma_inf_frac", Values: infFrac},
	}}
	return runs, audit
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

// synthPosteriors simulates n examples per setting: prior η, sampled
// posterior after the release, the exact individual expected advantage and
// |Δ log-odds| (+Inf when the posterior is 0 or 1).
func synthPosteriors(seed uint64, n int) *data.Table {
	r := rand.New(rand.NewPCG(seed, 11))
	type spec struct {
		pet string
		k   int
		eps float64
	}
	specs := []spec{{"none", 0, 0}, {"bot", 0, 0}}
	for _, e := range []float64{0.5, 1, 2, 4} {
		specs = append(specs, spec{"rr", 0, e})
	}
	for _, k := range []int{2, 8, 32} {
		specs = append(specs, spec{"llp", k, 0})
	}
	for _, e := range []float64{0.5, 1, 2} {
		specs = append(specs, spec{"llp_geom", 8, e})
	}
	var (
		setting, pet                    []string
		ks                              []int64
		epss, prior, post, ieadv, absMA []float64
	)
	for _, sp := range specs {
		name := sp.pet
		switch sp.pet {
		case "rr":
			name = fmt.Sprintf("rr_eps%g", sp.eps)
		case "llp":
			name = fmt.Sprintf("llp_k%d", sp.k)
		case "llp_geom":
			name = fmt.Sprintf("llp_geom_k%d_eps%g", sp.k, sp.eps)
		}
		bag := max(sp.k, 1)
		for start := 0; start < n; start += bag {
			eta := betaSample(r, bag)
			y := make([]int, bag)
			sum := 0
			for i, e := range eta {
				if r.Float64() < e {
					y[i] = 1
					sum++
				}
			}
			a := math.Exp(-sp.eps)
			var z int
			if sp.pet == "llp_geom" {
				// two-sided geometric noise, clipped
				g := func() int {
					c := 0
					for r.Float64() < a {
						c++
					}
					return c
				}
				z = min(max(sum+g()-g(), 0), sp.k)
			}
			for i, e := range eta {
				var l1, l0 func(z int) float64 // P(z | y_i = 1), P(z | y_i = 0)
				var zs []int                   // support of z
				zi := 0
				switch sp.pet {
				case "none":
					l1 = func(z int) float64 { return float64(z) }
					l0 = func(z int) float64 { return float64(1 - z) }
					zs, zi = []int{0, 1}, y[i]
				case "bot":
					l1 = func(int) float64 { return 1 }
					l0 = l1
					zs = []int{0}
				case "rr":
					p := 1 / (1 + math.Exp(sp.eps))
					l1 = func(z int) float64 { return []float64{p, 1 - p}[z] }
					l0 = func(z int) float64 { return []float64{1 - p, p}[z] }
					zs, zi = []int{0, 1}, y[i]
					if r.Float64() < p {
						zi = 1 - zi
					}
				default:
					others := append(append([]float64{}, eta[:i]...), eta[i+1:]...)
					po := poissonBinomial(others)
					lik := func(z, s int) float64 {
						if sp.pet == "llp" {
							if z == s {
								return 1
							}
							return 0
						}
						return geomLik(z, s, sp.k, a)
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
					for z := 0; z <= sp.k; z++ {
						zs = append(zs, z)
					}
					zi = sum
					if sp.pet == "llp_geom" {
						zi = z
					}
				}
				var adv float64
				for _, z := range zs {
					adv += math.Max(e*l1(z), (1-e)*l0(z))
				}
				adv -= math.Max(e, 1-e)
				pp := e * l1(zi) / (e*l1(zi) + (1-e)*l0(zi))
				setting, pet, ks, epss = append(setting, name), append(pet, sp.pet), append(ks, int64(sp.k)), append(epss, sp.eps)
				prior, post, ieadv = append(prior, e), append(post, pp), append(ieadv, math.Max(adv, 0))
				absMA = append(absMA, math.Abs(logit(pp)-logit(e)))
			}
		}
	}
	return &data.Table{Columns: []data.Column{
		{Name: "setting", Values: setting}, {Name: "pet", Values: pet}, {Name: "k", Values: ks},
		{Name: "epsilon", Values: epss}, {Name: "prior", Values: prior}, {Name: "posterior", Values: post},
		{Name: "ieadv", Values: ieadv}, {Name: "abs_ma", Values: absMA},
	}}
}
