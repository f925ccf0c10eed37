package audit

import (
	"fmt"
	"math"
)

// The quality of the attacker's η: the audit's figures hold for an
// attacker who knows η, and with a model's η̂ (Section 4) they are those of
// an attacker who believes η̂. Reliability measures η̂ against labels on
// rows that neither trained the model nor are audited; Platt refits it.

// CalBin is one bin of a reliability table.
type CalBin struct {
	Lo, Hi  float64 // the bin [Lo, Hi) of η values ([Lo, 1] for the last)
	N       int     // rows in the bin
	MeanEta float64 // mean η of its rows (NaN when empty)
	Rate    float64 // fraction of its rows labelled 1 (NaN when empty)
}

// Calibration is a reliability table of η against labels.
type Calibration struct {
	Bins []CalBin
	N    int // rows
	// ECE is the expected calibration error Σ_b (N_b/N)·|MeanEta_b − Rate_b|
	// over the equal-width bins; Brier the mean of (η − y)².
	ECE, Brier float64
}

// Reliability bins η into bins equal-width bins of [0, 1] and compares each
// bin's mean η with its rate of label 1. Errors name a bad η or label.
func Reliability(eta []float64, labels []uint8, bins int) (*Calibration, error) {
	if len(eta) != len(labels) {
		return nil, paramErr("labels", fmt.Sprintf("%d labels for %d η values", len(labels), len(eta)))
	}
	if len(eta) == 0 {
		return nil, paramErr("eta", "no calibration rows")
	}
	if bins < 1 {
		return nil, paramErr("bins", fmt.Sprintf("must be ≥ 1, got %d", bins))
	}
	c := &Calibration{Bins: make([]CalBin, bins), N: len(eta)}
	sumEta := make([]float64, bins)
	ones := make([]int, bins)
	for i, e := range eta {
		if !(e >= 0 && e <= 1) {
			return nil, &EtaError{Index: i, Value: e}
		}
		y := labels[i]
		if y > 1 {
			return nil, paramErr("labels", fmt.Sprintf("label %d at row %d is not 0/1", y, i))
		}
		b := min(bins-1, int(e*float64(bins)))
		c.Bins[b].N++
		sumEta[b] += e
		ones[b] += int(y)
		d := e - float64(y)
		c.Brier += d * d
	}
	c.Brier /= float64(len(eta))
	for b := range c.Bins {
		cb := &c.Bins[b]
		cb.Lo, cb.Hi = float64(b)/float64(bins), float64(b+1)/float64(bins)
		cb.MeanEta, cb.Rate = math.NaN(), math.NaN()
		if cb.N > 0 {
			cb.MeanEta = sumEta[b] / float64(cb.N)
			cb.Rate = float64(ones[b]) / float64(cb.N)
			c.ECE += float64(cb.N) / float64(len(eta)) * math.Abs(cb.MeanEta-cb.Rate)
		}
	}
	return c, nil
}

// Platt is a logistic recalibration η' = σ(A·logit(η) + B) (Platt 1999,
// fitted on the logit of the model's score): monotone, so it keeps the
// ranking of η; A = 1, B = 0 is the identity. It corrects a shift (η̂ about
// 0.02 high in every bin) and a temperature (η̂ too flat or too sharp).
type Platt struct{ A, B float64 }

// plattClip keeps logit(η) finite: η is clipped to [1e-7, 1 − 1e-7].
const plattClip = 1e-7

func logit(e float64) float64 {
	e = min(1-plattClip, max(plattClip, e))
	return math.Log(e) - math.Log1p(-e)
}

// FitPlatt fits Platt by maximum likelihood (Newton's method on the
// logistic log-loss of the labels against A·logit(η) + B, with a 1e-6 ridge
// so that separable data stay finite). It needs both labels present.
func FitPlatt(eta []float64, labels []uint8) (Platt, error) {
	if len(eta) != len(labels) {
		return Platt{}, paramErr("labels", fmt.Sprintf("%d labels for %d η values", len(labels), len(eta)))
	}
	n1 := 0
	for i, e := range eta {
		if !(e >= 0 && e <= 1) {
			return Platt{}, &EtaError{Index: i, Value: e}
		}
		if labels[i] > 1 {
			return Platt{}, paramErr("labels", fmt.Sprintf("label %d at row %d is not 0/1", labels[i], i))
		}
		n1 += int(labels[i])
	}
	if n1 == 0 || n1 == len(eta) {
		return Platt{}, paramErr("labels", fmt.Sprintf("Platt scaling needs both labels; %d of %d rows are 1", n1, len(eta)))
	}
	const ridge = 1e-6
	p := Platt{A: 1}
	x := make([]float64, len(eta))
	for i, e := range eta {
		x[i] = logit(e)
	}
	for range 100 {
		// Gradient and Hessian of the mean log-loss + ridge/2·(A² + B²).
		var ga, gb, haa, hab, hbb float64
		for i, xi := range x {
			q := 1 / (1 + math.Exp(-(p.A*xi + p.B)))
			r := q - float64(labels[i])
			w := q * (1 - q)
			ga += r * xi
			gb += r
			haa += w * xi * xi
			hab += w * xi
			hbb += w
		}
		n := float64(len(x))
		ga, gb = ga/n+ridge*p.A, gb/n+ridge*p.B
		haa, hab, hbb = haa/n+ridge, hab/n, hbb/n+ridge
		det := haa*hbb - hab*hab
		if !(det > 0) {
			break
		}
		da, db := (hbb*ga-hab*gb)/det, (haa*gb-hab*ga)/det
		p.A, p.B = p.A-da, p.B-db
		if math.Abs(da)+math.Abs(db) < 1e-12 {
			break
		}
	}
	if math.IsNaN(p.A) || math.IsNaN(p.B) {
		return Platt{}, fmt.Errorf("audit: Platt scaling did not converge")
	}
	return p, nil
}

// Apply returns σ(A·logit(η) + B) for each η.
func (p Platt) Apply(eta []float64) []float64 {
	out := make([]float64, len(eta))
	for i, e := range eta {
		out[i] = 1 / (1 + math.Exp(-(p.A*logit(e) + p.B)))
	}
	return out
}
