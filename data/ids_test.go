package data

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// idFrame is a 4-row labelled frame with 2 features.
func idFrame() *Frame {
	return &Frame{Rows: 4, Features: []string{"a", "b"}, X: []float32{1, 2, 3, 4, 5, 6, 7, 8}, Label: []uint8{0, 1, 1, 0}}
}

// writeWithID writes f as an Arrow IPC file with an extra column name
// holding id (inserted at position at of the file's columns).
func writeWithID(t testing.TB, path string, f *Frame, name string, id arrow.Array, at int) {
	t.Helper()
	s := Schema(f, map[string]string{"k": "v"})
	rec, err := record(s, f)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	fields := slices.Insert(slices.Clone(s.Fields()), at, arrow.Field{Name: name, Type: id.DataType(), Nullable: true})
	cols := slices.Insert(slices.Clone(rec.Columns()), at, id)
	md := s.Metadata()
	schema := arrow.NewSchema(fields, &md)
	out := array.NewRecordBatch(schema, cols, int64(f.Rows))
	defer out.Release()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	w, err := ipc.NewFileWriter(fh, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func idArray(t testing.TB, kind string) arrow.Array {
	t.Helper()
	mem := memory.DefaultAllocator
	switch kind {
	case "int64":
		b := array.NewInt64Builder(mem)
		b.AppendValues([]int64{42, -7, 0, 1 << 62}, nil)
		return b.NewArray()
	case "int16":
		b := array.NewInt16Builder(mem)
		b.AppendValues([]int16{42, -7, 0, 9}, nil)
		return b.NewArray()
	case "uint64":
		b := array.NewUint64Builder(mem)
		b.AppendValues([]uint64{42, 1 << 63, 0, 9}, nil)
		return b.NewArray()
	case "float64":
		b := array.NewFloat64Builder(mem)
		b.AppendValues([]float64{42, -7, math.Copysign(0, -1), 1e20}, nil)
		return b.NewArray()
	case "fraction":
		b := array.NewFloat64Builder(mem)
		b.AppendValues([]float64{42, -7, 0.5, 1}, nil)
		return b.NewArray()
	case "string forms":
		b := array.NewStringBuilder(mem)
		b.AppendValues([]string{"000001", " 1", "+1", "1"}, nil)
		return b.NewArray()
	case "string others":
		b := array.NewStringBuilder(mem)
		b.AppendValues([]string{"-0", "007.000", " user-7\t", "1e3"}, nil)
		return b.NewArray()
	case "string":
		b := array.NewStringBuilder(mem)
		b.AppendValues([]string{"42", "user-7", "", "ü"}, nil)
		return b.NewArray()
	case "binary":
		b := array.NewBinaryBuilder(mem, arrow.BinaryTypes.Binary)
		b.AppendValues([][]byte{{0}, {1, 2}, {}, []byte("42")}, nil)
		return b.NewArray()
	case "null":
		b := array.NewInt64Builder(mem)
		b.AppendValues([]int64{1, 2, 3, 4}, []bool{true, true, false, true})
		return b.NewArray()
	case "bool":
		b := array.NewBooleanBuilder(mem)
		b.AppendValues([]bool{true, false, true, false}, nil)
		return b.NewArray()
	}
	t.Fatalf("kind %s", kind)
	return nil
}

func allIDs(d *IDs) []string {
	var out []string
	for i := range d.Len() {
		out = append(out, string(d.Append(nil, i)))
	}
	return out
}

// TestReadFrameWithIDs: the id column is split off (the frame equals the
// file without it, features and label intact, wherever the column sits),
// and each type reads as canonical bytes: integers of every width and
// integral floats in decimal, so 42 is "42" whatever its type; strings
// without the space around them, and as that integer when they hold a
// decimal integer ("000001", " 1", "+1" and "1" are one id: a trial
// counted 20,000 people where 5,000 carried ε = 3); other text as it is.
func TestReadFrameWithIDs(t *testing.T) {
	for _, tc := range []struct {
		kind string
		want []string
	}{
		{"int64", []string{"42", "-7", "0", "4611686018427387904"}},
		{"int16", []string{"42", "-7", "0", "9"}},
		{"uint64", []string{"42", "9223372036854775808", "0", "9"}},
		{"float64", []string{"42", "-7", "0", "100000000000000000000"}},
		{"string", []string{"42", "user-7", "", "ü"}},
		{"string forms", []string{"1", "1", "1", "1"}},
		{"string others", []string{"0", "7", "user-7", "1e3"}},
		{"binary", []string{"\x00", "\x01\x02", "", "42"}},
	} {
		for _, at := range []int{0, 2, 3} {
			t.Run(fmt.Sprintf("%s at %d", tc.kind, at), func(t *testing.T) {
				p := filepath.Join(t.TempDir(), "in.arrow")
				writeWithID(t, p, idFrame(), "user_id", idArray(t, tc.kind), at)
				f, ids, err := ReadFrameWithIDs(p, "user_id")
				if err != nil {
					t.Fatal(err)
				}
				if err := framesEqual(f, idFrame()); err != nil || slices.Contains(f.Features, "user_id") {
					t.Fatalf("frame without the id column: %v (features %v)", err, f.Features)
				}
				if got := allIDs(ids); !slices.Equal(got, tc.want) || ids.Len() != 4 {
					t.Fatalf("ids %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestReadFrameWithIDsErrors: each bad id column is an error naming the
// file and the column (and, for a missing one, the file's columns).
func TestReadFrameWithIDsErrors(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "in.arrow")
	writeWithID(t, p, idFrame(), "user_id", idArray(t, "int64"), 0)
	for _, tc := range []struct {
		name, kind, col, want string
		sentinel              error
	}{
		{"missing column", "int64", "uid", `no id column "uid"`, ErrSchema},
		{"reserved column", "int64", ColLabel, "is a reserved column", ErrSchema},
		{"a null id", "null", "user_id", "row 2 is null", ErrInvalid},
		{"a float id that is no whole number", "fraction", "user_id", `id column "user_id" row 2 holds 0.5, not a whole number`, ErrInvalid},
		{"bool ids", "bool", "user_id", "type bool", ErrSchema},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := filepath.Join(t.TempDir(), "in.arrow")
			writeWithID(t, q, idFrame(), "user_id", idArray(t, tc.kind), 1)
			_, _, err := ReadFrameWithIDs(q, tc.col)
			if err == nil || !errors.Is(err, tc.sentinel) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), q) {
				t.Fatalf("error %v, want %v naming %q and the file", err, tc.sentinel, tc.want)
			}
		})
	}
	// Without an id column name, the file reads as ReadFrame reads it.
	if _, ids, err := ReadFrameWithIDs(filepath.Join(dir, "none.arrow"), ""); err == nil || ids != nil {
		t.Fatalf("missing file: %v", err)
	}
}

// TestReadFrameWithIDsParquet: a Parquet file (as pandas writes it: int64
// label, float64 features) with a string id column.
func TestReadFrameWithIDsParquet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "in.parquet")
	tab := &Table{Columns: []Column{{"label", []int64{0, 1, 1}}, {"who", []string{"a", "b", "a"}}, {"x", []float64{1.5, 2, -2}}}}
	if err := tab.WriteParquet(p); err != nil {
		t.Fatal(err)
	}
	f, ids, err := ReadFrameWithIDs(p, "who")
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 3 || !slices.Equal(f.Features, []string{"x"}) || !slices.Equal(allIDs(ids), []string{"a", "b", "a"}) {
		t.Fatalf("frame %+v ids %q", f, allIDs(ids))
	}
}

// TestLoadWithIDs: a dataset whose train file has an id column (the test
// file need not) loads with the column split off and checked like Load.
func TestLoadWithIDs(t *testing.T) {
	dir := t.TempDir()
	f := idFrame()
	writeWithID(t, filepath.Join(dir, TrainFile), f, "uid", idArray(t, "string"), 1)
	if err := WriteFrame(filepath.Join(dir, TestFile), f.Slice(0, 2), nil); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(dir, &Meta{Source: "test", TrainRows: 4, TestRows: 2, Features: f.Features, Dims: 2}); err != nil {
		t.Fatal(err)
	}
	ds, ids, err := LoadWithIDs(dir, "uid")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Train.Rows != 4 || ds.Test.Rows != 2 || ids.Len() != 4 || string(ids.Append(nil, 1)) != "user-7" {
		t.Fatalf("loaded %d/%d rows, %d ids", ds.Train.Rows, ds.Test.Rows, ids.Len())
	}
	if _, err := Load(dir); err == nil {
		t.Fatal("Load read a string column as a feature")
	}
	if _, _, err := LoadWithIDs(dir, "nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("missing id column: %v", err)
	}
}

// FuzzReadFrameWithIDs: any bytes read with an id column give a valid
// frame and one id per row, or an error naming the file; never a panic.
// The seed corpus (valid files with int and string ids, damaged) runs in
// plain go test.
func FuzzReadFrameWithIDs(f *testing.F) {
	dir := f.TempDir()
	for _, kind := range []string{"int64", "string"} {
		p := filepath.Join(dir, kind+".arrow")
		writeWithID(f, p, idFrame(), "id", idArray(f, kind), 1)
		for _, b := range damaged(mustRead(f, p)) {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := writeTemp(t, "f.arrow", b)
		fr, ids, err := ReadFrameWithIDs(p, "id")
		if err != nil {
			checkReadError(t, err, p)
			return
		}
		exercise(t, fr)
		if ids.Len() != fr.Rows {
			t.Fatalf("%d ids for %d rows", ids.Len(), fr.Rows)
		}
		for i := range ids.Len() {
			ids.Append(nil, i)
		}
	})
}

// LoadWith reads only what it is asked of the training split: without η
// (the test split keeps its own), or without features, sparse indices, η
// and ids (labels and key columns stay; TrainSchema names everything), and
// still checks every column of both files against each other and meta.json.
func TestLoadWithout(t *testing.T) {
	dir := t.TempDir()
	f := idFrame()
	f.Eta = []float64{0.1, 0.9, 0.8, 0.2}
	f.Keys = []KeyColumn{{Name: "campaign", Values: []int64{3, 3, 4, 4}}}
	writeWithID(t, filepath.Join(dir, TrainFile), f, "uid", idArray(t, "string"), 1)
	if err := WriteFrame(filepath.Join(dir, TestFile), f.Slice(0, 2), nil); err != nil {
		t.Fatal(err)
	}
	meta := &Meta{Source: "test", TrainRows: 4, TestRows: 2, Features: f.Features, Dims: 2}
	if err := WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	all, ids, err := LoadWith(dir, LoadOptions{IDColumn: "uid"})
	if err != nil || all.Train.Eta == nil || ids.Len() != 4 {
		t.Fatalf("everything: %v (eta %v, ids %v)", err, all.Train.Eta, ids)
	}
	noEta, ids, err := LoadWith(dir, LoadOptions{IDColumn: "uid", NoTrainEta: true})
	if err != nil {
		t.Fatal(err)
	}
	if noEta.Train.Eta != nil || noEta.Test.Eta == nil || ids.Len() != 4 || !slices.Equal(noEta.Train.X, all.Train.X) ||
		!slices.Equal(noEta.Train.Label, all.Train.Label) {
		t.Fatalf("without η: train η %v, test η %v, %d ids, X %v", noEta.Train.Eta, noEta.Test.Eta, ids.Len(), noEta.Train.X)
	}
	light, ids, err := LoadWith(dir, LoadOptions{IDColumn: "uid", NoTrainFeatures: true})
	if err != nil {
		t.Fatal(err)
	}
	tr := light.Train
	if ids != nil || tr.Rows != 4 || tr.Dim() != 0 || len(tr.X) != 0 || tr.Eta != nil || !slices.Equal(tr.Label, f.Label) ||
		!slices.Equal(tr.Key("campaign"), []int64{3, 3, 4, 4}) || light.Test.Dim() != 2 || !slices.Equal(light.Test.X, all.Test.X) {
		t.Fatalf("without features: ids %v, train %d rows, dim %d, labels %v, keys %v; test dim %d", ids, tr.Rows, tr.Dim(), tr.Label, tr.Keys, light.Test.Dim())
	}
	if !slices.Equal(light.TrainSchema.Features, f.Features) || light.TrainSchema.Key("campaign") == nil || light.TrainSchema.Eta == nil {
		t.Fatalf("TrainSchema %+v names not the train file's columns", light.TrainSchema)
	}
	meta.Features = []string{"a", "c"}
	if err := WriteMeta(dir, meta); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWith(dir, LoadOptions{IDColumn: "uid", NoTrainFeatures: true}); !errors.Is(err, ErrMismatch) ||
		!strings.Contains(err.Error(), `"c"`) {
		t.Fatalf("meta.json naming another feature, features unread: %v, want a mismatch naming it", err)
	}
}
