package data

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// byteSource hands out values decoded from fuzz input; zeros once it runs out.
type byteSource struct{ b []byte }

func (s *byteSource) next(n int) []byte {
	out := make([]byte, n)
	k := copy(out, s.b)
	s.b = s.b[k:]
	return out
}
func (s *byteSource) u8() uint8   { return s.next(1)[0] }
func (s *byteSource) u32() uint32 { return binary.LittleEndian.Uint32(s.next(4)) }
func (s *byteSource) u64() uint64 { return binary.LittleEndian.Uint64(s.next(8)) }

// fuzzFrame builds a valid frame from fuzz bytes: which columns exist, the
// shape and every value (floats as raw bit patterns, NaN payloads included).
func fuzzFrame(b []byte, name string) *Frame {
	s := &byteSource{b}
	flags := s.u8()
	n, d := int(s.u8()%24), int(s.u8()%4)
	f := &Frame{Rows: n, Features: SynthFeatureNames(d), X: make([]float32, n*d)}
	if d > 0 && name != "" {
		f.Features[0] = name
	}
	for i := range f.X {
		f.X[i] = math.Float32frombits(s.u32())
	}
	has := func(bit uint) bool { return flags&(1<<bit) != 0 }
	if has(0) {
		f.Label = make([]uint8, n)
	}
	if has(1) {
		f.Eta = make([]float64, n)
	}
	if has(2) {
		f.BagID = make([]int64, n)
	}
	if has(3) {
		f.LabelRR = make([]uint8, n)
	}
	if has(4) {
		f.Alpha = make([]float64, n)
	}
	if has(5) {
		f.AlphaDebiased = make([]float64, n)
	}
	if has(6) {
		f.Row = make([]int64, n)
	}
	if has(7) {
		f.Offsets = []int64{0}
		f.Indices = []uint32{}
	}
	for i := range n {
		if f.Label != nil {
			f.Label[i] = s.u8() & 1
		}
		if f.Eta != nil {
			f.Eta[i] = float64(s.u32()) / math.MaxUint32
		}
		if f.BagID != nil {
			f.BagID[i] = int64(s.u64())
		}
		if f.LabelRR != nil {
			f.LabelRR[i] = s.u8() & 1
		}
		if f.Alpha != nil {
			f.Alpha[i] = math.Float64frombits(s.u64())
		}
		if f.AlphaDebiased != nil {
			f.AlphaDebiased[i] = math.Float64frombits(s.u64())
		}
		if f.Row != nil {
			f.Row[i] = int64(s.u64())
		}
		if f.Offsets != nil {
			for range s.u8() % 5 {
				f.Indices = append(f.Indices, s.u32())
			}
			f.Offsets = append(f.Offsets, int64(len(f.Indices)))
		}
	}
	return f
}

// fullFrame is a small frame with every column present.
func fullFrame() *Frame {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	b[0], b[1], b[2] = 0xff, 7, 3
	return fuzzFrame(b, "")
}

// damaged returns variants of a valid file: truncated at many points and
// with single bytes flipped, the seed corpus of the reader fuzz targets.
func damaged(valid []byte) [][]byte {
	out := [][]byte{valid, {}, []byte("ARROW1"), []byte("PAR1")}
	step := max(1, len(valid)/48)
	for n := 0; n < len(valid); n += step {
		out = append(out, valid[:n])
	}
	for _, n := range []int{1, 2, 6, 8, 10, 12, 16} { // the footer's length and magic
		if n < len(valid) {
			out = append(out, valid[:len(valid)-n])
		}
	}
	for i := 0; i < len(valid); i += max(1, len(valid)/96) {
		for _, x := range []byte{0xff, 0x80, 0x01} {
			c := bytes.Clone(valid)
			c[i] ^= x
			out = append(out, c)
		}
	}
	// Every byte of the last 64 (footer, schema offsets) set to 0xff.
	for i := max(0, len(valid)-64); i < len(valid); i++ {
		c := bytes.Clone(valid)
		c[i] = 0xff
		out = append(out, c)
	}
	return out
}

