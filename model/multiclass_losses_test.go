package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:revive
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// evalMulti runs multiclassLoss for R replicas of B rows of c logits
// (logits[r] is B×c, row-major) and returns each replica's loss and the
// gradient of their sum with respect to the logits (per replica, B×c).
func evalMulti(t *testing.T, l Loss, flips []float64, logits [][]float32, c int, target [][]float32, bag int) ([]float64, [][]float32) {
	t.Helper()
	r, b := len(flips), len(logits[0])/c
	var z, y, flip []float32
	for i := range r {
		z, y = append(z, logits[i]...), append(y, target[i]...)
		flip = append(flip, float32(flips[i]))
	}
	exec, err := NewExec(goBackend(t), func(z, y, flip *Node) []*Node {
		loss := multiclassLoss(l, flip, z, y, bag)
		return []*Node{loss, Gradient(ReduceAllSum(loss), z)[0]}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer exec.Finalize()
	outs, err := exec.Exec(tensors.FromFlatDataAndDimensions(z, r, b, c), tensors.FromFlatDataAndDimensions(y, r, len(target[0])),
		tensors.FromFlatDataAndDimensions(flip, r))
	if err != nil {
		t.Fatal(err)
	}
	loss := make([]float64, r)
	for i, v := range tensors.MustCopyFlatData[float32](outs[0]) {
		loss[i] = float64(v)
	}
	g := tensors.MustCopyFlatData[float32](outs[1])
	grads := make([][]float32, r)
	for i := range r {
		grads[i] = g[i*b*c : (i+1)*b*c]
	}
	return loss, grads
}

func f32s(v ...float64) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(x)
	}
	return out
}

// TestMulticlassLossValues checks each C-class loss on a hand-computed batch
// of C = 3: logits (0, ln 2, 0) give p = (¼, ½, ¼), logits (ln 3, 0, 0) give
// p = (0.6, 0.2, 0.2). With flip probability 0.3 on 3 classes the RR keeps
// a label with q = 0.7 and releases each other class with b = 0.15, so
// a = q − b = 0.55. And the gradient: finite everywhere (flip 0 included,
// where forward_ce's log b is −∞), and of the right sign on each logit:
// raising the target class's logit lowers the loss, raising another's
// raises it.
func TestMulticlassLossValues(t *testing.T) {
	ln := math.Log
	rows := f32s(0, math.Ln2, 0, math.Log(3), 0, 0)
	tests := []struct {
		name   string
		loss   Loss
		flip   float64
		target []float64
		bag    int
		want   float64
		// sign of ∂loss/∂logit per row and class (0: not checked)
		sign []int
	}{
		{name: "ce one-hot", loss: LossCE, target: []float64{0, 1, 0, 0, 0, 1},
			want: (-ln(0.5) - ln(0.2)) / 2, sign: []int{1, -1, 1, 1, 1, -1}},
		{name: "ce soft (rr_prior)", loss: LossCE, target: []float64{0.5, 0.5, 0, 0.2, 0.3, 0.5},
			want: (-(0.5*ln(0.25) + 0.5*ln(0.5)) - (0.2*ln(0.6) + 0.3*ln(0.2) + 0.5*ln(0.2))) / 2},
		{name: "forward_ce flip 0.3", loss: LossForwardCE, flip: 0.3, target: []float64{0, 1, 0, 0, 0, 1},
			want: (-ln(0.15+0.55*0.5) - ln(0.15+0.55*0.2)) / 2, sign: []int{1, -1, 1, 1, 1, -1}},
		{name: "forward_ce flip 0 is ce", loss: LossForwardCE, flip: 0, target: []float64{0, 1, 0, 0, 0, 1},
			want: (-ln(0.5) - ln(0.2)) / 2},
		{name: "backward_ce flip 0.3", loss: LossBackwardCE, flip: 0.3, target: []float64{0, 1, 0, 0, 0, 1},
			want: ((-ln(0.5)+0.15*(ln(0.25)+ln(0.5)+ln(0.25)))/0.55 + (-ln(0.2)+0.15*(ln(0.6)+2*ln(0.2)))/0.55) / 2,
			sign: []int{1, -1, 1, 1, 1, -1}},
		{name: "backward_ce flip 0 is ce", loss: LossBackwardCE, flip: 0, target: []float64{0, 1, 0, 0, 0, 1},
			want: (-ln(0.5) - ln(0.2)) / 2},
		// One bag of both rows: p̄ = (0.425, 0.35, 0.225); a noisy α with an
		// entry below 0.
		{name: "propmatch_ce noisy bag", loss: LossPropMatchCE, bag: 2, target: []float64{0.5, 0.75, -0.25},
			want: -(0.5*ln(0.425) + 0.75*ln(0.35) - 0.25*ln(0.225))},
		{name: "propmatch_ce bags of 1 are ce", loss: LossPropMatchCE, bag: 1, target: []float64{0, 1, 0, 0, 0, 1},
			want: (-ln(0.5) - ln(0.2)) / 2, sign: []int{1, -1, 1, 1, 1, -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			loss, grad := evalMulti(t, tc.loss, []float64{tc.flip}, [][]float32{rows}, 3, [][]float32{f32s(tc.target...)}, tc.bag)
			if got := loss[0]; math.IsNaN(got) || math.Abs(got-tc.want) > 1e-6*math.Max(1, math.Abs(tc.want)) {
				t.Fatalf("%s = %.7f, want %.7f", tc.loss, got, tc.want)
			}
			for i, g := range grad[0] {
				if math.IsNaN(float64(g)) || math.IsInf(float64(g), 0) {
					t.Fatalf("∂loss/∂z[%d] = %v", i, g)
				}
			}
			for i, s := range tc.sign {
				if g := grad[0][i]; s != 0 && (g == 0 || (g > 0) != (s > 0)) {
					t.Errorf("∂loss/∂z[row %d, class %d] = %v, want sign %+d", i/3, i%3, g, s)
				}
			}
		})
	}
}

