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