// checkReadError fails unless err names path and wraps a data sentinel.
func checkReadError(t *testing.T, err error, path string) {
	t.Helper()
	if !strings.Contains(err.Error(), path) {
		t.Fatalf("error %q does not name the file", err)
	}
	for _, s := range []error{ErrCorrupt, ErrSchema, ErrInvalid, ErrLabel} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %v wraps no data sentinel", err)
}

// exercise runs what downstream code does with a frame that passed
// Validate: a frame that validates must never make it panic.
func exercise(t *testing.T, f *Frame) {
	t.Helper()
	if err := f.Validate(); err != nil {
		t.Fatalf("read a frame that fails Validate: %v", err)
	}
	f.Slice(0, f.Rows)
	f.Take([]int{f.Rows - 1, 0}[:min(2, f.Rows)])
	s, err := NewBatchSource(f, BatchOptions{BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzReadIPC: any bytes read as an Arrow IPC file give a valid frame or an
// error that names the file; never a panic.
func FuzzReadIPC(f *testing.F) {
	dir := f.TempDir()
	for i, fr := range []*Frame{fullFrame(), testFrame(3, 2)} {
		p := filepath.Join(dir, fmt.Sprint(i, ".arrow"))
		if err := WriteFrame(p, fr, map[string]string{"k": "v"}); err != nil {
			f.Fatal(err)
		}
		for _, b := range damaged(mustRead(f, p)) {
			f.Add(b)
		}
	}
	for _, b := range damaged(lz4File(f, fullFrame())) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := writeTemp(t, "f.arrow", b)
		fr, err := ReadFrame(p)
		if err != nil {
			checkReadError(t, err, p)
		} else {
			exercise(t, fr)
		}
		if _, err := ReadSchema(p); err != nil {
			checkReadError(t, err, p)
		}
	})
}

// FuzzReadParquet: the same for Parquet, through ReadFrame and ReadTable.
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	tab := &Table{Columns: []Column{{"label", []int64{0, 1, 1}}, {"x", []float64{1.5, math.NaN(), -2}}, {"name", []string{"a", "", "c"}}, {"ok", []bool{true, false, true}}}, Meta: map[string]string{"k": "v"}}
	p := filepath.Join(dir, "table.parquet")
	if err := tab.WriteParquet(p); err != nil {
		f.Fatal(err)
	}
	files := [][]byte{mustRead(f, p), frameParquet(f, fullFrame())}
	for _, file := range files {
		for _, b := range damaged(file) {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := writeTemp(t, "f.parquet", b)
		fr, err := ReadFrame(p)
		if err != nil {
			checkReadError(t, err, p)
		} else {
			exercise(t, fr)
		}
		tab, err := ReadTable(p)
		if err != nil {
			checkReadError(t, err, p)
		} else if err := tab.check(); err != nil {
			t.Fatalf("read an inconsistent table: %v", err)
		}
	})
}

