package data

import (
	"errors"
	"io"
	"testing"
)

// Bags of any size (SizedBags): every batch has BatchSize rows and at most
// U whole bags, its target each slot's proportion and size and each row's
// slot (−1: padding, whose row ids repeat a bag's row); each epoch has the
// same number of batches, ⌊rows in bags / BatchSize⌋, every bag appears at
// most once and the ones left out are counted; a bag larger than a batch
// is refused.
func TestSizedBags(t *testing.T) {
	sizes := []int{1, 7, 3, 12, 5, 5, 9, 2, 11, 4, 6, 8, 1, 1, 10}
	f := &Frame{}
	alphaOf := map[int64]float64{}
	for b, n := range sizes {
		alphaOf[int64(100+b)] = float64(b) / 10
		for range n {
			f.BagID = append(f.BagID, int64(100+b))
			f.Alpha = append(f.Alpha, float64(b)/10)
		}
	}
	f.Rows = len(f.BagID)
	f.Features, f.X = []string{"x"}, make([]float32, f.Rows)
	for i := range f.X {
		f.X[i] = float32(i)
	}
	const n, u = 16, 3
	s, err := NewBatchSource(f, BatchOptions{BatchSize: n, BagSize: u, SizedBags: true, Target: TargetAlpha, Shuffle: true, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, v := range sizes {
		total += v
	}
	if s.BatchesPerEpoch() != total/n {
		t.Fatalf("%d batches an epoch, want %d", s.BatchesPerEpoch(), total/n)
	}
	firsts := map[int64]bool{}
	for epoch := range uint64(4) {
		s.SeekEpoch(epoch)
		seen := map[int64]bool{}
		batches := 0
		for {
			b, err := s.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			batches++
			if b.Rows != n || !b.Sized || b.BagSize != u || len(b.Target) != 2*u+n {
				t.Fatalf("batch of %d rows, sized %v, %d targets", b.Rows, b.Sized, len(b.Target))
			}
			alpha, size, slot := b.Target[:u], b.Target[u:2*u], b.Target[2*u:]
			count := make([]int, u)
			bagOf := make([]int64, u)
			for r, sl := range slot {
				row := int(b.X[r])
				if sl < 0 {
					continue
				}
				k := int(sl)
				count[k]++
				if count[k] == 1 {
					bagOf[k] = f.BagID[row]
				} else if f.BagID[row] != bagOf[k] {
					t.Fatalf("slot %d holds rows of bags %d and %d", k, bagOf[k], f.BagID[row])
				}
				if b.RowIDs[r] != int32(row) {
					t.Fatalf("row id %d for row %d", b.RowIDs[r], row)
				}
			}
			for k := range u {
				if int(size[k]) != count[k] {
					t.Fatalf("slot %d: size %v, %d rows", k, size[k], count[k])
				}
				if count[k] == 0 {
					continue
				}
				if count[k] != sizes[bagOf[k]-100] || float64(alpha[k]) != float64(float32(alphaOf[bagOf[k]])) {
					t.Fatalf("slot %d: bag %d of %d rows with %d, alpha %v", k, bagOf[k], sizes[bagOf[k]-100], count[k], alpha[k])
				}
				if seen[bagOf[k]] {
					t.Fatalf("epoch %d: bag %d twice", epoch, bagOf[k])
				}
				seen[bagOf[k]] = true
			}
			if batches == 1 {
				firsts[bagOf[0]] = true
			}
		}
		if batches != total/n || len(seen)+s.DroppedBags != len(sizes) {
			t.Fatalf("epoch %d: %d batches, %d bags and %d left out of %d", epoch, batches, len(seen), s.DroppedBags, len(sizes))
		}
	}
	if len(firsts) < 2 {
		t.Error("every epoch starts with the same bag: no shuffle")
	}
	if _, err := NewBatchSource(f, BatchOptions{BatchSize: 8, BagSize: u, SizedBags: true, Target: TargetAlpha}); err == nil {
		t.Error("a bag of 12 rows in batches of 8 was accepted")
	}
}
