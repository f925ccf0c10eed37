package data

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
)

func heapObjectBytes() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestReadIntoFinalBuffers: a file of three record batches is read into
// buffers of exactly its size (no growth by doubling: capacity = length),
// the features and sparse indices outside the Go heap (the heap grows by
// far less than them), with the values written; a frame read whole and
// in slices agree.
func TestReadIntoFinalBuffers(t *testing.T) {
	const rows, d, width = 300_000, 16, 5 // 19.2 MB of features, 6 MB of indices
	f := &Frame{Rows: rows, Features: SynthFeatureNames(d), X: make([]float32, rows*d), Label: make([]uint8, rows),
		Offsets: make([]int64, rows+1)}
	for i := range rows {
		for j := range d {
			f.X[i*d+j] = float32(i) + float32(j)/32
		}
		f.Label[i] = uint8(i % 2)
		for k := range 1 + i%width {
			f.Indices = append(f.Indices, uint32(i*7+k))
		}
		f.Offsets[i+1] = int64(len(f.Indices))
	}
	path := filepath.Join(t.TempDir(), "train.arrow")
	w, err := NewWriter(path, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range [][2]int{{0, 100_000}, {100_000, 250_000}, {250_000, rows}} {
		if err := w.Write(f.Slice(part[0], part[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	before := heapObjectBytes()
	got, err := ReadFrame(path)
	if err != nil {
		t.Fatal(err)
	}
	grew := heapObjectBytes() - before
	if got.Rows != rows || !slices.Equal(got.X, f.X) || !slices.Equal(got.Label, f.Label) ||
		!slices.Equal(got.Indices, f.Indices) || !slices.Equal(got.Offsets, f.Offsets) {
		t.Fatal("the frame read back differs from the one written")
	}
	for name, c := range map[string][2]int{"features": {len(got.X), cap(got.X)}, "indices": {len(got.Indices), cap(got.Indices)},
		"offsets": {len(got.Offsets), cap(got.Offsets)}, "label": {len(got.Label), cap(got.Label)}} {
		if c[0] != c[1] {
			t.Errorf("%s: length %d, capacity %d: not read into a buffer of its final size", name, c[0], c[1])
		}
	}
	if runtime.GOOS == "linux" {
		if len(got.mem.blocksOf()) == 0 {
			t.Error("the 19 MB feature matrix is on the Go heap")
		}
		if featureBytes := int64(len(got.X) * 4); grew > featureBytes/2 {
			t.Errorf("the heap grew by %d MB reading %d MB of features: they are not outside it", grew>>20, featureBytes>>20)
		}
	}
	runtime.KeepAlive(got)
}

// TestMappedFileShrinks: a mapped file cut short while it is read (its
// pages past the new end fault) gives an error wrapping ErrCorrupt, not a
// crash.
func TestMappedFileShrinks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("memory-mapped reading is tested on Linux")
	}
	f := &Frame{Rows: 200_000, Features: SynthFeatureNames(4), X: make([]float32, 800_000), Label: make([]uint8, 200_000)}
	path := filepath.Join(t.TempDir(), "train.arrow")
	if err := WriteFrame(path, f, nil); err != nil {
		t.Fatal(err)
	}
	r, err := openIPC(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.mapped == nil {
		t.Skip("the file was not mapped")
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	_, err = readRecords(r, 0)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "memory fault") {
		t.Fatalf("reading a mapped file cut short: %v, want a memory fault wrapping ErrCorrupt", err)
	}
}
