package data

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
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
func fuzzFrame(b []byte, name string) *Frame { return fuzzFrameFrom(&byteSource{b}, name) }

func fuzzFrameFrom(s *byteSource, name string) *Frame {
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

// fuzzFrameClasses is fuzzFrame for classes ≥ 3 (3 + (classes−3) mod 62,
// so 3..64; below 3, fuzzFrame's binary frame): the binary frame's labels
// are redrawn as classes, its eta, alpha and alpha_debiased become
// per-class columns, and the bytes left may add rr_prior's prior, sets and
// soft target vectors.
func fuzzFrameClasses(b []byte, name string, classes uint8) *Frame {
	s := &byteSource{b}
	f := fuzzFrameFrom(s, name)
	if classes < 3 {
		return f
	}
	c := 3 + int(classes-3)%(MaxClasses-2)
	n := f.Rows
	f.Classes = c
	for _, lab := range [][]uint8{f.Label, f.LabelRR} {
		for i := range lab {
			lab[i] = s.u8() % uint8(c)
		}
	}
	probs := func() []float64 {
		v := make([]float64, n*c)
		for i := range n {
			row := v[i*c : (i+1)*c]
			var sum float64
			for k := range row {
				row[k] = float64(s.u32()) + 1
				sum += row[k]
			}
			for k := range row {
				row[k] /= sum
			}
		}
		return v
	}
	finite := func(m int) []float64 {
		v := make([]float64, m)
		for i := range v {
			u := s.u64()
			if v[i] = math.Float64frombits(u); math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				v[i] = float64(int32(u)) / 1024
			}
		}
		return v
	}
	if f.Eta != nil {
		f.Eta, f.EtaC = nil, probs()
	}
	if f.Alpha != nil {
		f.Alpha, f.AlphaC = nil, finite(n*(c-1))
	}
	if f.AlphaDebiased != nil {
		f.AlphaDebiased, f.AlphaDebiasedC = nil, finite(n*(c-1))
	}
	more := s.u8()
	if more&1 != 0 {
		f.PriorC, f.PriorSet, f.PriorSetSize = probs(), make([]uint64, n), make([]uint8, n)
		all := ^uint64(0) >> (64 - c)
		for i := range n {
			m := s.u64() & all
			if m == 0 {
				m = 1 << (i % c)
			}
			f.PriorSet[i], f.PriorSetSize[i] = m, uint8(bits.OnesCount64(m))
			if f.LabelRR != nil { // a released class is a member of the set
				j := int(f.LabelRR[i]) % bits.OnesCount64(m)
				for ; j > 0; j-- {
					m &= m - 1
				}
				f.LabelRR[i] = uint8(bits.TrailingZeros64(m))
			}
		}
	}
	if more&2 != 0 {
		f.SoftTargetC = finite(n * c)
	}
	return f
}

// fullBytes is the fuzz input of fullFrame: every column present.
func fullBytes() []byte {
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	b[0], b[1], b[2] = 0xff, 7, 3
	return b
}

// fullFrame is a small frame with every column present.
func fullFrame() *Frame { return fuzzFrame(fullBytes(), "") }

