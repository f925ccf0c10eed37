package model

import (
	"fmt"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX style, as losses.go
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// sizedLoss is the loss of bags of any size packed into batches
// (data.BatchOptions.SizedBags: ara_summary's key groups): propmatch on
// binary conversions (sizedPropMatch), bag_mse on values (sizedBagMSE).
func sizedLoss(l Loss, logits, target *Node, slots int) *Node {
	switch l {
	case LossPropMatch:
		return sizedPropMatch(logits, target, slots)
	case LossBagMSE:
		return sizedBagMSE(logits, target, slots)
	}
	panic(fmt.Sprintf("model: %s does not train on bags of any size", l))
}

// sizedBagMSE is bag_mse on bags of any size packed into batches: logits
// [R, B] (the regression head's outputs), target [R, U + U + B] laid out
// as sizedPropMatch's (each slot's released mean t_u, its size n_u, 0 for
// an empty slot, and each row's slot, −1 for padding). With z̄_u the mean
// output of slot u's rows, each bag's loss is (z̄_u − t_u)² and the
// replica's the mean over the batch's bags weighted by their sizes,
// Σ_u n_u·(z̄_u − t_u)² / Σ_u n_u (each row weighs the same; at equal sizes
// it is bag_mse). Unbiased up to a constant under mean-zero noise on t.
func sizedBagMSE(logits, target *Node, slots int) *Node {
	r, rows := logits.Shape().Dim(0), logits.Shape().Dim(1)
	if logits.Rank() != 2 || target.Rank() != 2 || target.Shape().Dim(0) != r || target.Shape().Dim(1) != 2*slots+rows {
		panic(fmt.Sprintf("model: bag_mse on bags of any size: logits %s need targets [%d, %d], got %s", logits.Shape(), r, 2*slots+rows, target.Shape()))
	}
	mean := Slice(target, AxisRange(), AxisRange(0, slots))    // [R, U]
	n := Slice(target, AxisRange(), AxisRange(slots, 2*slots)) // [R, U]
	slot := BroadcastToDims(InsertAxes(Slice(target, AxisRange(), AxisRange(2*slots, 2*slots+rows)), -1), r, rows, slots)
	ids := Iota(logits.Graph(), shapes.Make(target.DType(), r, rows, slots), 2)
	w := ConvertDType(Equal(slot, ids), logits.DType())                                  // [R, B, U]: row b is in slot u
	sum := ReduceSum(Mul(BroadcastToDims(InsertAxes(logits, -1), r, rows, slots), w), 1) // [R, U]
	zbar := Div(sum, Max(n, OnesLike(n)))
	per := Square(Sub(zbar, mean))
	per = Where(GreaterThan(n, ZerosLike(n)), per, ZerosLike(per))
	tot := ReduceSum(n, 1)
	return Div(ReduceSum(Mul(per, n), 1), Max(tot, OnesLike(tot)))
}
