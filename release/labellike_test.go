package release

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"labelprivacy/data"
)

// labelFrame builds a frame of n rows whose labels (c classes, uniform)
// come from rng, and one feature column per named maker (row i, label y).
func labelFrame(n, c int, rng *rand.Rand, cols map[string]func(i int, y uint8) float32, order []string) *data.Frame {
	f := &data.Frame{Rows: n, Features: order, Label: make([]uint8, n), X: make([]float32, n*len(order))}
	if c > 2 {
		f.Classes = c
	}
	for i := range f.Label {
		f.Label[i] = uint8(rng.IntN(c))
	}
	for j, name := range order {
		for i, y := range f.Label {
			f.X[i*len(order)+j] = cols[name](i, y)
		}
	}
	return f
}

// Label-like columns are caught and ordinary ones are not: copies of the
// label (as is, 2y+1, 1 − y, one column of a one-hot, a noisy copy, one
// with 0.5% of it flipped, a category the label is a function of) against
// independent, weakly and moderately predictive, tied, categorical and
// all-distinct columns. A column independent of the labels fires either
// rule with probability ≤ e^−30, so one firing here is a bug, not chance.
func TestLabelLikeColumns(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		name    string
		classes int
		col     func(rng *rand.Rand) func(i int, y uint8) float32
		rule    string // "" for none
	}{
		{"y_copy", 2, func(*rand.Rand) func(int, uint8) float32 { return func(_ int, y uint8) float32 { return float32(y) } }, "function"},
		{"y*2+1", 2, func(*rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return 2*float32(y) + 1 }
		}, "function"},
		{"1-y", 2, func(*rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return 1 - float32(y) }
		}, "function"},
		{"y plus small noise", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(y) + float32(0.1*r.NormFloat64()) }
		}, "auc"},
		{"y with 0.5% flipped", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 {
				if r.Float64() < 0.005 {
					return 1 - float32(y)
				}
				return float32(y)
			}
		}, "auc"},
		{"category coding the label", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(2*r.IntN(25) + int(y)) } // even codes class 0, odd class 1: AUC ≈ ½
		}, "function"},
		{"one-hot column of class 2", 3, func(*rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(map[bool]int{true: 1}[y == 2]) }
		}, "auc"},
		{"y_copy of 5 classes", 5, func(*rand.Rand) func(int, uint8) float32 { return func(_ int, y uint8) float32 { return float32(y) } }, "function"},
		{"independent normal", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(int, uint8) float32 { return float32(r.NormFloat64()) }
		}, ""},
		{"independent, 5 classes", 5, func(r *rand.Rand) func(int, uint8) float32 {
			return func(int, uint8) float32 { return float32(r.NormFloat64()) }
		}, ""},
		{"y plus unit noise (AUC ≈ 0.76)", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(y) + float32(r.NormFloat64()) }
		}, ""},
		{"y plus noise 0.5 (AUC ≈ 0.92)", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(y) + float32(0.5*r.NormFloat64()) }
		}, ""},
		{"y plus noise 0.25 (AUC ≈ 0.998)", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(_ int, y uint8) float32 { return float32(y) + float32(0.25*r.NormFloat64()) }
		}, "auc"},
		{"rounded normal (ties of both classes)", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(int, uint8) float32 { return float32(math.Round(r.NormFloat64()*100) / 100) }
		}, ""},
		{"independent category", 2, func(r *rand.Rand) func(int, uint8) float32 {
			return func(int, uint8) float32 { return float32(r.IntN(10)) }
		}, ""},
		{"row number (all values distinct)", 2, func(*rand.Rand) func(int, uint8) float32 { return func(i int, _ uint8) float32 { return float32(i) } }, ""},
		{"constant", 2, func(*rand.Rand) func(int, uint8) float32 { return func(int, uint8) float32 { return 3 } }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 1))
			col := tc.col(rand.New(rand.NewPCG(7, 2)))
			other := rand.New(rand.NewPCG(7, 3))
			f := labelFrame(n, tc.classes, rng, map[string]func(int, uint8) float32{
				"x": col, "z": func(int, uint8) float32 { return float32(other.NormFloat64()) },
			}, []string{"z", "x"})
			got := LabelLikeColumns(f)
			switch {
			case tc.rule == "" && len(got) > 0:
				t.Fatalf("an ordinary column flagged: %v", got)
			case tc.rule != "" && (len(got) != 1 || got[0].Column != "x" || got[0].Rule != tc.rule):
				t.Fatalf("got %v, want x flagged by the %s rule", got, tc.rule)
			case tc.rule != "" && !strings.Contains(got[0].String(), `"x"`):
				t.Fatalf("String() = %q does not name the column", got[0])
			}
		})
	}
}

