package data

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Load checks test.arrow against train.arrow and meta.json (once a
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
		{"test as pandas Parquet (int64 label, float64 features)", func(t *testing.T, dir string, test *Frame, m *Meta) {
			os.Remove(filepath.Join(dir, TestFile))
			tab := &Table{Columns: []Column{{ColLabel, make([]int64, 10)}, {"x0", make([]float64, 10)}, {"x1", make([]float64, 10)}, {"x2", make([]float64, 10)}}}
			if err := tab.WriteParquet(filepath.Join(dir, "test.parquet")); err != nil {
				t.Fatal(err)
			}
		}, []string{TrainFile, "test.parquet"}, `column 1 is "label" uint8 in the train file, "label" int64 in the test file`},
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

// A dataset's identity is its content: recorded at synth/import time equal
// to the files' SHA-256, the same for the same seed in two directories and
// after a copy, different for other data, and computed from the files for a
// meta.json written before checksums.
func TestDatasetIdentity(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, seed uint64) (string, *Meta) {
		dir := filepath.Join(root, name)
		m, err := Synth(context.Background(), SynthOptions{Kind: SynthBeta, Rows: 300, TestRows: 50, Features: 2, Seed: seed, Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		return dir, m
	}
	a, ma := mk("a", 5)
	b, mb := mk("elsewhere/b", 5)
	c, mc := mk("c", 6)
	for _, f := range []struct{ file, sum string }{{TrainFile, ma.TrainSHA256}, {TestFile, ma.TestSHA256}} {
		if got := fmt.Sprintf("%x", sha256.Sum256(mustRead(t, filepath.Join(a, f.file)))); got != f.sum {
			t.Fatalf("%s: meta records %s, the file's SHA-256 is %s", f.file, f.sum, got)
		}
	}
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(ma.TrainSHA256+ma.TestSHA256)))
	if ma.ContentSHA256 != want || ma.Identity() != "sha256:"+want[:16] {
		t.Fatalf("content %s identity %s, want %s", ma.ContentSHA256, ma.Identity(), want)
	}
	if ma.Identity() != mb.Identity() {
		t.Fatalf("same seed, two directories: %s vs %s", ma.Identity(), mb.Identity())
	}
	if ma.Identity() == mc.Identity() {
		t.Fatal("different seeds, same identity")
	}
	// A copy elsewhere, with meta.json as an earlier version wrote it (no
	// checksums): DatasetIdentity computes the same identity from the files.
	old := filepath.Join(root, "copy", "old")
	for _, f := range []string{TrainFile, TestFile} {
		writeFile(t, mkdir(t, old), f, mustRead(t, filepath.Join(a, f)))
	}
	legacy := *ma
	legacy.TrainSHA256, legacy.TestSHA256, legacy.ContentSHA256 = "", "", ""
	mustWriteMeta(t, old, &legacy)
	if legacy.Identity() != "" {
		t.Fatalf("a meta without checksums has identity %q", legacy.Identity())
	}
	for _, dir := range []string{a, b, old} {
		got, err := DatasetIdentity(dir)
		if err != nil || got != ma.Identity() {
			t.Fatalf("DatasetIdentity(%s) = %s, %v; want %s", dir, got, err, ma.Identity())
		}
	}
	if got, _ := DatasetIdentity(c); got != mc.Identity() {
		t.Fatalf("DatasetIdentity(c) = %s, want %s", got, mc.Identity())
	}
	if _, err := DatasetIdentity(filepath.Join(root, "none")); err == nil {
		t.Fatal("no error for a directory without a dataset")
	}
}

func mkdir(t *testing.T, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Imports record the checksums of the files as written, too.
func TestImportRecordsContent(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "h.csv", higgsCSV(50, 3))
	out := filepath.Join(dir, "ds")
	m, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: out, TestRows: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(mustRead(t, filepath.Join(out, TrainFile)))); got != m.TrainSHA256 {
		t.Fatalf("train_sha256 %s, file %s", m.TrainSHA256, got)
	}
	if id, err := DatasetIdentity(out); err != nil || id != m.Identity() || id == "" {
		t.Fatalf("identity %q, %v; meta %q", id, err, m.Identity())
	}
}

