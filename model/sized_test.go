package model

import (
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// evalSized runs sizedPropMatch for one replica and returns the loss and
// its gradient with respect to the logits.
func evalSized(t *testing.T, logits, target []float32, slots int) (float64, []float32) {
	t.Helper()
	exec, err := NewExec(goBackend(t), func(z, y *Node) []*Node {
		l := sizedPropMatch(z, y, slots)
		return []*Node{l, Gradient(ReduceAllSum(l), z)[0]}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(logits, 1, len(logits)), tensors.FromFlatDataAndDimensions(target, 1, len(target)))
	if err != nil {
		t.Fatal(err)
	}
	return float64(tensors.MustCopyFlatData[float32](outs[0])[0]), tensors.MustCopyFlatData[float32](outs[1])
}

// sizedWant is the loss computed directly: each slot's propmatch on its
// rows' mean σ, weighted by its size.
func sizedWant(logits []float32, alpha, n []float64, slot []int) float64 {
	num, den := 0.0, 0.0
	for u := range alpha {
		if n[u] == 0 {
			continue
		}
		pbar := 0.0
		for b, s := range slot {
			if s == u {
				pbar += sigmoid(float64(logits[b]))
			}
		}
		pbar /= n[u]
		num += n[u] * -(alpha[u]*math.Log(pbar) + (1-alpha[u])*math.Log(1-pbar))
		den += n[u]
	}
	return num / den
}

// propmatch on bags of any size: the value of the size-weighted mean of
// the slots' bag losses (bags of 1, 3 and 4 rows, one empty slot,
// padding, a noisy α outside [0, 1]) within 1e-5; at equal sizes it is
// propmatch's; and the gradient is finite (an empty slot and padding rows
// get none).
func TestSizedPropMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const rows, slots = 10, 4
	logits := make([]float32, rows)
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 2)
	}
	slot := []int{0, 1, 1, 1, 2, 2, 2, 2, -1, -1}
	alpha, n := []float64{1, 1.4, 0.25, 0}, []float64{1, 3, 4, 0}
	target := make([]float32, 0, 2*slots+rows)
	for _, a := range alpha {
		target = append(target, float32(a))
	}
	for _, v := range n {
		target = append(target, float32(v))
	}
	for _, s := range slot {
		target = append(target, float32(s))
	}
	got, grad := evalSized(t, logits, target, slots)
	if want := sizedWant(logits, alpha, n, slot); math.Abs(got-want) > 1e-5*max(1, math.Abs(want)) {
		t.Errorf("loss %v, want %v", got, want)
	}
	for i, g := range grad {
		if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) || (slot[i] < 0 && g != 0) {
			t.Errorf("gradient %v at row %d (slot %d)", g, i, slot[i])
		}
	}
	// Equal sizes: propmatch over consecutive bags of 2.
	eq := []float32{0.3, -1, 2, 0.5}
	tgt := []float32{0.5, 0.25, 2, 2, 0, 0, 1, 1}
	got, _ = evalSized(t, eq, tgt, 2)
	if want := evalLoss(t, LossPropMatch, LossParams{}, eq, []float32{0.5, 0.25}, 2); math.Abs(got-want) > 1e-6 {
		t.Errorf("equal sizes: %v, propmatch %v", got, want)
	}
}
