package model

import (
	"fmt"
	"math"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// MaxFlipProb is the largest randomized-response flip probability
// debiased_bce accepts: its weights (1−π)/(1−2π) and π/(1−2π) grow without
// bound as π → ½ (ε → 0), and at π = ½ the labels carry no information.
const MaxFlipProb = 0.5 - 1e-9

// MaxKaryFlipProb is the largest flip probability forward_ce and
// backward_ce accept on C classes: (C−1)/C − 1e-9. At (C−1)/C the released
// label is uniform whatever the true one (keep probability 1/C, ε = 0): the
// transition matrix T is singular and the labels carry no information.
func MaxKaryFlipProb(classes int) float64 {
	c := float64(max(classes, 2))
	return (c-1)/c - 1e-9
}

// LossParams holds the mechanism parameters some losses need; in a group each
// replica has its own (they are program inputs, not constants).
type LossParams struct {
	// FlipProb is randomized response's flip probability, the probability
	// that the released label differs from the true one: π = 1/(1+e^ε) in
	// [0, MaxFlipProb] (debiased_bce); on C ≥ 3 classes (forward_ce,
	// backward_ce) k-ary RR's 1 − q = (C−1)/(e^ε+C−1), q = e^ε/(e^ε+C−1) the
	// keep probability, in [0, MaxKaryFlipProb(C)]; each other class is
	// released with probability FlipProb/(C−1).
	FlipProb float64
	// Prior is the label prior p = P(y=1) (easyllp), in [0, 1]; the caller
	// estimates it, e.g. as the mean released proportion.
	Prior float64
}

// Validate checks the parameters the loss l uses. For forward_ce and
// backward_ce, whose bound depends on the class count, it checks
// FlipProb ∈ [0, 1); ValidateFor checks the exact bound.
func (p LossParams) Validate(l Loss) error { return p.ValidateFor(l, 0) }

// ValidateFor checks the parameters the loss l uses on a model of classes
// classes (0: unknown).
func (p LossParams) ValidateFor(l Loss, classes int) error {
	switch l {
	case LossDebiasedBCE:
		if !(p.FlipProb >= 0 && p.FlipProb <= MaxFlipProb) {
			return fmt.Errorf("%w: debiased_bce needs a flip probability in [0, 0.5) (at most 0.5−1e-9), got %v",
				ErrInvalidConfig, p.FlipProb)
		}
	case LossForwardCE, LossBackwardCE:
		ok, bound := p.FlipProb >= 0 && p.FlipProb < 1, "[0, 1)"
		if classes >= 3 {
			hi := MaxKaryFlipProb(classes)
			ok, bound = p.FlipProb >= 0 && p.FlipProb <= hi, fmt.Sprintf("[0, (C−1)/C) (at most %v)", hi)
		}
		if !ok {
			return fmt.Errorf("%w: %s on %d classes needs a flip probability in %s, got %v",
				ErrInvalidConfig, l, classes, bound, p.FlipProb)
		}
	case LossEasyLLP:
		if !(p.Prior >= 0 && p.Prior <= 1) {
			return fmt.Errorf("%w: easyllp needs a label prior in [0, 1], got %v", ErrInvalidConfig, p.Prior)
		}
	case LossBCE, LossPropMatch, LossCE, LossPropMatchCE, LossMSE, LossBagMSE:
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
//   - mse (regression head: the output z itself): mean over rows of
//     (z − t)², T = B released values.
//   - bag_mse: rows are consecutive bags of bag; mean over bags of
//     (z̄ − t)², z̄ the bag's mean output, T = B/bag released means.
//
// The C-class losses take logits [R, B, C] (multiclassLoss).
//
// It panics (GoMLX style) on shapes that do not fit.
func replicaLoss(l Loss, flip, prior, logits, target *Node, bag int) *Node {
	if l.Multiclass() {
		return multiclassLoss(l, flip, logits, target, bag)
	}
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
	case LossMSE:
		return ReduceMean(Square(Sub(logits, target)), 1)
	case LossBagMSE:
		mean := ReduceMean(Reshape(logits, r, rows/bag, bag), -1) // [R, bags]
		return ReduceMean(Square(Sub(mean, target)), 1)
	default:
		panic(fmt.Sprintf("model: invalid loss %v", l))
	}
}

// multiclassLoss returns each replica's training loss [R] from its logits
// [R, B, C] (C ≥ 3 classes) and targets [R, U·C], U = B rows or B/bag bags,
// C values per row or bag, row-major; flip [R] is each replica's
// LossParams.FlipProb. With p = softmax(z) and ℓ_c = −log p_c:
//
//   - ce: mean over rows of Σ_c t_c ℓ_c.
//   - forward_ce: k-ary RR keeps the label with probability q = 1 − flip
//     and releases each other class with b = flip/(C−1), so T = a·I + b·11ᵀ
//     with a = q − b, and the released label's probability under the model
//     is (Tᵀp)_z = b + a·p_z. Mean over rows of −Σ_z t_z log(b + a·p_z)
//     (t one-hot at the released z), computed as a log-sum-exp of log b and
//     log a + log p_z (finite for b = 0 too).
//   - backward_ce: T⁻¹ = (I − b·11ᵀ)/a (Sherman–Morrison; a + C·b = 1), so
//     Σ_c (T⁻¹)_{z,c} ℓ_c = (ℓ_z − b·Σ_c ℓ_c)/a; for a target vector t,
//     mean over rows of (Σ_z t_z ℓ_z − b·(Σ_z t_z)·Σ_c ℓ_c)/a. Its
//     expectation over z given y is ℓ_y (unbiased); at C = 2 it is
//     debiased_bce.
//   - propmatch_ce: rows are consecutive bags of bag; mean over bags of
//     −Σ_c α_c log p̄_c, p̄ the bag's mean predicted distribution, log p̄_c a
//     log-mean-exp of the members' log p_c. Linear in α, so unbiased under
//     mean-zero noise on α, entries outside [0, 1] included (the paper's
//     Appendix D, Theorems D.1 and D.2, per class); at C = 2 it is
//     propmatch.
func multiclassLoss(l Loss, flip, logits, target *Node, bag int) *Node {
	if logits.Rank() != 3 || target.Rank() != 2 || flip.Rank() != 1 {
		panic(fmt.Sprintf("model: %s wants logits [R, B, C], target [R, ·] and params [R]; got %s, %s, %s",
			l, logits.Shape(), target.Shape(), flip.Shape()))
	}
	r, rows, c := logits.Shape().Dim(0), logits.Shape().Dim(1), logits.Shape().Dim(2)
	units := rows
	if l.PerBag() {
		if bag < 1 || rows%bag != 0 {
			panic(fmt.Sprintf("model: %s: %d rows are not whole bags of %d", l, rows, bag))
		}
		units = rows / bag
	}
	if target.Shape().Dim(0) != r || target.Shape().Dim(1) != units*c {
		panic(fmt.Sprintf("model: %s: logits %s need targets [%d, %d·%d], got %s", l, logits.Shape(), r, units, c, target.Shape()))
	}
	t := Reshape(target, r, units, c)
	logP := LogSoftmax(logits, -1) // [R, B, C]
	// kary returns a and b of each replica, shaped [R, 1, 1].
	kary := func() (a, b *Node) {
		f := Reshape(flip, r, 1, 1)
		b = DivScalar(f, float64(c-1))
		return Sub(OneMinus(f), b), b
	}
	switch l {
	case LossCE:
		return ReduceMean(Neg(ReduceSum(Mul(t, logP), -1)), 1)
	case LossForwardCE:
		a, b := kary()
		logB := BroadcastToDims(Log(b), r, rows, c)
		logAP := Add(logP, BroadcastToDims(Log(a), r, rows, c))
		m := StopGradient(Max(logB, logAP))
		logTp := Add(m, Log(Add(Exp(Sub(logB, m)), Exp(Sub(logAP, m))))) // log(b + a·p_c)
		return ReduceMean(Neg(ReduceSum(Mul(t, logTp), -1)), 1)
	case LossBackwardCE:
		a, b := kary()
		a, b = Reshape(a, r, 1), Reshape(b, r, 1)
		own := ReduceSum(Mul(t, logP), -1)                // Σ_z t_z log p_z, [R, B]
		all := Mul(ReduceSum(t, -1), ReduceSum(logP, -1)) // (Σ_z t_z)·Σ_c log p_c
		per := Div(Sub(Mul(all, b), own), a)
		return ReduceMean(per, 1)
	case LossPropMatchCE:
		lp := Reshape(logP, r, units, bag, c)
		m := StopGradient(ReduceAndKeep(lp, ReduceMax, 2))
		logPBar := Add(Squeeze(m, 2), AddScalar(Log(ReduceSum(Exp(Sub(lp, m)), 2)), -math.Log(float64(bag)))) // [R, U, C]
		return ReduceMean(Neg(ReduceSum(Mul(t, logPBar), -1)), 1)
	default:
		panic(fmt.Sprintf("model: invalid C-class loss %v", l))
	}
}

// sizedPropMatch is propmatch on bags of any size packed into batches
// (data.BatchOptions.SizedBags: ara_summary's key groups): logits [R, B],
// target [R, U + U + B], each replica's U slots' released proportions α_u,
// their bag sizes n_u (0: an empty slot) and each row's slot (−1: padding).
// With p̄_u the mean predicted probability of slot u's rows, computed in
// log space over its members only (a masked log-sum-exp), each bag's loss
// is −[α_u log p̄_u + (1−α_u) log(1−p̄_u)] and the replica's the mean over
// the batch's bags weighted by their sizes, Σ_u n_u·ℓ_u / Σ_u n_u: each
// row weighs the same, the bags' noise (of one scale in counts, whatever
// the bag's size) weighs the same for every bag, and at equal sizes it is
// propmatch. Linear in α, so unbiased under mean-zero noise on α (the
// paper's Appendix D).
func sizedPropMatch(logits, target *Node, slots int) *Node {
	r, rows := logits.Shape().Dim(0), logits.Shape().Dim(1)
	if logits.Rank() != 2 || target.Rank() != 2 || target.Shape().Dim(0) != r || target.Shape().Dim(1) != 2*slots+rows {
		panic(fmt.Sprintf("model: propmatch on bags of any size: logits %s need targets [%d, %d], got %s", logits.Shape(), r, 2*slots+rows, target.Shape()))
	}
	alpha := Slice(target, AxisRange(), AxisRange(0, slots))   // [R, U]
	n := Slice(target, AxisRange(), AxisRange(slots, 2*slots)) // [R, U]
	slot := BroadcastToDims(InsertAxes(Slice(target, AxisRange(), AxisRange(2*slots, 2*slots+rows)), -1), r, rows, slots)
	ids := Iota(logits.Graph(), shapes.Make(target.DType(), r, rows, slots), 2)
	member := Equal(slot, ids) // [R, B, U]: row b is in slot u
	logN := Log(Max(n, OnesLike(n)))
	logPBar := Sub(maskedLogSumExp(Neg(stableSoftplus(Neg(logits))), member), logN) // log p̄
	log1mPBar := Sub(maskedLogSumExp(Neg(stableSoftplus(logits)), member), logN)    // log(1 − p̄)
	per := Neg(Add(Mul(alpha, logPBar), Mul(OneMinus(alpha), log1mPBar)))           // [R, U]
	per = Where(GreaterThan(n, ZerosLike(n)), per, ZerosLike(per))
	tot := ReduceSum(n, 1)
	return Div(ReduceSum(Mul(per, n), 1), Max(tot, OnesLike(tot)))
}

// maskedLogSumExp is log Σ_b exp(a[r, b]) over the rows b with
// member[r, b, u], for each slot u: a [R, B], member [R, B, U] → [R, U];
// a slot without members gets a finite value (its loss is masked out by
// its size 0), so that no infinity reaches the gradient.
func maskedLogSumExp(a, member *Node) *Node {
	full := BroadcastToShape(InsertAxes(a, -1), shapes.Make(a.DType(), member.Shape().Dimensions...)) // [R, B, U]
	low := MulScalar(OnesLike(full), -1e30)
	am := Where(member, full, low)
	m := StopGradient(ReduceMax(am, 1)) // [R, U]
	w := ConvertDType(member, a.DType())
	s := ReduceSum(Mul(Exp(Sub(am, InsertAxes(m, 1))), w), 1)
	empty := OneMinus(ReduceMax(w, 1)) // 1 for a slot without members
	return Add(m, Log(Add(s, empty)))
}
