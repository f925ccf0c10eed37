package model

import (
	"sync"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive // GoMLX graph code reads best dot-imported.
	"github.com/gomlx/gomlx/pkg/core/shapes"
)

// GoMLX v0.26 builds the gradient of a matrix×matrix Dot ([i,j]·[j,k]) as a
// broadcast Mul plus ReduceSum over an [i,j,k] tensor. XLA fuses that away;
// the pure-Go backend materializes it, which made dense-layer training ~12×
// slower than needed (NOTES.md item 2). This file registers, at init, a VJP
// made of two DotGeneral calls:
//
//	grad_x = v·Wᵀ   (contract v's axis 1 with W's axis 1)
//	grad_W = xᵀ·v   (contract x's axis 0 with v's axis 0)
//
// For any other case (vector operands, or a non-scalar root, i.e. a Jacobian)
// it calls the original VJP.

var (
	dotVJPMu       sync.Mutex
	originalDotVJP VJP // GoMLX's own VJP for NodeTypeDot, captured at init.
	fastDotVJP     VJP
)

func init() {
	originalDotVJP = VJPRegistration[NodeTypeDot]
	fastDotVJP = func(node *Node, vjpOutputs []*Node, outputShape shapes.Shape) []*Node {
		inputs := node.Inputs()
		if len(inputs) != 2 || len(vjpOutputs) != 1 || outputShape.Rank() != 0 ||
			inputs[0].Rank() != 2 || inputs[1].Rank() != 2 || vjpOutputs[0].Rank() != 2 {
			return originalDotVJP(node, vjpOutputs, outputShape)
		}
		x, w, v := inputs[0], inputs[1], vjpOutputs[0]          // x [i,j], w [j,k], v [i,k]
		gradX := DotGeneral(v, []int{1}, nil, w, []int{1}, nil) // [i,j]
		gradW := DotGeneral(x, []int{0}, nil, v, []int{0}, nil) // [j,k]
		return []*Node{gradX, gradW}
	}
	VJPRegistration[NodeTypeDot] = fastDotVJP
}

// setFastDotVJP switches between this package's Dot VJP (true, the default)
// and GoMLX's original (false). It only affects graphs built afterwards and
// must not race with graph building; tests and benchmarks use it to compare.
func setFastDotVJP(fast bool) {
	dotVJPMu.Lock()
	defer dotVJPMu.Unlock()
	if fast {
		VJPRegistration[NodeTypeDot] = fastDotVJP
	} else {
		VJPRegistration[NodeTypeDot] = originalDotVJP
	}
}
