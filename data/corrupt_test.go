package data

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// Damaged dataset files give an error wrapping ErrCorrupt that names the
// file, from every reader (once a damaged footer crashed run and
// privatize with a stack trace 6 times out of 6; a random record body gave
// "slice bounds out of range"; a flipped footer length asked arrow-go for
// 376 GB, a fatal out-of-memory no recover could catch).
func TestReadDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "ds")
	in := writeFile(t, dir, "kdd", mustRead(t, "testdata/kdd_small.libsvm"))
	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: src, TestRows: 2, HashBuckets: 1000}); err != nil {
		t.Fatal(err)
	}
	good := mustRead(t, filepath.Join(src, TrainFile))
	n := len(good)
	footerLen := int(binary.LittleEndian.Uint32(good[n-10:]))
	footer := n - 10 - footerLen
	r := rand.New(rand.NewPCG(3, 3))
	with := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	tests := []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"not Arrow", []byte("label,x\n1,2\n")},
		{"truncated in the body", good[:n/2]},
		{"truncated in the footer", good[:n-20]},
		{"footer length too large", with(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[n-10:], uint32(n)); return b })},
		{"footer zeroed", with(func(b []byte) []byte { clear(b[footer : n-10]); return b })},
		{"random record body", with(func(b []byte) []byte {
			for i := 8; i < footer; i++ {
				b[i] = byte(r.Uint32())
			}
			return b
		})},
		{"list offsets out of range", with(func(b []byte) []byte {
			// The indices' offsets buffer holds 0, 11, 22, …: make one huge.
			i := bytes.Index(b, []byte{0, 0, 0, 0, 11, 0, 0, 0})
			if i < 0 {
				t.Fatal("no offsets buffer found")
			}
			binary.LittleEndian.PutUint32(b[i+4:], 1<<30)
			return b
		})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := filepath.Join(t.TempDir(), "ds")
			for _, f := range []string{TestFile, MetaFile} {
				writeFile(t, mkdir(t, ds), f, mustRead(t, filepath.Join(src, f)))
			}
			p := writeFile(t, ds, TrainFile, tc.file)
			for _, read := range []struct {
				name string
				fn   func() error
			}{
				{"ReadFrame", func() error { _, err := ReadFrame(p); return err }},
				{"ReadSchema", func() error { _, err := ReadSchema(p); return err }},
				{"ReadMetadata", func() error { _, err := ReadMetadata(p); return err }},
				{"Load", func() error { _, err := Load(ds); return err }},
			} {
				err := read.fn()
				if read.name != "ReadFrame" && read.name != "Load" && err == nil {
					continue // the footer and schema may be intact
				}
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), p) {
					t.Errorf("%s: err = %v, want ErrCorrupt naming %s", read.name, err, p)
				}
			}
		})
	}
}

// Every byte of the footer set to 0xff in turn: never a crash (one of them
// makes the schema's field count ~4e9, which arrow-go allocated unchecked: a
// fatal out-of-memory), and an error names the file.
func TestReadFooterBytesFlipped(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.arrow")
	if err := WriteFrame(p, fullFrame(), map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	good := mustRead(t, p)
	n := len(good)
	footer := n - 10 - int(binary.LittleEndian.Uint32(good[n-10:]))
	corrupt := 0
	for i := footer; i < n; i++ {
		b := bytes.Clone(good)
		b[i] = 0xff
		bad := writeFile(t, dir, "bad.arrow", b)
		f, err := ReadFrame(bad)
		if err == nil {
			if err := f.Validate(); err != nil {
				t.Fatalf("byte %d: invalid frame read: %v", i, err)
			}
			continue
		}
		checkReadError(t, err, bad)
		if errors.Is(err, ErrCorrupt) {
			corrupt++
		}
	}
	if corrupt < (n-footer)/2 {
		t.Fatalf("only %d of %d damaged footers reported as ErrCorrupt", corrupt, n-footer)
	}
}

// Damaged Parquet files too, through ReadFrame and ReadTable.
func TestReadDamagedParquet(t *testing.T) {
	dir := t.TempDir()
	tab := &Table{Columns: []Column{{"label", []int64{0, 1, 1}}, {"x", []float64{1, 2, 3}}}, Meta: map[string]string{"tool": Tool}}
	p := filepath.Join(dir, "t.parquet")
	if err := tab.WriteParquet(p); err != nil {
		t.Fatal(err)
	}
	good := mustRead(t, p)
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"empty", nil},
		{"truncated", good[:len(good)/2]},
		{"footer truncated", good[:len(good)-6]},
		{"magic only", []byte("PAR1PAR1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := writeFile(t, t.TempDir(), "bad.parquet", tc.file)
			if _, err := ReadFrame(bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
				t.Errorf("ReadFrame: err = %v", err)
			}
			if _, err := ReadTable(bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
				t.Errorf("ReadTable: err = %v", err)
			}
		})
	}
	// A missing file is not a damaged one.
	if _, err := ReadFrame(filepath.Join(dir, "none.parquet")); !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrCorrupt) {
		t.Errorf("missing file: err = %v", err)
	}
}

