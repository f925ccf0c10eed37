package llp

import "testing"

// BenchmarkPartition: seeded partition of 10M rows into bags of 64, and
// the per-bag label sums over it.
func BenchmarkPartition(b *testing.B) {
	const n, k = 10_000_000, 64
	b.Run("partition", func(b *testing.B) {
		for b.Loop() {
			if _, err := Partition(n, k, seeded(1), false); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("sums", func(b *testing.B) {
		bags, _ := Partition(n, k, seeded(1), false)
		labels := make([]uint8, n)
		r := seeded(2)
		for i := range labels {
			labels[i] = uint8(r.Uint64() & 1)
		}
		var dst []int
		for b.Loop() {
			dst = bags.Sums(labels, dst)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
