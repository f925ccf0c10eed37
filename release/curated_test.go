package release

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"labelprivacy/data"
	"labelprivacy/internal/testutil"
	"labelprivacy/llp"
	"labelprivacy/pets"
)

func fileDigest(t *testing.T, f *data.Frame, md map[string]string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.arrow")
	if err := data.WriteFrame(path, f, md); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// TestRandomBagsUnchanged pins the bytes of random-bag releases (the
// simulation file and the shipped file, with metadata) to those the code
// wrote before curated bags existed (digests taken at commit f621bb4): the
// nil Partition and llp.Random{} are the paper's bags, bit for bit.
func TestRandomBagsUnchanged(t *testing.T) {
	f := synth(t, 1003)
	for _, tc := range []struct {
		p          pets.Params
		keep       bool
		sim, shipd string
	}{
		{pets.Params{Kind: pets.LLP, K: 8}, false, "9d84081f18d282e5", "cf490fe085ef3127"},
		{pets.Params{Kind: pets.LLP, K: 8}, true, "58b005bb0273506d", "dbd56da1ad2cc749"},
		{pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 1}, false, "76f26c0d073c4f02", "122e2fef127d63c8"},
		{pets.Params{Kind: pets.LLPLap, K: 8, Epsilon: 1}, true, "8145f3387acdebdb", "012c5f3036324e0a"},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, false, "7ce2772ab0e8f982", "4aac3ad3913c0063"},
		{pets.Params{Kind: pets.LLPGeom, K: 8, Epsilon: 1}, true, "e24317408c5af856", "5d512568813500d0"},
		{pets.Params{Kind: pets.RR, Epsilon: 1}, false, "a1f1e76dd173a858", "4f3b9c6df234e42e"},
	} {
		for _, part := range []llp.Partitioner{nil, llp.Random{}} {
			rel, err := Apply(f.Label, testutil.MustNew(tc.p), Options{Noise: pets.NoiseSimulation, Seed: 7, KeepRemainder: tc.keep, Partition: part})
			if err != nil {
				t.Fatal(err)
			}
			sh, err := rel.Ship(f)
			if err != nil {
				t.Fatal(err)
			}
			if got, got2 := fileDigest(t, rel.Simulation(), rel.Meta()), fileDigest(t, sh, rel.Meta()); got != tc.sim || got2 != tc.shipd {
				t.Errorf("%s keep=%v partition %v: digests %s, %s; want %s, %s", rel.Mech, tc.keep, part, got, got2, tc.sim, tc.shipd)
			}
		}
	}
}

// TestCuratedBagsRelease: with llp.Sorted the release's bags are the
// partitioner's bags on the release's bag stream (consecutive runs of the
// feature), with llp.Keyed no bag mixes keys; each bag's proportion is its
// members' label mean (llp); the metadata names the rule; the shipped
// file carries no raw label.
func TestCuratedBagsRelease(t *testing.T) {
	f := synth(t, 2000)
	x1 := make([]float32, f.Rows)
	keys := make([]int64, f.Rows)
	for i := range x1 {
		x1[i] = f.X[i*f.Dim()+1]
		keys[i] = int64(i % 7)
	}
	for _, part := range []llp.Partitioner{llp.Sorted{Feature: "x1", Values: x1}, llp.Keyed{Column: "g", Keys: keys}} {
		t.Run(part.Rule().String(), func(t *testing.T) {
			m := testutil.MustNew(pets.Params{Kind: pets.LLP, K: 8})
			rel, err := Apply(f.Label, m, Options{Noise: pets.NoiseSimulation, Seed: 3, Partition: part})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := part.Partition(f.Rows, 8, rand.NewPCG(3, streamBags), false)
			sim := rel.Simulation()
			if rel.Bags != want.NumBags || rel.Dropped != want.Dropped || sim.Rows != want.Kept() {
				t.Fatalf("%d bags, %d dropped, %d rows; want %d, %d, %d", rel.Bags, rel.Dropped, sim.Rows, want.NumBags, want.Dropped, want.Kept())
			}
			for i := range sim.Rows {
				row := sim.Row[i]
				if int64(want.BagOf[row]) != sim.BagID[i] {
					t.Fatalf("row %d in bag %d, the partitioner says %d", row, sim.BagID[i], want.BagOf[row])
				}
			}
			for b := range want.NumBags {
				sum := 0
				for _, row := range want.Members(b) {
					sum += int(f.Label[row])
				}
				for i := range sim.Rows {
					if sim.BagID[i] == int64(b) && sim.Alpha[i] != float64(sum)/float64(want.Size(b)) {
						t.Fatalf("bag %d: alpha %v, want %d/%d", b, sim.Alpha[i], sum, want.Size(b))
					}
				}
			}
			if md := rel.Meta(); md["bag_rule"] != part.Rule().String() {
				t.Errorf("metadata bag_rule %q", md["bag_rule"])
			}
			sh, err := rel.Ship(f)
			if err != nil {
				t.Fatal(err)
			}
			if cols := sh.RawLabelColumns(); len(cols) > 0 || sh.Row != nil {
				t.Fatalf("shipped release carries %v (row %v)", cols, sh.Row != nil)
			}
		})
	}
}

