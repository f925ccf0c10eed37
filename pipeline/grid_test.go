package pipeline

import (
	"math"
	"testing"

	"labelprivacy/model"
	"labelprivacy/pets"
)

func testConfig(out string) *Config {
	c := Defaults()
	c.Name, c.Output, c.Seed = "t", out, 5
	c.Data.Synth.Rows, c.Data.Synth.TestRows, c.Data.Synth.Features = 600, 200, 4
	c.Model.Hidden = []int{8}
	c.Train.Epochs, c.Train.BatchSize, c.Train.Trials = 1, 64, 2
	c.Train.LearningRates = []float64{0.01, 0.003}
	c.Pets = []PetConfig{{Mechanism: pets.None}, {Mechanism: pets.RR, Epsilon: []float64{1}},
		{Mechanism: pets.LLPGeom, K: []int{4, 8}, Epsilon: []float64{1}}, {Mechanism: pets.Bot}}
	c.Audit.Examples = 100
	return &c
}

// mustRuns expands the grid of c on a dataset of 600 training rows.
func mustRuns(t *testing.T, c *Config, settings []*setting, id string) []*runSpec {
	t.Helper()
	runs, err := expandRuns(c, settings, gridData{ID: id, TrainRows: 600})
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

func TestDefaultsValid(t *testing.T) {
	d := Defaults()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := testConfig("o").Validate(); err != nil {
		t.Fatal(err)
	}
}

// Every range check of Validate, each with the key its error must name.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		edit      func(*Config)
	}{
		{"empty name", "name", func(c *Config) { c.Name = " " }},
		{"seed above 2^63", "seed", func(c *Config) { c.Seed = 1 << 63 }},
		{"no backend", "backend", func(c *Config) { c.Backend = model.BackendName{} }},
		{"empty output", "output", func(c *Config) { c.Output = "" }},
		{"synth rows", "data.synth.rows", func(c *Config) { c.Data.Synth.Rows = 0 }},
		{"synth test rows", "data.synth.test_rows", func(c *Config) { c.Data.Synth.TestRows = 0 }},
		{"synth features", "data.synth.features", func(c *Config) { c.Data.Synth.Features = 0 }},
		{"hidden width", "model.hidden[0]", func(c *Config) { c.Model.Hidden = []int{0} }},
		{"epochs", "train.epochs", func(c *Config) { c.Train.Epochs = 0 }},
		{"batch size", "train.batch_size", func(c *Config) { c.Train.BatchSize = 0 }},
		{"no learning rate", "train.learning_rates", func(c *Config) { c.Train.LearningRates = nil }},
		{"trials", "train.trials", func(c *Config) { c.Train.Trials = 0 }},
		{"rr loss", "train.rr_loss", func(c *Config) { c.Train.RRLoss = model.LossPropMatch }},
		{"llp loss", "train.llp_loss", func(c *Config) { c.Train.LLPLoss = model.LossDebiasedBCE }},
		{"zero learning rate", "train.learning_rates[1]", func(c *Config) { c.Train.LearningRates[1] = 0 }},
		{"infinite learning rate", "train.learning_rates[0]", func(c *Config) { c.Train.LearningRates[0] = math.Inf(1) }},
		{"no pets", "pets", func(c *Config) { c.Pets = nil }},
		{"no mechanism", "pets[1].mechanism", func(c *Config) { c.Pets[1].Mechanism = pets.Kind(99) }},
		{"no k on llp", "pets[2].k", func(c *Config) { c.Pets[2].K = nil }},
		{"k on rr", "pets[1].k", func(c *Config) { c.Pets[1].K = []int{3} }},
		{"no epsilon on rr", "pets[1].epsilon", func(c *Config) { c.Pets[1].Epsilon = nil }},
		{"epsilon on bot", "pets[3].epsilon", func(c *Config) { c.Pets[3].Epsilon = []float64{1} }},
		{"k of 0", "pets[2].k[1]", func(c *Config) { c.Pets[2].K = []int{4, 0} }},
		{"tiny epsilon", "pets[1].epsilon[0]", func(c *Config) { c.Pets[1].Epsilon = []float64{1e-300} }},
		{"epsilon above the arithmetic's range", "pets[1].epsilon[0]", func(c *Config) { c.Pets[1].Epsilon = []float64{710} }},
		{"NaN epsilon", "pets[1].epsilon[0]", func(c *Config) { c.Pets[1].Epsilon = []float64{math.NaN()} }},
		{"epsilon repeated in an entry", "pets[1].epsilon[2]", func(c *Config) { c.Pets[1].Epsilon = []float64{1, 2, 1} }},
		{"k repeated in an entry", "pets[2].k[1]", func(c *Config) { c.Pets[2].K = []int{4, 4} }},
		{"setting repeated by another entry", "pets[4]", func(c *Config) {
			c.Pets = append(c.Pets, PetConfig{Mechanism: pets.LLPGeom, K: []int{8}, Epsilon: []float64{1}})
		}},
		{"grid of 10^8 trials", "train.trials", func(c *Config) { c.Train.Trials = 100_000_000 }},
		{"grid of long lists", "train.trials", func(c *Config) {
			c.Pets[1].Epsilon = make([]float64, 2000)
			for i := range c.Pets[1].Epsilon {
				c.Pets[1].Epsilon[i] = 1 + float64(i)/100
			}
			c.Train.Trials = 300
		}},
		{"audit examples", "audit.examples", func(c *Config) { c.Audit.Examples = 0 }},
		{"audit label draws", "audit.label_draws", func(c *Config) { c.Audit.LabelDraws = 0 }},
		{"knn k", "audit.knn_k", func(c *Config) { c.Audit.KNNK = 0 }},
		{"knn rows", "audit.knn_rows", func(c *Config) { c.Audit.KNNRows = 3 }},
		{"audit samples", "audit.samples", func(c *Config) { c.Audit.Samples = -1 }},
		{"cpus per task", "cluster.cpus_per_task", func(c *Config) { c.Cluster.CPUsPerTask = 0 }},
		{"gpus", "cluster.gpus", func(c *Config) { c.Cluster.GPUs = -1 }},
		{"delta prime 0", "privacy.delta_prime", func(c *Config) { c.Privacy.DeltaPrime = 0 }},
		{"delta prime 1", "privacy.delta_prime", func(c *Config) { c.Privacy.DeltaPrime = 1 }},
		{"delta prime 0.5 (the finding: it admitted a third ε = 1 under budget 1.5)", "privacy.delta_prime", func(c *Config) { c.Privacy.DeltaPrime = 0.5 }},
		{"delta prime just above 1e-3", "privacy.delta_prime", func(c *Config) { c.Privacy.DeltaPrime = 1.0001e-3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig("o")
			tc.edit(c)
			err := c.Validate()
			fe, ok := err.(*FieldError)
			if !ok || fe.Key != tc.key {
				t.Fatalf("err = %v, want a FieldError for %s", err, tc.key)
			}
		})
	}
	// The edges of the ranges are accepted.
	c := testConfig("o")
	c.Pets[1].Epsilon = []float64{MinEpsilon, pets.MaxEpsilon}
	c.Privacy.DeltaPrime = 1e-3 // ledger.MaxDeltaPrime
	c.Audit.Samples = 0
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	// Backend names are parsed once, when decoded (model.ParseBackend).
	for _, b := range []string{"go", "go:ops_parallel", "go:parallelism=2", "go:matmul=simplego", "xla:cuda", "xla:/opt/plugin.so"} {
		if got, err := model.ParseBackend(b); err != nil || got.String() != b {
			t.Errorf("backend %q: %v %v", b, got, err)
		}
	}
	for _, b := range []string{"cuda", "go:", "xla", "xla:", "go:matmul=fast"} {
		if _, err := model.ParseBackend(b); err == nil {
			t.Errorf("backend %q parsed", b)
		}
	}
}

