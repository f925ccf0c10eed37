package model

import (
	"fmt"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/gomlx/gomlx/backends"

	"labelprivacy/data"
	"labelprivacy/internal/stats"
)

// testBackend is the backend of tests and benchmarks: "go" unless
// MODEL_TEST_BACKEND names another (e.g. "xla:cpu", "go:ops_parallel").
var testBackend = sync.OnceValues(func() (backends.Backend, error) {
	return NewBackend(os.Getenv("MODEL_TEST_BACKEND"))
})

func goBackend(tb testing.TB) backends.Backend {
	tb.Helper()
	b, err := testBackend()
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// testAUC is the AUC of a model's scores (internal/stats.AUC, exact and
// tie-aware); a NaN score, a diverged model, fails the test.
func testAUC(tb testing.TB, scores []float32, labels []uint8) float64 {
	tb.Helper()
	for i, s := range scores {
		if math.IsNaN(float64(s)) {
			tb.Fatalf("score %d is NaN", i)
		}
	}
	return stats.AUC(scores, labels)
}

// denseFrame is dense features over x (n×dim).
func denseFrame(x []float32, dim int) *data.Features {
	names := make([]string, dim)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", i)
	}
	return &data.Features{Rows: len(x) / dim, Names: names, X: x}
}

// sparseFrame is sparse features of padded index rows (mask 0 ends a row).
func sparseFrame(idx []int32, mask []float32, width int) *data.Features {
	n := len(idx) / width
	f := &data.Features{Rows: n, Offsets: make([]int64, n+1)}
	for i := range n {
		for t := range width {
			if mask[i*width+t] != 0 {
				f.Indices = append(f.Indices, uint32(idx[i*width+t]))
			}
		}
		f.Offsets[i+1] = int64(len(f.Indices))
	}
	return f
}

// srcOpts describes a replica's batch source in tests.
type srcOpts struct {
	labels []uint8   // per-row 0/1 targets (clean or RR)
	alpha  []float32 // per-bag targets: bag j is rows j·bag … j·bag+bag−1
	bag    int
	batch  int
	seed   uint64
	noShuf bool
}

// source builds the production batch source over a target-only frame whose
// rows correspond to the feature rows by position.
func source(tb testing.TB, feat *data.Features, o srcOpts) *data.BatchSource {
	tb.Helper()
	f := &data.Frame{Rows: feat.Rows}
	bo := data.BatchOptions{BatchSize: o.batch, Shuffle: !o.noShuf, Seed: o.seed, DropLast: true, Features: feat, IndexOnly: true}
	if o.bag > 0 {
		f.BagID, f.Alpha = make([]int64, feat.Rows), make([]float64, feat.Rows)
		for i := range f.BagID {
			f.BagID[i] = int64(i / o.bag)
			f.Alpha[i] = float64(o.alpha[i/o.bag])
		}
		bo.Target, bo.BagSize = data.TargetAlpha, o.bag
	} else {
		f.LabelRR = o.labels
		bo.Target = data.TargetLabelRR
	}
	s, err := data.NewBatchSource(f, bo)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
