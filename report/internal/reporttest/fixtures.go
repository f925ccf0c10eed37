// Package reporttest builds the results that the tests of package report
// and of package report/figures share: small hand-made runs, audits and
// summaries, and synthetic result sets shaped like the paper's Section 4
// experiments. Only tests import it.
package reporttest

import (
	"fmt"
	"math"
	"testing"

	"labelprivacy/audit"
	"labelprivacy/pets"
	"labelprivacy/report"
)

// Dataset and config identities of the hand-made results.
const DatasetA, DatasetB, ConfigA = "sha256:aaaaaaaaaaaaaaaa", "sha256:bbbbbbbbbbbbbbbb", "cfg-a"

// RR returns a binary RR(ε=1) run of DatasetA, ConfigA (test accuracy
// not measured: NaN).
func RR(lr float64, trial int, auc float64) report.Run {
	return report.Run{RunID: fmt.Sprintf("r%g-%d", lr, trial), Dataset: DatasetA, ConfigID: ConfigA, Setting: "rr_eps1", Pet: pets.RR,
		Epsilon: 1, LabelDPEpsilon: 1, LR: lr, Trial: trial, TestAUC: auc, TestAccuracy: math.NaN()}
}

// Run returns a binary run of setting/pet/k/eps at lr 1e-3 (DatasetA,
// ConfigA; test accuracy not measured: NaN).
func Run(setting string, pet pets.Kind, k int, eps float64, trial int, id string, auc float64) report.Run {
	ldp := eps
	if !pet.Spec().Privacy.DP() {
		ldp = math.Inf(1)
	}
	return report.Run{RunID: id, Dataset: DatasetA, ConfigID: ConfigA, Setting: setting, Pet: pet, K: k, Epsilon: eps,
		LabelDPEpsilon: ldp, LR: 1e-3, Trial: trial, TestAUC: auc, TestAccuracy: math.NaN()}
}

// Multi returns r as a run on labels of c classes with test accuracy acc
// (its TestAUC then stands for the macro one-vs-rest AUC).
func Multi(r report.Run, c int, acc float64) report.Run {
	r.Classes, r.TestAccuracy = c, acc
	return r
}

// WithDataset returns r of dataset ds.
func WithDataset(r report.Run, ds string) report.Run { r.Dataset = ds; return r }

// WithConfig returns r of config c.
func WithConfig(r report.Run, c string) report.Run { r.ConfigID = c; return r }

// Audit returns the audit of a setting of DatasetA, ConfigA with the true η.
func Audit(setting string, eadv, se, p98, inf float64) report.Audit {
	a := report.Audit{Dataset: DatasetA, ConfigID: ConfigA, Setting: setting, EtaSource: "true"}
	a.EAdv, a.EAdvSE, a.MAP98, a.MAInfFrac = eadv, se, p98, inf
	return a
}

// Near reports whether a ≈ b within 1e-12 relative (NaN equal to NaN).
func Near(a, b float64) bool {
	return a == b || math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b))
}

// Quickstart is a small audited grid like the README's quickstart (3
// trials per setting): every point of its figures must carry its label.
func Quickstart(t testing.TB) *report.Summary {
	t.Helper()
	var runs []report.Run
	var audits []report.Audit
	add := func(setting string, pet pets.Kind, k int, eps, auc, eadv, p98 float64) {
		for tr := range 3 {
			runs = append(runs, Run(setting, pet, k, eps, tr, setting+string(rune('0'+tr)), auc+0.004*float64(tr-1)))
		}
		audits = append(audits, Audit(setting, eadv, eadv/20, p98, 0))
	}
	add("none", pets.None, 0, 0, 0.738, 0.06, math.Inf(1))
	add("rr_eps1", pets.RR, 0, 1, 0.70, 0.012, 1)
	add("rr_eps4", pets.RR, 0, 4, 0.735, 0.04, 4)
	add("llp_k8", pets.LLP, 8, 0, 0.71, 0.02, math.Inf(1))
	add("llp_k64", pets.LLP, 64, 0, 0.66, 0.006, 2.5)
	add("llp_lap_k8_eps1", pets.LLPLap, 8, 1, 0.69, 0.009, 1)
	add("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 0.695, 0.01, 1)
	s, err := report.Summarize(runs, audits, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// CheckedAudits is a quickstart-like audit with the self-checks (realized
// attack, ε-DP worst case, canaries) and η's quality.
func CheckedAudits() []report.Audit {
	mk := func(setting string, pet pets.Kind, k int, eps, eadv, real, bound, epsLo, epsLoReal float64) report.Audit {
		a := report.Audit{Dataset: DatasetA, Setting: setting, Pet: pet, K: k, Epsilon: eps, EtaSource: "clean_model(lr=0.001)"}
		a.Summary = audit.Summary{Kind: pet, K: k, Epsilon: eps, EAdv: eadv, EAdvSE: eadv / 50, EAdvBound: bound,
			RealizedDraws: 20, RealizedGain: real, RealizedGainSE: eadv / 30, RealizedZ: (real - eadv) / (eadv / 30),
			Canaries: 10000, EpsLower: epsLo, EpsLowerRealBags: epsLoReal}
		a.CalibrationRows, a.EtaECE, a.EtaBrier, a.EAdvCalibrated, a.EAdvTrue = 10000, 0.0165, 0.153, eadv*1.02, eadv*1.04
		a.EAdvTrialMin, a.EAdvTrialMax = math.NaN(), math.NaN()
		return a
	}
	nan := math.NaN()
	none := mk("none", pets.None, 0, 0, 0.2157, nan, nan, nan, nan)
	none.Summary.Epsilon, none.RealizedDraws, none.Canaries, none.RealizedGainSE, none.RealizedZ = math.Inf(1), 0, 0, nan, nan
	llp := mk("llp_k8", pets.LLP, 8, 0, 0.0398, 0.0400, nan, 7.89, 2.76)
	llp.Summary.Epsilon = math.Inf(1)
	return []report.Audit{
		none,
		mk("rr_eps1", pets.RR, 0, 1, 0.0400, 0.0398, 0.0400, 0.962, nan),
		mk("rr_eps4", pets.RR, 0, 4, 0.198, 0.1966, 0.198, 3.87, nan),
		llp,
		mk("llp_geom_k8_eps1", pets.LLPGeom, 8, 1, 0.0168, 0.0164, 0.0400, 0.947, 0.45),
	}
}

// CheckedCalibration is the reliability table of CheckedAudits' η: 10
// bins, bin 3 empty.
func CheckedCalibration() []report.Calibration {
	c := report.Calibration{Dataset: DatasetA, EtaSource: "clean_model(lr=0.001)", Calibration: audit.Calibration{N: 10000, ECE: 0.0165, Brier: 0.153}}
	for b := range 10 {
		lo := float64(b) / 10
		c.Bins = append(c.Bins, audit.CalBin{Lo: lo, Hi: lo + 0.1, N: 1000, MeanEta: lo + 0.05, Rate: lo + 0.05 + 0.02*math.Sin(float64(b))})
	}
	c.Bins[3].N, c.Bins[3].MeanEta, c.Bins[3].Rate = 0, math.NaN(), math.NaN()
	return []report.Calibration{c}
}
