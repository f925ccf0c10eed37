package model

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
)

// MaxFlipProb is the largest randomized-response flip probability
// debiased_bce accepts: its weights (1−π)/(1−2π) and π/(1−2π) grow without
// bound as π → ½ (ε → 0), and at π = ½ the labels carry no information.
const MaxFlipProb = 0.5 - 1e-9

// LossParams holds the mechanism parameters some losses need; in a group each
// replica has its own (they are program inputs, not constants).
type LossParams struct {
	// FlipProb is randomized response's flip probability π = 1/(1+e^ε), in
	// [0, MaxFlipProb] (debiased_bce).
	FlipProb float64
	// Prior is the label prior p = P(y=1) (easyllp), in [0, 1]; the caller
	// estimates it, e.g. as the mean released proportion.
	Prior float64
}

// Validate checks the parameters the loss l uses.
func (p LossParams) Validate(l Loss) error {
	switch l {
	case LossDebiasedBCE:
		if !(p.FlipProb >= 0 && p.FlipProb <= MaxFlipProb) {
			return fmt.Errorf("%w: debiased_bce needs a flip probability in [0, 0.5) (at most 0.5−1e-9), got %v",
				ErrInvalidConfig, p.FlipProb)
		}
	case LossEasyLLP:
		if !(p.Prior >= 0 && p.Prior <= 1) {
			return fmt.Errorf("%w: easyllp needs a label prior in [0, 1], got %v", ErrInvalidConfig, p.Prior)
		}
	case LossBCE, LossPropMatch:
	default:
		return fmt.Errorf("%w: invalid loss %v", ErrInvalidConfig, l)
	}
	return nil
}

// stableSoftplus is log(1+e^x), computed stably as max(x,0) + log1p(e^-|x|).
func stableSoftplus(x *Node) *Node {
	return Add(Max(x, ZerosLike(x)), Log1p(Exp(Neg(Abs(x)))))
}

// bceWithLogits is the elementwise binary cross-entropy of sigmoid(logits)
// against y, written as softplus(z) − y·z. This is y·ℓ(z,1) + (1−y)·ℓ(z,0),
// linear in y, so it stays an unbiased loss when y is an unbiased estimate of
// the label lying outside [0,1] (soft, debiased or noisy targets).
func bceWithLogits(logits, y *Node) *Node {
	return Sub(stableSoftplus(logits), Mul(y, logits))
}

// logMeanExp returns log(mean(exp(a))) over the last axis, stably.
func logMeanExp(a *Node) *Node {
	m := StopGradient(ReduceAndKeep(a, ReduceMax, -1))
	s := Log(ReduceSum(Exp(Sub(a, m)), -1))
	return AddScalar(Add(Squeeze(m, -1), s), -math.Log(float64(a.Shape().Dim(-1))))
}

// replicaLoss returns each replica's training loss [R] from its logits
// [R, B] and released targets [R, T]; flip and prior [R] are the replicas'
// LossParams:
//
//   - bce: mean over rows of BCE(σ(z), y), T = B clean 0/1 labels.
//   - debiased_bce: mean of ((1−π)ℓ(z,ỹ) − π ℓ(z,1−ỹ))/(1−2π), the unbiased
//     BCE for randomized-response labels ỹ (Natarajan et al. 2013; the
//     paper's Appendix C "Training with Randomized Response"), T = B.
//   - propmatch: rows are consecutive bags of bag; T = B/bag released
//     proportions α. Mean over bags of −[α log p̄ + (1−α) log(1−p̄)], p̄ the
//     bag's mean predicted probability, both logs computed in log space; α
//     may lie outside [0,1] (Laplace noise, debiased geometric noise) and the
//     loss stays unbiased (Appendix D).
//   - easyllp: per-row soft label ỹ = k·α − (k−1)·p (p = prior, k = bag),
//     mean of ỹ ℓ(z,1) + (1−ỹ) ℓ(z,0) (Busa-Fekete et al. 2023).
//
// It panics (GoMLX style) on shapes that do not fit.
func replicaLoss(l Loss, flip, prior, logits, target *Node, bag int) *Node {
	if logits.Rank() != 2 || target.Rank() != 2 || flip.Rank() != 1 || prior.Rank() != 1 {
		panic(fmt.Sprintf("model: replicaLoss wants logits and target [R, ·], params [R]; got %s, %s, %s, %s",
			logits.Shape(), target.Shape(), flip.Shape(), prior.Shape()))
	}
	r, rows := logits.Shape().Dim(0), logits.Shape().Dim(1)
	want := rows
	if l.PerBag() {
		if bag < 1 || rows%bag != 0 {
			panic(fmt.Sprintf("model: %s: %d rows are not whole bags of %d", l, rows, bag))
		}
		want = rows / bag
	}
	if target.Shape().Dim(0) != r || target.Shape().Dim(1) != want {
		panic(fmt.Sprintf("model: %s: logits %s need targets [%d, %d], got %s", l, logits.Shape(), r, want, target.Shape()))
	}
	switch l {
	case LossBCE:
		return ReduceMean(bceWithLogits(logits, target), 1)
	case LossDebiasedBCE:
		// ((1−π)(sp(z) − ỹz) − π(sp(z) − (1−ỹ)z)) / (1−2π).
		pi := InsertAxes(flip, 1)
		den := OneMinus(MulScalar(pi, 2))
		sp := stableSoftplus(logits)
		pos := Sub(sp, Mul(target, logits))
		neg := Sub(sp, Mul(OneMinus(target), logits))
		per := Div(Sub(Mul(pos, OneMinus(pi)), Mul(neg, pi)), den)
		return ReduceMean(per, 1)
	case LossPropMatch:
		z := Reshape(logits, r, rows/bag, bag)
		logPBar := logMeanExp(Neg(stableSoftplus(Neg(z)))) // log mean σ(z)
		log1mPBar := logMeanExp(Neg(stableSoftplus(z)))    // log mean σ(−z) = log(1 − p̄)
		per := Neg(Add(Mul(target, logPBar), Mul(OneMinus(target), log1mPBar)))
		return ReduceMean(per, 1)
	case LossEasyLLP:
		k := float64(bag)
		alpha := Reshape(BroadcastToDims(InsertAxes(target, -1), r, rows/bag, bag), r, rows)
		soft := Sub(MulScalar(alpha, k), MulScalar(InsertAxes(prior, 1), k-1))
		return ReduceMean(bceWithLogits(logits, soft), 1)
	default:
		panic(fmt.Sprintf("model: invalid loss %v", l))
	}
}