// Identity is taken from the bytes when a dataset is opened: a flipped
// byte, or a file or meta.json of another dataset swapped in, is an
// *IdentityError naming the file and both digests (before, a finished
// sweep's identity was kept and nothing retrained). The cache of digests
// is used only for an unchanged file.
func TestIdentityFromBytes(t *testing.T) {
	root := t.TempDir()
	synth := func(name string, seed uint64) string {
		dir := filepath.Join(root, name)
		if _, err := Synth(context.Background(), SynthOptions{Kind: SynthLogistic, Rows: 200, TestRows: 40, Features: 3, Seed: seed, Out: dir}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	other := synth("other", 9)
	for _, tc := range []struct {
		name, file string // the file the error must name
		change     func(dir string)
	}{
		{"byte flipped in train.arrow", TrainFile, func(dir string) {
			b := mustRead(t, filepath.Join(dir, TrainFile))
			b[len(b)/2] ^= 0x10
			writeFile(t, dir, TrainFile, b)
		}},
		{"test.arrow of another dataset", TestFile, func(dir string) {
			writeFile(t, dir, TestFile, mustRead(t, filepath.Join(other, TestFile)))
		}},
		{"meta.json of another dataset", TrainFile, func(dir string) {
			writeFile(t, dir, MetaFile, mustRead(t, filepath.Join(other, MetaFile)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := synth("ds-"+strings.ReplaceAll(tc.name, " ", "-"), 1)
			m, err := ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			if ds, err := Load(dir); err != nil || ds.ID != m.Identity() { // fills the cache
				t.Fatalf("untouched: %v", err)
			}
			tc.change(dir)
			for _, open := range []func() error{
				func() error { _, err := Load(dir); return err },
				func() error { _, err := DatasetIdentity(dir); return err },
			} {
				err := open()
				var ie *IdentityError
				if !errors.As(err, &ie) || ie.File != filepath.Join(dir, tc.file) || len(ie.Got) != 64 || len(ie.Want) != 64 || ie.Got == ie.Want {
					t.Fatalf("err = %v, want an IdentityError naming %s and both digests", err, tc.file)
				}
				if !strings.Contains(err.Error(), ie.Got) || !strings.Contains(err.Error(), ie.Want) {
					t.Fatalf("message %q does not show both digests", err)
				}
			}
		})
	}
	t.Run("cache", func(t *testing.T) {
		dir := synth("cached", 1)
		if _, err := DatasetIdentity(dir); err != nil {
			t.Fatal(err)
		}
		// A cached digest is trusted only while the file's size, times and
		// inode are unchanged: a forged entry is believed (so the cache is
		// read) until the file is touched, which makes it hash again.
		cache := map[string]cacheEntry{}
		path := filepath.Join(dir, identityCacheFile)
		if err := json.Unmarshal(mustRead(t, path), &cache); err != nil || len(cache) != 2 {
			t.Fatalf("cache %v: %v", cache, err)
		}
		e := cache[TrainFile]
		e.SHA256 = strings.Repeat("0", 64)
		cache[TrainFile] = e
		b, _ := json.Marshal(cache)
		writeFile(t, dir, identityCacheFile, b)
		if _, err := DatasetIdentity(dir); !errors.Is(err, ErrIdentity) {
			t.Fatalf("forged cache entry: err = %v (the cache was not read)", err)
		}
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(filepath.Join(dir, TrainFile), later, later); err != nil {
			t.Fatal(err)
		}
		if _, err := DatasetIdentity(dir); err != nil {
			t.Fatalf("a touched file is hashed again: %v", err)
		}
	})
}

// positive_rate is the label mean of binary data (synthetic kind
// multiclass with 2 classes included) and absent for C ≥ 3 classes, whose
// rates are class_rates; a meta.json of C ≥ 3 classes written while it
// still carried positive_rate loads.
func TestPositiveRateBinaryOnly(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		opts   SynthOptions
		binary bool
	}{
		{"logistic", SynthOptions{Kind: SynthLogistic}, true},
		{"multiclass of 2", SynthOptions{Kind: SynthMulticlass, Classes: 2}, true},
		{"multiclass of 3", SynthOptions{Kind: SynthMulticlass, Classes: 3}, false},
	} {
		o := tc.opts
		o.Rows, o.TestRows, o.Features, o.Seed, o.Out = 400, 50, 3, 2, filepath.Join(t.TempDir(), "ds")
		if _, err := Synth(ctx, o); err != nil {
			t.Fatal(err)
		}
		ds, err := Load(o.Out)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := os.ReadFile(filepath.Join(o.Out, MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		has := strings.Contains(string(b), `"positive_rate"`)
		if has != tc.binary || (ds.Meta.PositiveRate != nil) != tc.binary {
			t.Errorf("%s: positive_rate in meta.json %v (%v), want %v", tc.name, has, ds.Meta.PositiveRate, tc.binary)
			continue
		}
		if !tc.binary {
			// As written before: C ≥ 3 with positive_rate still loads.
			old := strings.Replace(string(b), `"class_rates"`, `"positive_rate": 0.66,`+"\n  "+`"class_rates"`, 1)
			if err := os.WriteFile(filepath.Join(o.Out, MetaFile), []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			if m, err := Load(o.Out); err != nil || m.Meta.PositiveRate == nil || *m.Meta.PositiveRate != 0.66 {
				t.Errorf("%s: a meta.json with positive_rate: %v", tc.name, err)
			}
			continue
		}
		ones := 0
		for _, y := range ds.Train.Label {
			ones += int(y)
		}
		if want := float64(ones) / float64(ds.Train.Rows); *ds.Meta.PositiveRate != want {
			t.Errorf("%s: positive_rate %v, want the label mean %v", tc.name, *ds.Meta.PositiveRate, want)
		}
	}
}