// TestRRPriorTwoStages: the split puts round(fraction·n) rows in stage 1;
// stage 1 is RR (prior ½, RR branch) and its frame carries no raw label;
// stage-2 rows take the argmax branch exactly when their channel shows nothing and
// then release the prior's argmax; the result is deterministic for a seed;
// Apply refuses rr_prior; Finish checks its priors.
func TestRRPriorTwoStages(t *testing.T) {
	f := synth(t, 1000)
	m := testutil.MustNew(pets.Params{Kind: pets.RRPrior, Epsilon: 1})
	if _, err := Apply(f.Label, m, Options{Noise: pets.NoiseSimulation, Seed: 1}); !errors.Is(err, ErrTwoStages) {
		t.Fatalf("Apply(rr_prior): %v", err)
	}
	run := func(seed uint64) (*Release, *TwoStage) {
		ts, err := StartRRPrior(f.Label, m, 0.3, Options{Noise: pets.NoiseSimulation, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		s1 := ts.Stage1()
		if s1.Rows != 300 || s1.RawLabelColumns() != nil || len(ts.Stage2Rows()) != 700 {
			t.Fatalf("stage 1 %d rows (raw %v), stage 2 %d", s1.Rows, s1.RawLabelColumns(), len(ts.Stage2Rows()))
		}
		rows := ts.Stage2Rows()
		prior := make([]float64, len(rows))
		for i, row := range rows {
			prior[i] = float64(row%100) / 99 // spans both branches
		}
		if _, err := ts.Finish(prior[:5]); err == nil {
			t.Fatal("Finish took too few priors")
		}
		rel, err := ts.Finish(prior)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ts.Finish(prior); err == nil {
			t.Fatal("Finish ran twice")
		}
		return rel, ts
	}
	rel, _ := run(9)
	sim := rel.Simulation()
	s1, am := 0, 0
	for i := range sim.Rows {
		if sim.Row[i] != int64(i) {
			t.Fatalf("row %d out of input order", i)
		}
		switch sim.Stage[i] {
		case 1:
			s1++
			if sim.Prior[i] != 0.5 || sim.Branch[i] != 0 {
				t.Fatalf("stage-1 row %d: prior %v branch %d", i, sim.Prior[i], sim.Branch[i])
			}
		case 2:
			p := float64(i%100) / 99
			ch := m.ExampleLaw().Channel(m.ExampleLaw().ChannelOf([]float64{1 - p, p}))
			lab, argmax := uint8(bits.TrailingZeros64(ch.Support())), !ch.Informative()
			if sim.Prior[i] != p || (sim.Branch[i] == 1) != argmax {
				t.Fatalf("row %d: prior %v branch %d, want %v %v", i, sim.Prior[i], sim.Branch[i], p, argmax)
			}
			if argmax {
				am++
				if sim.LabelRR[i] != lab {
					t.Fatalf("argmax row %d released %d, want %d", i, sim.LabelRR[i], lab)
				}
			}
		}
	}
	if s1 != 300 || am == 0 {
		t.Fatalf("%d stage-1 rows, %d argmax rows", s1, am)
	}
	md := rel.Meta()
	if md["mechanism"] != "rr_prior" || md["stage1_rows"] != "300" || md["argmax_rows"] == "" || md["stage_fraction"] != "0.3" {
		t.Errorf("metadata %v", md)
	}
	again, _ := run(9)
	other, _ := run(10)
	a, b, c := again.Simulation(), sim, other.Simulation()
	if !slices.Equal(a.LabelRR, b.LabelRR) || !slices.Equal(a.Stage, b.Stage) {
		t.Fatal("same seed, different release")
	}
	if slices.Equal(c.Stage, b.Stage) {
		t.Fatal("another seed gave the same split")
	}
	sh, err := rel.Ship(f)
	if err != nil {
		t.Fatal(err)
	}
	if sh.RawLabelColumns() != nil || sh.Row != nil || sh.Prior == nil || sh.Branch == nil || sh.Stage == nil {
		t.Fatal("shipped rr_prior release: raw columns, row numbers, or missing prior/branch/stage")
	}
	if _, err := StartRRPrior(f.Label, m, 1, Options{Noise: pets.NoiseSimulation}); err == nil {
		t.Fatal("stage fraction 1 accepted")
	}
}
