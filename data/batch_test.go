package data

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

func testFrame(n, d int) *Frame {
	f := &Frame{Rows: n, Features: SynthFeatureNames(d), X: make([]float32, n*d), Label: make([]uint8, n)}
	for i := range n {
		for j := range d {
			f.X[i*d+j] = float32(i) // row id in every feature
		}
		f.Label[i] = uint8(i % 2)
	}
	return f
}

// epochRows drains one epoch and returns the row ids seen, batch sizes and targets.
func epochRows(t *testing.T, s *BatchSource) (rows []int, sizes []int, targets []float32) {
	t.Helper()
	for {
		b, err := s.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, b.Rows)
		for r := range b.Rows {
			rows = append(rows, int(b.X[r*b.Dim]))
		}
		targets = append(targets, b.Target...)
	}
}

func TestBatchSourceExamples(t *testing.T) {
	f := testFrame(103, 3)
	tests := []struct {
		name      string
		opt       BatchOptions
		wantSizes []int
	}{
		{"keep last", BatchOptions{BatchSize: 25, Target: TargetLabel}, []int{25, 25, 25, 25, 3}},
		{"drop last", BatchOptions{BatchSize: 25, Target: TargetLabel, DropLast: true}, []int{25, 25, 25, 25}},
		{"shuffled", BatchOptions{BatchSize: 50, Target: TargetLabel, Shuffle: true, Seed: 9}, []int{50, 50, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewBatchSource(f, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			per := s.BatchesPerEpoch()
			rows, sizes, targets := epochRows(t, s)
			if !slices.Equal(sizes, tc.wantSizes) || per != len(sizes) {
				t.Fatalf("batch sizes %v (BatchesPerEpoch %d), want %v", sizes, per, tc.wantSizes)
			}
			for i, r := range rows {
				if targets[i] != float32(f.Label[r]) {
					t.Fatalf("row %d carries target %v, label %d", r, targets[i], f.Label[r])
				}
			}
			if !tc.opt.DropLast {
				sorted := slices.Sorted(slices.Values(rows))
				for i, r := range sorted {
					if r != i {
						t.Fatalf("epoch is not a permutation of the rows: %v", sorted)
					}
				}
			}
			if tc.opt.Shuffle == slices.IsSorted(rows) {
				t.Fatalf("shuffle=%v but rows sorted=%v", tc.opt.Shuffle, slices.IsSorted(rows))
			}
		})
	}
}

func TestBatchSourceSeededShuffle(t *testing.T) {
	f := testFrame(500, 1)
	order := func(seed uint64, epochs int) [][]int {
		s, err := NewBatchSource(f, BatchOptions{BatchSize: 64, Target: TargetLabel, Shuffle: true, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var out [][]int
		for e := range epochs {
			if e > 0 {
				s.Reset()
			}
			rows, _, _ := epochRows(t, s)
			out = append(out, rows)
		}
		return out
	}
	a, b, c := order(1, 2), order(1, 2), order(2, 1)
	if !slices.Equal(a[0], b[0]) || !slices.Equal(a[1], b[1]) {
		t.Fatal("same seed, different order")
	}
	if slices.Equal(a[0], a[1]) {
		t.Fatal("two epochs share one order")
	}
	if slices.Equal(a[0], c[0]) {
		t.Fatal("different seeds, same order")
	}
}

func bagFrame() *Frame {
	// 10 rows in bags of 3 (ids 7, 3, 5) plus a remainder bag 9 of one row.
	f := testFrame(10, 2)
	f.Label = nil
	f.BagID = []int64{7, 3, 5, 7, 3, 5, 7, 3, 5, 9}
	f.Alpha = []float64{1.0 / 3, 2.0 / 3, 0, 1.0 / 3, 2.0 / 3, 0, 1.0 / 3, 2.0 / 3, 0, 1}
	return f
}

func TestBatchSourceBags(t *testing.T) {
	f := bagFrame()
	s, err := NewBatchSource(f, BatchOptions{BatchSize: 6, BagSize: 3, Target: TargetAlpha, Shuffle: true, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if s.SkippedBags != 1 || s.BatchesPerEpoch() != 2 {
		t.Fatalf("skipped %d bags, %d batches an epoch; want 1 and 2 (3 bags, 2 a batch)", s.SkippedBags, s.BatchesPerEpoch())
	}
	seen := map[int64]bool{}
	for {
		b, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if b.BagSize != 3 || len(b.Target) != b.Rows/3 {
			t.Fatalf("batch of %d rows with %d targets, bag size %d", b.Rows, len(b.Target), b.BagSize)
		}
		for k := range b.Rows / 3 {
			id := f.BagID[int(b.X[k*3*b.Dim])]
			for r := k * 3; r < k*3+3; r++ {
				row := int(b.X[r*b.Dim])
				if f.BagID[row] != id {
					t.Fatalf("bag %d is split: row %d belongs to bag %d", id, row, f.BagID[row])
				}
			}
			if seen[id] {
				t.Fatalf("bag %d twice in one epoch", id)
			}
			seen[id] = true
			if b.Target[k] != float32(f.Alpha[int(b.X[k*3*b.Dim])]) {
				t.Fatalf("bag %d target %v", id, b.Target[k])
			}
		}
	}
	if len(seen) != 3 {
		t.Fatalf("saw %d bags, want 3", len(seen))
	}
}

func TestBatchSourceErrors(t *testing.T) {
	inconsistent := bagFrame()
	inconsistent.Alpha[4] = 0.5 // row 4 is in bag 3
	tests := []struct {
		name string
		f    *Frame
		opt  BatchOptions
		bag  int64
	}{
		{"zero batch", testFrame(5, 1), BatchOptions{BatchSize: 0, Target: TargetLabel}, -1},
		{"not a multiple of k", bagFrame(), BatchOptions{BatchSize: 5, BagSize: 3, Target: TargetAlpha}, -1},
		{"per-bag target without bags", bagFrame(), BatchOptions{BatchSize: 6, Target: TargetAlpha}, -1},
		{"missing label_rr", testFrame(5, 1), BatchOptions{BatchSize: 2, Target: TargetLabelRR}, -1},
		{"inconsistent bag", inconsistent, BatchOptions{BatchSize: 6, BagSize: 3, Target: TargetAlpha}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBatchSource(tc.f, tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			var be *BagError
			if tc.bag >= 0 && (!errors.As(err, &be) || be.Bag != tc.bag) {
				t.Fatalf("err = %v, want a BagError for bag %d", err, tc.bag)
			}
		})
	}
}

func TestBatchSourceSparse(t *testing.T) {
	f := &Frame{Rows: 3, Label: []uint8{1, 0, 1}, Indices: []uint32{4, 9, 2, 7, 7, 1}, Offsets: []int64{0, 2, 3, 6}}
	s, err := NewBatchSource(f, BatchOptions{BatchSize: 3, Target: TargetLabel})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	wantIdx := []int32{4, 9, 0, 2, 0, 0, 7, 7, 1}
	wantMask := []float32{1, 1, 0, 1, 0, 0, 1, 1, 1}
	if b.Width != 3 || !slices.Equal(b.Indices, wantIdx) || !slices.Equal(b.IndexMask, wantMask) || b.X != nil {
		t.Fatalf("width %d indices %v mask %v X %v", b.Width, b.Indices, b.IndexMask, b.X)
	}
}

// A release that stays with the raw data carries targets and a row column;
// its batches take features from the dataset frame by row, and IndexOnly
// batches carry the same rows without copying features.
func TestBatchSourceFeaturesByRow(t *testing.T) {
	feat := &Features{Rows: 4, Names: []string{"a"}, X: []float32{10, 11, 12, 13}}
	rel := &Frame{Rows: 4, BagID: []int64{0, 0, 1, 1}, Alpha: []float64{0.5, 0.5, 1, 1}, Row: []int64{3, 0, 2, 1}}
	for _, tc := range []struct {
		name      string
		indexOnly bool
	}{{"gather", false}, {"index-only", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewBatchSource(rel, BatchOptions{BatchSize: 4, BagSize: 2, Target: TargetAlpha, Features: feat, IndexOnly: tc.indexOnly})
			if err != nil {
				t.Fatal(err)
			}
			b, err := s.Next()
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(b.RowIDs), "[3 0 2 1]"; got != want {
				t.Fatalf("RowIDs %s, want %s", got, want)
			}
			if tc.indexOnly {
				if b.X != nil {
					t.Fatalf("index-only batch gathered X %v", b.X)
				}
			} else if got, want := fmt.Sprint(b.X), "[13 10 12 11]"; got != want {
				t.Fatalf("X %s, want %s", got, want)
			}
			if got, want := fmt.Sprint(b.Target), "[0.5 1]"; got != want {
				t.Fatalf("targets %s, want %s", got, want)
			}
		})
	}
	bad := &Frame{Rows: 1, LabelRR: []uint8{1}, Row: []int64{4}}
	if _, err := NewBatchSource(bad, BatchOptions{BatchSize: 1, Target: TargetLabelRR, Features: feat}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("row out of range: err = %v", err)
	}
}

// SeekEpoch(e) reproduces the order of epoch e (the first order is epoch 0,
// each Reset the next): a resumed trainer replays the same batches.
func TestBatchSourceSeekEpoch(t *testing.T) {
	f := &Frame{Rows: 50, Features: []string{"a"}, X: make([]float32, 50), Label: make([]uint8, 50)}
	order := func(s *BatchSource) []int32 {
		var rows []int32
		for {
			b, err := s.Next()
			if err != nil {
				return rows
			}
			rows = append(rows, b.RowIDs...)
		}
	}
	mk := func() *BatchSource {
		s, err := NewBatchSource(f, BatchOptions{BatchSize: 10, Shuffle: true, Seed: 9, Target: TargetLabel})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a := mk()
	order(a)
	a.Reset()
	second := order(a)
	b := mk()
	b.SeekEpoch(1)
	if got := order(b); !slices.Equal(got, second) {
		t.Fatalf("SeekEpoch(1) gives %v, the second epoch was %v", got, second)
	}
	b.SeekEpoch(0)
	if got, first := order(b), order(mk()); !slices.Equal(got, first) || slices.Equal(first, second) {
		t.Fatal("SeekEpoch(0) is not the first epoch (or the epochs are not shuffled)")
	}
	if b.Units() != 50 {
		t.Fatalf("Units = %d", b.Units())
	}
}
