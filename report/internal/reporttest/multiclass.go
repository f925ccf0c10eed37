package reporttest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// Results on labels of C = 10 classes, shaped like the acceptance grid of
// multi-class labels (none, rr ε ∈ {1, 4}, rr_prior ε = 1, llp k = 8,
// llp_geom k = 8 ε = 2; 2 learning rates × 3 trials). Class
// probabilities η(x) are a softmax of Gaussian logits. RR's advantages use
// the exact k-ary closed form; the others are plausible stand-ins. In
// rr_eps1, lr 1e-3 has the higher macro AUC and lr 1e-2 the higher
// accuracy, so the reporting rule's metric decides the best LR.

// MultiDataset, MultiConfig and MultiClasses are the multi-class results'
// dataset, config and class count.
const (
	MultiDataset = "sha256:multiclass10cccc"
	MultiConfig  = "cfg-softmax"
	MultiClasses = 10
)

// MultiSetting is one setting of the multi-class results: what its runs
// score at each learning rate (mean over trials).
type MultiSetting struct {
	Setting string
	Pet     pets.Kind
	K       int
	Eps     float64
	// Acc and AUC map a learning rate to the mean test accuracy and macro
	// AUC of its trials.
	Acc, AUC map[float64]float64
}

// MultiLRs are the multi-class results' learning rates.
var MultiLRs = []float64{1e-3, 1e-2}

// MultiSettings are the multi-class results' settings.
func MultiSettings() []MultiSetting {
	s := func(setting string, pet pets.Kind, k int, eps, acc3, acc2, auc3, auc2 float64) MultiSetting {
		return MultiSetting{setting, pet, k, eps, map[float64]float64{1e-3: acc3, 1e-2: acc2}, map[float64]float64{1e-3: auc3, 1e-2: auc2}}
	}
	return []MultiSetting{
		s("none", pets.None, 0, 0, 0.781, 0.802, 0.951, 0.962),
		s("rr_eps1", pets.RR, 0, 1, 0.402, 0.451, 0.861, 0.832), // AUC prefers 1e-3, accuracy 1e-2
		s("rr_eps4", pets.RR, 0, 4, 0.752, 0.771, 0.941, 0.948),
		s("rr_prior_eps1", pets.RRPrior, 0, 1, 0.575, 0.566, 0.872, 0.880), // accuracy prefers 1e-3, AUC 1e-2
		s("llp_k8", pets.LLP, 8, 0, 0.603, 0.622, 0.893, 0.901),
		s("llp_geom_k8_eps2", pets.LLPGeom, 8, 2, 0.531, 0.548, 0.850, 0.862),
	}
}

// multiTrialDev are the trials' deviations from a setting's mean (they sum
// to 0, so the trials' mean is the setting's).
var multiTrialDev = []float64{-0.006, 0.002, 0.004}

// MultiRuns returns the runs of the multi-class results.
func MultiRuns() []report.Run {
	var runs []report.Run
	for _, s := range MultiSettings() {
		ldp := s.Eps
		if !s.Pet.Spec().Privacy.DP() {
			ldp = math.Inf(1)
		}
		for _, lr := range MultiLRs {
			for t, d := range multiTrialDev {
				runs = append(runs, report.Run{
					RunID: fmt.Sprintf("%s-lr%g-t%d", s.Setting, lr, t), Dataset: MultiDataset, ConfigID: MultiConfig,
					Model: "mlp", Classes: MultiClasses, Setting: s.Setting, Pet: s.Pet, K: s.K, Epsilon: s.Eps, LabelDPEpsilon: ldp,
					Loss: "ce", LR: lr, Trial: t, Seed: uint64(1000 + t), Epochs: 2, Backend: "go",
					TestAUC: s.AUC[lr] + d/2, TestAccuracy: s.Acc[lr] + d, TestLogLoss: 1.2,
				})
			}
		}
	}
	return runs
}