// oracleLoss is an independent float64 implementation of the C-class
// losses from their definitions: the RR transition matrix T written out,
// T⁻¹ by Gauss–Jordan elimination (not the closed form the graph uses),
// p = softmax(z) per row.
func oracleLoss(l Loss, flip float64, z []float64, c int, target []float64, bag int) float64 {
	rows := len(z) / c
	p := make([]float64, len(z))
	for i := range rows {
		softmax64(p[i*c:(i+1)*c], z[i*c:(i+1)*c])
	}
	tm := make([][]float64, c) // T[y][z] = P(released z | label y)
	for y := range c {
		tm[y] = make([]float64, c)
		for k := range c {
			tm[y][k] = flip / float64(c-1)
			if k == y {
				tm[y][k] = 1 - flip
			}
		}
	}
	var sum float64
	switch l {
	case LossCE, LossForwardCE, LossBackwardCE:
		inv := invert(tm)
		for i := range rows {
			pi, ti := p[i*c:(i+1)*c], target[i*c:(i+1)*c]
			for k := range c {
				switch l {
				case LossCE:
					sum -= ti[k] * math.Log(pi[k])
				case LossForwardCE:
					var tp float64 // (Tᵀp)_k
					for y := range c {
						tp += tm[y][k] * pi[y]
					}
					sum -= ti[k] * math.Log(tp)
				case LossBackwardCE:
					for j := range c {
						sum += ti[k] * inv[k][j] * -math.Log(pi[j])
					}
				}
			}
		}
		return sum / float64(rows)
	case LossPropMatchCE:
		for u := range rows / bag {
			for k := range c {
				var pbar float64
				for j := range bag {
					pbar += p[(u*bag+j)*c+k] / float64(bag)
				}
				sum -= target[u*c+k] * math.Log(pbar)
			}
		}
		return sum / float64(rows/bag)
	}
	panic(fmt.Sprint("oracleLoss: ", l))
}

// invert returns the inverse of a square matrix (Gauss–Jordan, partial
// pivoting).
func invert(a [][]float64) [][]float64 {
	n := len(a)
	m := make([][]float64, n)
	for i := range n {
		m[i] = make([]float64, 2*n)
		copy(m[i], a[i])
		m[i][n+i] = 1
	}
	for col := range n {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		m[col], m[piv] = m[piv], m[col]
		d := m[col][col]
		for j := range 2 * n {
			m[col][j] /= d
		}
		for r := range n {
			if r != col && m[r][col] != 0 {
				f := m[r][col]
				for j := range 2 * n {
					m[r][j] -= f * m[col][j]
				}
			}
		}
	}
	inv := make([][]float64, n)
	for i := range n {
		inv[i] = m[i][n:]
	}
	return inv
}

