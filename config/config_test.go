package config

import (
	"errors"
	"math"
	"strings"
	"testing"

	"labelprivacy/data"
	"labelprivacy/llp"
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
		{"synthetic conversions (train data synth only)", "data.synth.kind", func(c *Config) { c.Data.Synth.Kind = data.SynthConversions }},
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

func TestReplicasText(t *testing.T) {
	var r Replicas
	if r.UnmarshalText([]byte("auto")) != nil || !r.Auto() || r.UnmarshalText([]byte("8")) != nil || r.N != 8 || r.UnmarshalText([]byte("0")) == nil {
		t.Fatalf("replicas %+v", r)
	}
}

// Curated-bag and rr_prior errors name the key.
func TestCuratedConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, key, msg string
		edit           func(*Config)
	}{
		{"bags on rr", "pets[1].bags", "takes no bag rule", func(c *Config) { c.Pets[1].Bags = []llp.Rule{{}} }},
		{"no such feature", "pets[2].bags[0]", `"x9"`, func(c *Config) { c.Pets[2].Bags = []llp.Rule{{Kind: llp.RuleSorted, Column: "x9"}} }},
		{"key without groups", "pets[2].bags[0]", "data.synth.groups", func(c *Config) {
			c.Pets[2].Bags = []llp.Rule{{Kind: llp.RuleKey, Column: "group"}}
		}},
		{"a feature as key", "pets[2].bags[0]", "integer", func(c *Config) { c.Pets[2].Bags = []llp.Rule{{Kind: llp.RuleKey, Column: "x1"}} }},
		{"bags repeated", "pets[2].bags[1]", "repeats", func(c *Config) { c.Pets[2].Bags = []llp.Rule{{}, {}} }},
		{"stage fraction on rr", "pets[1].stage_fraction", "only rr_prior", func(c *Config) { c.Pets[1].StageFraction = new(0.5) }},
		{"stage fraction 1", "pets[4].stage_fraction", "(0, 1)", func(c *Config) {
			c.Pets = append(c.Pets, PetConfig{Mechanism: pets.RRPrior, Epsilon: []float64{1}, StageFraction: new(1.0)})
		}},
		{"negative prior lr", "pets[4].prior_lr", "> 0", func(c *Config) {
			c.Pets = append(c.Pets, PetConfig{Mechanism: pets.RRPrior, Epsilon: []float64{1}, PriorLR: new(float64(-1))})
		}},
		{"same curated setting twice", "pets[4]", "llp_geom_k4_eps1_sorted-x0", func(c *Config) {
			c.Pets[2].Bags = []llp.Rule{{Kind: llp.RuleSorted, Column: "x0"}}
			c.Pets = append(c.Pets, PetConfig{Mechanism: pets.LLPGeom, K: []int{4}, Epsilon: []float64{1}, Bags: c.Pets[2].Bags})
		}},
		{"rr_prior targets", "train.rr_prior_targets", "argmax", func(c *Config) { c.Train.RRPriorTargets = "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testConfig("o")
			tc.edit(c)
			err := c.Validate()
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Key != tc.key || !strings.Contains(fe.Msg, tc.msg) {
				t.Fatalf("err = %v, want a FieldError for %s mentioning %q", err, tc.key, tc.msg)
			}
		})
	}
}

// A synthetic dataset's features are checked by name, never listed whole:
// a config asking for 10^12 features validates at once.
func TestSyntheticBagColumnsNotListed(t *testing.T) {
	c := testConfig("o")
	c.Data.Synth.Features = 1e12
	c.Pets = append(c.Pets, PetConfig{Mechanism: pets.LLP, K: []int{4}, Bags: []llp.Rule{{Kind: llp.RuleSorted, Column: "x999999999999"}}})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Pets[4].Bags[0].Column = "x1000000000000"
	var fe *FieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Key != "pets[4].bags[0]" || !strings.Contains(fe.Msg, "x7, … (1000000000000 in all)") {
		t.Fatalf("err = %v", err)
	}
}

// The bare defaults measure η's calibration: the default synthetic test
// set holds the audit set and the calibration rows after it (with 10,000
// test rows and audit.examples 10,000 every default run warned that η's
// calibration was not measured).
func TestDefaultsLeaveCalibrationRows(t *testing.T) {
	d := Defaults()
	if a := d.Audit; a.CalibrationRows == 0 || d.Data.Synth.TestRows < a.Examples+a.CalibrationRows {
		t.Fatalf("data.synth.test_rows %d < audit.examples %d + audit.calibration_rows %d", d.Data.Synth.TestRows, a.Examples, a.CalibrationRows)
	}
}
