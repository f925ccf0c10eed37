package release

import (
	"context"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/ledger"
	"labelprivacy/pets"
)

// synthValues loads a small synthetic dataset of conversion values.
func synthValues(t testing.TB, rows int) (*data.Frame, pets.Grid, []float64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "v")
	m, err := data.Synth(context.Background(), data.SynthOptions{Kind: data.SynthValues, Rows: rows, TestRows: 10, Features: 3, Seed: 7, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ds.Train, pets.Grid{Max: m.ValueMax, Step: m.ValueStep}, m.ValuePrior
}

// baseMeta are the metadata keys every release of values has (Meta's
// keys before values: no new ones but rr_bins's three).
var baseMeta = []string{"mechanism", "label_dp_epsilon", "noise", "rows", "tool"}

// Each release of values carries what its mechanism releases and nothing
// of the values: laplace and rr_bins a value_rr per row (rows in input
// order in the simulation layout, shuffled when shipped), value_bags a
// bag_id and bag_mean (the exact mean of its members, or an unbiased
// noisy one); the metadata holds no new key but rr_bins's bin_edges,
// bin_values and prior (JSON lists, read back to the same bins); no file
// holds a raw value, p0, mu, sigma or a seed.
func TestApplyValues(t *testing.T) {
	f, g, pop := synthValues(t, 4000)
	for _, tc := range []struct {
		name  string
		p     pets.Params
		extra []string
	}{
		{"laplace", pets.Params{Kind: pets.LaplaceValue, Epsilon: 1, Values: g}, []string{"epsilon", "laplace_sampler"}},
		{"rr_bins public", pets.Params{Kind: pets.RRBins, Epsilon: 2, Values: g}, []string{"epsilon", MetaBinEdges, MetaBinValues, MetaPrior}},
		{"rr_bins private", pets.Params{Kind: pets.RRBins, Epsilon: 2, PriorEpsilon: 0.5, Values: g}, []string{"epsilon", MetaBinEdges, MetaBinValues, MetaPrior}},
		{"value_bags exact", pets.Params{Kind: pets.ValueBags, K: 8, Values: g}, []string{"k", "bags", "dropped_rows"}},
		{"value_bags noisy", pets.Params{Kind: pets.ValueBags, K: 8, Epsilon: 4, Values: g}, []string{"k", "bags", "dropped_rows", "epsilon", "laplace_sampler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := testutil.MustNew(tc.p)
			var vo ValueOptions
			if tc.p.Kind == pets.RRBins && tc.p.PriorEpsilon == 0 {
				vo.Prior = pop
			}
			rel, err := ApplyValues(f.Value, m, Options{Noise: pets.NoiseSimulation, Seed: 3}, vo)
			if err != nil {
				t.Fatal(err)
			}
			md := rel.Meta()
			want := append(slices.Clone(baseMeta), tc.extra...)
			slices.Sort(want)
			if got := slices.Sorted(maps.Keys(md)); !slices.Equal(got, want) {
				t.Fatalf("metadata keys %v, want %v", got, want)
			}
			for k, v := range md {
				if v == "3" { // the seed
					t.Fatalf("metadata %s = %s", k, v)
				}
			}
			sim := rel.Simulation()
			out, err := rel.Ship(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, fr := range []*data.Frame{sim, out} {
				if cols := fr.RawLabelColumns(); len(cols) > 0 {
					t.Fatalf("a release carries raw columns %v", cols)
				}
			}
			if out.Row != nil {
				t.Fatal("a shipped release carries row numbers")
			}
			switch tc.p.Kind {
			case pets.LaplaceValue, pets.RRBins:
				if len(sim.ValueRR) != f.Rows || sim.BagMean != nil {
					t.Fatalf("value_rr %d rows", len(sim.ValueRR))
				}
				var d float64
				for i, z := range sim.ValueRR {
					d += z - f.Value[sim.Row[i]]
				}
				if tc.p.Kind == pets.LaplaceValue && math.Abs(d/float64(f.Rows)) > 6*math.Sqrt2*400/math.Sqrt(float64(f.Rows)) {
					t.Errorf("laplace noise mean %v", d/float64(f.Rows))
				}
				if tc.p.Kind == pets.RRBins {
					b, err := ReadBins(md, m)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(b.Values, rel.Bins().Values) {
						t.Fatalf("bins read back %v, released %v", b.Values, rel.Bins().Values)
					}
					for _, z := range sim.ValueRR {
						if b.ValueIndex(z) < 0 {
							t.Fatalf("released %v, no bin's value", z)
						}
					}
				}
			case pets.ValueBags:
				sums := map[int64]float64{}
				n := map[int64]int{}
				for i, b := range sim.BagID {
					sums[b] += f.Value[sim.Row[i]]
					n[b]++
				}
				for i, b := range sim.BagID {
					if mean := sums[b] / float64(n[b]); tc.p.Epsilon == 0 && math.Abs(sim.BagMean[i]-mean) > 1e-9 {
						t.Fatalf("bag %d releases %v, its mean is %v", b, sim.BagMean[i], mean)
					}
				}
			}
			es := rel.Entries("x", 3)
			if tc.p.PriorEpsilon > 0 {
				if len(es) != 2 || es[0].Mech.Kind() != pets.ValuePrior || es[0].Mech.Epsilon() != 0.5 || es[1].Mech.Epsilon() != 1.5 ||
					len(es[0].Draws) != f.Rows || slices.Max(es[0].Draws) != 0 {
					t.Fatalf("entries %+v", es)
				}
			} else if len(es) != 1 || es[0].Mech != m {
				t.Fatalf("entries %+v", es)
			}
		})
	}
	if _, err := ApplyValues([]float64{0, 2.5}, testutil.MustNew(pets.Params{Kind: pets.LaplaceValue, Epsilon: 1, Values: g}), Options{Noise: pets.NoiseSeeded, Seed: 1}, ValueOptions{}); !errors.Is(err, ErrLabel) || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("a value off the grid: %v", err)
	}
	bins := testutil.MustNew(pets.Params{Kind: pets.RRBins, Epsilon: 1, Values: g})
	if _, err := ApplyValues(f.Value, bins, Options{Noise: pets.NoiseSeeded, Seed: 1}, ValueOptions{}); err == nil {
		t.Error("rr_bins without a prior accepted")
	}
}

// A release charged as two steps (rr_bins's private prior, then its bins)
// records both before the file exists, and marks both aborted when the
// file cannot be written.
func TestPublishSteps(t *testing.T) {
	f, g, _ := synthValues(t, 500)
	m := testutil.MustNew(pets.Params{Kind: pets.RRBins, Epsilon: 2, PriorEpsilon: 0.5, Values: g})
	rel, err := ApplyValues(f.Value, m, Options{Noise: pets.NoiseSimulation, Seed: 3}, ValueOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.arrow")
	l := &memLedger{}
	rows, err := PublishSteps(path, rel.SimulationChunked(), rel.Meta(), l, rel.Entries(path, 3), Replace)
	if err != nil || len(rows) != 2 || len(l.rows) != 2 || rows[0].SHA256 != rows[1].SHA256 {
		t.Fatalf("rows %+v, ledger %+v, %v", rows, l.rows, err)
	}
	blocked := filepath.Join(dir, "blocked")
	if err := mkdirFull(blocked); err != nil {
		t.Fatal(err)
	}
	l = &memLedger{}
	if _, err := PublishSteps(blocked, rel.SimulationChunked(), rel.Meta(), l, rel.Entries(blocked, 3), Replace); err == nil {
		t.Fatal("a failed write: no error")
	}
	if len(l.rows) != 4 || l.rows[2].Status != ledger.StatusAborted || l.rows[3].Status != ledger.StatusAborted {
		t.Fatalf("ledger after a failed write: %+v", l.rows)
	}
}

// mkdirFull makes a non-empty directory at path: a rename onto it fails.
func mkdirFull(path string) error { return os.MkdirAll(filepath.Join(path, "x"), 0o755) }
