package pipeline

import (
	"path/filepath"
	"regexp"
	"testing"

	"labelprivacy/config"
	"labelprivacy/model"
	"labelprivacy/pets"
)

// Groups partition the runs (each exactly once, grid order kept inside a
// group), hold at most R runs of one loss and bag size, and shards
// partition the groups.
func TestGroupsPartition(t *testing.T) {
	c := testConfig("o")
	c.Pets = append(c.Pets, config.PetConfig{Mechanism: pets.LLP, K: []int{4}})
	c.Train.Trials = 3
	settings, err := expandSettings(c.Pets, 2)
	if err != nil {
		t.Fatal(err)
	}
	runs := mustRuns(t, c, settings, "sha256:a")
	for _, R := range []int{1, 2, 3, 8, 64} {
		groups := formGroups(runs, R)
		seen := map[string]int{}
		for _, g := range groups {
			if len(g.Runs) == 0 || len(g.Runs) > R {
				t.Fatalf("R=%d: group of %d", R, len(g.Runs))
			}
			for i, r := range g.Runs {
				seen[r.ID]++
				if r.Plan.Loss != g.Loss || (g.Loss.PerBag() && r.Setting.K != g.BagSize) || r.Plan.BatchSize != g.BatchSize {
					t.Fatalf("R=%d: %s (loss %s, k %d) in group %s/%d", R, r.Name(), r.Plan.Loss, r.Setting.K, g.Loss, g.BagSize)
				}
				if !r.Setting.Trains() && len(g.Runs) != 1 {
					t.Fatalf("R=%d: a bot run shares a group", R)
				}
				if i > 0 && g.Runs[i-1].Index >= r.Index {
					t.Fatalf("R=%d: group out of grid order", R)
				}
			}
		}
		if len(seen) != len(runs) {
			t.Fatalf("R=%d: %d of %d runs grouped", R, len(seen), len(runs))
		}
		for id, n := range seen {
			if n != 1 {
				t.Fatalf("R=%d: run %s in %d groups", R, id, n)
			}
		}
		// llp_geom k=4 and k=8 and llp k=4 (another loss? no: the same
		// propmatch loss, the same k=4) may share; k=4 and k=8 never do.
		for _, g := range groups {
			ks := map[int]bool{}
			for _, r := range g.Runs {
				if r.Plan.Loss == model.LossPropMatch {
					ks[r.Setting.K] = true
				}
			}
			if len(ks) > 1 {
				t.Fatalf("R=%d: a group mixes bag sizes %v", R, ks)
			}
		}
		for n := 1; n <= 5; n++ {
			for j := range groups {
				owners := 0
				for i := range n {
					if (Shard{i, n}).Owns(j) {
						owners++
					}
				}
				if owners != 1 {
					t.Fatalf("group %d has %d owners among %d shards", j, owners, n)
				}
			}
		}
	}
	// Deterministic: the same grid gives the same groups.
	a, b := formGroups(runs, 3), formGroups(runs, 3)
	for i := range a {
		if groupID(a[i].Runs) != groupID(b[i].Runs) {
			t.Fatal("Groups is not deterministic")
		}
	}
}

func TestParseShardAndJobName(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		ok   bool
	}{{"0/1", Shard{0, 1}, true}, {"2/5", Shard{2, 5}, true}, {" 1 / 3 ", Shard{1, 3}, true}, {"3/3", Shard{}, false}, {"2", Shard{}, false}, {"-1/2", Shard{}, false}} {
		got, err := parseShard(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Fatalf("parseShard(%q) = %v, %v", tc.in, got, err)
		}
	}
	dns1123 := regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	for in, want := range map[string]string{
		"quickstart":   "lp-quickstart",
		"My_Sweep v2!": "lp-my-sweep-v2",
		"__":           "lp-sweep",
		"a very long name that goes on and on and on, well beyond sixty-three characters": "",
	} {
		got := jobName(in)
		if (want != "" && got != want) || len(got) > 63 || !dns1123.MatchString(got) {
			t.Errorf("jobName(%q) = %q (%d chars), want %q, a DNS-1123 label", in, got, len(got), want)
		}
	}
}

// train.replicas: auto is 1 on backend go and, on XLA, the largest group
// ≤ 256 whose parameters, Adam moments and step activations fit
// AutoStateBudget; a number is taken as given.
func TestReplicasAuto(t *testing.T) {
	for _, tc := range []struct {
		backend string
		r       config.Replicas
		want    int
	}{{"go", config.Replicas{}, 1}, {"xla:cuda", config.Replicas{}, 256}, {"go", config.Replicas{N: 8}, 8}, {"xla:cuda", config.Replicas{N: 3}, 3}} {
		c := testConfig(filepath.Join(t.TempDir(), "out"))
		c.Backend, c.Train.Replicas = mustBackend(t, tc.backend), tc.r
		s := openTest(t, c)
		if got, err := s.Replicas(); err != nil || got != tc.want {
			t.Fatalf("%s %v: %d (%v), want %d", tc.backend, tc.r, got, err, tc.want)
		}
	}
	higgs, _ := model.ModelConfig{Kind: model.KindHiggsMLP, InputDim: 28}.WithDefaults()
	kdd, _ := model.ModelConfig{Kind: model.KindKDDEmbed}.WithDefaults()
	for _, tc := range []struct {
		name   string
		mc     model.ModelConfig
		batch  int
		lo, hi int
	}{
		{"higgs_mlp batch 1024", higgs, 1024, 256, 256}, // 5.6 GiB at 256
		{"higgs_mlp batch 8192", higgs, 8192, 48, 56},   // activations dominate: ~0.16 GiB a model
		{"kdd_embed batch 1024", kdd, 1024, 20, 30},     // 286 MiB of table and moments a model
	} {
		got := autoReplicas(tc.mc, tc.batch)
		if got < tc.lo || got > tc.hi {
			t.Errorf("%s: auto gives %d replicas, want %d..%d", tc.name, got, tc.lo, tc.hi)
		}
		if fp := tc.mc.Footprint(got, tc.batch).Bytes(); fp > autoStateBudget || (got < maxAutoReplicas && tc.mc.Footprint(got+1, tc.batch).Bytes() <= autoStateBudget) {
			t.Errorf("%s: %d replicas is not the largest group that fits (%.3g bytes)", tc.name, got, fp)
		}
	}
}