// frameParquet returns fr as a Parquet file (every column type a frame has,
// the list<uint32> indices included), as pyarrow would write it.
func frameParquet(tb testing.TB, fr *Frame) []byte {
	return encodeFrame(tb, fr, func(s *arrow.Schema, w io.Writer) (recordWriter, error) {
		return pqarrow.NewFileWriter(s, w, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	})
}

// FuzzFrameRoundtrip: a frame written and read back is equal, bit for bit,
// in every column (NaN payloads of features and alphas included).
func FuzzFrameRoundtrip(f *testing.F) {
	f.Add([]byte{0xff, 5, 3, 1, 2, 3, 4}, "", "k", "v")
	f.Add([]byte{0x81, 0, 0}, "", "", "")
	f.Add([]byte{0x00, 30, 2, 0x7f, 0xc0, 0, 1}, "jet1_pt", "split", "train")
	f.Add([]byte{0x80, 3, 0, 4, 0xff, 0xff, 0xff, 0xff}, "", "source", "libsvm")
	f.Add([]byte{0x00, 2, 1, 0, 0, 0x80, 0x3f}, ColLabel, "", "") // refused: a feature named label
	f.Fuzz(func(t *testing.T, b []byte, name, k, v string) {
		fr := fuzzFrame(b, name)
		if fr.Validate() != nil || Schema(fr, nil).NumFields() == 0 {
			return // e.g. a feature named like a reserved column; no columns
		}
		p := filepath.Join(t.TempDir(), "f.arrow")
		meta := map[string]string{k: v}
		if err := WriteFrame(p, fr, meta); err != nil {
			t.Fatal(err)
		}
		back, err := ReadFrame(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := framesEqual(back, fr); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Meta, meta) {
			t.Fatalf("metadata %v, want %v", back.Meta, meta)
		}
	})
}

// framesEqual compares every column of two frames; floats by bit pattern.
func framesEqual(got, want *Frame) error {
	bits32 := func(v []float32) []uint32 {
		out := make([]uint32, len(v))
		for i, x := range v {
			out[i] = math.Float32bits(x)
		}
		return out
	}
	bits64 := func(v []float64) []uint64 {
		out := make([]uint64, len(v))
		for i, x := range v {
			out[i] = math.Float64bits(x)
		}
		return out
	}
	empty := func(v any) any { // nil and empty compare equal only for absent-vs-absent
		if reflect.ValueOf(v).IsNil() {
			return nil
		}
		return v
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"rows", got.Rows, want.Rows},
		{"features", fmt.Sprintf("%q", got.Features), fmt.Sprintf("%q", want.Features)},
		{"X", bits32(got.X), bits32(want.X)},
		{"indices", fmt.Sprint(got.Indices), fmt.Sprint(want.Indices)},
		{"offsets", empty(got.Offsets), empty(want.Offsets)},
		{"label", empty(got.Label), empty(want.Label)},
		{"eta", empty(got.Eta), empty(want.Eta)},
		{"bag_id", empty(got.BagID), empty(want.BagID)},
		{"label_rr", empty(got.LabelRR), empty(want.LabelRR)},
		{"alpha", got.Alpha != nil, want.Alpha != nil},
		{"alpha bits", bits64(got.Alpha), bits64(want.Alpha)},
		{"alpha_debiased", got.AlphaDebiased != nil, want.AlphaDebiased != nil},
		{"alpha_debiased bits", bits64(got.AlphaDebiased), bits64(want.AlphaDebiased)},
		{"row", empty(got.Row), empty(want.Row)},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			return fmt.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	return nil
}

// fuzzTable builds a table of string, float64 (any bit pattern), int64 and
// bool columns from fuzz bytes; strings are cut from s.
func fuzzTable(b []byte, s, name string) *Table {
	src := &byteSource{b}
	ncol, n := int(src.u8()%5), int(src.u8()%16)
	t := &Table{}
	for j := range ncol {
		c := Column{Name: "c" + strconv.Itoa(j)}
		if j == 0 && name != "" {
			c.Name = name
		}
		switch src.u8() % 4 {
		case 0:
			v := make([]string, n)
			for i := range v {
				lo, hi := int(src.u8()), int(src.u8())
				lo, hi = min(lo, len(s)), min(lo+hi%8, len(s))
				v[i] = s[lo:hi]
			}
			c.Values = v
		case 1:
			v := make([]float64, n)
			for i := range v {
				v[i] = math.Float64frombits(src.u64())
			}
			c.Values = v
		case 2:
			v := make([]int64, n)
			for i := range v {
				v[i] = int64(src.u64())
			}
			c.Values = v
		default:
			v := make([]bool, n)
			for i := range v {
				v[i] = src.u8()&1 == 1
			}
			c.Values = v
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}

// FuzzTableRoundtrip: a table written as Parquet reads back equal (NaN
// equal to NaN, ±Inf kept); written as CSV it parses back, column type by
// column type, to the same values (encoding/csv's reader turns a quoted
// "\r\n" into "\n", as RFC 4180 readers may).
func FuzzTableRoundtrip(f *testing.F) {
	f.Add([]byte{4, 3, 0, 1, 2, 3}, "hello, \"world\"\n", "", "k", "v")
	f.Add([]byte{2, 5, 1, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f}, "", "epsilon", "tool", "x")
	f.Add([]byte{1, 1, 0, 0, 0}, "", "", "", "")
	f.Add([]byte{3, 2, 3, 1, 2}, " x\r\ny", "pet", "a", "b")
	f.Fuzz(func(t *testing.T, b []byte, s, name, k, v string) {
		tab := fuzzTable(b, s, name)
		tab.Meta = map[string]string{k: v}
		dir := t.TempDir()
		pq := filepath.Join(dir, "t.parquet")
		if err := tab.WriteParquet(pq); err != nil {
			if errors.Is(err, ErrSchema) {
				return // a table the writers refuse (e.g. duplicate names)
			}
			t.Fatal(err)
		}
		back, err := ReadTable(pq)
		if err != nil {
			t.Fatal(err)
		}
		if err := tablesEqual(back, tab, false); err != nil {
			t.Fatalf("parquet: %v", err)
		}
		if !reflect.DeepEqual(back.Meta, tab.Meta) {
			t.Fatalf("parquet metadata %v, want %v", back.Meta, tab.Meta)
		}
		cp := filepath.Join(dir, "t.csv")
		if err := tab.WriteCSV(cp); err != nil {
			t.Fatal(err)
		}
		back, err = readCSVLike(cp, tab)
		if err != nil {
			t.Fatal(err)
		}
		if err := tablesEqual(back, tab, true); err != nil {
			t.Fatalf("csv: %v", err)
		}
	})
}

// readCSVLike parses a CSV written by WriteCSV with like's column types.
func readCSVLike(path string, like *Table) (*Table, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r := csv.NewReader(fh)
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(like.Columns) == 0 {
		return &Table{}, nil
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("no header")
	}
	out := &Table{}
	for j, c := range like.Columns {
		if len(recs[0]) != len(like.Columns) || recs[0][j] != c.Name {
			return nil, fmt.Errorf("header %q", recs[0])
		}
		var vals any
		var perr error
		col := func(i int) string { return recs[i+1][j] }
		n := len(recs) - 1
		switch c.Values.(type) {
		case []string:
			v := make([]string, n)
			for i := range v {
				v[i] = col(i)
			}
			vals = v
		case []float64:
			v := make([]float64, n)
			for i := range v {
				v[i], perr = strconv.ParseFloat(col(i), 64)
			}
			vals = v
		case []int64:
			v := make([]int64, n)
			for i := range v {
				v[i], perr = strconv.ParseInt(col(i), 10, 64)
			}
			vals = v
		case []bool:
			v := make([]bool, n)
			for i := range v {
				v[i], perr = strconv.ParseBool(col(i))
			}
			vals = v
		}
		if perr != nil {
			return nil, fmt.Errorf("column %q: %w", c.Name, perr)
		}
		out.Columns = append(out.Columns, Column{c.Name, vals})
	}
	return out, nil
}

// tablesEqual compares two tables' columns; NaN equals NaN. With csv, want's
// strings have "\r\n" read back as "\n".
func tablesEqual(got, want *Table, csv bool) error {
	if len(got.Columns) != len(want.Columns) {
		return fmt.Errorf("%d columns, want %d", len(got.Columns), len(want.Columns))
	}
	for j, w := range want.Columns {
		g := got.Columns[j]
		if g.Name != w.Name {
			return fmt.Errorf("column %d named %q, want %q", j, g.Name, w.Name)
		}
		wv := w.Values
		switch v := wv.(type) {
		case []float64:
			gv, ok := g.Values.([]float64)
			if !ok || len(gv) != len(v) {
				return fmt.Errorf("column %q: %v, want %v", w.Name, g.Values, v)
			}
			for i := range v {
				if gv[i] != v[i] && !(math.IsNaN(gv[i]) && math.IsNaN(v[i])) || math.Signbit(gv[i]) != math.Signbit(v[i]) && !math.IsNaN(v[i]) {
					return fmt.Errorf("column %q row %d: %v, want %v", w.Name, i, gv[i], v[i])
				}
			}
			continue
		case []string:
			if csv {
				c := make([]string, len(v))
				for i, s := range v {
					c[i] = strings.ReplaceAll(s, "\r\n", "\n")
				}
				wv = c
			}
		}
		if !reflect.DeepEqual(g.Values, wv) {
			return fmt.Errorf("column %q: %#v, want %#v", w.Name, g.Values, wv)
		}
	}
	return nil
}
