package data

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// The training features read a record batch at a time give the loaded
// frame's Standardizer bit for bit and its rows in the order asked (an id
// column is no feature); rows asked twice or past the end are refused.
func TestPartialReads(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if _, err := Synth(context.Background(), SynthOptions{Kind: SynthLogistic, Rows: 3*maxBatchRows/2 + 11, TestRows: 10, Features: 5, Seed: 4, Out: dir}); err != nil {
		t.Fatal(err)
	}
	ds, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := SplitFile(dir, "train")
	want, err := FitStandardizer(ds.Train)
	if err != nil {
		t.Fatal(err)
	}
	got, err := FitStandardizerFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("streamed %+v, loaded %+v", got, want)
	}
	rows := rand.New(rand.NewPCG(1, 2)).Perm(ds.Train.Rows)[:5000]
	rows = append(rows, ds.Train.Rows-1, 0)
	part, err := ReadRows(path, "", rows)
	if err != nil {
		t.Fatal(err)
	}
	take := ds.Train.Take(rows)
	if part.Rows != len(rows) || !slices.Equal(part.Features, take.Features) || !slices.Equal(part.X, take.X) || !slices.Equal(part.Label, take.Label) {
		t.Fatalf("ReadRows: %d rows, features %v; want Take's", part.Rows, part.Features)
	}
	if _, err := ReadRows(path, "", []int{3, 3}); err == nil {
		t.Fatal("a row asked twice was read")
	}
	if _, err := ReadRows(path, "", []int{ds.Train.Rows}); err == nil {
		t.Fatal("a row past the end was read")
	}

	// An id column of floats is not a feature.
	f := idFrame()
	p64 := filepath.Join(t.TempDir(), "f64.arrow")
	writeWithID(t, p64, f, "uid", idArray(t, "float64"), 0)
	s, err := FitStandardizerFile(p64, "uid")
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := FitStandardizer(f); !reflect.DeepEqual(s, w) {
		t.Fatalf("with an id column: %+v, want %+v", s, w)
	}
	r, err := ReadRows(p64, "uid", []int{2, 0})
	if err != nil || !slices.Equal(r.X, []float32{5, 6, 1, 2}) || !slices.Equal(r.Label, []uint8{1, 0}) {
		t.Fatalf("ReadRows with an id column: %v, %v, %v", err, r.X, r.Label)
	}
}
