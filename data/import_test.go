package data

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// higgsCSV returns n synthetic lines in the UCI format (scientific notation).
func higgsCSV(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0))
	var b bytes.Buffer
	for range n {
		fmt.Fprintf(&b, "%.18e", float64(r.IntN(2)))
		for range 28 {
			fmt.Fprintf(&b, ",%.18e", r.NormFloat64())
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkArrowFile asserts the Arrow IPC *file* format (what pyarrow's
// pa.ipc.open_file reads: "ARROW1" magic at both ends) and returns the schema.
func checkArrowFile(t *testing.T, path string) *arrow.Schema {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("ARROW1")) || !bytes.HasSuffix(b, []byte("ARROW1")) {
		t.Fatalf("%s lacks the ARROW1 file magic", path)
	}
	r, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	return r.Schema()
}

func TestImportHiggs(t *testing.T) {
	dir := t.TempDir()
	csv := append(bytes.Clone(mustRead(t, "testdata/higgs_small.csv")), higgsCSV(200, 1)...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(csv)
	zw.Close()
	for _, tc := range []struct {
		name string
		in   []byte
	}{{"plain", csv}, {"gzip", gz.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			in := writeFile(t, dir, "HIGGS."+tc.name, tc.in)
			out := filepath.Join(dir, "out-"+tc.name)
			m, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: out, TestRows: 3})
			if err != nil {
				t.Fatal(err)
			}
			if m.TrainRows != 202 || m.TestRows != 3 {
				t.Fatalf("rows train %d test %d, want 202 and 3", m.TrainRows, m.TestRows)
			}
			schema := checkArrowFile(t, filepath.Join(out, TrainFile))
			if got := schema.Field(0); got.Name != "label" || got.Type.ID() != arrow.UINT8 {
				t.Fatalf("first column %v, want label uint8", got)
			}
			for j, name := range HiggsFeatures {
				f := schema.Field(j + 1)
				if f.Name != name || f.Type.ID() != arrow.FLOAT32 {
					t.Fatalf("column %d = %v, want %s float32", j+1, f, name)
				}
			}
			ds, err := Load(out)
			if err != nil {
				t.Fatal(err)
			}
			// Every row read back equals the parsed line: test = lines 1–3.
			lines := bytes.Split(bytes.TrimSpace(csv), []byte("\n"))
			feats := make([]float32, 28)
			for i, line := range lines {
				y, err := ParseHiggsLine(line, feats)
				if err != nil {
					t.Fatal(err)
				}
				f, r := ds.Test, i
				if i >= 3 {
					f, r = ds.Train, i-3
				}
				if f.Label[r] != y || !equalF32(f.X[r*28:(r+1)*28], feats) {
					t.Fatalf("line %d differs after the round trip", i+1)
				}
			}
		})
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustRead(t testing.TB, p string) []byte {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestImportHiggsBadInput(t *testing.T) {
	good := string(higgsCSV(5, 2))
	lines := strings.Split(strings.TrimSpace(good), "\n")
	replaceLine := func(i int, s string) string {
		l := append([]string(nil), lines...)
		l[i] = s
		return strings.Join(l, "\n") + "\n"
	}
	nanLine := strings.Replace(lines[3], ",", ",nan,", 1)
	nanLine = nanLine[:strings.LastIndex(nanLine, ",")] // keep 29 fields
	hugeLine := strings.Replace(nanLine, ",nan,", ",1e999,", 1)
	tests := []struct {
		name     string
		in       string
		drop     bool
		testRows int64
		want     error
		message  string
		dropped  int64
	}{
		{"malformed line 3", replaceLine(2, "1.0,2.0"), false, 1, ErrMalformed, ":3: ", 0},
		{"label out of range on line 2", replaceLine(1, "3"+lines[1][strings.Index(lines[1], ","):]), false, 1, ErrLabel, ":2: ", 0},
		{"NaN feature line 4", replaceLine(3, nanLine), false, 1, ErrInvalid, ":4: ", 0},
		{"NaN dropped", replaceLine(3, nanLine), true, 1, nil, "", 1},
		{"1e999 feature line 4", replaceLine(3, hugeLine), false, 1, ErrInvalid, ":4: data: invalid value: column 2: \"1e999\" is out of float32 range", 0},
		{"1e999 dropped", replaceLine(3, hugeLine), true, 1, nil, "", 1},
		{"empty input", "", false, 1, ErrEmpty, "no rows", 0},
		{"only blank lines", "\n\n", false, 1, ErrEmpty, "no rows", 0},
		{"everything is test", good, false, 10, ErrEmpty, "no training rows", 0},
		{"no test rows", good, false, 0, ErrEmpty, "test set is empty", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "in.csv", []byte(tc.in))
			out := filepath.Join(dir, "ds")
			m, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: out, TestRows: tc.testRows, DropInvalid: tc.drop})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if m.DroppedRows != tc.dropped {
					t.Fatalf("dropped %d rows, want %d", m.DroppedRows, tc.dropped)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.message)
			}
			if strings.Contains(tc.message, ":") {
				if !strings.Contains(err.Error(), in) {
					t.Fatalf("err = %v does not name the file", err)
				}
			}
			assertNoPartialFiles(t, out)
		})
	}
}