// A batch size that is not a multiple of k is noted at start, not rounded
// silently.
func TestNotices(t *testing.T) {
	c := testConfig("o")
	settings, err := expandSettings(c.Pets)
	if err != nil {
		t.Fatal(err)
	}
	c.Train.BatchSize = 70
	n := notices(c, mustRuns(t, c, settings, "sha256:a"))
	if len(n) != 2 || n[0] != "train.batch_size 70 is not a multiple of k=4: llp_geom batches hold 17 bags (68 rows)" ||
		n[1] != "train.batch_size 70 is not a multiple of k=8: llp_geom batches hold 8 bags (64 rows)" {
		t.Fatalf("notices %q", n)
	}
	c.Train.BatchSize = 64
	if n := notices(c, mustRuns(t, c, settings, "sha256:a")); len(n) != 0 {
		t.Fatalf("notices %q", n)
	}
	// A batch larger than the training rows is capped, and said once per setting.
	c.Train.BatchSize = 1000
	n = notices(c, mustRuns(t, c, settings, "sha256:a"))
	if len(n) != 4 || n[0] != "train.batch_size 1000 is more than the 600 rows none trains on: its batches hold 600 rows" ||
		n[2] != "train.batch_size 1000 is more than the 600 rows llp_geom_k4_eps1 trains on: its batches hold 600 rows" {
		t.Fatalf("notices %q", n)
	}
}

