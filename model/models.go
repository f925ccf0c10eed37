package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"

	"labelprivacy/pets"
)

// Defaults of the paper's architectures (Appendix C).
const (
	DefaultBuckets  = 500_000 // kdd_embed hashed feature buckets
	DefaultEmbedDim = 50      // kdd_embed embedding width
	// EmbedInitStddev is the standard deviation of the embedding table's
	// normal initialization, whatever ModelConfig.Init says (a fan-in rule
	// over Buckets rows would be vanishingly small).
	EmbedInitStddev = 0.05
)

var (
	higgsHidden = []int{300, 300, 300, 300}
	kddHidden   = []int{100, 50}
)

// ModelConfig describes one architecture.
type ModelConfig struct {
	Kind Kind

	// InputDim is the number of dense features per row (mlp, higgs_mlp).
	InputDim int

	// Hidden are the ReLU layer sizes: free for mlp (empty means logistic
	// regression); for higgs_mlp it must be empty or 4×300; for kdd_embed the
	// layers after the embedding sum, default 100, 50.
	Hidden []int

	// Buckets and EmbedDim size the kdd_embed table (defaults 500,000 × 50).
	Buckets  int
	EmbedDim int

	// Init is the dense layers' initialization (0: DefaultInit).
	Init Init

	// Classes is the number of label classes C (config key model.classes):
	// 0 or 2, binary, one logit and a sigmoid (the paper's models, exactly
	// as before classes existed); 3 to MaxClasses, a head of C logits and a
	// softmax, trained with the C-class losses (Loss.Multiclass). mlp and
	// higgs_mlp take any C; kdd_embed is binary only and refuses C ≥ 3 with
	// an error naming model.kind.
	Classes int
	// Regression makes the head one output with the identity (no sigmoid):
	// a regression of conversion values (losses mse, bag_mse), Predict
	// giving the output itself. Classes must be 0.
	Regression bool
}

// MaxClasses is the largest class count a model takes (pets.MaxClasses:
// the mechanisms' limit).
const MaxClasses = pets.MaxClasses

// multiclass reports whether the model has a softmax head of C ≥ 3 logits.
func (m ModelConfig) multiclass() bool { return m.Classes >= 3 }

// heads is the number of logits per row: 1 (binary) or C.
func (m ModelConfig) heads() int {
	if m.multiclass() {
		return m.Classes
	}
	return 1
}

// WithDefaults fills the architecture's defaults and validates the config.
func (m ModelConfig) WithDefaults() (ModelConfig, error) {
	m.Hidden = slices.Clone(m.Hidden)
	if m.Init == 0 {
		m.Init = DefaultInit
	}
	if _, ok := inits.Name(m.Init); !ok {
		return m, fmt.Errorf("%w: invalid model.init %d", ErrInvalidConfig, int(m.Init))
	}
	if m.Classes < 0 || m.Classes == 1 || m.Classes > MaxClasses {
		return m, fmt.Errorf("%w: model.classes must be 0 or 2 (binary) or 3..%d, got %d", ErrInvalidConfig, MaxClasses, m.Classes)
	}
	if m.Regression && m.Classes != 0 {
		return m, fmt.Errorf("%w: a regression model has one output, not %d classes", ErrInvalidConfig, m.Classes)
	}
	if m.Kind == KindKDDEmbed && m.multiclass() {
		return m, fmt.Errorf("%w: model.kind kdd_embed is binary only; model.classes = %d needs model.kind mlp or higgs_mlp",
			ErrInvalidConfig, m.Classes)
	}
	switch m.Kind {
	case KindMLP, KindHiggsMLP:
		if m.InputDim <= 0 {
			return m, fmt.Errorf("%w: %s needs InputDim > 0, got %d", ErrInvalidConfig, m.Kind, m.InputDim)
		}
		if m.Kind == KindHiggsMLP {
			if len(m.Hidden) != 0 && !slices.Equal(m.Hidden, higgsHidden) {
				return m, fmt.Errorf("%w: higgs_mlp has hidden layers %v; use kind mlp for %v", ErrInvalidConfig, higgsHidden, m.Hidden)
			}
			m.Hidden = slices.Clone(higgsHidden)
		}
		m.Buckets, m.EmbedDim = 0, 0
	case KindKDDEmbed:
		if m.Buckets == 0 {
			m.Buckets = DefaultBuckets
		}
		if m.EmbedDim == 0 {
			m.EmbedDim = DefaultEmbedDim
		}
		if m.Hidden == nil {
			m.Hidden = slices.Clone(kddHidden)
		}
		if m.Buckets < 1 || m.EmbedDim < 1 || m.Buckets >= math.MaxInt32/4 {
			return m, fmt.Errorf("%w: kdd_embed needs 0 < Buckets < 2^29 and EmbedDim > 0, got %d, %d", ErrInvalidConfig, m.Buckets, m.EmbedDim)
		}
		m.InputDim = 0
	default:
		return m, fmt.Errorf("%w: invalid model kind %v", ErrInvalidConfig, m.Kind)
	}
	for _, h := range m.Hidden {
		if h <= 0 {
			return m, fmt.Errorf("%w: hidden layer sizes must be > 0, got %v", ErrInvalidConfig, m.Hidden)
		}
	}
	return m, nil
}

