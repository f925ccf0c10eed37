package model

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26 builds the gradient of a matrix product as a broadcast Mul plus
// ReduceSum over the product's full [i,j,k] (or [R,B,i,o]) tensor. XLA fuses
// that away; the pure-Go backend materializes it, which made dense-layer
// training ~12× slower than needed (rank-2 Dot) and a batched layer ~15×
// slower. installFastVJPs replaces both VJPs with DotGeneral products:
//
//	Dot, x [i,j] · W [j,k]:                grad_x = v·Wᵀ, grad_W = xᵀ·v
//	DotGeneral, x [R,B,i] · W [R,i,o]      grad_x = v·Wᵀ (contract o),
//	  (batch axis 0, contract i):          grad_W = xᵀ·v (contract B), both batched over R
//
// Any other case (other ranks or axes, or a non-scalar root, i.e. a Jacobian)
// calls GoMLX's own VJP.
//
// It also replaces Where's VJP where one branch is a scalar (a ReLU's
// Where(x ≥ 0, x, 0)): GoMLX's fills a full-size ZerosLike(v) to select
// against (one more pass over every ReLU's gradient on the Go backend);
// this one selects against a scalar zero, the same values.

var (
	fastVJPOnce   sync.Once
	origDotVJP    VJP // GoMLX's VJPs, captured by installFastVJPs
	origDotGenVJP VJP
	origWhereVJP  VJP
)

// installFastVJPs registers this package's VJPs for NodeTypeDot,
// NodeTypeDotGeneral and NodeTypeWhere in GoMLX's global
// graph.VJPRegistration, once per process. NewBackend and TrainGroup call
// it first, so every graph this package builds has them and no caller has
// to remember a set-up call. sync.Once makes a concurrent first call wait
// until the registry is written. It writes GoMLX's registry: a program that
// builds gradient graphs of its own on other goroutines should create its
// backend with NewBackend before starting them.
func installFastVJPs() {
	fastVJPOnce.Do(func() {
		origDotVJP = VJPRegistration[NodeTypeDot]
		origDotGenVJP = VJPRegistration[NodeTypeDotGeneral]
		origWhereVJP = VJPRegistration[NodeTypeWhere]
		VJPRegistration[NodeTypeDot] = fastDotVJP
		VJPRegistration[NodeTypeDotGeneral] = fastDotGeneralVJP
		VJPRegistration[NodeTypeWhere] = fastWhereVJP
	})
}

func fastDotVJP(node *Node, vjpOutputs []*Node, outputShape shapes.Shape) []*Node {
	inputs := node.Inputs()
	if len(inputs) != 2 || len(vjpOutputs) != 1 || outputShape.Rank() != 0 ||
		inputs[0].Rank() != 2 || inputs[1].Rank() != 2 || vjpOutputs[0].Rank() != 2 {
		return origDotVJP(node, vjpOutputs, outputShape)
	}
	x, w, v := inputs[0], inputs[1], vjpOutputs[0]          // x [i,j], w [j,k], v [i,k]
	gradX := DotGeneral(v, []int{1}, nil, w, []int{1}, nil) // [i,j]
	gradW := DotGeneral(x, []int{0}, nil, v, []int{0}, nil) // [j,k]
	return []*Node{gradX, gradW}
}

