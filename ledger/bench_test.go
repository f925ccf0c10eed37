package ledger

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"labelprivacy/pets"
)

const benchDigest = "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"

// cpuTime is this process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkRecord: one Record of a release of n people already in the
// ledger (their second release and later), n = 100,000 by default;
// LEDGER_BENCH_PEOPLE=10000000 gives the 10M-person figure (run it with
// -benchtime=3x under /usr/bin/time -v for the peak RSS; cpu-ms/op is the
// process's CPU time spent inside Record, which a loaded machine inflates
// less than wall time). Cases:
//   - unsorted: every person once, keys in hash order (privatize: the
//     release sorts them);
//   - sorted: the same sorted slice every release (a session's shared
//     copy of its training rows);
//   - llp-drop: an LLP release in bags of 64 that drops 63 people, other
//     ones each time (a bag id per row; the people file lists them);
//   - llp-drop-sorted: the same as a session passes it when no person has
//     two training rows: its sorted copy less the 63, no bag ids.
//
// The caller's work (filling the keys, choosing the dropped) is outside
// the timer.
func BenchmarkRecord(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("LEDGER_BENCH_PEOPLE")); err == nil && v > 0 {
		n = v
	}
	for _, tc := range []string{"unsorted", "sorted", "llp-drop", "llp-drop-sorted"} {
		b.Run(tc, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), File)
			l, err := Open(path, Options{})
			if err != nil {
				b.Fatal(err)
			}
			k, err := l.Keys()
			if err != nil {
				b.Fatal(err)
			}
			pcg := rand.NewPCG(1, 2)
			src := rand.New(pcg)
			people := make([]uint64, n)
			fill := func() { // the same people in the same (hash) order
				pcg.Seed(1, 2)
				for i := range people {
					people[i] = src.Uint64()
				}
			}
			rr, _ := pets.New(pets.Params{Kind: pets.RR, Epsilon: 1})
			geom, _ := pets.New(pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 1})
			rel := func(id string, people []uint64, draws []int64, m *pets.Mechanism) Release {
				return Release{ID: id, Input: "train.arrow", Labels: k.Labels([]uint8{1}), Identity: ByFeatures,
					People: people, Draws: draws, KeyCheck: k.Check(), Mech: m, Noise: pets.NoiseSecure, Path: "out/r.arrow", SHA256: benchDigest}
			}
			fill()
			if _, err := l.Record(rel("first", people, nil, rr)); err != nil {
				b.Fatal(err)
			}
			var draws []int64
			kept := (n - 63) / 64 * 64
			var sorted, covered []uint64
			if tc == "llp-drop-sorted" {
				sorted = slices.Clone(people) // sorted by the first Record
				covered = make([]uint64, 0, kept)
			}
			if tc == "llp-drop" {
				draws = make([]int64, kept)
				for j := range draws {
					draws[j] = int64(j / 64)
				}
			}
			drop := rand.New(rand.NewPCG(3, 4))
			var cpu time.Duration
			i := 0
			for b.Loop() {
				i++
				b.StopTimer()
				var r Release
				switch tc {
				case "unsorted":
					fill()
					r = rel(fmt.Sprint(i), people, nil, rr)
				case "sorted":
					r = rel(fmt.Sprint(i), people, nil, rr) // sorted by the first Record
				case "llp-drop":
					fill()
					for j := n - 1; j >= kept; j-- { // other people dropped each time
						x := drop.IntN(j + 1)
						people[x], people[j] = people[j], people[x]
					}
					r = rel(fmt.Sprint(i), people[:kept], draws, geom)
				case "llp-drop-sorted":
					skip := map[int]bool{}
					for len(skip) < n-kept {
						skip[drop.IntN(n)] = true
					}
					covered = covered[:0]
					for j, x := range sorted {
						if !skip[j] {
							covered = append(covered, x)
						}
					}
					r = rel(fmt.Sprint(i), covered, nil, geom)
				}
				b.StartTimer()
				c := cpuTime()
				if _, err := l.Record(r); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - c
			}
			st, _ := os.Stat(PeoplePath(path))
			b.ReportMetric(float64(st.Size())/float64(n), "people_file_B/person")
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkPersonHasher: the keyed fingerprint of one row of 28 float32
// features (Higgs), HMAC-SHA-256.
func BenchmarkPersonHasher(b *testing.B) {
	k := newKeys(fixedKey)
	h := k.NewPersonHasher()
	x := make([]float32, 28)
	for i := range x {
		x[i] = float32(i) * 0.37
	}
	var s uint64
	for b.Loop() {
		x[0]++
		s += h.Row(ByFeatures, x, nil)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
