package data

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

// ReadEta reads back the η a loaded frame holds, binary and C-class, a
// batch at a time past one record batch; a file without η gives nil.
func TestReadEta(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       SynthOptions
		classes int
	}{
		{"binary", SynthOptions{Kind: SynthLogistic, Rows: maxBatchRows + 7, TestRows: 10, Features: 3, Seed: 2}, 2},
		{"C=4", SynthOptions{Kind: SynthMulticlass, Classes: 4, Rows: 300, TestRows: 10, Features: 3, Seed: 3}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			tc.o.Out = dir
			if _, err := Synth(context.Background(), tc.o); err != nil {
				t.Fatal(err)
			}
			ds, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadEta(SplitFile(dir, "train"), tc.classes)
			if err != nil {
				t.Fatal(err)
			}
			want := ds.Train.Eta
			if tc.classes >= 3 {
				want = ds.Train.EtaC
			}
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Fatalf("ReadEta: %d values, the loaded frame %d (equal: %v)", len(got), len(want), slices.Equal(got, want))
			}
		})
	}
	p := filepath.Join(t.TempDir(), "f.arrow")
	writeWithID(t, p, idFrame(), "uid", idArray(t, "float64"), 0)
	if got, err := ReadEta(p, 2); got != nil || err != nil {
		t.Fatalf("a file without eta: %v, %v", got, err)
	}
}