func fastDotGeneralVJP(node *Node, vjpOutputs []*Node, outputShape shapes.Shape) []*Node {
	inputs := node.Inputs()
	if len(inputs) != 2 || len(vjpOutputs) != 1 || outputShape.Rank() != 0 || !isBatchedMatMul(node) {
		return origDotGenVJP(node, vjpOutputs, outputShape)
	}
	x, w, v := inputs[0], inputs[1], vjpOutputs[0]                    // x [R,B,i], w [R,i,o], v [R,B,o]
	gradX := DotGeneral(v, []int{2}, []int{0}, w, []int{2}, []int{0}) // [R,B,i]
	var gradW *Node
	be := node.Graph().Backend()
	if r, b := x.Shape().Dim(0), x.Shape().Dim(1); isGoBackend(be) && !usesSgemm(be) && b%2 == 0 && b >= 256 {
		// simplego's own kernel runs a small product on one core per batch
		// entry, so a lone replica's grad_W ([i,o], contracting B) used one
		// core: split B in halves as a second batch axis and add them. Done
		// for every R (not just R < cores) so a replica computes the same
		// sums alone and in a group (bit-identical results). The sgemm
		// kernel splits the product's rows across cores itself.
		x4 := Reshape(x, r, 2, b/2, x.Shape().Dim(2))
		v4 := Reshape(v, r, 2, b/2, v.Shape().Dim(2))
		gradW = ReduceSum(DotGeneral(x4, []int{2}, []int{0, 1}, v4, []int{2}, []int{0, 1}), 1) // [R,i,o]
	} else {
		gradW = DotGeneral(x, []int{1}, []int{0}, v, []int{1}, []int{0}) // [R,i,o]
	}
	return []*Node{gradX, gradW}
}

// fastWhereVJP is Where(c, t, f)'s VJP when t and f are one full-shape
// operand and one scalar: v selected against a scalar zero for the full
// one, the sum of the other side's selection for the scalar (unused, and
// then never computed, when the scalar is a constant). Other shapes call
// GoMLX's VJP.
func fastWhereVJP(node *Node, vjpOutputs []*Node, outputShape shapes.Shape) []*Node {
	in := node.Inputs()
	if len(in) != 3 || len(vjpOutputs) != 1 || outputShape.Rank() != 0 || !vjpOutputs[0].Shape().Equal(node.Shape()) ||
		!in[0].Shape().Equal(shapes.Make(in[0].DType(), node.Shape().Dimensions...)) {
		return origWhereVJP(node, vjpOutputs, outputShape)
	}
	v, full := vjpOutputs[0], node.Shape()
	cond, t, f := in[0], in[1], in[2]
	zero := ScalarZero(node.Graph(), v.DType())
	switch {
	case t.Shape().Equal(full) && f.Rank() == 0:
		return []*Node{nil, Where(cond, v, zero), ReduceAllSum(Where(cond, zero, v))}
	case f.Shape().Equal(full) && t.Rank() == 0:
		return []*Node{nil, ReduceAllSum(Where(cond, v, zero)), Where(cond, zero, v)}
	}
	return origWhereVJP(node, vjpOutputs, outputShape)
}

// dotGeneralAxes matches the axes in a DotGeneral node's description
// (GoMLX v0.26 keeps them unexported; Node.String prints them).
var dotGeneralAxes = regexp.MustCompile(`DotGeneral\(lhs=\[#\d+\], lhsContractingAxes=\[([\d ]*)\], lhsBatchAxes=\[([\d ]*)\], ` +
	`rhs=\[#\d+\], rhsContractingAxes=\[([\d ]*)\], rhsBatchAxes=\[([\d ]*)\]\)`)

// isBatchedMatMul reports whether node is DotGeneral(x [R,B,i], w [R,i,o])
// with batch axes {0}, {0} and contracting axes {2}, {1}, the pattern of
// batchedDense. Anything unrecognized is "no" (GoMLX's VJP then runs).
func isBatchedMatMul(node *Node) bool {
	in := node.Inputs()
	if node.Type() != NodeTypeDotGeneral || in[0].Rank() != 3 || in[1].Rank() != 3 || node.Rank() != 3 {
		return false
	}
	m := dotGeneralAxes.FindStringSubmatch(node.String())
	if m == nil {
		return false
	}
	want := [][]int{{2}, {0}, {1}, {0}}
	for i, s := range m[1:] {
		var got []int
		for f := range strings.FieldsSeq(s) {
			n, err := strconv.Atoi(f)
			if err != nil {
				return false
			}
			got = append(got, n)
		}
		if !slices.Equal(got, want[i]) {
			return false
		}
	}
	return true
}
