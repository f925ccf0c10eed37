package audit

import (
	"fmt"
	"math"
	"slices"

	"labelprivacy/pets"
)

// Labels with C classes (2 ≤ C ≤ pets.MaxClasses). The attacker's knowledge
// of example i is a vector η_i ∈ Δ_C, η_iy = P(y_i = y | x_i). With a
// release z and the mechanism's likelihood P(z | y_i = y) (mixed over the
// other labels of a bag), the Bayes attacker (Lemma A.1) guesses
// argmax_y P(y_i = y | z), with posterior
//
//	P(y_i = y | z) = η_iy·P(z | y) / Σ_{y'} η_iy'·P(z | y'),
//
// and Definition 3.1's individual expected advantage is
//
//	IEAdv_i = E_z[max_y P(y_i = y | z)] − max_y η_iy
//	        = Σ_z max_y η_iy·P(z | y) − max_y η_iy      (z discrete; ∫ dz otherwise).
//
// At C = 2 with η_i = (1−η, η) these are the binary audit's quantities.

// EtaTolerance is how far from 1 the sum of an η vector may be for CheckEtaC
// (float32 softmax outputs sum to 1 within ~1e-6). RunC audits each
// accepted vector divided by its sum (normalizeEtaC).
const EtaTolerance = 1e-4

// CheckEtaC returns an error wrapping ErrInvalidInput if eta (n vectors of
// c entries, flat: eta[i·c+y] = η_iy) has the wrong length, an entry that is
// not a finite number in [0, 1], or a vector whose sum is farther than
// EtaTolerance from 1. The error names the first bad example (EtaError
// carries its flat index).
func CheckEtaC(eta []float64, c int) error {
	if c < 2 || c > pets.MaxClasses {
		return paramErr("classes", fmt.Sprintf("must be in [2, %d], got %d", pets.MaxClasses, c))
	}
	if len(eta)%c != 0 {
		return paramErr("eta", fmt.Sprintf("length %d is not a multiple of %d classes", len(eta), c))
	}
	for i := 0; i < len(eta); i += c {
		s := 0.0
		for j, v := range eta[i : i+c] {
			if !(v >= 0 && v <= 1) {
				return &EtaError{Index: i + j, Value: v}
			}
			s += v
		}
		if math.Abs(s-1) > EtaTolerance {
			return paramErr("eta", fmt.Sprintf("example %d: class probabilities sum to %v, not 1", i/c, s))
		}
	}
	return nil
}

// etaRenormalize is how far from 1 a row's sum may be for RunC to audit it
// as given (normalizeEtaC): IEAdv and IEAdvBoundC then disagree by at most
// about this much, below BoundTolerance, and a row normalized in float64
// (its sum within a few ulps of 1) keeps its bits.
const etaRenormalize = 1e-13

// normalizeEtaC returns eta (n vectors of c entries, checked by CheckEtaC)
// with every vector whose sum s is farther than etaRenormalize from 1
// divided by s (η_y/s, s summed in class order): a copy, or eta itself
// when no vector is. The audit's figures are defined on the simplex, and
// CheckEtaC accepts sums within EtaTolerance of 1 as rounding of a
// probability vector, so RunC audits the vector the row rounds. As given,
// IEAdv and the posteriors would be those of a measure of mass s while
// IEAdvBoundC's tail form takes the mass to be 1: the two disagree by up
// to |1 − s|·(C−1)/(e^ε+C−1), which for a float32 softmax row
// (|1 − s| ~ 2e-7) is ~1e5 times BoundTolerance, and an honest mechanism
// failed the IEAdv ≤ bound check. (Widening BoundTolerance to
// EtaTolerance instead would let a mechanism exceed the ε-DP worst case by
// 1e-4 per example unseen.)
func normalizeEtaC(eta []float64, c int) []float64 {
	out := eta
	for i := 0; i < len(eta); i += c {
		s := 0.0
		for _, v := range eta[i : i+c] {
			s += v
		}
		if math.Abs(s-1) <= etaRenormalize {
			continue
		}
		if &out[0] == &eta[0] {
			out = slices.Clone(eta)
		}
		for j := i; j < i+c; j++ {
			out[j] = eta[j] / s
		}
	}
	return out
}