// key identifies the architecture (not the init) in program caches and
// checkpoints.
func (m ModelConfig) key() string {
	k := fmt.Sprintf("%s in=%d hidden=%v buckets=%d embed=%d", m.Kind, m.InputDim, m.Hidden, m.Buckets, m.EmbedDim)
	if m.multiclass() { // binary keys stay as they were (checkpoint fingerprints)
		k += fmt.Sprintf(" classes=%d", m.Classes)
	}
	if m.Regression {
		k += " regression"
	}
	return k
}

// paramKind tells how a parameter is stacked and initialized.
type paramKind uint8

const (
	paramWeight paramKind = iota // [R, in, out]
	paramBias                    // [R, out]
	paramTable                   // [R·(Buckets+1), EmbedDim]: row Buckets of each replica is a zero "trash" row
)

// paramSpec is one parameter of one replica.
type paramSpec struct {
	name    string
	kind    paramKind
	in, out int // weight [in, out]; bias [out] with fan-in in; table [Buckets, EmbedDim]
}

// size is the number of values of one replica's parameter.
func (p paramSpec) size() int {
	switch p.kind {
	case paramWeight:
		return p.in * p.out
	case paramBias:
		return p.out
	default:
		return (p.in + 1) * p.out
	}
}

// dims is the stacked shape for r replicas.
func (p paramSpec) dims(r int) []int {
	switch p.kind {
	case paramWeight:
		return []int{r, p.in, p.out}
	case paramBias:
		return []int{r, p.out}
	default:
		return []int{r * (p.in + 1), p.out}
	}
}

// params lists the parameters in a fixed order: the embedding table
// (kdd_embed), then weights and biases of each dense layer, the logit layer
// last (1 output, or C for a C-class model).
func (m ModelConfig) params() []paramSpec {
	var ps []paramSpec
	in := m.InputDim
	if m.Kind == KindKDDEmbed {
		ps = append(ps, paramSpec{name: "embedding/table", kind: paramTable, in: m.Buckets, out: m.EmbedDim})
		in = m.EmbedDim
	}
	sizes := append(slices.Clone(m.Hidden), m.heads())
	for i, out := range sizes {
		name := fmt.Sprintf("dense_%d", i)
		if i == len(m.Hidden) {
			name = "logit"
		}
		ps = append(ps, paramSpec{name: name + "/weights", kind: paramWeight, in: in, out: out},
			paramSpec{name: name + "/biases", kind: paramBias, in: in, out: out})
		in = out
	}
	return ps
}

// initStream is the PCG stream of weight initialization (ASCII "init").
const initStream = 0x696e6974

// initReplica draws one replica's parameters on the host from PCG(seed,
// initStream), in params() order, into dst (one slice per parameter, of
// paramSpec.size() values), so a replica's initial weights depend on its
// seed only, not on R or its position in a group.
func (m ModelConfig) initReplica(seed uint64, dst [][]float32) {
	m.initReplicaRows(seed, dst, nil)
}

