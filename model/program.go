package model

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gomlx/gomlx/backends"
	"github.com/gomlx/gomlx/pkg/core/dtypes"
	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// feedKind is how a training step receives its rows.
type feedKind uint8

const (
	feedHost        feedKind = iota // dense rows gathered on the host: x [R, B, D]
	feedResident                    // dense features resident [N, D], rows by index: idx [R·B] int32
	feedSparseLazy                  // kdd_embed, lazy Adam: uniq [R·U], local [R·B·W] int32, mask [R, B, W]
	feedSparseDense                 // kdd_embed, dense Adam: ids [R·B·W] int32, mask [R, B, W]
	feedSparseHost                  // kdd_embed, table and lazy Adam on the host: embedding sums [R, B, E] in, their gradient out
)

// trainShape is everything a training program is compiled for; with the
// backend it keys the process-wide program cache. Learning rates, loss
// parameters, the step counter and all data are program inputs, so one
// program serves every group of the same shape.
type trainShape struct {
	model string // ModelConfig.key()
	loss  Loss
	adam  AdamConfig
	r, b  int // replicas, rows per replica and step
	bag   int // rows per bag (per-bag losses), else 0
	feed  feedKind
	n, d  int // resident feature rows and dense width
	w, u  int // sparse: indices per row, unique rows per replica and step
	e     int // feedSparseHost: embedding width
	// hostAdam: the program returns the dense parameters' gradients and the
	// host applies Adam (adam_host.go); the moments are inputs it ignores.
	hostAdam bool
	// classes is C for a C-class model (C target values per row or bag),
	// 0 for a binary one (one value).
	classes int
	// sized: bag is the number of slots of bags of any size packed into a
	// batch (data.BatchOptions.SizedBags), their targets each slot's
	// proportion and size and each row's slot.
	sized bool
}

// graphParams are the parameters the training program holds: all of them,
// or all but the embedding table when the host keeps it.
func (s trainShape) graphParams(m ModelConfig) []paramSpec {
	if s.feed == feedSparseHost {
		return m.params()[1:]
	}
	return m.params()
}

// targetWidth is the number of target values per row or bag: 1, or C.
func (s trainShape) targetWidth() int { return max(s.classes, 1) }

// targets is the number of target values per replica and step.
func (s trainShape) targets() int {
	if s.sized {
		return s.bag*s.targetWidth() + s.bag + s.b
	}
	if s.bag > 0 {
		return s.b / s.bag * s.targetWidth()
	}
	return s.b * s.targetWidth()
}

// cacheKey keys the process-wide program cache.
type cacheKey struct {
	backend backends.Backend
	shape   any // trainShape or predictShape
}

type cacheEntry struct {
	once     sync.Once
	g        *Graph
	compileS float64
	err      error
}

// programs caches compiled programs for the life of the process (entries
// are small next to the data; they are never evicted).
var programs struct {
	sync.Mutex
	m map[cacheKey]*cacheEntry
}

// program returns the compiled program for key, building it with build on
// first use. fresh reports whether this call compiled it (its compile time is
// then the caller's); concurrent callers wait for one compilation.
func program(key cacheKey, build func(g *Graph) []*Node) (g *Graph, compileS float64, fresh bool, err error) {
	programs.Lock()
	if programs.m == nil {
		programs.m = map[cacheKey]*cacheEntry{}
	}
	e := programs.m[key]
	if e == nil {
		e = &cacheEntry{}
		programs.m[key] = e
	}
	programs.Unlock()
	e.once.Do(func() {
		fresh = true
		start := time.Now()
		defer func() {
			if r := recover(); r != nil {
				e.err = fmt.Errorf("building program %T: %v", key.shape, r)
			}
			e.compileS = time.Since(start).Seconds()
		}()
		g := NewGraph(key.backend, fmt.Sprintf("labelprivacy_%T", key.shape))
		g.Compile(build(g)...)
		e.g = g
	})
	if e.err != nil {
		return nil, 0, fresh, e.err
	}
	return e.g, e.compileS, fresh, nil
}

func f32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Float32, dims...) }
func i32(dims ...int) shapes.Shape { return shapes.Make(dtypes.Int32, dims...) }

// Training program inputs, in order: params (P = len(graphParams)), Adam
// first moments (P), second moments (P), loss accumulator [R], then the
// stepInputs, then the feed's data inputs, then the targets [R, T].
// Outputs: params, moments and loss accumulator, updated (3P + 1), and with
// feedSparseHost the gradient of the embedding sums [R, B, E]. With
// hostAdam: the parameters' gradients (P), the loss accumulator, then the
// embedding sums' gradient (feedSparseHost).
//
// stepInputs counts the inputs between the state and the data, in order:
// step_scale [R] lr_r / (1 − β1^t), the bias-corrected step size of each
// replica; v_scale [] 1/√(1 − β2^t); flip_prob [R] (LossParams.FlipProb);
// prior [R] (LossParams.Prior).
const stepInputs = 4

