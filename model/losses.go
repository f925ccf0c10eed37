package model

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
)

// LossParams holds the mechanism parameters some losses need.
type LossParams struct {
	// FlipProb is randomized response's flip probability π = 1/(1+e^ε), in
	// [0, 1/2) (debiased_bce).
	FlipProb float64
	// Prior is the label prior p = P(y=1) (easyllp); the caller estimates it,
	// e.g. as the mean released proportion.
	Prior float64
}

// Validate checks the parameters the loss l uses.
func (p LossParams) Validate(l Loss) error {
	switch l {
	case LossDebiasedBCE:
		if !(p.FlipProb >= 0 && p.FlipProb < 0.5) {
			return fmt.Errorf("model: debiased_bce needs flip probability in [0, 0.5), got %v", p.FlipProb)
		}
	case LossEasyLLP:
		if !(p.Prior >= 0 && p.Prior <= 1) {
			return fmt.Errorf("model: easyllp needs a label prior in [0, 1], got %v", p.Prior)
		}
	case LossBCE, LossPropMatch:
	default:
		return fmt.Errorf("model: invalid loss %v", l)
	}
	return nil
}

// stableSoftplus is log(1+e^x), computed stably as max(x,0) + log1p(e^-|x|).
func stableSoftplus(x *Node) *Node {
	return Add(Max(x, ZerosLike(x)), Log1p(Exp(Neg(Abs(x)))))
}

// BCEWithLogits is the elementwise binary cross-entropy of sigmoid(logits)
// against y, written as softplus(z) − y·z. This is y·ℓ(z,1) + (1−y)·ℓ(z,0),
// linear in y, so it stays an unbiased loss when y is an unbiased estimate of
// the label lying outside [0,1] (soft, debiased or noisy targets).
func BCEWithLogits(logits, y *Node) *Node {
	return Sub(stableSoftplus(logits), Mul(y, logits))
}

// logMeanExp returns log(mean(exp(a))) over the last axis, stably.
func logMeanExp(a *Node) *Node {
	m := StopGradient(ReduceAndKeep(a, ReduceMax, -1))
	s := Log(ReduceSum(Exp(Sub(a, m)), -1))
	return AddScalar(Add(Squeeze(m, -1), s), -math.Log(float64(a.Shape().Dim(-1))))
}

// LossGraph returns the scalar training loss of logits (one per row, shape
// [rows]) against the released target:
//
//   - bce: mean over rows of BCE(σ(z), y), target [rows] of clean 0/1 labels.
//   - debiased_bce: mean of ((1−π)ℓ(z,ỹ) − π ℓ(z,1−ỹ))/(1−2π), the unbiased
//     BCE for randomized-response labels ỹ (Natarajan et al. 2013; the
//     paper's Appendix C "Training with Randomized Response"), target [rows].
//   - propmatch: rows are consecutive bags of bagSize; target [rows/bagSize]
//     holds each bag's released proportion α. Mean over bags of
//     −[α log p̄ + (1−α) log(1−p̄)], p̄ the bag's mean predicted probability,
//     both logs computed in log space; α may lie outside [0,1] (Laplace noise,
//     debiased geometric noise) and the loss stays unbiased (Appendix D).
//   - easyllp: per-row soft label ỹ = k·α − (k−1)·p (p = Prior, k = bagSize),
//     mean of ỹ ℓ(z,1) + (1−ỹ) ℓ(z,0) (Busa-Fekete et al. 2023).
func LossGraph(l Loss, p LossParams, logits, target *Node, bagSize int) *Node {
	rows := logits.Shape().Dim(0)
	if logits.Rank() != 1 || target.Rank() != 1 {
		panic(fmt.Sprintf("model: LossGraph wants rank-1 logits and target, got %s and %s", logits.Shape(), target.Shape()))
	}
	if l.PerBag() {
		if bagSize < 1 || rows%bagSize != 0 || target.Shape().Dim(0) != rows/bagSize {
			panic(fmt.Sprintf("model: %s with bag size %d: %d rows need %d targets, got %d",
				l, bagSize, rows, rows/max(bagSize, 1), target.Shape().Dim(0)))
		}
	} else if target.Shape().Dim(0) != rows {
		panic(fmt.Sprintf("model: %s: %d rows need %d targets, got %d", l, rows, rows, target.Shape().Dim(0)))
	}
	switch l {
	case LossBCE:
		return ReduceAllMean(BCEWithLogits(logits, target))
	case LossDebiasedBCE:
		pi := p.FlipProb
		// (1−π)(sp(z) − ỹz) − π(sp(z) − (1−ỹ)z), all over 1−2π.
		sp := stableSoftplus(logits)
		pos := Sub(sp, Mul(target, logits))
		neg := Sub(sp, Mul(OneMinus(target), logits))
		per := MulScalar(Sub(MulScalar(pos, 1-pi), MulScalar(neg, pi)), 1/(1-2*pi))
		return ReduceAllMean(per)
	case LossPropMatch:
		z := Reshape(logits, rows/bagSize, bagSize)
		logPBar := logMeanExp(Neg(stableSoftplus(Neg(z)))) // log mean σ(z)
		log1mPBar := logMeanExp(Neg(stableSoftplus(z)))    // log mean σ(−z) = log(1 − p̄)
		per := Neg(Add(Mul(target, logPBar), Mul(OneMinus(target), log1mPBar)))
		return ReduceAllMean(per)
	case LossEasyLLP:
		k := float64(bagSize)
		alpha := Reshape(BroadcastToDims(InsertAxes(target, -1), rows/bagSize, bagSize), rows)
		soft := AddScalar(MulScalar(alpha, k), -(k-1)*p.Prior)
		return ReduceAllMean(BCEWithLogits(logits, soft))
	default:
		panic(fmt.Sprintf("model: invalid loss %v", l))
	}
}