func TestReplicasText(t *testing.T) {
	var r Replicas
	if r.UnmarshalText([]byte("auto")) != nil || !r.Auto() || r.UnmarshalText([]byte("8")) != nil || r.N != 8 || r.UnmarshalText([]byte("0")) == nil {
		t.Fatalf("replicas %+v", r)
	}
}

func TestSettingsAndRuns(t *testing.T) {
	c := testConfig("o")
	c.Pets = append(c.Pets, PetConfig{Mechanism: pets.RR, Epsilon: []float64{1}}) // a duplicate setting
	settings, err := expandSettings(c.Pets)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range settings {
		ids = append(ids, s.ID)
	}
	if got := ids; len(got) != 5 || got[0] != "none" || got[1] != "rr_eps1" || got[2] != "llp_geom_k4_eps1" || got[4] != "bot" {
		t.Fatalf("settings %v", got)
	}
	runs := mustRuns(t, c, settings, "sha256:a")
	if len(runs) != 5*2*2 {
		t.Fatalf("%d runs", len(runs))
	}
	// Grid order: settings, then trials, then learning rates.
	if r := runs[3]; r.Setting.ID != "none" || r.Trial != 1 || r.LR != 0.003 || r.Index != 3 {
		t.Fatalf("run 3: %s", r.Name())
	}
	// A trial's runs share their seed at every learning rate; trials and
	// settings differ.
	if runs[0].Seed != runs[1].Seed || runs[0].Seed == runs[2].Seed || runs[0].Seed == runs[4].Seed {
		t.Fatalf("seeds %d %d %d %d", runs[0].Seed, runs[1].Seed, runs[2].Seed, runs[4].Seed)
	}
	ids2 := map[string]bool{}
	for _, r := range runs {
		if ids2[r.ID] {
			t.Fatalf("duplicate run id %s", r.ID)
		}
		ids2[r.ID] = true
	}
	// Identity: the backend, the dataset's content and the seed change run
	// ids; the output directory and the group size do not; seeds never
	// depend on the backend.
	for _, tc := range []struct {
		name    string
		edit    func(*Config)
		dataset string
		same    bool
	}{
		{"output", func(c *Config) { c.Output = "elsewhere" }, "sha256:a", true},
		{"replicas", func(c *Config) { c.Train.Replicas = Replicas{N: 8} }, "sha256:a", true},
		{"backend", func(c *Config) { c.Backend = mustBackend("xla:cuda") }, "sha256:a", false},
		{"dataset", func(*Config) {}, "sha256:b", false},
		{"seed", func(c *Config) { c.Seed = 6 }, "sha256:a", false},
		{"epochs", func(c *Config) { c.Train.Epochs = 3 }, "sha256:a", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c2 := testConfig("o")
			tc.edit(c2)
			other := mustRuns(t, c2, settings, tc.dataset)
			if (other[0].ID == runs[0].ID) != tc.same {
				t.Fatalf("run id %s vs %s, want same=%v", other[0].ID, runs[0].ID, tc.same)
			}
			if tc.name == "backend" && other[0].Seed != runs[0].Seed {
				t.Fatal("the backend changed a run's seed")
			}
		})
	}
}

// DeriveSeed is part of every stored result's identity: changing it
// silently would retrain finished sweeps. Golden values.
func TestDeriveSeedGolden(t *testing.T) {
	if got := deriveSeed(1, "release", "rr_eps1", "0"); got != 10048560941588496544 {
		t.Fatalf("DeriveSeed = %d, want 10048560941588496544", got)
	}
	if deriveSeed(1, "ab", "c") == deriveSeed(1, "a", "bc") {
		t.Fatal("labels are not separated")
	}
}