// IEAdvBoundC returns the largest individual expected advantage (Definition
// 3.1) that any ε-label-DP mechanism can give the Bayes attacker on an
// example whose class probabilities are eta (len C ≤ pets.MaxClasses):
//
//	IEAdvBoundC(η, ε) = max_{k=1..C} M_k·e^ε/(e^ε+k−1) − M_1,
//
// M_k the sum of the k largest η_y. It is attained by RRWithPrior with the
// prior η (RRWithPrior's set of rr_prior), and at C = 2 it is IEAdvBound
// (Theorem 3.5's (min(η,1−η) − π)⁺). ε = +Inf gives 1 − M_1, ε = 0 gives 0.
// It is evaluated in tail form, T_1 − T_k·u_k − (k−1)/(e^ε+k−1) with
// T_k = 1 − M_k and u_k = e^ε/(e^ε+k−1), so small advantages are not lost
// to cancellation.
//
// Proof. Fix everything the mechanism sees besides y_i (the other labels,
// the bags: independent of y_i). Any attacker, randomized or not, maps the
// release to a guess; merging releases by the guess gives a C→C channel
// Q(c | y) = P(guess c | y_i = y), and ε-label-DP of the release implies
// Q(c | y) ≤ e^ε·Q(c | y') for all c, y, y' (post-processing; mixing over
// the other labels keeps the inequality). Its success probability is
// Σ_y η_y·q_y with q_y = Q(y | y). For each y,
// 1 − q_y = Σ_{c≠y} Q(c | y) ≥ e^{−ε}·Σ_{c≠y} q_c, i.e.
// q_y + e^{−ε}(S − q_y) ≤ 1 with S = Σ_c q_c; with δ = e^{−ε} all C
// constraints together say N(q) = (1−δ)·max_y q_y + δ·Σ_y q_y ≤ 1 (and q ≥ 0).
// Write q by its level sets: with the values of q sorted v_1 ≥ … ≥ v_C ≥
// v_{C+1} = 0 and A_j the classes of the j largest,
// q = Σ_j (v_j − v_{j+1})·1_{A_j}, and N is linear along this decomposition:
// N(q) = Σ_j (v_j − v_{j+1})·N(1_{A_j}), N(1_{A_j}) = 1 − δ + jδ. So q is a
// sub-convex combination (weights λ_j = (v_j − v_{j+1})·N(1_{A_j}), Σλ_j =
// N(q) ≤ 1) of the points u_j·1_{A_j}, u_j = 1/(1−δ+jδ) = e^ε/(e^ε+j−1),
// and of 0. A linear objective with η ≥ 0 is therefore at most
// max_j u_j·η(A_j) ≤ max_k u_k·M_k: the LP's optimum sits at a breakpoint
// S_k = k·u_k, q = u_k on the top k classes. Subtracting the uninformed
// attacker's M_1 gives the bound. RRWithPrior with prior η chooses the k
// maximising M_k·u_k, and guessing its release is right with probability
// M_k·u_k, so the bound is attained. At C = 2: max(M_1, e^ε/(e^ε+1)) − M_1
// = (min(η,1−η) − π)⁺. ∎
func IEAdvBoundC(eta []float64, eps float64) float64 {
	var sorted [pets.MaxClasses]float64
	c := len(eta)
	s := sorted[:c]
	copy(s, eta)
	sortDesc(s)
	var tail [pets.MaxClasses + 1]float64 // tail[k] = T_k
	for k := c - 1; k >= 0; k-- {
		tail[k] = tail[k+1] + s[k]
	}
	if math.IsInf(eps, 1) {
		return tail[1]
	}
	E := math.Exp(eps)
	best := 0.0 // k = 1
	for k := 2; k <= c; k++ {
		d := E + float64(k-1)
		best = max(best, tail[1]-tail[k]*(E/d)-float64(k-1)/d)
	}
	return best
}

// sortDesc sorts a short slice in decreasing order (insertion sort).
func sortDesc(s []float64) {
	for i := 1; i < len(s); i++ {
		x := s[i]
		j := i
		for ; j > 0 && s[j-1] < x; j-- {
			s[j] = s[j-1]
		}
		s[j] = x
	}
}

// argmax returns the first index of the largest entry and the entry.
func argmax(v []float64) (int, float64) {
	bi, bv := 0, v[0]
	for i, x := range v[1:] {
		if x > bv {
			bi, bv = i+1, x
		}
	}
	return bi, bv
}

