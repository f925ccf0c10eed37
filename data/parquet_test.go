package data

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// A pandas-style Parquet file (int64 labels, float64 features) is accepted
// as input: labels become uint8, features float32.
func TestReadFrameParquet(t *testing.T) {
	dir := t.TempDir()
	tab := &Table{Columns: []Column{
		{"label", []int64{0, 1, 1}},
		{"age", []float64{31, 45.5, 27}},
		{"income", []float64{1e4, 2.5e4, 0}},
		{"eta", []float64{0.1, 0.9, 0.5}},
	}}
	p := filepath.Join(dir, "train.parquet")
	if err := tab.WriteParquet(p); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFrame(p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Rows != 3 || !reflect.DeepEqual(f.Features, []string{"age", "income"}) ||
		!reflect.DeepEqual(f.Label, []uint8{0, 1, 1}) || !reflect.DeepEqual(f.X, []float32{31, 1e4, 45.5, 2.5e4, 27, 0}) ||
		!reflect.DeepEqual(f.Eta, []float64{0.1, 0.9, 0.5}) {
		t.Fatalf("frame %+v", f)
	}
	bad := &Table{Columns: []Column{{"label", []int64{0, 2}}, {"x", []float64{1, 2}}}}
	pb := filepath.Join(dir, "bad.parquet")
	bad.WriteParquet(pb)
	if _, err := ReadFrame(pb); !errors.Is(err, ErrLabel) {
		t.Fatalf("label 2: err = %v", err)
	}
	str := &Table{Columns: []Column{{"label", []int64{0}}, {"city", []string{"x"}}}}
	ps := filepath.Join(dir, "str.parquet")
	str.WriteParquet(ps)
	if _, err := ReadFrame(ps); !errors.Is(err, ErrSchema) {
		t.Fatalf("string feature: err = %v", err)
	}
}