// fullFrameClasses is fullFrame with c ≥ 3 classes: every column a frame of
// c classes can hold.
func fullFrameClasses(c uint8) *Frame {
	b := fullBytes()
	f := fuzzFrameClasses(b, "", c)
	for k := 0; f.PriorC == nil || f.SoftTargetC == nil; k++ { // find the bytes that add them
		b[len(b)-1-k%len(b)] ^= 3
		f = fuzzFrameClasses(b, "", c)
	}
	return f
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
	opts := []BatchOptions{{BatchSize: 7}}
	if f.Label != nil { // class targets: one-hot for C ≥ 3
		opts = append(opts, BatchOptions{BatchSize: 7, Target: TargetLabel, Classes: f.Classes})
	}
	for _, o := range opts {
		s, err := NewBatchSource(f, o)
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
	for i, fr := range []*Frame{fullFrame(), testFrame(3, 2), fullFrameClasses(10)} {
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
	files := [][]byte{mustRead(f, p), frameParquet(f, fullFrame()), frameParquet(f, fullFrameClasses(5))}
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
// in every column (NaN payloads of features and alphas included), binary
// or of classes 3..64.
func FuzzFrameRoundtrip(f *testing.F) {
	f.Add([]byte{0xff, 5, 3, 1, 2, 3, 4}, "", "k", "v", uint8(0))
	f.Add([]byte{0x81, 0, 0}, "", "", "", uint8(0))
	f.Add([]byte{0x00, 30, 2, 0x7f, 0xc0, 0, 1}, "jet1_pt", "split", "train", uint8(0))
	f.Add([]byte{0x80, 3, 0, 4, 0xff, 0xff, 0xff, 0xff}, "", "source", "libsvm", uint8(2))
	f.Add([]byte{0x00, 2, 1, 0, 0, 0x80, 0x3f}, ColLabel, "", "", uint8(0)) // refused: a feature named label
	// C classes: every per-class column; 64 classes (full masks); a feature
	// named like a per-class column (refused); metadata naming classes
	// (refused when it disagrees).
	f.Add(fullBytes(), "", "mechanism", "llp_geom", uint8(10))
	f.Add(fullBytes()[:900], "", "", "", uint8(64))
	f.Add(fullBytes(), "", "", "", uint8(3))
	f.Add(fullBytes()[:300], "eta_3", "", "", uint8(5))
	f.Add(fullBytes()[:300], "", MetaClasses, "5", uint8(5))
	f.Add(fullBytes()[:300], "", MetaClasses, "7", uint8(5))
	f.Fuzz(func(t *testing.T, b []byte, name, k, v string, classes uint8) {
		fr := fuzzFrameClasses(b, name, classes)
		if fr.Validate() != nil || Schema(fr, nil).NumFields() == 0 {
			return // e.g. a feature named like a reserved column; no columns
		}
		p := filepath.Join(t.TempDir(), "f.arrow")
		meta := map[string]string{k: v}
		if err := WriteFrame(p, fr, meta); err != nil {
			if k == MetaClasses && v != fmt.Sprint(fr.NumClasses()) && errors.Is(err, ErrSchema) {
				return // metadata claiming other classes: refused
			}
			t.Fatal(err)
		}
		back, err := ReadFrame(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := framesEqual(back, fr); err != nil {
			t.Fatal(err)
		}
		if fr.NumClasses() >= 3 {
			meta[MetaClasses] = fmt.Sprint(fr.NumClasses())
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
		{"classes", got.NumClasses(), want.NumClasses()},
		{"eta_c", bits64(got.EtaC), bits64(want.EtaC)},
		{"eta_c present", got.EtaC != nil, want.EtaC != nil},
		{"alpha_c", bits64(got.AlphaC), bits64(want.AlphaC)},
		{"alpha_c present", got.AlphaC != nil, want.AlphaC != nil},
		{"alpha_debiased_c", bits64(got.AlphaDebiasedC), bits64(want.AlphaDebiasedC)},
		{"alpha_debiased_c present", got.AlphaDebiasedC != nil, want.AlphaDebiasedC != nil},
		{"prior_c", bits64(got.PriorC), bits64(want.PriorC)},
		{"prior_c present", got.PriorC != nil, want.PriorC != nil},
		{"soft_target_c", bits64(got.SoftTargetC), bits64(want.SoftTargetC)},
		{"soft_target_c present", got.SoftTargetC != nil, want.SoftTargetC != nil},
		{"prior_set", empty(got.PriorSet), empty(want.PriorSet)},
		{"prior_set_size", empty(got.PriorSetSize), empty(want.PriorSetSize)},
		{"stage", empty(got.Stage), empty(want.Stage)},
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