// multiEta draws n rows of C class probabilities: a softmax of Gaussian
// logits with standard deviation 1.5.
func multiEta(r *rand.Rand, n int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		e := make([]float64, MultiClasses)
		var s float64
		for c := range e {
			e[c] = math.Exp(1.5 * r.NormFloat64())
			s += e[c]
		}
		for c := range e {
			e[c] /= s
		}
		out[i] = e
	}
	return out
}

// rrKeep is k-ary RR's probability of releasing the true label,
// e^ε/(e^ε + C − 1); any other class is released with (1 − keep)/(C − 1).
func rrKeep(eps float64) (keep, other float64) {
	keep = math.Exp(eps) / (math.Exp(eps) + MultiClasses - 1)
	return keep, (1 - keep) / (MultiClasses - 1)
}

// rrIEAdvC is k-ary RR's individual expected advantage at η:
// Σ_z max_y η_y P(z | y) − max_y η_y.
func rrIEAdvC(eta []float64, eps float64) float64 {
	keep, other := rrKeep(eps)
	top := slices.Max(eta)
	var s float64
	for z := range eta {
		best := eta[z] * keep
		for y, e := range eta {
			if y != z {
				best = math.Max(best, e*other)
			}
		}
		s += best
	}
	return s - top
}

// MultiAudits returns the audits of the multi-class results: rr exact
// (k-ary closed form; RR attains the ε-DP worst case), the others stand-ins.
func MultiAudits() []report.Audit {
	eta := multiEta(rand.New(rand.NewPCG(3, 10)), 4000)
	mean := func(f func([]float64) float64) (m, se float64) {
		v := make([]float64, len(eta))
		for i, e := range eta {
			v[i] = f(e)
			m += v[i]
		}
		m /= float64(len(v))
		var ss float64
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		return m, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
	}
	none, noneSE := mean(func(e []float64) float64 { return 1 - slices.Max(e) })
	rr1, rr1SE := mean(func(e []float64) float64 { return rrIEAdvC(e, 1) })
	rr4, rr4SE := mean(func(e []float64) float64 { return rrIEAdvC(e, 4) })
	rr2, _ := mean(func(e []float64) float64 { return rrIEAdvC(e, 2) })
	inf, nan := math.Inf(1), math.NaN()
	mk := func(s MultiSetting, eadv, se, bound, p98, infFrac float64) report.Audit {
		a := report.Audit{Dataset: MultiDataset, ConfigID: MultiConfig, Setting: s.Setting, Pet: s.Pet, K: s.K, Epsilon: s.Eps,
			EtaSource: "clean_model(lr=0.01)"}
		a.Summary = audit.Summary{Kind: s.Pet, K: s.K, Epsilon: s.Eps, Classes: MultiClasses, NExamples: len(eta), EAdv: eadv, EAdvSE: se, EAdvBound: bound,
			MAP50: math.Min(p98, 0.8*p98), MAP90: p98, MAP98: p98, MAP99: p98, MAMax: p98, MAInfFrac: infFrac, MAMean: math.Min(p98, 0.7*p98),
			RealizedDraws: 20, RealizedGain: eadv * 1.01, RealizedGainSE: 0.002, RealizedZ: 0.4, EpsLower: nan, EpsLowerRealBags: nan}
		a.EtaECE, a.EtaBrier, a.EAdvCalibrated, a.EAdvTrue, a.EAdvTrialMin, a.EAdvTrialMax = nan, nan, nan, nan, nan, nan
		if !math.IsInf(s.Eps, 0) && s.Eps > 0 {
			a.Summary.Epsilon = s.Eps
		} else {
			a.Summary.Epsilon = inf
		}
		return a
	}
	estimated := func(a report.Audit) report.Audit {
		a.EAdvEstimated, a.BagDraws = true, audit.DefaultBagDraws
		return a
	}
	ss := MultiSettings()
	return []report.Audit{
		mk(ss[0], none, noneSE, nan, inf, 1),
		mk(ss[1], rr1, rr1SE, rr1, 1, 0),
		mk(ss[2], rr4, rr4SE, rr4, 4, 0),
		mk(ss[3], 0.7*rr1, 0.8*rr1SE, rr1, 1, 0),
		mk(ss[4], 0.121, 0.003, nan, inf, 1),
		estimated(mk(ss[5], 0.031, 0.001, rr2, 1.7, 0)), // llp_geom at C = 10, k = 8: 9⁹ releases per bag
	}
}