// initReplicaRows is initReplica writing an embedding table whose dst is
// nil row by row into tableRow(row) (E values; row Buckets is the trash
// row): the same values, in place in a host-kept table, without a
// temporary copy of it (100 MB for kdd_embed).
func (m ModelConfig) initReplicaRows(seed uint64, dst [][]float32, tableRow func(row int) []float32) {
	r := rand.New(rand.NewPCG(seed, initStream))
	for i, p := range m.params() {
		v := dst[i]
		switch {
		case p.kind == paramTable && v == nil:
			for row := range p.in {
				out := tableRow(row)[:p.out]
				for c := range out {
					out[c] = float32(r.NormFloat64() * EmbedInitStddev)
				}
			}
			clear(tableRow(p.in)[:p.out])
		case p.kind == paramTable:
			for j := range p.in * p.out {
				v[j] = float32(r.NormFloat64() * EmbedInitStddev)
			}
			clear(v[p.in*p.out:]) // the trash row
		case m.Init == InitUniformFanIn:
			bound := 1 / math.Sqrt(float64(p.in))
			for j := range v {
				v[j] = float32((2*r.Float64() - 1) * bound)
			}
		case p.kind == paramBias: // glorot_uniform, he_normal: zero biases
			clear(v)
		case m.Init == InitGlorotUniform:
			bound := math.Sqrt(6 / float64(p.in+p.out))
			for j := range v {
				v[j] = float32((2*r.Float64() - 1) * bound)
			}
		case m.Init == InitHeNormal:
			sd := math.Sqrt(2 / float64(p.in))
			for j := range v {
				v[j] = float32(r.NormFloat64() * sd)
			}
		default:
			panic(fmt.Sprintf("model: init %v not implemented", m.Init))
		}
	}
}

// StateBytes is the memory a group of r replicas holds while training:
// parameters plus Adam's two moments, float32 (kdd_embed at 500,000 × 50:
// about 300 MB per replica). Activations and per-step data come on top.
func (m ModelConfig) StateBytes(r int) int64 {
	var n int64
	for _, p := range m.params() {
		n += int64(p.size())
	}
	return 3 * 4 * n * int64(r)
}

// batchedDense is x·W + b for every replica at once: x [R, B, in],
// w [R, in, out], b [R, out] → [R, B, out], one DotGeneral with batch axis 0
// (whose gradient installFastVJPs makes fast).
func batchedDense(x, w, b *Node) *Node {
	y := DotGeneral(x, []int{2}, []int{0}, w, []int{1}, []int{0})
	// An explicit broadcast of b, then a same-shape Add: simplego's implicit
	// broadcasting walks a generic index iterator per element, about 3% of
	// kdd_embed's step on 2 cores.
	return Add(y, BroadcastToDims(InsertAxes(b, 1), y.Shape().Dimensions...))
}

// denseStack applies the ReLU layers and the logit layer to h [R, B, in]:
// params alternate weights and biases (params() order without the table).
// It returns the logits [R, B] (one logit) or [R, B, C] (C logits).
func denseStack(params []*Node, h *Node) *Node {
	if usesSgemm(h.Graph().Backend()) {
		return foldedDenseStack(params, h)
	}
	n := len(params) / 2
	for i := range n - 1 {
		h = relu(batchedDense(h, params[2*i], params[2*i+1]))
	}
	if params[2*n-2].Shape().Dim(2) > 1 { // C logits: one batched product
		return batchedDense(h, params[2*n-2], params[2*n-1])
	}
	return logitLayer(h, params[2*n-2], params[2*n-1])
}

