package release

import (
	"math/rand/v2"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/pets"
)

// BenchmarkApply10M measures applying a mechanism to 10M labels in memory
// (bags and noise; the simulation layout adds no feature copy); rows/s is
// what to compare.
func BenchmarkApply10M(b *testing.B) {
	const n = 10_000_000
	r := rand.New(rand.NewPCG(1, 2))
	labels := make([]uint8, n)
	for i := range labels {
		labels[i] = uint8(r.IntN(2))
	}
	for _, p := range []pets.Params{{Kind: pets.RR, Epsilon: 1}, {Kind: pets.LLP, K: 64}, {Kind: pets.LLPGeom, K: 64, Epsilon: 1}} {
		m := testutil.MustNew(p)
		b.Run(m.String(), func(b *testing.B) {
			for b.Loop() {
				rel, err := Apply(labels, m, Options{Noise: pets.NoiseSimulation, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				_ = rel.Simulation()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkLabelLikeColumns: the label-like check privatize runs before
// writing, on LABELLIKE_BENCH_ROWS rows (default 1M) of 28 independent
// normal features and binary labels (the common case: every column
// settled by its bucket bounds and an early stop of its value scan).
func BenchmarkLabelLikeColumns(b *testing.B) {
	n := 1 << 20
	if v, err := strconv.Atoi(os.Getenv("LABELLIKE_BENCH_ROWS")); err == nil && v > 0 {
		n = v
	}
	const d = 28
	rng := rand.New(rand.NewPCG(1, 2))
	f := &data.Frame{Rows: n, Features: make([]string, d), X: make([]float32, n*d), Label: make([]uint8, n)}
	for j := range d {
		f.Features[j] = "x" + strconv.Itoa(j)
	}
	for i := range f.X {
		f.X[i] = float32(rng.NormFloat64())
	}
	for i := range f.Label {
		f.Label[i] = uint8(rng.IntN(2))
	}
	var cpu time.Duration
	for b.Loop() {
		start := cpuTime()
		if got := LabelLikeColumns(f); len(got) != 0 {
			b.Fatal(got)
		}
		cpu += cpuTime() - start
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
