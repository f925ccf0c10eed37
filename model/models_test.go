package model

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
	"github.com/gomlx/gomlx/pkg/ml/context"
)

// TestLogitsLeadingAxes: the graph builders accept any leading axes, so a
// [2, 5, d] input gives the same logits as its two [5, d] halves.
func TestLogitsLeadingAxes(t *testing.T) {
	tests := []struct {
		name  string
		model ModelConfig
	}{
		{"mlp", ModelConfig{Kind: KindMLP, InputDim: 4, Hidden: []int{8, 3}}},
		{"higgs_mlp", ModelConfig{Kind: KindHiggsMLP, InputDim: 4}},
		{"kdd_embed", ModelConfig{Kind: KindKDDEmbed, Buckets: 30, EmbedDim: 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.model.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.New()
			ctx.SetParam(context.ParamInitialSeed, int64(1))
			const width = 3
			x := make([]float32, 2*5*4)
			idx := make([]int32, 2*5*width)
			mask := make([]float32, len(idx))
			for i := range x {
				x[i] = float32(math.Sin(float64(i)))
			}
			for i := range idx {
				idx[i] = int32(i*7) % 30
				mask[i] = float32(i % 2)
			}
			logits := func(lead ...int) []float32 {
				n := 1
				for _, d := range lead {
					n *= d
				}
				var args []any
				if m.Kind == KindKDDEmbed {
					args = []any{tensors.FromFlatDataAndDimensions(idx[:n*width], append(lead, width)...),
						tensors.FromFlatDataAndDimensions(mask[:n*width], append(lead, width)...)}
				} else {
					args = []any{tensors.FromFlatDataAndDimensions(x[:n*4], append(lead, 4)...)}
				}
				exec, err := context.NewExec(goBackend(t), ctx, func(ctx *context.Context, in []*Node) *Node {
					mc := ctx.In("model").Checked(false)
					if m.Kind == KindKDDEmbed {
						return Logits(mc, m, Inputs{Indices: in[0], Mask: in[1]})
					}
					return Logits(mc, m, Inputs{X: in[0]})
				})
				if err != nil {
					t.Fatal(err)
				}
				out, err := exec.Exec(args...)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := out[0].Shape().Dimensions, lead; len(got) != len(want) {
					t.Fatalf("logits shape %v for leading axes %v", got, want)
				}
				return tensors.MustCopyFlatData[float32](out[0])
			}
			all := logits(2, 5) // [2, 5, ...] at once
			first := logits(5)  // rows 0..4 alone
			for i := range first {
				if math.Abs(float64(all[i]-first[i])) > 1e-5 {
					t.Fatalf("row %d: %v batched vs %v alone", i, all[i], first[i])
				}
			}
		})
	}
}