// buildTrain builds one Adam step for the whole group. The nodes are made
// in the order of the inputs (trainState, feedInput, the targets), then
// the loss, its gradient and the update (adamUpdate).
func buildTrain(m ModelConfig, s trainShape) func(g *Graph) []*Node {
	return func(g *Graph) []*Node {
		specs := s.graphParams(m)
		np := len(specs)
		st := s.trainState(g, specs)
		h0, lazyRows, lazyIdx := s.feedInput(g, st.params)
		layers := st.params
		if m.Kind == KindKDDEmbed && s.feed != feedSparseHost {
			layers = st.params[1:]
		}
		target := Parameter(g, "target", f32(s.r, s.targets()))

		var loss *Node
		if s.sized {
			loss = sizedLoss(s.loss, denseStack(layers, h0), target, s.bag)
		} else {
			loss = replicaLoss(s.loss, st.flip, st.prior, denseStack(layers, h0), target, s.bag)
		}
		wrt := st.params
		switch s.feed {
		case feedSparseLazy:
			wrt = append([]*Node{lazyRows}, st.params[1:]...)
		case feedSparseHost:
			wrt = append(slices.Clone(st.params), h0)
		}
		grads := Gradient(ReduceAllSum(loss), wrt...)
		if s.hostAdam {
			outs := append(grads[:np:np], Add(st.lossAcc, loss))
			if s.feed == feedSparseHost {
				outs = append(outs, grads[np])
			}
			return outs
		}
		outP, outM, outV := s.adamUpdate(specs, st, grads, lazyIdx)
		outs := append(append(outP, outM...), outV...)
		outs = append(outs, Add(st.lossAcc, loss))
		if s.feed == feedSparseHost {
			outs = append(outs, grads[np])
		}
		return outs
	}
}

// trainGraphState is the training program's state and step inputs: the
// params, Adam's moments m and v (P each), the loss accumulator [R] and
// the stepInputs.
type trainGraphState struct {
	params, ms, vs                          []*Node
	lossAcc, stepScale, vScale, flip, prior *Node
}

// trainState makes the state and step inputs' parameters, in the
// program's input order.
func (s trainShape) trainState(g *Graph, specs []paramSpec) trainGraphState {
	np := len(specs)
	st := trainGraphState{params: make([]*Node, np), ms: make([]*Node, np), vs: make([]*Node, np)}
	for i, p := range specs {
		st.params[i] = Parameter(g, "param/"+p.name, f32(p.dims(s.r)...))
	}
	for i, p := range specs {
		st.ms[i] = Parameter(g, "adam_m/"+p.name, f32(p.dims(s.r)...))
	}
	for i, p := range specs {
		st.vs[i] = Parameter(g, "adam_v/"+p.name, f32(p.dims(s.r)...))
	}
	st.lossAcc = Parameter(g, "loss_acc", f32(s.r))
	st.stepScale = Parameter(g, "step_scale", f32(s.r))
	st.vScale = Parameter(g, "v_scale", f32())
	st.flip = Parameter(g, "flip_prob", f32(s.r))
	st.prior = Parameter(g, "prior", f32(s.r))
	return st
}

// feedInput makes the feed's data inputs and returns h0, the first
// layer's input [R, B, D] (or the embedding sums [R, B, E]); with
// feedSparseLazy also the table rows the step touches [R·U, E] (lazyRows,
// gathered from params[0]) and their indices [R·U, 1] (lazyIdx).
func (s trainShape) feedInput(g *Graph, params []*Node) (h0, lazyRows, lazyIdx *Node) {
	switch s.feed {
	case feedHost:
		h0 = Parameter(g, "x", f32(s.r, s.b, s.d))
	case feedResident:
		feats := Parameter(g, "features", f32(s.n, s.d))
		idx := Parameter(g, "row_ids", i32(s.r*s.b))
		h0 = Reshape(Gather(feats, Reshape(idx, -1, 1)), s.r, s.b, s.d)
	case feedSparseLazy:
		uniq := Parameter(g, "unique_rows", i32(s.r*s.u))
		local := Parameter(g, "local_ids", i32(s.r, s.b, s.w))
		mask := Parameter(g, "mask", f32(s.r, s.b, s.w))
		lazyIdx = Reshape(uniq, -1, 1)
		lazyRows = Gather(params[0], lazyIdx) // [R·U, E]: the rows this step touches
		h0 = embedSum(lazyRows, local, mask)
	case feedSparseDense:
		ids := Parameter(g, "table_ids", i32(s.r, s.b, s.w))
		mask := Parameter(g, "mask", f32(s.r, s.b, s.w))
		h0 = embedSum(params[0], ids, mask)
	case feedSparseHost:
		h0 = Parameter(g, "embedding_sums", f32(s.r, s.b, s.e))
	}
	return h0, lazyRows, lazyIdx
}

