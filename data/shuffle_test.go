package data

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randShuffled is the order the batch source made before shuffleUnits:
// the identity permuted by math/rand/v2's Shuffle from PCG(seed, epoch).
func randShuffled(n int, seed, epoch uint64) []int32 {
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	rand.New(rand.NewPCG(seed, epoch)).Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// shuffleUnits is math/rand/v2's Shuffle, permutation for permutation:
// around its block size (16), at powers of two (Uint64N masks there), at
// sizes whose draws reject, and at a million rows.
func TestShuffleUnitsMatchesRand(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 64, 100, 1000, 4096, 65537, 1 << 20} {
		for _, seed := range []uint64{0, 1, 0xdeadbeefcafe} {
			for _, epoch := range []uint64{0, 3} {
				got := make([]int32, n)
				for i := range got {
					got[i] = int32(i)
				}
				shuffleUnits(got, rand.NewPCG(seed, epoch))
				if want := randShuffled(n, seed, epoch); !slices.Equal(got, want) {
					t.Fatalf("n=%d seed=%d epoch=%d: shuffleUnits differs from rand.Shuffle", n, seed, epoch)
				}
			}
		}
	}
}

// uint64n draws what Rand.Uint64N draws, bound by bound, rejections included
// (bounds just above a power of two reject most often).
func TestUint64nMatchesRand(t *testing.T) {
	p, r := rand.NewPCG(5, 7), rand.New(rand.NewPCG(5, 7))
	for _, n := range []uint64{1, 2, 3, 5, 1 << 20, 1<<20 + 1, 1<<63 + 1, 3 << 62, ^uint64(0)} {
		for range 1000 {
			if got, want := uint64n(p, n), r.Uint64N(n); got != want {
				t.Fatalf("n=%d: uint64n %d, Uint64N %d", n, got, want)
			}
		}
	}
}

// A source makes each epoch's order once, however it is positioned (the
// trainer's probe, its first step and a pipeline pre-positioning all seek
// epoch 0), and its orders are those it always made: rand.Shuffle's from
// PCG(seed, epoch), whether the first Next or SeekEpoch comes first.
func TestBatchSourceShufflesOncePerEpoch(t *testing.T) {
	const n, seed = 1000, 42
	f := testFrame(n, 1)
	mk := func() *BatchSource {
		s, err := NewBatchSource(f, BatchOptions{BatchSize: 100, Shuffle: true, Seed: seed, Target: TargetLabel, DropLast: true})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(s *BatchSource, epoch uint64) {
		t.Helper()
		rows, _, _ := epochRows(t, s)
		want := randShuffled(n, seed, epoch)
		for i, r := range rows {
			if int32(r) != want[i] {
				t.Fatalf("epoch %d: row %d is %d, the rand.Shuffle order has %d", epoch, i, r, want[i])
			}
		}
	}
	s := mk()
	if _, ok := s.Ordered(); s.shuffles != 0 || ok {
		t.Fatalf("NewBatchSource shuffled %d times; the order is made when first needed", s.shuffles)
	}
	s.SeekEpoch(0) // the pipeline positions it
	if e, ok := s.Ordered(); e != 0 || !ok {
		t.Fatalf("after SeekEpoch(0), Ordered() = %d, %v", e, ok)
	}
	s.SeekEpoch(0) // the trainer's probe
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	s.SeekEpoch(0) // the first step
	check(s, 0)
	if s.shuffles != 1 {
		t.Fatalf("epoch 0 was shuffled %d times, want 1", s.shuffles)
	}
	s.SeekEpoch(1)
	s.SeekEpoch(1)
	if e, ok := s.Ordered(); e != 1 || !ok {
		t.Fatalf("after SeekEpoch(1), Ordered() = %d, %v", e, ok)
	}
	check(s, 1)
	s.SeekEpoch(0) // a resumed group going back: made again
	check(s, 0)
	if s.shuffles != 3 {
		t.Fatalf("%d shuffles for epochs 0, 1, 0; want 3", s.shuffles)
	}
	s.Reset() // epoch 1
	check(s, 1)

	fresh := mk() // Next first: epoch 0
	check(fresh, 0)
	if fresh.shuffles != 1 {
		t.Fatalf("a new source drained once shuffled %d times, want 1", fresh.shuffles)
	}
}

// BenchmarkShuffle10M compares the Fisher–Yates shuffle of a 10M-row
// order (one epoch of one replica at the paper's Higgs size) as
// rand.Shuffle does it and as shuffleUnits does.
func BenchmarkShuffle10M(b *testing.B) {
	const n = 10_000_000
	order := make([]int32, n)
	reset := func() {
		for i := range order {
			order[i] = int32(i)
		}
	}
	b.Run("rand.Shuffle", func(b *testing.B) {
		r := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			reset()
			r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
	})
	b.Run("shuffleUnits", func(b *testing.B) {
		p := rand.NewPCG(1, 2)
		for b.Loop() {
			reset()
			shuffleUnits(order, p)
		}
	})
}

// BenchmarkBatchSourceEpochStart is what a group's trainer pays per
// replica before its first step on 1M rows: the source made, probed and
// positioned by the trainer, and its first batch read (before, three
// shuffles; now one).
func BenchmarkBatchSourceEpochStart(b *testing.B) {
	const n = 1_000_000
	f := &Frame{Rows: n, LabelRR: make([]uint8, n)}
	feat := &Features{Rows: n}
	for b.Loop() {
		s, err := NewBatchSource(f, BatchOptions{BatchSize: 1024, Shuffle: true, Seed: 3, Target: TargetLabelRR, DropLast: true,
			Features: feat, IndexOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s.SeekEpoch(0) // model's probeSource
		s.Next()
		s.SeekEpoch(0) // the first step
		s.Next()
	}
}
