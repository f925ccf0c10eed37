package data

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// twoPass is the reference: the mean, then the mean squared deviation from
// it, both summed in float64 (exact enough at these sizes).
func twoPass(f *Frame, j int) (mean, sd float64) {
	d := f.Dim()
	for i := range f.Rows {
		mean += float64(f.X[i*d+j])
	}
	mean /= float64(f.Rows)
	var ss float64
	for i := range f.Rows {
		dv := float64(f.X[i*d+j]) - mean
		ss += dv * dv
	}
	return mean, math.Sqrt(ss / float64(f.Rows))
}

func TestFitStandardizer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const n = 20000
	// Features: standard normal; heavy-tailed (Higgs-like, exp of a normal);
	// offset by 1e9 with a spread of ±32,000 (float32 spacing there is 64):
	// E[x²]−E[x]² would lose ~1e-3 relative to cancellation; a constant.
	f := &Frame{Rows: n, Features: []string{"normal", "heavy", "offset", "const"}, X: make([]float32, 4*n)}
	for i := range n {
		f.X[4*i] = float32(r.NormFloat64())
		f.X[4*i+1] = float32(math.Exp(2 * r.NormFloat64()))
		f.X[4*i+2] = float32(1e9 + 64*float64(r.IntN(1001)-500))
		f.X[4*i+3] = 7.25
	}
	s, err := FitStandardizer(f)
	if err != nil {
		t.Fatal(err)
	}
	for j, name := range f.Features[:3] {
		mean, sd := twoPass(f, j)
		// Relative 1e-9: Welford's rounding error here is ~1e-13; any wrong
		// formula (divisor n−1, a lost update, cancellation) is ≥ 1e-5 off.
		if math.Abs(s.Mean[j]-mean) > 1e-9*math.Abs(mean)+1e-12 || math.Abs(s.Std[j]-sd) > 1e-9*sd {
			t.Errorf("%s: mean %v sd %v, two-pass %v %v", name, s.Mean[j], s.Std[j], mean, sd)
		}
	}
	if s.Mean[3] != 7.25 || s.Std[3] != 1 || !reflect.DeepEqual(s.Constant, []string{"const"}) || s.Rows != n {
		t.Fatalf("constant feature: mean %v std %v constant %v rows %d", s.Mean[3], s.Std[3], s.Constant, s.Rows)
	}

	before := slices.Clone(f.X)
	g, err := s.Apply(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.X, before) || &g.X[0] == &f.X[0] {
		t.Fatal("Apply changed or shared the input's X")
	}
	z, err := FitStandardizer(g)
	if err != nil {
		t.Fatal(err)
	}
	for j := range 3 {
		// float32 rounding of the outputs: |z| ≲ 30 here, ulp 2e-6.
		if math.Abs(z.Mean[j]) > 1e-6 || math.Abs(z.Std[j]-1) > 1e-6 {
			t.Errorf("standardized %s: mean %v sd %v", f.Features[j], z.Mean[j], z.Std[j])
		}
	}
	if z.Mean[3] != 0 {
		t.Errorf("constant feature not centred: %v", z.Mean[3])
	}

	// In place: the same values, in f's own buffer.
	x0 := &f.X[0]
	if err := s.ApplyInPlace(f); err != nil {
		t.Fatal(err)
	}
	if &f.X[0] != x0 || !slices.Equal(f.X, g.X) {
		t.Error("ApplyInPlace gave other values than Apply, or a new buffer")
	}
	bad := &Frame{Rows: 1, Features: []string{"a"}, X: []float32{3}}
	if err := s.ApplyInPlace(bad); err == nil || bad.X[0] != 3 {
		t.Errorf("ApplyInPlace of a mismatched frame: %v, X %v", err, bad.X)
	}
}

// Labels and targets play no part: two frames with the same features and
// different labels (or none) give the same Standardizer, and Apply shares
// every column but X.
func TestStandardizerIgnoresLabels(t *testing.T) {
	a := testFrame(50, 3)
	for i := range a.X {
		a.X[i] = float32(i%7) * 1.5
	}
	b := *a
	b.Label = make([]uint8, 50)
	b.BagID, b.Alpha = make([]int64, 50), make([]float64, 50)
	sa, _ := FitStandardizer(a)
	sb, _ := FitStandardizer(&b)
	if !reflect.DeepEqual(sa, sb) {
		t.Fatalf("labels changed the fit: %+v vs %+v", sa, sb)
	}
	g, err := sa.Apply(&b)
	if err != nil {
		t.Fatal(err)
	}
	if &g.Label[0] != &b.Label[0] || &g.BagID[0] != &b.BagID[0] || &g.Alpha[0] != &b.Alpha[0] {
		t.Fatal("Apply copied a column other than X")
	}
}

func TestStandardizerErrors(t *testing.T) {
	f := testFrame(10, 2)
	s, err := FitStandardizer(f)
	if err != nil {
		t.Fatal(err)
	}
	nan := testFrame(10, 2)
	nan.X[7] = float32(math.NaN())
	renamed := testFrame(10, 2)
	renamed.Features = []string{"x0", "other"}
	tests := []struct {
		name string
		err  func() error
		want error
		msg  string
	}{
		{"no rows", func() error { _, err := FitStandardizer(&Frame{Features: []string{"a"}}); return err }, ErrEmpty, "no rows"},
		{"NaN feature", func() error { _, err := FitStandardizer(nan); return err }, ErrInvalid, `row 3: feature "x1" is NaN`},
		{"other width", func() error { _, err := s.Apply(testFrame(4, 3)); return err }, ErrSchema, "2 features"},
		{"other names", func() error { _, err := s.Apply(renamed); return err }, ErrSchema, `"other"`},
		{"zero deviation", func() error {
			bad := *s
			bad.Std = []float64{1, 0}
			_, err := bad.Apply(f)
			return err
		}, ErrInvalid, "deviation 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if !errors.Is(err, tc.want) || err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
}

// The lead records the Standardizer in run records: JSON round-trips it.
func TestStandardizerJSON(t *testing.T) {
	s, err := FitStandardizer(testFrame(9, 3))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back Standardizer
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, s) {
		t.Fatalf("JSON %s read back as %+v, %v", b, back, err)
	}
}

func ExampleFitStandardizer() {
	train := &Frame{Rows: 4, Features: []string{"pt", "flag"}, X: []float32{
		10, 1,
		20, 1,
		30, 1,
		40, 1,
	}}
	s, err := FitStandardizer(train) // the training rows only
	if err != nil {
		panic(err)
	}
	z, _ := s.Apply(train) // the same for the test and audit frames
	fmt.Printf("mean %v std %.4f constant %v\n", s.Mean, s.Std, s.Constant)
	fmt.Println(z.X)
	// Output:
	// mean [25 1] std [11.1803 1.0000] constant [flag]
	// [-1.3416408 0 -0.4472136 0 0.4472136 0 1.3416408 0]
}
