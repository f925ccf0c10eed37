package ara

import "math"

// RMSREThreshold is Noise Lab's threshold t of its relative error, in the
// report's units of one conversion: an error is relative to the true value
// or to t, whichever is larger, so that keys of few conversions do not
// dominate.
const RMSREThreshold = 5

// RMSRE is Noise Lab's root mean squared relative error of a summary
// report with threshold t (RMSRE_t): √(mean_k ((noisy_k − true_k) /
// max(true_k, t))²) over its keys k, the values in units of t
// (privacysandbox/noise-lab's rmsre_t divides by max(true, t·scale) on the
// scaled values; on values divided by their scale, as here, that is
// max(true, t)). NaN for no key.
func RMSRE(noisy, truth []float64, t float64) float64 {
	if len(noisy) != len(truth) || len(truth) == 0 {
		return math.NaN()
	}
	s := 0.0
	for k, v := range truth {
		e := (noisy[k] - v) / math.Max(v, t)
		s += e * e
	}
	return math.Sqrt(s / float64(len(truth)))
}

// ExpectedRMSRESquared is E[RMSRE_t²] of a report whose keys' true values
// are truth under independent Laplace noise of scale b (in the same
// units): the noise's variance 2b² over max(true_k, t)², averaged over the
// keys. √ of it is RMSRE_t's root mean square over releases (its mean is a
// little lower, by Jensen's inequality).
func ExpectedRMSRESquared(truth []float64, b, t float64) float64 {
	if len(truth) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, v := range truth {
		d := math.Max(v, t)
		s += 2 * b * b / (d * d)
	}
	return s / float64(len(truth))
}
