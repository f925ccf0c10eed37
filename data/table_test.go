package data

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestTableRoundTrip(t *testing.T) {
	dir := t.TempDir()
	tab := &Table{Columns: []Column{
		{"pet", []string{"rr", "llp", "llp_geom"}},
		{"epsilon", []float64{1, math.Inf(1), 0.5}},
		{"k", []int64{0, 8, 64}},
		{"done", []bool{true, false, true}},
	}, Meta: map[string]string{"tool": Tool}}
	pq := filepath.Join(dir, "t.parquet")
	if err := tab.WriteParquet(pq); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTable(pq)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Columns, tab.Columns) || back.Meta["tool"] != Tool {
		t.Fatalf("parquet round trip:\n%+v\n%+v", back.Columns, tab.Columns)
	}
	csvPath := filepath.Join(dir, "t.csv")
	if err := tab.WriteCSV(csvPath); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(csvPath)
	want := "pet,epsilon,k,done\nrr,1,0,true\nllp,inf,8,false\nllp_geom,0.5,64,true\n"
	if string(b) != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", b, want)
	}
	bad := &Table{Columns: []Column{{"a", []string{"x"}}, {"b", []float64{}}}}
	if err := bad.WriteCSV(filepath.Join(dir, "bad.csv")); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("err = %v", err)
	}
}

// Identical tables give identical Parquet bytes (metadata was once
// written in map order, 20 writes gave 5 different files).
func TestTableParquetByteStable(t *testing.T) {
	dir := t.TempDir()
	meta := map[string]string{}
	for i := range 12 {
		meta[fmt.Sprint("key", i)] = fmt.Sprint("value", i)
	}
	var first []byte
	for i := range 20 {
		tab := &Table{Columns: []Column{{"epsilon", []float64{1, 2}}, {"pet", []string{"rr", "llp"}}}, Meta: maps.Clone(meta)}
		p := filepath.Join(dir, fmt.Sprint(i, ".parquet"))
		if err := tab.WriteParquet(p); err != nil {
			t.Fatal(err)
		}
		b := mustRead(t, p)
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Fatalf("write %d differs from write 0", i)
		}
	}
}

// A not-applicable cell is a null: an empty CSV field and a Parquet null
// (pandas reads both as NaN, never as a 0 that looks like a value), read
// back as a Nullable column; a column without nulls reads as a plain slice.
func TestTableNulls(t *testing.T) {
	dir := t.TempDir()
	k := NullableOf([]int64{0, 8, 64}, func(v int64) bool { return v == 0 })
	eps := NullableOf([]float64{1, 0, math.Inf(1)}, func(v float64) bool { return v == 0 })
	tab := &Table{Columns: []Column{{"pet", []string{"rr", "llp", "none"}}, {"k", k}, {"epsilon", eps},
		{"all", NullableOf([]int64{1, 2, 3}, func(int64) bool { return false })}}}
	csvPath := filepath.Join(dir, "t.csv")
	if err := tab.WriteCSV(csvPath); err != nil {
		t.Fatal(err)
	}
	if got, want := string(mustRead(t, csvPath)), "pet,k,epsilon,all\nrr,,1,1\nllp,8,,2\nnone,64,inf,3\n"; got != want {
		t.Fatalf("csv:\n%s\nwant:\n%s", got, want)
	}
	pq := filepath.Join(dir, "t.parquet")
	if err := tab.WriteParquet(pq); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTable(pq)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Columns[1].Values, k) || !reflect.DeepEqual(back.Columns[2].Values, eps) {
		t.Fatalf("nullable columns read back as %#v, %#v", back.Columns[1].Values, back.Columns[2].Values)
	}
	if _, ok := back.Columns[3].Values.([]int64); !ok {
		t.Fatalf("a column without nulls reads as %T, want []int64", back.Columns[3].Values)
	}
	bad := &Table{Columns: []Column{{"k", Nullable[int64]{Values: []int64{1, 2}, Valid: []bool{true}}}}}
	if err := bad.WriteCSV(filepath.Join(dir, "bad.csv")); err == nil {
		t.Fatal("a Nullable with a short Valid was written")
	}
}
