package model

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/gomlx/gomlx/backends/simplego"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// withGoMLXVJPs runs fn with GoMLX's own Dot, DotGeneral and Where VJPs
// registered (the tests of this package do not run in parallel), then
// restores ours. The program cache is emptied on the way in and out, so no
// program built with one set of VJPs is run with the other.
func withGoMLXVJPs(fn func()) {
	installFastVJPs() // captures GoMLX's VJPs
	setVJPs := func(dot, dotGeneral, where VJP) {
		VJPRegistration[NodeTypeDot], VJPRegistration[NodeTypeDotGeneral] = dot, dotGeneral
		VJPRegistration[NodeTypeWhere] = where
		programs.Lock()
		programs.m = nil
		programs.Unlock()
	}
	setVJPs(origDotVJP, origDotGenVJP, origWhereVJP)
	defer setVJPs(fastDotVJP, fastDotGeneralVJP, fastWhereVJP)
	fn()
}

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

// productGrads returns the gradients of sum(tanh(prod(x, w)) ⊙ r) with
// respect to x and w. The tanh keeps the VJP arriving at the product
// non-trivial; float64 makes the comparison about the algebra, not float32
// summation order.
func productGrads(t *testing.T, prod func(x, w *Node) *Node, x, w, r *tensors.Tensor) (gx, gw []float64) {
	t.Helper()
	exec, err := NewExec(goBackend(t), func(x, w, r *Node) []*Node {
		x, w, r = ConvertDType(x, dtypes.Float64), ConvertDType(w, dtypes.Float64), ConvertDType(r, dtypes.Float64)
		loss := ReduceAllSum(Mul(Tanh(prod(x, w)), r))
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

func TestFastVJPsMatchGoMLX(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dot := func(x, w *Node) *Node { return Dot(x, w) }
	batched := func(x, w *Node) *Node { return DotGeneral(x, []int{2}, []int{0}, w, []int{1}, []int{0}) }
	// The same ranks with other axes: must fall back to GoMLX's VJP.
	batchedT := func(x, w *Node) *Node { return DotGeneral(x, []int{2}, []int{0}, w, []int{2}, []int{0}) }
	tests := []struct {
		name         string
		prod         func(x, w *Node) *Node
		xDims, wDims []int
		outDims      []int
		fast         bool // the fast path must be taken (checked through isBatchedMatMul)
	}{
		{"dot 1x1x1", dot, []int{1, 1}, []int{1, 1}, []int{1, 1}, false},
		{"dot 7x5x3", dot, []int{7, 5}, []int{5, 3}, []int{7, 3}, false},
		{"dot 64x28x300", dot, []int{64, 28}, []int{28, 300}, []int{64, 300}, false},
		{"dot 33x300x1", dot, []int{33, 300}, []int{300, 1}, []int{33, 1}, false},
		{"dot matrix-vector falls back", dot, []int{6, 4}, []int{4}, []int{6}, false},
		{"dot vector-vector falls back", dot, []int{5}, []int{5}, []int{}, false},
		{"batched R=1", batched, []int{1, 9, 4}, []int{1, 4, 3}, []int{1, 9, 3}, true},
		{"batched R=3 B=5 i=7 o=2", batched, []int{3, 5, 7}, []int{3, 7, 2}, []int{3, 5, 2}, true},
		{"batched R=4 B=64 i=28 o=30", batched, []int{4, 64, 28}, []int{4, 28, 30}, []int{4, 64, 30}, true},
		{"batched o=1 (logit layer)", batched, []int{2, 17, 11}, []int{2, 11, 1}, []int{2, 17, 1}, true},
		{"batched square dims", batched, []int{3, 3, 3}, []int{3, 3, 3}, []int{3, 3, 3}, true},
		{"batched B=256: grad_W in two halves on go", batched, []int{2, 256, 7}, []int{2, 7, 3}, []int{2, 256, 3}, true},
		{"batched, rhs transposed falls back", batchedT, []int{2, 5, 4}, []int{2, 3, 4}, []int{2, 5, 3}, false},
		// Where's VJP (through x; w multiplies the result so both get
		// gradients): ReLU's scalar-zero false branch, a scalar true branch,
		// a scalar branch that depends on w, and two full branches (GoMLX's).
		{"where relu", func(x, w *Node) *Node { return Mul(relu(x), w) }, []int{4, 9}, []int{4, 9}, []int{4, 9}, false},
		{"where scalar true branch", func(x, w *Node) *Node {
			return Mul(Where(GreaterOrEqual(x, ScalarZero(x.Graph(), x.DType())), ScalarOne(x.Graph(), x.DType()), x), w)
		}, []int{3, 5}, []int{3, 5}, []int{3, 5}, false},
		{"where scalar branch from w", func(x, w *Node) *Node {
			return Where(GreaterOrEqual(x, ScalarZero(x.Graph(), x.DType())), Mul(x, w), ReduceAllSum(w))
		}, []int{6, 2}, []int{6, 2}, []int{6, 2}, false},
		{"where full branches falls back", func(x, w *Node) *Node {
			return Where(GreaterOrEqual(x, ScalarZero(x.Graph(), x.DType())), x, w)
		}, []int{5, 3}, []int{5, 3}, []int{5, 3}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, w, r := randTensor(rng, tc.xDims...), randTensor(rng, tc.wDims...), randTensor(rng, tc.outDims...)
			if tc.fast {
				g := NewGraph(goBackend(t), "probe")
				n := tc.prod(Parameter(g, "x", f32(tc.xDims...)), Parameter(g, "w", f32(tc.wDims...)))
				if !isBatchedMatMul(n) {
					t.Fatalf("fast path not recognized for %s", n)
				}
				g.Finalize()
			}
			fx, fw := productGrads(t, tc.prod, x, w, r)
			var ox, ow []float64
			withGoMLXVJPs(func() { ox, ow = productGrads(t, tc.prod, x, w, r) })
			if d := maxAbsDiff(fx, ox); d > 1e-5 {
				t.Errorf("grad x differs by %g", d)
			}
			if d := maxAbsDiff(fw, ow); d > 1e-5 {
				t.Errorf("grad w differs by %g", d)
			}
		})
	}
}

// TestFastVJPInTraining: the same group trained with our VJPs or GoMLX's
// ends with the same predictions (float32, so up to summation order).
func TestFastVJPInTraining(t *testing.T) {
	w, b := trueModel(10, 5, 2)
	tr := makeLogistic(2048, w, b, 6)
	feat := denseFrame(tr.X, 10)
	run := func() [][]float32 {
		var reps []Replica
		for r := range 2 {
			reps = append(reps, Replica{Name: "vjp", Seed: uint64(3 + r), LR: 1e-2,
				Source: source(t, feat, srcOpts{labels: tr.Y, batch: 256, seed: uint64(r)})})
		}
		g, err := TrainGroup(t.Context(), GroupConfig{Name: "vjp", Backend: goBackend(t), Model: ModelConfig{Kind: KindMLP, InputDim: 10, Hidden: []int{16, 8}},
			Loss: LossBCE, Epochs: 2, Features: feat, Replicas: reps})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		p, err := g.Predict(denseFrame(tr.X[:100*10], 10))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	fast := run()
	var orig [][]float32
	withGoMLXVJPs(func() { orig = run() }) // an emptied cache: a new program
	for r := range fast {
		for i := range fast[r] {
			if d := math.Abs(float64(fast[r][i] - orig[r][i])); d > 1e-4 {
				t.Fatalf("replica %d prediction %d: fast VJP %v, GoMLX's %v", r, i, fast[r][i], orig[r][i])
			}
		}
	}
}

// vjpProbeEnv names the entry point TestEntryPointsInstallFastVJPs calls in
// a fresh test process.
const vjpProbeEnv = "MODEL_TEST_VJP_PROBE"

// fastVJPsRegistered reports whether GoMLX's registry holds this package's
// Dot, DotGeneral and Where VJPs.
func fastVJPsRegistered() bool {
	is := func(n NodeType, f VJP) bool {
		return reflect.ValueOf(VJPRegistration[n]).Pointer() == reflect.ValueOf(f).Pointer()
	}
	return is(NodeTypeDot, fastDotVJP) && is(NodeTypeDotGeneral, fastDotGeneralVJP) && is(NodeTypeWhere, fastWhereVJP)
}

// TestEntryPointsInstallFastVJPs: no caller has a set-up call to forget. In
// a fresh process, where nothing has registered them, NewBackend alone, or
// TrainGroup on a backend made without NewBackend, leaves this package's
// VJPs in GoMLX's registry.
func TestEntryPointsInstallFastVJPs(t *testing.T) {
	if probe := os.Getenv(vjpProbeEnv); probe != "" {
		if fastVJPsRegistered() {
			t.Fatal("the fast VJPs are registered before any entry point ran")
		}
		switch probe {
		case "NewBackend":
			be, err := NewBackend("go")
			if err != nil {
				t.Fatal(err)
			}
			be.Finalize()
		case "TrainGroup":
			be, err := simplego.New(DefaultGoOptions) // GoMLX's default, ops_parallel, races (DefaultGoOptions)
			if err != nil {
				t.Fatal(err)
			}
			w, b := trueModel(3, 1, 1)
			tr := makeLogistic(64, w, b, 1)
			feat := denseFrame(tr.X, 3)
			g := mustTrain(t, GroupConfig{Name: "probe", Backend: be, Model: ModelConfig{Kind: KindMLP, InputDim: 3, Hidden: []int{4}},
				Loss: LossBCE, Features: feat, Replicas: []Replica{{Source: source(t, feat, srcOpts{labels: tr.Y, batch: 32})}}})
			g.Close()
		default:
			t.Fatalf("unknown probe %q", probe)
		}
		if !fastVJPsRegistered() {
			t.Fatalf("%s left GoMLX's own VJPs registered", probe)
		}
		return
	}
	for _, probe := range []string{"NewBackend", "TrainGroup"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEntryPointsInstallFastVJPs$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), vjpProbeEnv+"="+probe)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s in a fresh process: %v\n%s", probe, err, out)
		}
	}
}