// TestMulticlassLossOracle compares every C-class loss, and its gradient
// with respect to the logits, with oracleLoss and its central differences
// on random batches (C = 3 and 5; one-hot, soft and noisy-proportion
// targets; flip probabilities up to 0.7·(C−1)/C), three replicas at once
// with their own flips. Tolerances: loss 2e-5 relative (float32 against
// float64), gradient 2e-4 absolute (values ~0.1).
func TestMulticlassLossOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 43))
	for _, c := range []int{3, 5} {
		for _, l := range []Loss{LossCE, LossForwardCE, LossBackwardCE, LossPropMatchCE} {
			t.Run(fmt.Sprintf("%s C=%d", l, c), func(t *testing.T) {
				const rows, reps = 6, 3
				bag := 0
				units := rows
				if l.PerBag() {
					bag, units = 3, 2
				}
				flips := make([]float64, reps)
				logits, targets := make([][]float32, reps), make([][]float32, reps)
				for r := range reps {
					if l == LossForwardCE || l == LossBackwardCE {
						flips[r] = rng.Float64() * 0.7 * float64(c-1) / float64(c)
					}
					logits[r] = make([]float32, rows*c)
					for i := range logits[r] {
						logits[r][i] = float32(2 * rng.NormFloat64())
					}
					targets[r] = make([]float32, units*c)
					for u := range units {
						switch {
						case l == LossPropMatchCE: // a proportion vector plus noise
							for k := range c {
								targets[r][u*c+k] = float32(rng.Float64()/float64(c) + 0.3*rng.NormFloat64())
							}
						case u%2 == 1 && l == LossCE: // soft
							var s float32
							for k := range c {
								v := float32(rng.Float64())
								targets[r][u*c+k], s = v, s+v
							}
							for k := range c {
								targets[r][u*c+k] /= s
							}
						default:
							targets[r][u*c+rng.IntN(c)] = 1
						}
					}
				}
				loss, grad := evalMulti(t, l, flips, logits, c, targets, bag)
				for r := range reps {
					z, y := make([]float64, len(logits[r])), make([]float64, len(targets[r]))
					for i, v := range logits[r] {
						z[i] = float64(v)
					}
					for i, v := range targets[r] {
						y[i] = float64(v)
					}
					want := oracleLoss(l, flips[r], z, c, y, bag)
					if math.Abs(loss[r]-want) > 2e-5*math.Max(1, math.Abs(want)) {
						t.Errorf("replica %d (flip %.3f): loss %.7f, oracle %.7f", r, flips[r], loss[r], want)
					}
					const h = 1e-5
					for i := range z {
						zp, zm := append([]float64(nil), z...), append([]float64(nil), z...)
						zp[i] += h
						zm[i] -= h
						fd := (oracleLoss(l, flips[r], zp, c, y, bag) - oracleLoss(l, flips[r], zm, c, y, bag)) / (2 * h)
						if math.Abs(float64(grad[r][i])-fd) > 2e-4 {
							t.Errorf("replica %d ∂/∂z[%d]: %v, oracle %v", r, i, grad[r][i], fd)
						}
					}
				}
			})
		}
	}
}

// TestMulticlassLossesAtTwoClasses: on two classes (logits z0, z1, binary
// logit z1 − z0) the C-class losses are the binary ones, tested on their
// own (TestLossValues): ce is bce, backward_ce is debiased_bce, propmatch_ce
// is propmatch, and forward_ce is −log(π + (1−2π)σ(±z)).
func TestMulticlassLossesAtTwoClasses(t *testing.T) {
	z2 := f32s(0.3, 1.1, -0.4, 0.9, 2, -1, 0.5, 0.5) // 4 rows of 2 logits
	z1 := f32s(0.8, 1.3, -3, 0)                      // z1 − z0
	y := []float64{1, 1, 0, 1}
	vec := func(ys []float64) []float32 { // (1−y, y) per row
		var v []float32
		for _, a := range ys {
			v = append(v, float32(1-a), float32(a))
		}
		return v
	}
	const pi = 0.2
	alpha := []float64{0.75, -0.25}
	tests := []struct {
		name   string
		multi  Loss
		flip   float64
		target []float64
		bag    int
		binary func() float64
	}{
		{"ce is bce", LossCE, 0, y, 0, func() float64 { return evalLoss(t, LossBCE, LossParams{}, z1, f32s(y...), 0) }},
		{"backward_ce is debiased_bce", LossBackwardCE, pi, y, 0,
			func() float64 { return evalLoss(t, LossDebiasedBCE, LossParams{FlipProb: pi}, z1, f32s(y...), 0) }},
		{"propmatch_ce is propmatch", LossPropMatchCE, 0, alpha, 2,
			func() float64 { return evalLoss(t, LossPropMatch, LossParams{}, z1, f32s(alpha...), 2) }},
		{"forward_ce", LossForwardCE, pi, y, 0, func() float64 {
			var s float64
			for i, zi := range z1 {
				p1 := sigmoid(float64(zi))
				if y[i] == 1 {
					s -= math.Log(pi + (1-2*pi)*p1)
				} else {
					s -= math.Log(pi + (1-2*pi)*(1-p1))
				}
			}
			return s / 4
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := evalMulti(t, tc.multi, []float64{tc.flip}, [][]float32{z2}, 2, [][]float32{vec(tc.target)}, tc.bag)
			if want := tc.binary(); math.Abs(got[0]-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("%s on 2 classes = %.7f, binary %.7f", tc.multi, got[0], want)
			}
		})
	}
}