// IEAdvRRC returns the exact IEAdv of randomized response over every class
// (a channel of pets.FormRR: rr on C classes, none's identity) for an
// example with class probabilities eta (len C): with u = P(y | y) (rr:
// e^ε/(e^ε+C−1); none: 1), v = P(z | y) for z ≠ y (rr: 1/(e^ε+C−1);
// none: 0), y* = argmax η and M_1 = η_{y*},
//
//	IEAdv = Σ_z max_y η_y·P(z|y) − M_1 = Σ_{z ≠ y*} (u·η_z − v·M_1)⁺,
//
// because max_y η_y·P(z|y) = max(u·η_z, v·M_1) for z ≠ y* and u·M_1 for
// z = y*, and M_1 − u·M_1 = (C−1)·v·M_1. Terms are non-negative, so there is
// no cancellation. At C = 2 it is Theorem 3.5, (min(η,1−η) − π)⁺.
// Panics if ch is not of pets.FormRR or len(eta) ≠ C.
func IEAdvRRC(eta []float64, ch *pets.Channel) float64 {
	if ch.Form != pets.FormRR || len(eta) != ch.C {
		panic(fmt.Sprintf("audit: IEAdvRRC: a channel of form %d on %d classes with %d class probabilities", ch.Form, ch.C, len(eta)))
	}
	u, v := ch.Prob(0, 0), ch.Prob(1, 0)
	ys, m1 := argmax(eta)
	s := 0.0
	for z, e := range eta {
		if z != ys {
			s += max(0, u*e-v*m1)
		}
	}
	return s
}

// IEAdvChannelC returns the exact IEAdv of an example with class
// probabilities eta (len C) released through the channel ch (any
// pets.Channel: rr_prior's RR within the prior's set, bot's, a kind's
// table): Σ_z max_y η_y·P(z|y) − max_y η_y, floored at 0 (rounding).
// Releases no label releases add 0, so a set of k classes costs O(C·k) in
// effect; a channel that shows nothing (bot; a set of one, rr_prior's
// argmax branch) gives 0. Panics if len(eta) ≠ C.
func IEAdvChannelC(eta []float64, ch *pets.Channel) float64 {
	if len(eta) != ch.C {
		panic(fmt.Sprintf("audit: IEAdvChannelC: a channel of %d classes with %d class probabilities", ch.C, len(eta)))
	}
	_, m1 := argmax(eta)
	tot := 0.0
	for z := range ch.Z {
		best := 0.0
		for y, e := range eta {
			best = max(best, e*ch.P[z*ch.C+y])
		}
		tot += best
	}
	return max(0, tot-m1)
}

// ExampleLikelihoodsC writes P(z | y) for y = 0..C−1 into dst (len C) for a
// release z through the channel ch.
func ExampleLikelihoodsC(dst []float64, ch *pets.Channel, z uint8) {
	for y := range dst {
		dst[y] = ch.P[int(z)*ch.C+y]
	}
}

// PosteriorC writes the Bayes posterior P(y | z) = η_y·lik_y / Σ_y' η_y'·lik_y'
// into dst (len C; dst may alias eta or lik) from the class probabilities
// eta and the likelihoods lik_y = P(z | y) (any common positive factor);
// the prior when every η_y·lik_y is 0 (a release the model deems
// impossible).
func PosteriorC(dst, eta, lik []float64) {
	s := 0.0
	for y, e := range eta {
		s += e * lik[y]
	}
	if s == 0 {
		copy(dst, eta)
		return
	}
	for y, e := range eta {
		dst[y] = e * lik[y] / s
	}
}

// MultAdvC returns the multiplicative advantage (Definition 3.6) of a
// realized release for C classes: the largest change of log posterior odds
// over pairs of classes,
//
//	max_{a,b} I_{a,b} = max_{a,b} [log P(a|z)/P(b|z) − log η_a/η_b]
//	                  = max_{a,b} log lik_a/lik_b = log max lik − log min lik,
//
// over the classes with η_y > 0 (where the posterior odds are defined), or
// over every class when eta is nil, the likelihood-ratio form that does not
// depend on η (the binary audit's |I| at C = 2, continuous at η ∈ {0,1}).
// For an ε-label-DP mechanism it is ≤ ε for every release. +Inf when some
// likelihood is 0 and another is not (the release rules a class out), 0 if
// all are 0 (unreachable for a realized release).
func MultAdvC(eta, lik []float64) float64 {
	lo, hi := math.Inf(1), 0.0
	for y, l := range lik {
		if eta != nil && !(eta[y] > 0) {
			continue
		}
		lo, hi = min(lo, l), max(hi, l)
	}
	switch {
	case hi == 0:
		return 0
	case lo == 0:
		return math.Inf(1)
	}
	return math.Log(hi) - math.Log(lo)
}