// A handful of rows cannot be told from chance: 10 rows whose feature is
// the label are not flagged (any feature of 10 rows separates 5 and 5
// labels perfectly with probability 2/252), 200 rows are.
func TestLabelLikeNeedsEvidence(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want int
	}{{10, 0}, {200, 1}} {
		rng := rand.New(rand.NewPCG(3, 1))
		f := labelFrame(tc.n, 2, rng, map[string]func(int, uint8) float32{"y_copy": func(_ int, y uint8) float32 { return float32(y) }}, []string{"y_copy"})
		if got := LabelLikeColumns(f); len(got) != tc.want {
			t.Errorf("%d rows: %v, want %d flagged", tc.n, got, tc.want)
		}
	}
}

// Ordinary synthetic data (every kind `train data synth` makes, 28
// features as Higgs has) passes.
func TestLabelLikeOrdinaryData(t *testing.T) {
	for _, kind := range []data.SynthKind{data.SynthLogistic, data.SynthBeta, data.SynthUniform} {
		dir := filepath.Join(t.TempDir(), "ds")
		if _, err := data.Synth(context.Background(), data.SynthOptions{Kind: kind, Rows: 50000, TestRows: 10, Features: 28, Seed: 11, Out: dir}); err != nil {
			t.Fatal(err)
		}
		f, err := data.ReadFrame(filepath.Join(dir, data.TrainFile))
		if err != nil {
			t.Fatal(err)
		}
		if got := LabelLikeColumns(f); len(got) > 0 {
			t.Errorf("synth %s: %v flagged", kind, got)
		}
	}
}

// The bucket bounds that spare the sort hold the exact AUC (ties ½) for
// every class, on columns with ties, with distinct values and of
// probability-like values crowded into few buckets; and the exact AUC is
// the pairwise count's.
func TestLabelLikeAUCBounds(t *testing.T) {
	const n = 3000
	rng := rand.New(rand.NewPCG(5, 1))
	cols := map[string]func(int, uint8) float32{
		"normal":  func(_ int, y uint8) float32 { return float32(y) + float32(rng.NormFloat64()) },
		"ties":    func(_ int, y uint8) float32 { return float32(int(y) + rng.IntN(3)) },
		"crowded": func(_ int, y uint8) float32 { return 0.5 + float32(y)*2e-3 + float32(rng.Float64()*1e-3) }, // one bucket, AUC 1 for class 1
	}
	names := []string{"normal", "ties", "crowded"}
	for _, c := range []int{2, 4} {
		f := labelFrame(n, c, rand.New(rand.NewPCG(5, uint64(c))), cols, names)
		counts := make([]int, c)
		for _, y := range f.Label {
			counts[y]++
		}
		h := classHistograms(f.X, len(names), f.Label, c)
		for j, name := range names {
			aucs := exactAUCs(f.X, len(names), j, f.Label, counts)
			for k := range c {
				var pairs float64
				for a := range n {
					for b := range n {
						if f.Label[a] == uint8(k) && f.Label[b] != uint8(k) {
							switch xa, xb := f.X[a*len(names)+j], f.X[b*len(names)+j]; {
							case xa > xb:
								pairs++
							case xa == xb:
								pairs += 0.5
							}
						}
					}
				}
				want := pairs / float64(counts[k]*(n-counts[k]))
				lo, hi, ok := h.aucBounds(j, k, counts)
				if !ok || math.Abs(aucs[k]-want) > 1e-12 || lo > want+1e-12 || hi < want-1e-12 {
					t.Errorf("%d classes, %s, class %d: exact %v, pairwise %v, bounds [%v, %v]", c, name, k, aucs[k], want, lo, hi)
				}
			}
		}
	}
}

// Duplicated rows share their label whatever the column: a file where
// each row appears twice, or ten times, has continuous columns whose every
// repeated value is pure, and no column of it is label-like (a trial's
// file had 2,000 of 5,000 libsvm lines twice); a column coding the label
// is still caught in such a file.
func TestLabelLikeDuplicatedRows(t *testing.T) {
	for _, copies := range []int{2, 10} {
		rng := rand.New(rand.NewPCG(9, uint64(copies)))
		const distinct = 2000
		f := &data.Frame{Rows: distinct * copies, Features: []string{"a", "b", "code"}}
		for range distinct {
			y := uint8(rng.IntN(2))
			row := []float32{float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(2*rng.IntN(20) + int(y))}
			for range copies {
				f.X = append(f.X, row...)
				f.Label = append(f.Label, y)
			}
		}
		got := LabelLikeColumns(f)
		if len(got) != 1 || got[0].Column != "code" {
			t.Errorf("each row %d times: %v, want only code flagged", copies, got)
		}
	}
}