// TestRRCorrectionsConsistent shows both RR corrections consistent at the
// population level, exactly: for a row with true class probabilities η and
// k-ary RR of flip probability f, the released label's law is w = Tᵀη.
// Every C-class loss is linear in its target, so the loss with the soft
// target w is the expected loss over the release. For both corrections it
// is minimized at p = η: the backward one's expectation is Σ_c η_c·(−log
// p_c), clean CE under η; the forward one's is the log loss of Tᵀp against
// Tᵀη, convex in p and minimal at Tᵀp = Tᵀη, i.e. p = η (T invertible for
// f < (C−1)/C). So at logits log η the gradient vanishes (checked to 1e-5
// against values ~0.1), and any move from η raises the expected loss;
// uncorrected CE on the noisy labels is minimized at w instead, and its
// gradient at η is η − w, far from 0 (checked: the test can tell).
func TestRRCorrectionsConsistent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const c = 4
	for _, eps := range []float64{0.5, 1, 2, 4} {
		f := karyFlip(eps, c)
		t.Run(fmt.Sprintf("eps=%g", eps), func(t *testing.T) {
			for trial := range 5 {
				z := make([]float64, c)
				for k := range z {
					z[k] = rng.NormFloat64()
				}
				eta := make([]float64, c)
				softmax64(eta, z)
				w := make([]float32, c) // Tᵀη
				for k := range c {
					for y := range c {
						tyk := f / (c - 1)
						if y == k {
							tyk = 1 - f
						}
						w[k] += float32(tyk * eta[y])
					}
				}
				logEta := make([]float32, c)
				for k, p := range eta {
					logEta[k] = float32(math.Log(p))
				}
				for _, l := range []Loss{LossForwardCE, LossBackwardCE, LossCE} {
					flip := f
					if l == LossCE {
						flip = 0
					}
					at, grad := evalMulti(t, l, []float64{flip}, [][]float32{logEta}, c, [][]float32{w}, 0)
					var norm float64
					for _, g := range grad[0] {
						norm = math.Max(norm, math.Abs(float64(g)))
					}
					if l == LossCE {
						var gap float64 // |η − w|∞
						for k := range c {
							gap = math.Max(gap, math.Abs(eta[k]-float64(w[k])))
						}
						if math.Abs(norm-gap) > 1e-5 || gap < 0.01 {
							t.Errorf("trial %d: uncorrected CE's gradient at η is %v, want |η − Tᵀη|∞ = %v > 0.01", trial, norm, gap)
						}
						continue
					}
					if norm > 1e-5 {
						t.Errorf("trial %d %s: expected gradient at η is %v, want 0", trial, l, norm)
					}
					for range 4 { // a step away from η in a random direction costs
						moved := make([]float32, c)
						for k := range c {
							moved[k] = logEta[k] + float32(0.3*rng.NormFloat64())
						}
						away, _ := evalMulti(t, l, []float64{flip}, [][]float32{moved}, c, [][]float32{w}, 0)
						if !(away[0] > at[0]) {
							t.Errorf("trial %d %s: expected loss %v away from η, %v at η", trial, l, away[0], at[0])
						}
					}
				}
			}
		})
	}
}
