package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func randTensor(r *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	data := make([]float32, n)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(data, dims...)
}

// dotGrads returns the gradients of sum(tanh(Dot(x, w)) ⊙ r) with respect to
// x and w, built with the fast or the original Dot VJP. The tanh keeps the
// VJP arriving at the Dot non-trivial; computing in float64 makes the
// comparison about the algebra, not float32 summation order.
func dotGrads(t *testing.T, fast bool, x, w, r *tensors.Tensor) (gx, gw []float64) {
	t.Helper()
	setFastDotVJP(fast)
	defer setFastDotVJP(true)
	exec, err := NewExec(goBackend(t), func(x, w, r *Node) []*Node {
		x, w, r = ConvertDType(x, dtypes.Float64), ConvertDType(w, dtypes.Float64), ConvertDType(r, dtypes.Float64)
		y := Tanh(Dot(x, w))
		loss := ReduceAllSum(Mul(y, r))
		return Gradient(loss, x, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(x, w, r)
	if err != nil {
		t.Fatal(err)
	}
	return tensors.MustCopyFlatData[float64](outs[0]), tensors.MustCopyFlatData[float64](outs[1])
}

func maxAbsDiff(a, b []float64) float64 {
	var m float64
	for i := range a {
		m = math.Max(m, math.Abs(a[i]-b[i]))
	}
	return m
}

func TestFastDotVJPMatchesOriginal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name         string
		xDims, wDims []int
		outDims      []int
	}{
		{"matmul 1x1x1", []int{1, 1}, []int{1, 1}, []int{1, 1}},
		{"matmul 7x5x3", []int{7, 5}, []int{5, 3}, []int{7, 3}},
		{"matmul 64x28x300", []int{64, 28}, []int{28, 300}, []int{64, 300}},
		{"matmul 33x300x1", []int{33, 300}, []int{300, 1}, []int{33, 1}},
		{"matmul 1x17x9", []int{1, 17}, []int{17, 9}, []int{1, 9}},
		{"matrix-vector falls back", []int{6, 4}, []int{4}, []int{6}},
		{"vector-vector falls back", []int{5}, []int{5}, []int{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, w, rr := randTensor(r, tc.xDims...), randTensor(r, tc.wDims...), randTensor(r, tc.outDims...)
			fx, fw := dotGrads(t, true, x, w, rr)
			ox, ow := dotGrads(t, false, x, w, rr)
			if d := maxAbsDiff(fx, ox); d > 1e-5 {
				t.Errorf("grad x differs by %g", d)
			}
			if d := maxAbsDiff(fw, ow); d > 1e-5 {
				t.Errorf("grad w differs by %g", d)
			}
		})
	}
}

// TestFastDotVJPInTraining checks whole training runs agree: the same MLP
// trained for a few steps with either VJP ends with the same predictions
// (float32, so up to summation order).
func TestFastDotVJPInTraining(t *testing.T) {
	w, b := trueModel(10, 5, 2)
	tr := makeLogistic(2048, w, b, 6)
	run := func(fast bool) []float32 {
		setFastDotVJP(fast)
		defer setFastDotVJP(true)
		cfg := TrainConfig{Name: "vjp", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 10, Hidden: []int{16, 8}},
			Loss: LossBCE, Epochs: 2, Seed: 3, LearningRate: 1e-2}
		m, err := Train(t.Context(), cfg, &SliceSource{X: tr.X, Dim: 10, Target: labelsAsTarget(tr.Y), BatchRows: 256})
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Predict(&SliceSource{X: tr.X[:100*10], Dim: 10, Target: make([]float32, 100), BatchRows: 100})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	fast, orig := run(true), run(false)
	for i := range fast {
		if d := math.Abs(float64(fast[i] - orig[i])); d > 1e-4 {
			t.Fatalf("prediction %d: fast VJP %v, original %v", i, fast[i], orig[i])
		}
	}
}