// CSV and libsvm numbers are plain decimals: Go's hexadecimal floats
// (0x1p3) and digit separators (1_000), which strconv.ParseFloat accepts,
// are refused naming the file, the line and the column (field).
func TestImportRefusesNonDecimalNumbers(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(string(higgsCSV(5, 2))), "\n")
	with := func(line, col int, v string) string {
		l := append([]string(nil), lines...)
		f := strings.Split(l[line-1], ",")
		f[col-1] = v
		l[line-1] = strings.Join(f, ",")
		return strings.Join(l, "\n") + "\n"
	}
	for _, tc := range []struct {
		name, in, where, field string
	}{
		{"hex float feature", with(3, 5, "0x1p3"), ":3: ", "column 5"},
		{"digit separators", with(2, 7, "1_000"), ":2: ", "column 7"},
		{"signed hex", with(4, 2, "-0X1.8P-1"), ":4: ", "column 2"},
		{"hex label", with(5, 1, "0x1p0"), ":5: ", "column 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := writeFile(t, dir, "in.csv", []byte(tc.in))
			out := filepath.Join(dir, "ds")
			_, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: out, TestRows: 1})
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), in+tc.where) || !strings.Contains(err.Error(), tc.field) ||
				!strings.Contains(err.Error(), "plain decimal") {
				t.Fatalf("err = %v, want malformed naming %s%s %s", err, in, tc.where, tc.field)
			}
			assertNoPartialFiles(t, out)
		})
	}
	t.Run("libsvm value", func(t *testing.T) {
		dir := t.TempDir()
		in := writeFile(t, dir, "in.libsvm", []byte("1 3:1\n0 4:1 9:1_0\n1 2:1\n"))
		_, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, "ds"), TestRows: 1})
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), in+":2: ") || !strings.Contains(err.Error(), "field 3") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("plain decimals still parse", func(t *testing.T) {
		feats := make([]float32, 28)
		line := "1.0,+2,-.5,3.,1e3,1E-3,-0.0" + strings.Repeat(",0", 22)
		if y, err := ParseHiggsLine([]byte(line), feats); err != nil || y != 1 || feats[0] != 2 || feats[1] != -0.5 || feats[3] != 1000 {
			t.Fatalf("%q: %v %v %v", line, y, feats[:6], err)
		}
	})
}

