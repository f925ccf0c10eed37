package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// sparseData draws kdd_embed-like data: each row has 1..width hashed indices;
// the label depends on a per-bucket weight summed over the row's indices.
func sparseData(n, width, buckets int, seed uint64) (idx []int32, mask []float32, y []uint8) {
	r := rand.New(rand.NewPCG(seed, 1))
	wr := rand.New(rand.NewPCG(99, 1)) // the same bucket weights for every call
	bw := make([]float64, buckets)
	for i := range bw {
		bw[i] = wr.NormFloat64()
	}
	idx, mask, y = make([]int32, n*width), make([]float32, n*width), make([]uint8, n)
	for i := range n {
		m := 1 + r.IntN(width)
		z := 0.0
		for j := range m {
			ix := r.IntN(buckets)
			idx[i*width+j], mask[i*width+j] = int32(ix), 1
			z += bw[ix]
		}
		if r.Float64() < 1/(1+math.Exp(-z)) {
			y[i] = 1
		}
	}
	return idx, mask, y
}

func TestKDDEmbedLearns(t *testing.T) {
	const width, buckets = 6, 200
	idx, mask, y := sparseData(8000, width, buckets, 1)
	tidx, tmask, ty := sparseData(2000, width, buckets, 2)
	feat, test := sparseFrame(idx, mask, width), sparseFrame(tidx, tmask, width)
	for _, tc := range []struct {
		name     string
		sparse   bool
		resident ResidentMode
	}{{"lazy Adam, table on the host", true, ResidentNever}, {"lazy Adam, table on the device", true, ResidentAlways}, {"dense Adam", false, ResidentAuto}} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			g := mustTrain(t, GroupConfig{Name: "kdd", Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets}, Loss: LossBCE, Epochs: 4,
				Features: feat, SparseEmbedding: tc.sparse, Resident: tc.resident,
				Replicas: []Replica{{Seed: 1, LR: 3e-3, Source: source(t, feat, srcOpts{labels: y, batch: 256})}}})
			auc := testAUC(t, mustPredict(t, g, test)[0], ty)
			t.Logf("kdd_embed (%d buckets, %s): test AUC %.4f, train loss %.4f", buckets, name, auc, g.Results[0].FinalLoss)
			if auc < 0.75 {
				t.Fatalf("kdd_embed test AUC %.4f, want >= 0.75", auc)
			}
		})
	}
}

// TestLazyAdam checks the sparse update on a tiny kdd_embed group of 2
// replicas whose batches repeat buckets within a row and across rows:
//   - after one step it equals dense Adam (untouched rows have zero moments,
//     so dense Adam leaves them alone too): duplicates are summed once;
//   - when every batch touches every bucket, it equals dense Adam at every
//     step (this checks lazy Adam's moments and bias corrections);
//   - rows no batch touches keep their initial values exactly, and rows
//     touched only by the first batch keep their step-1 values (dense Adam
//     keeps moving them: the two differ after 3 steps).
//
// Tolerance 1e-6 absolute: both compute the same float32 expressions, up
// to summation order.
func TestLazyAdam(t *testing.T) {
	for _, tc := range []struct {
		name     string
		resident ResidentMode
	}{{"table on the host", ResidentNever}, {"table on the device", ResidentAlways}} {
		t.Run(tc.name, func(t *testing.T) { testLazyAdam(t, tc.resident) })
	}
}

