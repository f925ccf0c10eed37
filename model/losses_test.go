package model

import (
	"math"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

// bce is ℓ(z, y) = −[y log σ(z) + (1−y) log(1−σ(z))], linear in y.
func bce(z, y float64) float64 {
	return -(y*math.Log(sigmoid(z)) + (1-y)*math.Log(1-sigmoid(z)))
}

// evalLoss runs replicaLoss on the test backend for one replica (R = 1).
func evalLoss(t *testing.T, l Loss, p LossParams, logits, target []float32, bag int) float64 {
	t.Helper()
	return evalLosses(t, l, []LossParams{p}, [][]float32{logits}, [][]float32{target}, bag)[0]
}

// evalLosses runs replicaLoss for R replicas at once.
func evalLosses(t *testing.T, l Loss, ps []LossParams, logits, target [][]float32, bag int) []float64 {
	t.Helper()
	r := len(ps)
	var z, y, flip, prior []float32
	for i := range r {
		z, y = append(z, logits[i]...), append(y, target[i]...)
		flip, prior = append(flip, float32(ps[i].FlipProb)), append(prior, float32(ps[i].Prior))
	}
	out, err := ExecOnce(goBackend(t), func(z, y, flip, prior *Node) *Node {
		return replicaLoss(l, flip, prior, z, y, bag)
	}, tensors.FromFlatDataAndDimensions(z, r, len(logits[0])), tensors.FromFlatDataAndDimensions(y, r, len(target[0])),
		tensors.FromFlatDataAndDimensions(flip, r), tensors.FromFlatDataAndDimensions(prior, r))
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, r)
	for i, v := range tensors.MustCopyFlatData[float32](out) {
		got[i] = float64(v)
	}
	return got
}

func TestLossValues(t *testing.T) {
	ln3 := math.Log(3)
	tests := []struct {
		name   string
		loss   Loss
		params LossParams
		logits []float64
		target []float64
		bag    int
		want   float64
	}{
		{
			name: "bce", loss: LossBCE,
			logits: []float64{0, 2, -1}, target: []float64{1, 0, 1},
			want: (math.Ln2 + bce(2, 0) + bce(-1, 1)) / 3,
		},
		{
			// ((1−π)ℓ(p,ỹ) − πℓ(p,1−ỹ))/(1−2π) with π = 1/4: (¾ℓ(ỹ) − ¼ℓ(1−ỹ))·2.
			name: "debiased_bce pi=0.25", loss: LossDebiasedBCE, params: LossParams{FlipProb: 0.25},
			logits: []float64{0.5, -1.5}, target: []float64{1, 0},
			want: ((0.75*bce(0.5, 1)-0.25*bce(0.5, 0))*2 + (0.75*bce(-1.5, 0)-0.25*bce(-1.5, 1))*2) / 2,
		},
		{
			name: "debiased_bce pi=0 is bce", loss: LossDebiasedBCE, params: LossParams{FlipProb: 0},
			logits: []float64{0.3, -0.7}, target: []float64{0, 1},
			want: (bce(0.3, 0) + bce(-0.7, 1)) / 2,
		},
		{
			// Bag 1: σ = 0.5, 0.75 → p̄ = 0.625, α = 0.5.
			// Bag 2: σ = 0.25, 0.5 → p̄ = 0.375, α = 1.25 (noisy, outside [0,1]).
			name: "propmatch two bags", loss: LossPropMatch, bag: 2,
			logits: []float64{0, ln3, -ln3, 0}, target: []float64{0.5, 1.25},
			want: (-(0.5*math.Log(0.625) + 0.5*math.Log(0.375)) - (1.25*math.Log(0.375) - 0.25*math.Log(0.625))) / 2,
		},
		{
			name: "propmatch bag of 1 is bce", loss: LossPropMatch, bag: 1,
			logits: []float64{0.4, -2}, target: []float64{1, 0},
			want: (bce(0.4, 1) + bce(-2, 0)) / 2,
		},
		{
			// ỹ = kα − (k−1)p = 2·0.5 − 0.3 = 0.7 and 2·1 − 0.3 = 1.7.
			name: "easyllp k=2 p=0.3", loss: LossEasyLLP, params: LossParams{Prior: 0.3}, bag: 2,
			logits: []float64{0.2, -0.4, 1, 0}, target: []float64{0.5, 1},
			want: (bce(0.2, 0.7) + bce(-0.4, 0.7) + bce(1, 1.7) + bce(0, 1.7)) / 4,
		},
		{
			name: "propmatch extreme logits stay finite", loss: LossPropMatch, bag: 2,
			// Naive float32 gives log(1 − p̄) = log(0) in bag 1; in log space
			// it is log((σ(−80)+σ(−90))/2) ≈ −80.69.
			logits: []float64{80, 90, -80, -90}, target: []float64{0.5, 0.25},
			want: (-(0.5*math.Log((sigmoid(80)+sigmoid(90))/2) + 0.5*math.Log((sigmoid(-80)+sigmoid(-90))/2)) -
				(0.25*math.Log((sigmoid(-80)+sigmoid(-90))/2) + 0.75*math.Log1p(-(sigmoid(-80)+sigmoid(-90))/2))) / 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z := make([]float32, len(tc.logits))
			for i, v := range tc.logits {
				z[i] = float32(v)
			}
			y := make([]float32, len(tc.target))
			for i, v := range tc.target {
				y[i] = float32(v)
			}
			got := evalLoss(t, tc.loss, tc.params, z, y, tc.bag)
			if math.IsNaN(got) || math.Abs(got-tc.want) > 1e-5*math.Max(1, math.Abs(tc.want)) {
				t.Fatalf("%s = %.7f, want %.7f", tc.loss, got, tc.want)
			}
		})
	}
}

