package data

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Two directories holding the same data have one identity, whatever their
// paths: run ids and results keyed by it survive moving a dataset.
func ExampleDatasetIdentity() {
	root, err := os.MkdirTemp("", "identity")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	var ids []string
	for _, dir := range []string{filepath.Join(root, "a"), filepath.Join(root, "elsewhere", "b")} {
		o := SynthOptions{Kind: SynthLogistic, Rows: 100, TestRows: 10, Features: 3, Seed: 7, Out: dir}
		if _, err := Synth(context.Background(), o); err != nil {
			panic(err)
		}
		id, err := DatasetIdentity(dir)
		if err != nil {
			panic(err)
		}
		ids = append(ids, id)
	}
	fmt.Println(ids[0] == ids[1], strings.HasPrefix(ids[0], "sha256:"), len(ids[0]))
	// Output: true true 23
}

// A bag of 4 rows of 3 classes: the batch target of the llp family is the
// bag's proportion vector, class 0's entry 1 − Σ of the released ones
// (negative here, under noise, and not clipped); a label target is
// one-hot.
func ExampleBatchSource_classes() {
	f := &Frame{Rows: 4, Classes: 3, Features: []string{"x"}, X: []float32{1, 2, 3, 4},
		Label:  []uint8{2, 0, 1, 2},
		BagID:  []int64{7, 7, 7, 7},
		AlphaC: []float64{0.75, 0.5, 0.75, 0.5, 0.75, 0.5, 0.75, 0.5}, // alpha_1, alpha_2 of each row
	}
	bags, err := NewBatchSource(f, BatchOptions{BatchSize: 4, BagSize: 4, Target: TargetAlpha, Classes: 3})
	if err != nil {
		panic(err)
	}
	b, _ := bags.Next()
	fmt.Println(b.TargetWidth, b.Target)
	rows, err := NewBatchSource(f, BatchOptions{BatchSize: 2, Target: TargetLabel, Classes: 3})
	if err != nil {
		panic(err)
	}
	b, _ = rows.Next()
	fmt.Println(b.TargetWidth, b.Target)
	// Output:
	// 3 [-0.25 0.75 0.5]
	// 3 [0 0 1 1 0 0]
}