func testLazyAdam(t *testing.T, resident ResidentMode) {
	const buckets, width, e = 12, 3, 4
	// 3 batches of 2 rows. Buckets: batch 1 {1,1,2 | 2,3}, batch 2 {4 | 5,4,4},
	// batch 3 {1 | 6}. Buckets 0, 7…11 are never touched; 3 only at step 1.
	idx := []int32{1, 1, 2, 2, 3, 0, 4, 0, 0, 5, 4, 4, 1, 0, 0, 6, 0, 0}
	mask := []float32{1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 0}
	y := []uint8{1, 0, 0, 1, 1, 0}
	feat := sparseFrame(idx, mask, width)
	train := func(sparse bool, epochsRows int) *Group {
		f := feat.Slice(0, epochsRows)
		var reps []Replica
		for r := range 2 {
			reps = append(reps, Replica{Seed: uint64(r + 5), LR: 0.05 * float64(r+1), Source: source(t, f, srcOpts{labels: y[:epochsRows], batch: 2, noShuf: true})})
		}
		return mustTrain(t, GroupConfig{Name: "lazy", Model: ModelConfig{Kind: KindKDDEmbed, Buckets: buckets, EmbedDim: e, Hidden: []int{4}},
			Loss: LossBCE, Features: f, SparseEmbedding: sparse, Resident: resident, Replicas: reps})
	}
	row := func(table []float32, r, bucket int) []float32 {
		o := (r*(buckets+1) + bucket) * e
		return table[o : o+e]
	}
	maxDiff := func(a, b []float32) float64 {
		var m float64
		for i := range a {
			m = max(m, math.Abs(float64(a[i]-b[i])))
		}
		return m
	}
	lazy1, dense1 := train(true, 2), train(false, 2)
	for p := range lazy1.params {
		if d := maxDiff(lazy1.paramValues(t, p), dense1.paramValues(t, p)); d > 1e-6 {
			t.Errorf("after one step, parameter %d: lazy and dense Adam differ by %g", p, d)
		}
	}
	lazy3, dense3 := train(true, 6), train(false, 6)
	l1, l3, d3 := lazy1.paramValues(t, 0), lazy3.paramValues(t, 0), dense3.paramValues(t, 0)
	m, _ := ModelConfig{Kind: KindKDDEmbed, Buckets: buckets, EmbedDim: e, Hidden: []int{4}}.WithDefaults()
	for r := range 2 {
		start := make([][]float32, len(m.params()))
		for i, p := range m.params() {
			start[i] = make([]float32, p.size())
		}
		m.initReplica(uint64(r+5), start)
		for _, b := range []int{0, 7, 11, buckets} { // untouched, and the trash row
			if d := maxDiff(row(l3, r, b), start[0][b*e:(b+1)*e]); d != 0 {
				t.Errorf("replica %d: untouched bucket %d moved by %g", r, b, d)
			}
		}
		if d := maxDiff(row(l3, r, 3), row(l1, r, 3)); d != 0 {
			t.Errorf("replica %d: bucket 3 (touched only at step 1) moved by %g after step 1", r, d)
		}
		if d := maxDiff(row(d3, r, 3), row(l1, r, 3)); d < 1e-4 {
			t.Errorf("replica %d: dense Adam left bucket 3 alone after step 1 (moved %g); the comparison is vacuous", r, d)
		}
		if d := maxDiff(row(l3, r, 1), row(l1, r, 1)); d < 1e-4 {
			t.Errorf("replica %d: bucket 1, touched at step 3, did not move (%g)", r, d)
		}
	}

	// Every batch touches buckets 0…3 (4 buckets, so no row is ever skipped).
	full := sparseFrame([]int32{0, 1, 2, 2, 3, 3, 1, 0, 3, 2, 1, 0, 0, 0, 1, 1, 2, 3},
		[]float32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 3)
	run := func(sparse bool, epochs int) *Group {
		return mustTrain(t, GroupConfig{Name: "lazy-full", Model: ModelConfig{Kind: KindKDDEmbed, Buckets: 4, EmbedDim: e, Hidden: []int{8}},
			Loss: LossBCE, Features: full, SparseEmbedding: sparse, Resident: resident, Epochs: epochs,
			Replicas: []Replica{{Seed: 3, LR: 0.01, Source: source(t, full, srcOpts{labels: y, batch: 2, noShuf: true})}}})
	}
	lz, dn := run(true, 2), run(false, 2)
	for p := range lz.params {
		if d := maxDiff(lz.paramValues(t, p), dn.paramValues(t, p)); d > 1e-6 {
			t.Errorf("all buckets touched every step, 6 steps: parameter %d of lazy and dense Adam differ by %g", p, d)
		}
	}
	// Not vacuous: the gradient still flows in the second epoch (with lr 0.05
	// and 4 hidden units the ReLUs died after 2 steps).
	if d := maxDiff(run(true, 1).paramValues(t, 0), lz.paramValues(t, 0)); d < 1e-3 {
		t.Errorf("all buckets touched every step: the table moved only %g in steps 4–6", d)
	}
}

// TestHostLazyAdamMatchesProgram trains the same 2-replica kdd_embed group
// for 24 steps with lazy Adam on the host (deferred and split around the
// program, see hostEmbedding.update) and inside the program (ResidentAlways),
// on data where consecutive batches share some rows and not others, and
// wants equal parameters. Tolerance 1e-5 absolute: the two run the same
// float32 expressions, summed in different orders (embedding sums, row
// gradients), and 24 Adam steps of lr ≤ 0.02 amplify rounding little.
// It also checks the comparison is not vacuous: the gradient still flows at
// the end (the table moves by > 1e-3 between steps 12 and 24). A forward
// pass that read rows before their pending update, or a deferred update
// applied twice or to the wrong slot, fails it.
func TestHostLazyAdamMatchesProgram(t *testing.T) {
	const width, buckets, rows, batch = 4, 40, 96, 8
	idx, mask, y := sparseData(rows, width, buckets, 7)
	feat := sparseFrame(idx, mask, width)
	m := ModelConfig{Kind: KindKDDEmbed, Buckets: buckets, EmbedDim: 8, Hidden: []int{16, 8}}
	train := func(resident ResidentMode, epochs int) *Group {
		var reps []Replica
		for r := range 2 {
			reps = append(reps, Replica{Seed: uint64(r + 11), LR: 0.01 * float64(r+1),
				Source: source(t, feat, srcOpts{labels: y, batch: batch, seed: uint64(r + 3)})})
		}
		return mustTrain(t, GroupConfig{Name: "host-vs-program", Model: m, Loss: LossBCE, Features: feat,
			SparseEmbedding: true, Resident: resident, Epochs: epochs, Replicas: reps})
	}
	host, prog := train(ResidentNever, 2), train(ResidentAlways, 2)
	for p := range host.params {
		a, b := host.paramValues(t, p), prog.paramValues(t, p)
		var d float64
		for i := range a {
			d = max(d, math.Abs(float64(a[i]-b[i])))
		}
		if d > 1e-5 {
			t.Errorf("parameter %d: host and in-program lazy Adam differ by %g after 24 steps", p, d)
		}
	}
	half := train(ResidentNever, 1)
	a, b := half.paramValues(t, 0), host.paramValues(t, 0)
	var moved float64
	for i := range a {
		moved = max(moved, math.Abs(float64(a[i]-b[i])))
	}
	if moved < 1e-3 {
		t.Errorf("the table moved only %g in steps 13–24: the comparison is vacuous", moved)
	}
}