// libsvm imports bound the hashed dimension (MaxHashBuckets) and say it.
func TestImportLibSVMBoundsHashBuckets(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.libsvm", []byte("1 3:1\n0 4:1\n1 2:1\n"))
	out := filepath.Join(dir, "ds")
	_, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 1, HashBuckets: 4294967295})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "67108864") {
		t.Fatalf("err = %v, want ErrInvalid naming the bound", err)
	}
	assertNoPartialFiles(t, dir+"/ds")
}

// An empty test set's hint names the flags the importer has: --test-rows
// for higgs, --test-rows or --test for libsvm.
func TestImportEmptyTestSetHint(t *testing.T) {
	dir := t.TempDir()
	_, err := ImportHiggs(context.Background(), ImportOptions{In: writeFile(t, dir, "h.csv", higgsCSV(3, 1)), Out: filepath.Join(dir, "h"), TestRows: 0})
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "--test-rows") || strings.Contains(err.Error(), "--test)") || strings.Contains(err.Error(), "give --test") {
		t.Fatalf("higgs: err = %v", err)
	}
	_, err = ImportLibSVM(context.Background(), ImportOptions{In: writeFile(t, dir, "k.libsvm", []byte("1 3:1\n")), Out: filepath.Join(dir, "k"), TestRows: 0})
	if !errors.Is(err, ErrEmpty) || !strings.Contains(err.Error(), "or give --test") {
		t.Fatalf("libsvm: err = %v", err)
	}
}

// assertNoPartialFiles checks that a failed run left neither dataset files
// nor temporaries behind.
func assertNoPartialFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("failed import left %s behind", filepath.Join(dir, e.Name()))
	}
}

// A failing re-import over an existing dataset leaves the old files intact.
func TestImportFailureKeepsPreviousDataset(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ds")
	in := writeFile(t, dir, "good.csv", higgsCSV(20, 3))
	if _, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: out, TestRows: 5}); err != nil {
		t.Fatal(err)
	}
	before := mustRead(t, filepath.Join(out, TrainFile))
	bad := append(higgsCSV(100000, 4), []byte("garbage\n")...) // fails after a chunk was written
	inBad := writeFile(t, dir, "bad.csv", bad)
	_, err := ImportHiggs(context.Background(), ImportOptions{In: inBad, Out: out, TestRows: 5})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), ":100001:") {
		t.Fatalf("err = %v, want malformed at line 100001", err)
	}
	if !bytes.Equal(before, mustRead(t, filepath.Join(out, TrainFile))) {
		t.Fatal("train.arrow changed after a failed import")
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 3 {
		t.Fatalf("dataset dir has %d entries after a failed import, want 3 (no temporaries)", len(entries))
	}
}

