package data

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// Load checks test.arrow against train.arrow and meta.json (issue 9 §3: a
// test file with other feature names trained silently to AUC 0.42).
func TestLoadChecksSplits(t *testing.T) {
	renamed := func(f *Frame, names ...string) *Frame {
		g := *f
		g.Features = names
		return &g
	}
	tests := []struct {
		name   string
		change func(t *testing.T, dir string, test *Frame, m *Meta)
		files  []string // named in the error
		msg    string
	}{
		{"other feature names", func(t *testing.T, dir string, test *Frame, m *Meta) {
			writeSplit(t, dir, TestFile, renamed(test, "x0", "lepton_pT", "x2"))
		}, []string{TrainFile, TestFile}, `column 3 is "x1" float32 in the train file, "lepton_pT" float32`},
		{"fewer features", func(t *testing.T, dir string, test *Frame, m *Meta) {
			g := test.Take([]int{0, 1})
			g.Features, g.X = []string{"x0", "x1"}, make([]float32, 4)
			writeSplit(t, dir, TestFile, g)
		}, []string{TrainFile, TestFile}, `"x2"`},
		{"no label in test", func(t *testing.T, dir string, test *Frame, m *Meta) {
			g := *test
			g.Label = nil
			writeSplit(t, dir, TestFile, &g)
		}, []string{TrainFile, TestFile}, `"label"`},
		{"meta features", func(t *testing.T, dir string, test *Frame, m *Meta) {
			m.Features = []string{"x0", "x9", "x2"}
			mustWriteMeta(t, dir, m)
		}, []string{MetaFile, TrainFile}, `dense feature 2 is "x9" in meta.json, "x1"`},
		{"meta dims", func(t *testing.T, dir string, test *Frame, m *Meta) {
			m.Dims = 4
			mustWriteMeta(t, dir, m)
		}, []string{MetaFile, TrainFile}, "4 dense features"},
		{"train rows", func(t *testing.T, dir string, test *Frame, m *Meta) {
			m.TrainRows++
			mustWriteMeta(t, dir, m)
		}, []string{MetaFile, TrainFile}, "train_rows 41, the file has 40"},
		{"test rows", func(t *testing.T, dir string, test *Frame, m *Meta) {
			writeSplit(t, dir, TestFile, test.Slice(0, 9))
		}, []string{MetaFile, TestFile}, "test_rows 10, the file has 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ds")
			m, err := Synth(context.Background(), SynthOptions{Kind: SynthLogistic, Rows: 40, TestRows: 10, Features: 3, Seed: 1, Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Load(dir)
			if err != nil {
				t.Fatalf("untouched dataset: %v", err)
			}
			tc.change(t, dir, ds.Test, m)
			_, err = Load(dir)
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want ErrMismatch mentioning %q", err, tc.msg)
			}
			for _, f := range tc.files {
				if !strings.Contains(err.Error(), filepath.Join(dir, f)) {
					t.Fatalf("err = %v does not name %s", err, f)
				}
			}
		})
	}
}

func TestLoadChecksSparseSplits(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "kdd", mustRead(t, "testdata/kdd_small.libsvm"))
	out := filepath.Join(dir, "ds")
	m, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 2, HashBuckets: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	m.HashBuckets = 10 // the files hold buckets up to 999
	mustWriteMeta(t, out, m)
	if _, err := Load(out); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "hash_buckets 10") {
		t.Fatalf("index beyond hash_buckets: err = %v", err)
	}
	m.HashBuckets = 1000
	mustWriteMeta(t, out, m)
	dense := &Frame{Rows: ds.Test.Rows, Label: ds.Test.Label}
	writeSplit(t, out, TestFile, dense)
	if _, err := Load(out); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `("indices") is missing`) {
		t.Fatalf("dense test file: err = %v", err)
	}
}

func writeSplit(t *testing.T, dir, name string, f *Frame) {
	t.Helper()
	if err := WriteFrame(filepath.Join(dir, name), f, nil); err != nil {
		t.Fatal(err)
	}
}

// mustWriteMeta writes dir/meta.json or fails the test.
func mustWriteMeta(t *testing.T, dir string, m *Meta) {
	t.Helper()
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
}