// Multiclass is the summary of MultiRuns and MultiAudits.
func Multiclass(t testing.TB) *report.Summary {
	t.Helper()
	s, err := report.Summarize(MultiRuns(), MultiAudits(), report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// MultiPosteriors simulates n examples each of rr ε ∈ {1, 4} and llp k = 8
// on C = 10 classes: Prior and Posterior are the probabilities of the drawn
// label before and after the release (η_y and P(y | release)), the
// posteriors exact (llp's by a dynamic program over its bag-mates' count
// vectors); IEAdv is exact for rr and the single draw's gain for llp; |MA|
// is the largest log likelihood ratio of the release between two classes
// (ε for k-ary RR; +Inf for llp k = 8, whose counts always rule a class
// out).
func MultiPosteriors(seed uint64, n int) []report.Posterior {
	r := rand.New(rand.NewPCG(seed, 13))
	draw := func(e []float64) int {
		u := r.Float64()
		for c, p := range e {
			if u < p {
				return c
			}
			u -= p
		}
		return len(e) - 1
	}
	var out []report.Posterior
	add := func(s MultiSetting, e []float64, y, z int, post, ie, ma float64) {
		out = append(out, report.Posterior{Dataset: MultiDataset, ConfigID: MultiConfig, Setting: s.Setting, Pet: s.Pet, K: s.K, Epsilon: s.Eps,
			Sample: audit.Sample{Index: len(out), Bag: -1, Prior: e[y], Label: uint8(y), Release: float64(z), Posterior: post, IEAdv: ie, AbsMA: ma}})
	}
	ss := MultiSettings()
	for _, s := range []MultiSetting{ss[1], ss[2]} {
		keep, other := rrKeep(s.Eps)
		for _, e := range multiEta(r, n) {
			y := draw(e)
			z := y
			if r.Float64() >= keep {
				z = (y + 1 + r.IntN(MultiClasses-1)) % MultiClasses
			}
			lik := func(c int) float64 {
				if c == z {
					return keep
				}
				return other
			}
			var norm float64
			for c, p := range e {
				norm += p * lik(c)
			}
			add(s, e, y, z, e[y]*lik(y)/norm, rrIEAdvC(e, s.Eps), s.Eps)
		}
	}
	llp := ss[4]
	for start := 0; start < n; start += llp.K {
		eta := multiEta(r, llp.K)
		ys := make([]int, llp.K)
		counts := make([]int, MultiClasses)
		for i, e := range eta {
			ys[i] = draw(e)
			counts[ys[i]]++
		}
		for i, e := range eta {
			others := slices.Delete(slices.Clone(eta), i, i+1)
			post := make([]float64, MultiClasses)
			var norm float64
			for c := range post {
				if counts[c] == 0 {
					continue
				}
				rest := slices.Clone(counts)
				rest[c]--
				post[c] = e[c] * countProb(others, rest)
				norm += post[c]
			}
			for c := range post {
				post[c] /= norm
			}
			add(llp, e, ys[i], 0, post[ys[i]], math.Max(slices.Max(post)-slices.Max(e), 0), math.Inf(1))
		}
	}
	return out
}

// countProb is the probability that independent labels with class
// probabilities eta[j] have exactly the class counts counts.
func countProb(eta [][]float64, counts []int) float64 {
	if len(eta) == 0 {
		return 1
	}
	var p float64
	for c, n := range counts {
		if n > 0 && eta[0][c] > 0 {
			counts[c]--
			p += eta[0][c] * countProb(eta[1:], counts)
			counts[c]++
		}
	}
	return p
}
