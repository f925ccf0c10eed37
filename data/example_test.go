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
