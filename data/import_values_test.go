package data

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Value labels import from libsvm (a real number first) and from a csv
// with a named label column: clipped to B and rounded to the grid, both
// counted in meta.json with the kind and the grid; NaN, ±Inf and negative
// values are refused naming file:line, and nothing is left behind.
func TestImportValues(t *testing.T) {
	g := ValueGrid{Max: 10, Step: 0.5}
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	libsvm := write("v.svm", "0 1:1\n3.2 2:1\n12.5 1:1 3:2\n0.75 2:1\n4 1:1\n")
	csv := write("v.csv", "a,value,b\n1,0,2\n0.5,3.2,1\n2,12.5,0\n1,0.75,1\n3,4,4\n")
	for _, tc := range []struct {
		name string
		imp  func(context.Context, ImportOptions) (*Meta, error)
		in   string
	}{{"libsvm", ImportLibSVM, libsvm}, {"csv", ImportCSV, csv}} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name)
			m, err := tc.imp(context.Background(), ImportOptions{In: tc.in, Out: out, TestRows: 1, Values: g, LabelColumn: "value", HashBuckets: 16})
			if err != nil {
				t.Fatal(err)
			}
			if m.LabelKind() != LabelsValues || m.ValueMax != 10 || m.ValueStep != 0.5 || m.ClippedValues != 1 || m.RoundedValues != 2 {
				t.Fatalf("meta: kind %s grid %v/%v clipped %d rounded %d", m.LabelKind(), m.ValueMax, m.ValueStep, m.ClippedValues, m.RoundedValues)
			}
			ds, err := Load(out)
			if err != nil {
				t.Fatal(err)
			}
			want := []float64{3, 10, 1, 4} // 3.2 → 3, 12.5 → B, 0.75 → 1 (halves up)
			for i, v := range ds.Train.Value {
				if v != want[i] {
					t.Fatalf("training values %v, want %v", ds.Train.Value, want)
				}
			}
			if ds.Test.Value[0] != 0 || ds.Train.Label != nil {
				t.Fatalf("test values %v, labels %v", ds.Test.Value, ds.Train.Label)
			}
		})
	}
	for _, tc := range []struct {
		name, libsvm, csv, want string
	}{
		{"NaN", "1 1:1\nNaN 1:1\n", "value\n1\nNaN\n", ":2"},
		{"Inf", "1 1:1\n2 1:1\n+Inf 1:1\n", "value\n1\n2\n+Inf\n", ":3"},
		{"negative", "-1 1:1\n", "value\n-1\n", ":1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, in := range []string{write(tc.name+".svm", tc.libsvm), write(tc.name+".csv", tc.csv)} {
				imp := []func(context.Context, ImportOptions) (*Meta, error){ImportLibSVM, ImportCSV}[i]
				out := filepath.Join(dir, tc.name+"-out")
				_, err := imp(context.Background(), ImportOptions{In: in, Out: out, TestRows: 1, Values: g, LabelColumn: "value"})
				var le *LineError
				line := tc.want
				if i == 1 { // the header is line 1
					line = ":" + string(rune(tc.want[1]+1))
				}
				if !errors.As(err, &le) || !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), in+line) {
					t.Fatalf("%s: %v, want a label error at %s%s", in, err, in, line)
				}
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Fatalf("%s: a refused import left %s behind", in, out)
				}
			}
		})
	}
	if _, err := ImportCSV(context.Background(), ImportOptions{In: csv, Out: filepath.Join(dir, "x"), Values: g, LabelColumn: "price"}); err == nil || !strings.Contains(err.Error(), `no label column "price"`) {
		t.Errorf("a missing label column: %v", err)
	}
	if _, err := ImportLibSVM(context.Background(), ImportOptions{In: libsvm, Out: filepath.Join(dir, "y"), Values: ValueGrid{Max: -1, Step: 1}}); err == nil || !strings.Contains(err.Error(), "value_max") {
		t.Errorf("B ≤ 0: %v", err)
	}
}

// Value targets reach a batch scaled by ValueScale: value_rr per row,
// bag_mean per bag (every member carries its bag's mean).
func TestValueTargets(t *testing.T) {
	f := &Frame{Rows: 4, Features: []string{"x"}, X: []float32{1, 2, 3, 4}, ValueRR: []float64{-50, 0, 400, 800},
		BagMean: []float64{10, 10, 30, 30}, BagID: []int64{0, 0, 1, 1}}
	bs, err := NewBatchSource(f, BatchOptions{BatchSize: 4, Target: TargetValueRR, ValueScale: 1.0 / 400})
	if err != nil {
		t.Fatal(err)
	}
	b, err := bs.Next()
	if err != nil || len(b.Target) != 4 || b.Target[0] != -0.125 || b.Target[3] != 2 {
		t.Fatalf("value_rr targets %v, %v", b.Target, err)
	}
	bs, err = NewBatchSource(f, BatchOptions{BatchSize: 4, BagSize: 2, Target: TargetBagMean, ValueScale: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	b, err = bs.Next()
	if err != nil || len(b.Target) != 2 || b.Target[0] != 1 || b.Target[1] != 3 {
		t.Fatalf("bag_mean targets %v, %v", b.Target, err)
	}
	f.BagMean[1] = 11
	if _, err := NewBatchSource(f, BatchOptions{BatchSize: 4, BagSize: 2, Target: TargetBagMean}); err == nil {
		t.Fatal("a bag whose members disagree on its mean was accepted")
	}
}