func TestImportLibSVM(t *testing.T) {
	dir := t.TempDir()
	train := writeFile(t, dir, "kdd.train", mustRead(t, "testdata/kdd_small.libsvm"))
	test := writeFile(t, dir, "kdd.test", []byte("1 5:1 6:0.5\n-1 2:1\n"))
	out := filepath.Join(dir, "ds")
	m, err := ImportLibSVM(context.Background(), ImportOptions{In: train, TestIn: test, Out: out, HashBuckets: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if m.TrainRows != 5 || m.TestRows != 2 || m.MaxIndices != 11 || m.NonBinaryValues != 1 || m.HashBuckets != 1000 {
		t.Fatalf("meta = %+v", m)
	}
	schema := checkArrowFile(t, filepath.Join(out, TrainFile))
	f, ok := schema.FieldsByName(ColIndices)
	if !ok || f[0].Type.ID() != arrow.LIST || f[0].Type.(*arrow.ListType).Elem().ID() != arrow.UINT32 {
		t.Fatalf("indices column: %v", f)
	}
	ds, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	var ln LibSVMLine
	for i, line := range readLines(t, "testdata/kdd_small.libsvm") {
		if err := ParseLibSVMLine(line, 1000, &ln); err != nil {
			t.Fatal(err)
		}
		got := ds.Train.Indices[ds.Train.Offsets[i]:ds.Train.Offsets[i+1]]
		if ds.Train.Label[i] != ln.Label || fmt.Sprint(got) != fmt.Sprint(ln.Indices) {
			t.Fatalf("row %d: %v %v, want %v %v", i, ds.Train.Label[i], got, ln.Label, ln.Indices)
		}
	}
	if ds.Test.Label[0] != 1 || ds.Test.Label[1] != 0 {
		t.Fatalf("test labels %v", ds.Test.Label)
	}
	t.Run("duplicate indices and collisions counted", func(t *testing.T) {
		in := writeFile(t, dir, "dups.libsvm", []byte("1 1:1 2:1 1:1\n0 5:1 5:1 5:1 6:1\n1 3:1\n"))
		out := filepath.Join(dir, "dups")
		m, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 1, HashBuckets: 1})
		if err != nil {
			t.Fatal(err)
		}
		if m.DuplicateIndices != 3 || m.BucketCollisions != 2 {
			t.Fatalf("meta counts %d duplicates, %d collisions; want 3 and 2", m.DuplicateIndices, m.BucketCollisions)
		}
		back, err := ReadMeta(out)
		if err != nil || back.DuplicateIndices != 3 || back.BucketCollisions != 2 {
			t.Fatalf("meta.json: %+v, %v", back, err)
		}
		ds, err := Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ds.Test.Offsets, ds.Train.Offsets); got != "[0 2] [0 2 3]" {
			t.Fatalf("row widths (offsets) %s, want [0 2] [0 2 3]", got)
		}
	})
	t.Run("bad line names file and line", func(t *testing.T) {
		in := writeFile(t, dir, "bad.libsvm", []byte("1 1:1\n1 2:1\n7 3:1\n"))
		_, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, "bad"), TestRows: 1})
		if !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), in+":3:") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestImportCancelled(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.csv", higgsCSV(chunkRows+10, 5))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "ds")
	if _, err := ImportHiggs(ctx, ImportOptions{In: in, Out: out, TestRows: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertNoPartialFiles(t, out)
}

func BenchmarkImportHiggs(b *testing.B) {
	dir := b.TempDir()
	csv := higgsCSV(100000, 6) // ≈ 75 MB in the UCI format
	in := writeFile(b, dir, "HIGGS.csv", csv)
	b.SetBytes(int64(len(csv)))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, fmt.Sprint("o", i)), TestRows: 10000}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseHiggsLine(b *testing.B) {
	lines := bytes.Split(bytes.TrimSpace(higgsCSV(1000, 7)), []byte("\n"))
	var n int64
	for _, l := range lines {
		n += int64(len(l) + 1)
	}
	b.SetBytes(n)
	feats := make([]float32, 28)
	for b.Loop() {
		for _, l := range lines {
			if _, err := ParseHiggsLine(l, feats); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// bzip2 input (the libsvm collection's .bz2 files) is detected by its magic
// bytes; Go's standard library only decompresses bzip2, so the test needs
// the bzip2 tool to make one.
func TestImportLibSVMBzip2(t *testing.T) {
	bz, err := exec.LookPath("bzip2")
	if err != nil {
		t.Skip("no bzip2 tool to compress the input")
	}
	dir := t.TempDir()
	in := writeFile(t, dir, "kdd", mustRead(t, "testdata/kdd_small.libsvm"))
	if out, err := exec.Command(bz, "-k", in).CombinedOutput(); err != nil {
		t.Fatalf("bzip2: %v %s", err, out)
	}
	m, err := ImportLibSVM(context.Background(), ImportOptions{In: in + ".bz2", Out: filepath.Join(dir, "ds"), TestRows: 2, HashBuckets: 100})
	if err != nil {
		t.Fatal(err)
	}
	if m.TrainRows != 3 || m.TestRows != 2 {
		t.Fatalf("meta %+v", m)
	}
}

func TestReadSchema(t *testing.T) {
	dir := t.TempDir()
	train := writeFile(t, dir, "kdd", mustRead(t, "testdata/kdd_small.libsvm"))
	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: train, Out: filepath.Join(dir, "kdd-ds"), TestRows: 1, HashBuckets: 50}); err != nil {
		t.Fatal(err)
	}
	f, err := ReadSchema(filepath.Join(dir, "kdd-ds", TrainFile))
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 0 || !f.HasSparse() || f.Label == nil || f.Dim() != 0 || f.Validate() != nil {
		t.Fatalf("schema frame %+v", f)
	}
	in := writeFile(t, dir, "h.csv", higgsCSV(5, 9))
	if _, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, "h-ds"), TestRows: 1}); err != nil {
		t.Fatal(err)
	}
	f, err = ReadSchema(filepath.Join(dir, "h-ds", TrainFile))
	if err != nil || f.Dim() != 28 || f.Features[0] != "lepton_pT" || f.HasSparse() {
		t.Fatalf("higgs schema %+v, %v", f, err)
	}
}

