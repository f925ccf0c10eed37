package ledger

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"labelprivacy/pets"
)

const benchDigest = "c7a5e9185d9dc500f7c048c71beb599b8f30ca0678302bde07c428a4402d5eac"

// BenchmarkRecord: one Record of a release of n people already in the
// ledger (their second release and later), n = 100,000 by default;
// LEDGER_BENCH_PEOPLE=10000000 gives the 10M-person figure (run it with
// -benchtime=3x under /usr/bin/time -v for the peak RSS). Cases:
//   - all-shuffled: every person once, keys in a fresh random order (the
//     release sorts them: privatize);
//   - all-sorted: the same slice every release (a session's shared copy);
//   - llp-drop: an LLP release in bags of 64 whose n mod 64 + 63 dropped
//     rows differ each time (a bag id per row; the people file lists the
//     dropped people).
func BenchmarkRecord(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("LEDGER_BENCH_PEOPLE")); err == nil && v > 0 {
		n = v
	}
	for _, tc := range []string{"all-shuffled", "all-sorted", "llp-drop"} {
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
			src := rand.New(rand.NewPCG(1, 2))
			all := make([]uint64, n)
			for i := range all {
				all[i] = src.Uint64()
			}
			rr, _ := pets.New(pets.Params{Kind: pets.RR, Epsilon: 1})
			geom, _ := pets.New(pets.Params{Kind: pets.LLPGeom, K: 64, Epsilon: 1})
			rel := func(id string, people []uint64, draws []int64, m *pets.Mechanism) Release {
				return Release{ID: id, Input: "train.arrow", Labels: k.Labels([]uint8{1}), Identity: ByFeatures,
					People: people, Draws: draws, KeyCheck: k.Check(), Mech: m, Noise: pets.NoiseSecure, Path: "out/r.arrow", SHA256: benchDigest}
			}
			if _, err := l.Record(rel("first", append([]uint64(nil), all...), nil, rr)); err != nil {
				b.Fatal(err)
			}
			sorted := append([]uint64(nil), all...)
			people := make([]uint64, n)
			draws := make([]int64, n)
			i := 0
			for b.Loop() {
				i++
				var r Release
				b.StopTimer() // the shuffles are the caller's, not the ledger's
				switch tc {
				case "all-shuffled":
					copy(people, all)
					src.Shuffle(n, func(a, c int) { people[a], people[c] = people[c], people[a] })
					r = rel(fmt.Sprint(i), people, nil, rr)
				case "all-sorted":
					r = rel(fmt.Sprint(i), sorted, nil, rr)
				case "llp-drop":
					copy(people, all)
					src.Shuffle(n, func(a, c int) { people[a], people[c] = people[c], people[a] })
					kept := (n - 63) / 64 * 64
					for j := range kept {
						draws[j] = int64(j / 64)
					}
					r = rel(fmt.Sprint(i), people[:kept], draws[:kept], geom)
				}
				b.StartTimer()
				if _, err := l.Record(r); err != nil {
					b.Fatal(err)
				}
			}
			st, _ := os.Stat(PeoplePath(path))
			b.ReportMetric(float64(st.Size())/float64(n), "people_file_B/person")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/person")
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
