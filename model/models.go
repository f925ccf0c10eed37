package model

import (
	"fmt"
	"slices"

	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// Defaults of the paper's architectures (Appendix C).
const (
	DefaultBuckets  = 500_000 // kdd_embed hashed feature buckets
	DefaultEmbedDim = 50      // kdd_embed embedding width
	// EmbedInitStddev is the standard deviation of the embedding table's
	// normal initialization (He initialization of a Buckets-fan-in table would
	// be vanishingly small).
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
}

// WithDefaults fills the architecture's defaults and validates the config.
func (m ModelConfig) WithDefaults() (ModelConfig, error) {
	m.Hidden = slices.Clone(m.Hidden)
	switch m.Kind {
	case KindMLP, KindHiggsMLP:
		if m.InputDim <= 0 {
			return m, fmt.Errorf("model: %s needs InputDim > 0, got %d", m.Kind, m.InputDim)
		}
		if m.Kind == KindHiggsMLP {
			if len(m.Hidden) != 0 && !slices.Equal(m.Hidden, higgsHidden) {
				return m, fmt.Errorf("model: higgs_mlp has hidden layers %v; use kind mlp for %v", higgsHidden, m.Hidden)
			}
			m.Hidden = slices.Clone(higgsHidden)
		}
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
		if m.Buckets < 1 || m.EmbedDim < 1 {
			return m, fmt.Errorf("model: kdd_embed needs Buckets, EmbedDim > 0, got %d, %d", m.Buckets, m.EmbedDim)
		}
	default:
		return m, fmt.Errorf("model: invalid model kind %v", m.Kind)
	}
	for _, h := range m.Hidden {
		if h <= 0 {
			return m, fmt.Errorf("model: hidden layer sizes must be > 0, got %v", m.Hidden)
		}
	}
	return m, nil
}

// Inputs are the graph inputs of a model. Dense kinds use X, shaped
// [..., InputDim]; kdd_embed uses Indices (int32, [..., Width]) and Mask
// (float32, [..., Width]). The leading axes ("...", usually just the batch)
// are free, so one graph can hold several stacked batches or replicas.
type Inputs struct {
	X       *Node
	Indices *Node
	Mask    *Node
}

// Logits builds the model in ctx (variables under ctx's current scope, so
// replicas can live side by side in scopes ctx.In("r0"), ctx.In("r1"), ...)
// and returns one logit per row, shaped like the inputs' leading axes.
// The sigmoid of the logit is the predicted probability. m must have been
// through WithDefaults. It panics (GoMLX style) on shape errors.
func Logits(ctx *context.Context, m ModelConfig, in Inputs) *Node {
	var h *Node
	switch m.Kind {
	case KindMLP, KindHiggsMLP:
		if in.X == nil {
			panic(fmt.Sprintf("model: %s needs dense input X", m.Kind))
		}
		h = in.X
		if h.Shape().Dim(-1) != m.InputDim {
			panic(fmt.Sprintf("model: input X has shape %s, want last axis %d", h.Shape(), m.InputDim))
		}
	case KindKDDEmbed:
		if in.Indices == nil || in.Mask == nil {
			panic("model: kdd_embed needs Indices and Mask inputs")
		}
		h = EmbedSum(ctx.In("embedding"), in.Indices, in.Mask, m.Buckets, m.EmbedDim)
	default:
		panic(fmt.Sprintf("model: invalid model kind %v", m.Kind))
	}
	for i, size := range m.Hidden {
		h = Dense(ctx.In(fmt.Sprintf("dense_%d", i)), h, size)
		h = Max(h, ZerosLike(h)) // ReLU
	}
	logit := Dense(ctx.In("logit"), h, 1)
	return Squeeze(logit, -1)
}

// Dense is an affine layer x·W + b over the last axis of x (any leading
// axes). It uses a rank-2 Dot, whose gradient this package makes fast on the
// pure-Go backend (see dotvjp.go). Weights use the context's initializer
// (He-normal by default, zero biases).
func Dense(ctx *context.Context, x *Node, out int) *Node {
	g := x.Graph()
	in := x.Shape().Dim(-1)
	w := ctx.VariableWithShape("weights", shapes.Make(x.DType(), in, out)).ValueGraph(g)
	b := ctx.VariableWithShape("biases", shapes.Make(x.DType(), out)).ValueGraph(g)
	lead := x.Shape().Dimensions[:x.Rank()-1]
	flat := x
	if x.Rank() != 2 {
		flat = Reshape(x, -1, in)
	}
	y := Add(Dot(flat, w), InsertAxes(b, 0))
	if x.Rank() != 2 {
		y = Reshape(y, append(slices.Clone(lead), out)...)
	}
	return y
}

// EmbedSum looks up a [buckets, dim] embedding table at indices [..., W]
// and sums the rows weighted by mask [..., W] (1 for a real index, 0 for
// padding), giving [..., dim].
func EmbedSum(ctx *context.Context, indices, mask *Node, buckets, dim int) *Node {
	g := indices.Graph()
	dtype := mask.DType()
	init := func(g *Graph, shape shapes.Shape) *Node {
		return MulScalar(ctx.RandomNormal(g, shape), EmbedInitStddev)
	}
	table := ctx.WithInitializer(init).VariableWithShape("table", shapes.Make(dtype, buckets, dim)).ValueGraph(g)
	if indices.DType() != dtypes.Int32 {
		indices = ConvertDType(indices, dtypes.Int32)
	}
	// Gather with flat [N, 1] indices (GoMLX v0.26's Gather rejects index
	// tensors of higher rank than the table), then restore [..., W, dim].
	rows := Gather(table, Reshape(indices, -1, 1))
	rows = Reshape(rows, append(slices.Clone(indices.Shape().Dimensions), dim)...)
	rows = Mul(rows, InsertAxes(mask, -1))
	return ReduceSum(rows, -2)
}