func TestLossParamsValidate(t *testing.T) {
	tests := []struct {
		name string
		loss Loss
		p    LossParams
		ok   bool
	}{
		{"rr ok", LossDebiasedBCE, LossParams{FlipProb: 0.3}, true},
		{"rr half", LossDebiasedBCE, LossParams{FlipProb: 0.5}, false},
		{"rr degenerate just below half", LossDebiasedBCE, LossParams{FlipProb: 0.5 - 1e-12}, false},
		{"rr largest accepted", LossDebiasedBCE, LossParams{FlipProb: MaxFlipProb}, true},
		{"rr eps=1/16", LossDebiasedBCE, LossParams{FlipProb: 1 / (1 + math.Exp(0.0625))}, true},
		{"rr NaN", LossDebiasedBCE, LossParams{FlipProb: math.NaN()}, false},
		{"rr negative", LossDebiasedBCE, LossParams{FlipProb: -0.1}, false},
		{"easyllp prior", LossEasyLLP, LossParams{Prior: 0.2}, true},
		{"easyllp bad prior", LossEasyLLP, LossParams{Prior: 1.5}, false},
		{"bce ignores params", LossBCE, LossParams{FlipProb: 7}, true},
		{"invalid loss", Loss(0), LossParams{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(tc.loss); (err == nil) != tc.ok {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// TestReplicaLossesIndependent: in one [R, ·] evaluation each replica's loss
// uses its own logits, targets and parameters (a replica-axis mix-up, e.g. a
// broadcast over the wrong axis, changes some replica's value).
func TestReplicaLossesIndependent(t *testing.T) {
	logits := [][]float32{{0.5, -1.5, 2, 0.1}, {-0.3, 0.8, 0, 1.2}, {1, 1, -2, 0.4}}
	target := [][]float32{{1, 0, 1, 1}, {0, 0, 1, 0}, {1, 0, 0, 1}}
	bags := [][]float32{{0.5, 1.25}, {0, 0.5}, {1, -0.25}}
	tests := []struct {
		name   string
		loss   Loss
		params []LossParams
		target [][]float32
		bag    int
	}{
		{"bce", LossBCE, []LossParams{{}, {}, {}}, target, 0},
		{"debiased_bce", LossDebiasedBCE, []LossParams{{FlipProb: 0.1}, {FlipProb: 0.3}, {FlipProb: 0.45}}, target, 0},
		{"propmatch", LossPropMatch, []LossParams{{}, {}, {}}, bags, 2},
		{"easyllp", LossEasyLLP, []LossParams{{Prior: 0.2}, {Prior: 0.5}, {Prior: 0.9}}, bags, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			all := evalLosses(t, tc.loss, tc.params, logits, tc.target, tc.bag)
			for r := range logits {
				alone := evalLoss(t, tc.loss, tc.params[r], logits[r], tc.target[r], tc.bag)
				if math.Abs(all[r]-alone) > 1e-6*math.Max(1, math.Abs(alone)) {
					t.Errorf("replica %d: %v in the group, %v alone", r, all[r], alone)
				}
			}
		})
	}
}