// foldedDenseStack is denseStack with the biases folded into the products,
// for backends whose matrix product is cheap next to their element-wise
// passes (backend go on the sgemm kernel): each layer's input carries a
// trailing column of ones, each weight matrix a bias row, so
//
//	[h, 1] · [[W, 0], [b, 1]] = [h·W + b, 1]
//
// and the ReLU keeps the ones column (relu(1) = 1) for the next layer. The
// bias add, its broadcast and the bias gradient's reduction (three passes
// over [R, B, out] per layer) become one more row and column of the packed
// product (1/300 more work on the Higgs MLP), and the bias gradient comes
// out of grad_W's last row. The fixed column gets gradients too, but they
// only ever meet the zeros and the one of the augmented matrices and are
// dropped at the Concatenate. The logit layer is a product with one output
// column (sgemm computes it transposed, without simplego's 32× padding).
// The values equal h·W + b up to rounding: the bias is the last term of
// each dot product instead of a separate add. A head of C logits is the
// same product with C output columns, returned as [R, B, C].
func foldedDenseStack(params []*Node, h *Node) *Node {
	g, dt := h.Graph(), h.DType()
	r, b := h.Shape().Dim(0), h.Shape().Dim(1)
	ones := func(dims ...int) *Node { return Ones(g, shapes.Make(dt, dims...)) }
	h = Concatenate([]*Node{h, ones(r, b, 1)}, 2)
	n := len(params) / 2
	for i := range n {
		w, bias := params[2*i], params[2*i+1] // [R, in, out], [R, out]
		in, out := w.Shape().Dim(1), w.Shape().Dim(2)
		bRow := Reshape(bias, r, 1, out)
		if i == n-1 { // logit: [R, in+1, 1], or [R, in+1, C]
			y := DotGeneral(h, []int{2}, []int{0}, Concatenate([]*Node{w, bRow}, 1), []int{1}, []int{0})
			if out > 1 {
				return y
			}
			return Reshape(y, r, b)
		}
		top := Concatenate([]*Node{w, Zeros(g, shapes.Make(dt, r, in, 1))}, 2)
		wAug := Concatenate([]*Node{top, Concatenate([]*Node{bRow, ones(r, 1, 1)}, 2)}, 1) // [R, in+1, out+1]
		h = relu(DotGeneral(h, []int{2}, []int{0}, wAug, []int{1}, []int{0}))
	}
	panic("model: dense stack without a logit layer")
}

// relu is max(x, 0) as Where(x ≥ 0, x, 0): the same values as GoMLX's
// Max(x, ZerosLike(x)) and the same gradient (1 at x = 0, GoMLX's
// convention), in 4 element-wise passes forward and backward instead of 7
// (Max's VJP builds its indicator from Sub, two Signs and an Add; simplego
// runs each pass on one core).
func relu(x *Node) *Node {
	zero := ScalarZero(x.Graph(), x.DType())
	return Where(GreaterOrEqual(x, zero), x, zero)
}

// logitLayer is the last dense layer, h [R, B, in] · w [R, in, 1] + b [R, 1]
// → logits [R, B], computed as an element-wise product summed over in. As a
// DotGeneral, simplego's blocked kernel pads the single output column to a
// 32-wide block in the product and in both gradients (32× the layer's
// work): 11% of kdd_embed's padded matrix work went to its 50→1 layer.
func logitLayer(h, w, b *Node) *Node {
	dims := w.Shape().Dimensions // [R, in, 1]
	wRow := BroadcastToDims(Reshape(w, dims[0], 1, dims[1]), h.Shape().Dimensions...)
	return Add(ReduceSum(Mul(h, wRow), -1), b)
}

// embedSum looks up rows of table [T, E] at flat row ids [R, B, W] (int32)
// and sums them weighted by mask [R, B, W] (1 for a real index, 0 for
// padding), giving [R, B, E].
func embedSum(table, ids, mask *Node) *Node {
	dims := ids.Shape().Dimensions
	e := table.Shape().Dim(-1)
	// Gather with flat [N, 1] indices (GoMLX v0.26's Gather rejects index
	// tensors of higher rank than the table), then restore [R, B, W, E].
	rows := Gather(table, Reshape(ids, -1, 1))
	rows = Reshape(rows, dims[0], dims[1], dims[2], e)
	rows = Mul(rows, InsertAxes(mask, -1))
	return ReduceSum(rows, 2)
}
