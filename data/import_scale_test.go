package data

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchInput is the input of the at-scale import benchmarks, named by
// $LABELPRIVACY_BENCH_LIBSVM (scripts/import-bench.sh generates a KDD
// Cup 2012-shaped .bz2). Without it they skip: they are not for CI.
func benchInput(b *testing.B) (path string, size int64) {
	path = os.Getenv("LABELPRIVACY_BENCH_LIBSVM")
	if path == "" {
		b.Skip("set LABELPRIVACY_BENCH_LIBSVM to a libsvm file (see scripts/import-bench.sh)")
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, st.Size()
}

// BenchmarkImportLibSVMFile imports the benchmark input (the paper's 500,000
// buckets, the first 10,000 rows as the test set) and reports rows/s and
// MB/s of the stored (compressed) and the decompressed input. Run it with
// -benchtime 1x under /usr/bin/time -v for the maximum RSS.
func BenchmarkImportLibSVMFile(b *testing.B) {
	in, size := benchInput(b)
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(b.TempDir(), "ds")
		var last ImportProgress
		start := time.Now()
		m, err := ImportLibSVM(context.Background(), ImportOptions{In: in, Out: out, TestRows: 10_000,
			Progress: func(p ImportProgress) { last = p }})
		if err != nil {
			b.Fatal(err)
		}
		s := time.Since(start).Seconds()
		b.ReportMetric(float64(m.TrainRows+m.TestRows)/s, "rows/s")
		b.ReportMetric(float64(size)/1e6/s, "MB/s-stored")
		b.ReportMetric(float64(last.Bytes)/1e6/s, "MB/s-decompressed")
		b.Logf("%d rows (%d dropped), %d duplicate indices, %d bucket collisions, %.0f MB stored, %.0f MB decompressed, %.1f s",
			m.TrainRows+m.TestRows, m.DroppedRows, m.DuplicateIndices, m.BucketCollisions, float64(size)/1e6, float64(last.Bytes)/1e6, s)
	}
}

// BenchmarkDecompressFile reads the benchmark input through the importer's
// decompressor alone (Go's compress/bzip2 or gzip), to tell how much of the
// import's time is decompression.
func BenchmarkDecompressFile(b *testing.B) {
	path, size := benchInput(b)
	for b.Loop() {
		in, err := openInput(path)
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		n, err := io.Copy(io.Discard, in)
		in.close()
		if err != nil {
			b.Fatal(err)
		}
		s := time.Since(start).Seconds()
		b.ReportMetric(float64(size)/1e6/s, "MB/s-stored")
		b.ReportMetric(float64(n)/1e6/s, "MB/s-decompressed")
	}
}