// Progress reports the position in the input file as stored (compressed for
// gzip) and its size, so that a percentage and an ETA can be shown:
// positions never decrease, stay below the size while rows
// remain, and reach it at the end; uncompressed bytes reach the content size.
func TestImportProgress(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var content bytes.Buffer
	const rows = 3*chunkRows + 500
	for i := range rows {
		fmt.Fprintf(&content, "%d %d:1 %d:1 %d:1\n", i%2, r.IntN(1e6)+1, r.IntN(1e6)+1, r.IntN(1e6)+1)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(content.Bytes())
	zw.Close()
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file []byte
	}{{"plain", content.Bytes()}, {"gzip", gz.Bytes()}} {
		t.Run(tc.name, func(t *testing.T) {
			in := writeFile(t, dir, tc.name, tc.file)
			var got []ImportProgress
			_, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, "ds-"+tc.name), TestRows: 100,
				Progress: func(p ImportProgress) { got = append(got, p) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4 { // after each of 3 full chunks, and at the end
				t.Fatalf("%d progress reports, want 4", len(got))
			}
			size := int64(len(tc.file))
			for i, p := range got {
				if p.InputSize != size {
					t.Fatalf("report %d: input size %d, want %d", i, p.InputSize, size)
				}
				if i > 0 && p.InputPos < got[i-1].InputPos {
					t.Fatalf("report %d: position went back from %d to %d", i, got[i-1].InputPos, p.InputPos)
				}
			}
			if first := got[0]; first.InputPos <= 0 || first.InputPos >= size {
				t.Fatalf("first report at %d of %d bytes", first.InputPos, size)
			}
			last := got[len(got)-1]
			if last.InputPos != size || last.Bytes != int64(content.Len()) || last.Rows != rows {
				t.Fatalf("last report %+v; want position %d, %d bytes, %d rows", last, size, content.Len(), rows)
			}
		})
	}
}

// A UTF-8 byte order mark (spreadsheet exports write one) is not data: the
// import equals the one without it.
func TestImportAcceptsBOM(t *testing.T) {
	dir := t.TempDir()
	csv := higgsCSV(50, 3)
	var ids [2]string
	for i, body := range [][]byte{csv, append([]byte{0xEF, 0xBB, 0xBF}, csv...)} {
		in := writeFile(t, dir, fmt.Sprintf("h%d.csv", i), body)
		m, err := ImportHiggs(context.Background(), ImportOptions{In: in, Out: filepath.Join(dir, fmt.Sprintf("ds%d", i)), TestRows: 10})
		if err != nil {
			t.Fatalf("input %d: %v", i, err)
		}
		ids[i] = m.Identity()
	}
	if ids[0] != ids[1] {
		t.Fatalf("a BOM changed the dataset: %s vs %s", ids[0], ids[1])
	}
}