// A panic inside this module's own code while reading is a bug, not a
// damaged file: it must not be disguised as ErrCorrupt.
func TestOwnPanicsAreNotCorrupt(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("our own panic was recovered")
		}
	}()
	func() (err error) {
		defer recoverCorrupt(&err)
		var s []int
		_ = s[3] // index out of range in package data
		return nil
	}()
}

// A compressed IPC buffer (pyarrow writes LZ4/zstd files) declares its
// uncompressed size; a damaged one asked for 1 TiB, which Go's allocator
// cannot refuse gracefully. The reader's allocator caps it: ErrCorrupt.
func TestReadCompressedIPCHugeBuffer(t *testing.T) {
	const n = 1000
	f := &Frame{Rows: n, Features: []string{"x"}, X: make([]float32, n)}
	for i := range f.X {
		f.X[i] = float32(i)
	}
	lz4 := lz4File(t, f)
	dir := t.TempDir()
	good := writeFile(t, dir, "lz4.arrow", lz4)
	if back, err := ReadFrame(good); err != nil || back.X[n-1] != n-1 {
		t.Fatalf("LZ4 file: %v", err)
	}
	b := bytes.Clone(lz4)
	size := binary.LittleEndian.AppendUint64(nil, 4*n) // the column's uncompressed length prefix
	i := bytes.Index(b, size)
	if i < 0 {
		t.Fatal("no uncompressed-length prefix found")
	}
	binary.LittleEndian.PutUint64(b[i:], 1<<40)
	bad := writeFile(t, dir, "huge.arrow", b)
	if _, err := ReadFrame(bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v, want ErrCorrupt naming the file", err)
	}
}

// lz4File returns fr as an LZ4-compressed Arrow IPC file (as pyarrow writes
// with compression="lz4").
func lz4File(tb testing.TB, fr *Frame) []byte {
	return encodeFrame(tb, fr, func(s *arrow.Schema, w io.Writer) (recordWriter, error) {
		return ipc.NewFileWriter(w, ipc.WithSchema(s), ipc.WithLZ4())
	})
}

// recordWriter is what arrow-go's IPC and Parquet file writers share.
type recordWriter interface {
	Write(arrow.RecordBatch) error
	Close() error
}

// encodeFrame writes fr as one record batch with the writer open makes.
func encodeFrame(tb testing.TB, fr *Frame, open func(*arrow.Schema, io.Writer) (recordWriter, error)) []byte {
	rec, err := record(Schema(fr, nil), fr)
	if err != nil {
		tb.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := open(rec.Schema(), &buf)
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// A file of no columns would bound nothing: a damaged 2.7 kB file (found by
// FuzzReadIPC) declared 134M rows of no columns and readers built per-row
// state for them. Such frames are neither written nor read.
func TestNoColumnFrames(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFrame(filepath.Join(dir, "w.arrow"), &Frame{Rows: 3}, nil); !errors.Is(err, ErrSchema) {
		t.Fatalf("write: err = %v", err)
	}
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(arrow.NewSchema(nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	rec := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, 1<<27)
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Close()
	p := writeFile(t, dir, "r.arrow", buf.Bytes())
	if _, err := ReadFrame(p); !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "no columns") {
		t.Fatalf("read: err = %v", err)
	}
}