// adamUpdate is the Adam step of every parameter from its gradient grads[i]:
// the updated params, m and v (P each); with feedSparseLazy the table's
// only on the rows lazyIdx the step touched.
func (s trainShape) adamUpdate(specs []paramSpec, st trainGraphState, grads []*Node, lazyIdx *Node) (outP, outM, outV []*Node) {
	a := s.adam
	params, ms, vs := st.params, st.ms, st.vs
	// perReplica broadcasts stepScale [R] to rows of a parameter.
	perReplica := func(dims []int, kind paramKind) *Node {
		switch kind {
		case paramWeight:
			return Reshape(st.stepScale, s.r, 1, 1)
		case paramBias:
			return Reshape(st.stepScale, s.r, 1)
		default: // [R·rows, E] with rows = dims[0]/R
			rows := dims[0] / s.r
			return Reshape(BroadcastToDims(Reshape(st.stepScale, s.r, 1, 1), s.r, rows, 1), s.r*rows, 1)
		}
	}
	adamStep := func(m, v, scale *Node) *Node { // s·m / (√v/√(1−β2^t) + ε)
		return Div(Mul(m, scale), AddScalar(Mul(Sqrt(v), st.vScale), a.Epsilon))
	}
	np := len(specs)
	outP, outM, outV = make([]*Node, np), make([]*Node, np), make([]*Node, np)
	for i, p := range specs {
		gi := grads[i]
		if i == 0 && s.feed == feedSparseLazy {
			// Lazy Adam: only the rows this step touched (unique per
			// replica; padding points at the replica's trash row, whose
			// gradient and moments stay zero). Updates are added in place
			// (ScatterSum), so a donated table is not copied.
			mOld, vOld := Gather(ms[0], lazyIdx), Gather(vs[0], lazyIdx)
			dm := MulScalar(Sub(gi, mOld), 1-a.Beta1)
			dv := MulScalar(Sub(Square(gi), vOld), 1-a.Beta2)
			step := adamStep(Add(mOld, dm), Add(vOld, dv), perReplica([]int{s.r * s.u}, paramTable))
			outP[0] = ScatterSum(params[0], lazyIdx, Neg(step), false, false)
			outM[0] = ScatterSum(ms[0], lazyIdx, dm, false, false)
			outV[0] = ScatterSum(vs[0], lazyIdx, dv, false, false)
			continue
		}
		outM[i] = Add(MulScalar(ms[i], a.Beta1), MulScalar(gi, 1-a.Beta1))
		outV[i] = Add(MulScalar(vs[i], a.Beta2), MulScalar(Square(gi), 1-a.Beta2))
		outP[i] = Sub(params[i], adamStep(outM[i], outV[i], perReplica(p.dims(s.r), p.kind)))
	}
	return outP, outM, outV
}

// predictShape keys a prediction program: probabilities [R, C] of C rows
// (binary), or [R, C, K] of K classes (the model key has K).
type predictShape struct {
	model  string
	r, c   int
	d, w   int // dense width, or sparse indices per row
	sparse bool
}

// buildPredict builds σ(logits) of every replica for one chunk of rows, or
// softmax(logits) for a model of K ≥ 3 classes. Inputs: params (P), then
// x [C, D] (dense) or ids [C, W] int32 bucket ids and mask [C, W]
// (kdd_embed). Output [R, C], or [R, C, K].
func buildPredict(m ModelConfig, s predictShape) func(g *Graph) []*Node {
	return func(g *Graph) []*Node {
		specs := m.params()
		params := make([]*Node, len(specs))
		for i, p := range specs {
			params[i] = Parameter(g, "param/"+p.name, f32(p.dims(s.r)...))
		}
		layers := params
		var h0 *Node
		if s.sparse {
			ids := Parameter(g, "ids", i32(s.c, s.w))
			mask := Parameter(g, "mask", f32(s.c, s.w))
			base := MulScalar(Iota(g, i32(s.r, s.c, s.w), 0), float64(m.Buckets+1)) // replica r's rows start at r·(Buckets+1)
			flat := Add(BroadcastToDims(InsertAxes(ids, 0), s.r, s.c, s.w), base)
			h0 = embedSum(params[0], flat, BroadcastToDims(InsertAxes(mask, 0), s.r, s.c, s.w))
			layers = params[1:]
		} else {
			x := Parameter(g, "x", f32(s.c, s.d))
			h0 = BroadcastToDims(InsertAxes(x, 0), s.r, s.c, s.d)
		}
		switch {
		case m.multiclass():
			return []*Node{Softmax(denseStack(layers, h0), -1)}
		case m.Regression:
			return []*Node{denseStack(layers, h0)}
		}
		return []*Node{Sigmoid(denseStack(layers, h0))}
	}
}

// runProgram executes g; outputs come back as buffers the caller owns.
func runProgram(be backends.Backend, g *Graph, inputs []backends.Buffer, donate []bool) (outs []backends.Buffer, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("executing %s: %v", g.Name(), r)
		}
	}()
	ts := g.RunWithBuffers(inputs, donate, 0)
	outs = make([]backends.Buffer, len(ts))
	for i, tt := range ts {
		if outs[i], err = tt.DonateBuffer(be, 0); err != nil {
			return nil, err
		}
	}
	return outs, nil
}
