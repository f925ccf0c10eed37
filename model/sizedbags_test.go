package model

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// bag_mse on bags of any size: the size-weighted mean of the slots'
// squared errors of their mean output, computed directly (bags of 1, 3
// and 4 rows, one empty slot, two padding rows) within 1e-5, and its
// gradient: ∂/∂z_b = 2·(z̄_u − t_u)/Σn for a row of slot u, 0 for padding
// (within 1e-5). A mean taken over a slot's n − 1 rows, or an unweighted
// mean over slots, is 10% off or more here.
func TestSizedBagMSE(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const rows, slots = 10, 4
	logits := make([]float32, rows)
	for i := range logits {
		logits[i] = float32(r.NormFloat64())
	}
	slot := []int{0, 1, 1, 1, 2, 2, 2, 2, -1, -1}
	mean, n := []float64{0.5, -0.7, 1.3, 0}, []float64{1, 3, 4, 0}
	var target []float32
	for _, v := range mean {
		target = append(target, float32(v))
	}
	for _, v := range n {
		target = append(target, float32(v))
	}
	for _, s := range slot {
		target = append(target, float32(s))
	}
	exec, err := NewExec(goBackend(t), func(z, y *Node) []*Node {
		l := sizedLoss(LossBagMSE, z, y, slots)
		return []*Node{l, Gradient(ReduceAllSum(l), z)[0]}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(logits, 1, rows), tensors.FromFlatDataAndDimensions(target, 1, len(target)))
	if err != nil {
		t.Fatal(err)
	}
	got, grad := float64(tensors.MustCopyFlatData[float32](outs[0])[0]), tensors.MustCopyFlatData[float32](outs[1])
	zbar := make([]float64, slots)
	for b, s := range slot {
		if s >= 0 {
			zbar[s] += float64(logits[b]) / n[s]
		}
	}
	var num, den float64
	for u := range mean {
		num += n[u] * (zbar[u] - mean[u]) * (zbar[u] - mean[u])
		den += n[u]
	}
	if want := num / den; math.Abs(got-want) > 1e-5*max(1, want) {
		t.Errorf("loss %v, want %v", got, want)
	}
	for b, s := range slot {
		want := 0.0
		if s >= 0 {
			want = 2 * (zbar[s] - mean[s]) / den
		}
		if math.Abs(float64(grad[b])-want) > 1e-5 {
			t.Errorf("row %d (slot %d): gradient %v, want %v", b, s, grad[b], want)
		}
	}
}
