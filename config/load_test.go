package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"labelprivacy/pets"
)

// loadConfig is Load of a file, --set overrides and an environment.
func loadConfig(file string, sets []string, env Env) (*Config, error) {
	return Load(Source{File: file, Sets: sets, Env: env})
}

// mapEnv is an environment holding exactly m.
type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const minimal = `
name: t
output: OUT
data: {synth: {kind: beta, rows: 100, test_rows: 20, features: 3}}
pets:
  - {mechanism: rr, epsilon: 2}
  - {mechanism: llp_lap, k: [4, 8], epsilon: [0.5, 1]}
`

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(writeConfig(t, minimal), nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Seed != 1 || cfg.Train.Epochs != 2 || cfg.Backend.String() != "go" || !cfg.Data.Standardize || cfg.Train.CheckpointEvery.Every != 10*time.Minute {
		t.Fatalf("defaults not applied: %+v", cfg)
	}
	if !reflect.DeepEqual(cfg.Pets[0].Epsilon, []float64{2}) || !reflect.DeepEqual(cfg.Pets[1].K, []int{4, 8}) {
		t.Fatalf("pets = %+v (a scalar epsilon must become a one-element list)", cfg.Pets)
	}
}

func TestLoadConfigOverrides(t *testing.T) {
	file := writeConfig(t, minimal)
	tests := []struct {
		name  string
		env   map[string]string
		sets  []string
		check func(*Config) bool
	}{
		{"env seed", map[string]string{"TRAIN_SEED": "7"}, nil, func(c *Config) bool { return c.Seed == 7 }},
		{"env nested", map[string]string{"TRAIN_TRAIN_EPOCHS": "5"}, nil, func(c *Config) bool { return c.Train.Epochs == 5 }},
		{"set scalar", nil, []string{"train.batch_size=64"}, func(c *Config) bool { return c.Train.BatchSize == 64 }},
		{"set list", nil, []string{"train.learning_rates=[0.1, 0.01]"}, func(c *Config) bool {
			return reflect.DeepEqual(c.Train.LearningRates, []float64{0.1, 0.01})
		}},
		{"checkpoint steps", nil, []string{"train.checkpoint_every=500"}, func(c *Config) bool { return c.Train.CheckpointEvery.Steps == 500 }},
		{"checkpoint duration", nil, []string{"train.checkpoint_every=90s"}, func(c *Config) bool {
			return c.Train.CheckpointEvery.Every == 90*time.Second
		}},
		{"replicas", map[string]string{"TRAIN_TRAIN_REPLICAS": "8"}, nil, func(c *Config) bool { return c.Train.Replicas.N == 8 }},
		{"eta true as a YAML bool", nil, []string{"audit.eta=true"}, func(c *Config) bool { return c.Audit.Eta == EtaTrue }},
		{"max seed", nil, []string{"seed=9223372036854775807"}, func(c *Config) bool { return c.Seed == 1<<63-1 }},
		{"set beats env", map[string]string{"TRAIN_SEED": "7"}, []string{"seed=9"}, func(c *Config) bool { return c.Seed == 9 }},
		{"set pets", nil, []string{"pets=[{mechanism: llp, k: [2]}]"}, func(c *Config) bool {
			return len(c.Pets) == 1 && c.Pets[0].Mechanism == pets.LLP && c.Pets[0].K[0] == 2
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(file, tc.sets, mapEnv(tc.env))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(cfg) {
				t.Fatalf("override not applied: %+v", cfg)
			}
		})
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		body string // appended to minimal (later keys win in YAML? no: replace)
		env  map[string]string
		sets []string
		want []string // substrings the error must contain
	}{
		{"unknown top key", minimal + "epochs: 3\n", nil, nil, []string{"cfg.yaml", `unknown key "epochs"`}},
		{"unknown nested key", strings.Replace(minimal, "name: t", "name: t\ntrain: {epoch: 3}", 1), nil, nil,
			[]string{"cfg.yaml", "train.epoch", "did you mean train.epochs"}},
		{"wrong type", strings.Replace(minimal, "name: t", "name: t\ntrain: {epochs: many}", 1), nil, nil,
			[]string{"cfg.yaml", "train.epochs"}},
		{"out of range", strings.Replace(minimal, "name: t", "name: t\ntrain: {batch_size: 0}", 1), nil, nil,
			[]string{"cfg.yaml", "train.batch_size", "≥ 1"}},
		{"bad enum", strings.Replace(minimal, "name: t", "name: t\nbackend: tpu", 1), nil, nil,
			[]string{"cfg.yaml", "backend", `"tpu"`}},
		{"negative epsilon", strings.Replace(minimal, "epsilon: 2", "epsilon: -2", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].epsilon[0]", "must be in [1e-06, 100]"}},
		{"vanishing epsilon", strings.Replace(minimal, "epsilon: 2", "epsilon: 1e-300", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].epsilon[0]", "must be in [1e-06, 100]"}},
		{"fractional epochs", strings.Replace(minimal, "name: t", "name: t\ntrain: {epochs: 1.5}", 1), nil, nil,
			[]string{"cfg.yaml", "train.epochs", "not a whole number"}},
		{"negative seed", strings.Replace(minimal, "name: t", "name: t\nseed: -1", 1), nil, nil,
			[]string{"cfg.yaml", "seed"}},
		{"seed above 2^63", strings.Replace(minimal, "name: t", "name: t\nseed: 18446744073709551615", 1), nil, nil,
			[]string{"cfg.yaml", "seed"}},
		{"go backend options are accepted, others named", strings.Replace(minimal, "name: t", "name: t\nbackend: cuda", 1), nil, nil,
			[]string{"cfg.yaml", "backend", `"cuda"`}},
		{"bad init", strings.Replace(minimal, "name: t", "name: t\nmodel: {init: xavier}", 1), nil, nil,
			[]string{"cfg.yaml", "model.init", "xavier"}},
		{"bad replicas", minimal, nil, []string{"train.replicas=0"}, []string{"--set train.replicas", "auto"}},
		{"k on rr", strings.Replace(minimal, "epsilon: 2}", "epsilon: 2, k: 3}", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].k", "takes no bag size"}},
		{"unknown pet key", strings.Replace(minimal, "epsilon: 2}", "eps: 2}", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0]", "eps"}},
		{"value_prior is a stage, not a mechanism", strings.Replace(minimal, "mechanism: rr", "mechanism: value_prior", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].mechanism", "value_prior is rr_bins's private prior", "prior_epsilon of an rr_bins entry"}},
		{"bad mechanism", strings.Replace(minimal, "mechanism: rr", "mechanism: dp", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].mechanism"}},
		{"env wrong type", minimal, map[string]string{"TRAIN_TRAIN_EPOCHS": "lots"}, nil, []string{"$TRAIN_TRAIN_EPOCHS", "train.epochs"}},
		{"env out of range", minimal, map[string]string{"TRAIN_TRAIN_TRIALS": "0"}, nil, []string{"$TRAIN_TRAIN_TRIALS", "train.trials"}},
		{"set unknown key", minimal, nil, []string{"train.epoch=3"}, []string{"--set train.epoch", "unknown key"}},
		{"set out of range", minimal, nil, []string{"audit.examples=0"}, []string{"--set audit.examples", "≥ 1"}},
		{"removed key", strings.Replace(minimal, "name: t", "name: t\nprivacy: {secure: true}", 1), nil, nil,
			[]string{"cfg.yaml", "privacy.secure was removed", "train privatize"}},
		{"set wrong type blames the flag", minimal, nil, []string{"train.epochs=abc"}, []string{"--set train.epochs"}},
		{"set bad list element blames the flag", minimal, nil, []string{"pets=[{mechanism: rr, epsilon: [x]}]"}, []string{"--set pets"}},
		{"set without value", minimal, nil, []string{"seed"}, []string{"--set", "key=value"}},
		{"not yaml", "name: [", nil, nil, []string{"cfg.yaml"}},
		{"unknown TRAIN_ variable", minimal, map[string]string{"TRAIN_TRAIN_EPOCH": "3"}, nil,
			[]string{"$TRAIN_TRAIN_EPOCH names no config key", "did you mean $TRAIN_TRAIN_EPOCHS"}},
		{"keys equal up to case", strings.Replace(minimal, "name: t", "name: t\nSeed: 1\nseed: 2", 1), nil, nil,
			[]string{"cfg.yaml", `key "seed" repeats "Seed"`}},
		{"nested keys equal up to case", strings.Replace(minimal, "name: t", "name: t\ntrain: {epochs: 2, Epochs: 3}", 1), nil, nil,
			[]string{"cfg.yaml", `key "Epochs" repeats "epochs"`}},
		{"duplicate pet entries", strings.Replace(minimal, "epsilon: 2}", "epsilon: 2}\n  - {mechanism: rr, epsilon: [2]}", 1), nil, nil,
			[]string{"cfg.yaml", "pets[1]", "repeats setting rr_eps2 of pets[0]"}},
		{"grid too large", minimal, nil, []string{"train.trials=100000000"}, []string{"--set train.trials", "more than 1000000"}},
		{"epsilon beyond the bound", strings.Replace(minimal, "epsilon: 2", "epsilon: 710", 1), nil, nil,
			[]string{"cfg.yaml", "pets[0].epsilon[0]", "must be in [1e-06, 100]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.body), tc.sets, mapEnv(tc.env))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := loadConfig(filepath.Join(t.TempDir(), "nope.yaml"), nil, mapEnv(nil)); err == nil || !strings.Contains(err.Error(), "nope.yaml") {
			t.Fatalf("err = %v", err)
		}
	})
}

// The embedded default is valid, and a resolved config loads back to itself.
func TestResolvedConfigRoundTrip(t *testing.T) {
	cfg, err := loadConfig("", nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Name != "quickstart" || len(cfg.Pets) != 4 {
		t.Fatalf("embedded quickstart: %+v", cfg)
	}
	cfg.Output = t.TempDir()
	path, err := cfg.WriteResolved()
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadConfig(path, nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Invocation, again.Invocation = Invocation{}, Invocation{} // how it was given, not a key
	if !reflect.DeepEqual(cfg, again) {
		t.Fatalf("resolved config does not round-trip:\n%+v\n%+v", cfg, again)
	}
}

// configs/practitioners.yaml decodes (bags as a list of rules, rr_prior's
// keys) and its resolved form loads back to itself; a scalar bag rule is a
// one-element list; bad bag rules and rr_prior keys are errors naming the
// key.
func TestPractitionersConfig(t *testing.T) {
	cfg, err := loadConfig(filepath.Join("..", "configs", "practitioners.yaml"), nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	llpPet := cfg.Pets[3]
	if len(llpPet.Bags) != 3 || llpPet.Bags[1].String() != "sorted:x27" || llpPet.Bags[2].String() != "key:group" ||
		cfg.Pets[2].Mechanism != pets.RRPrior || cfg.Data.Synth.Groups != 16 || cfg.Train.RRPriorTargets != Defaults().Train.RRPriorTargets {
		t.Fatalf("decoded %+v", cfg)
	}
	cfg.Output = t.TempDir()
	path, err := cfg.WriteResolved()
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadConfig(path, nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Invocation, again.Invocation = Invocation{}, Invocation{} // how it was given, not a key
	if !reflect.DeepEqual(cfg, again) {
		t.Fatalf("resolved config does not round-trip:\n%+v\n%+v", cfg, again)
	}
	scalar := strings.Replace(minimal, "{mechanism: rr, epsilon: 2}", `{mechanism: llp, k: 4, bags: "sorted:x1"}`, 1)
	c, err := loadConfig(writeConfig(t, scalar), []string{"train.rr_prior_targets=noisy"}, mapEnv(nil))
	if err != nil || len(c.Pets[0].Bags) != 1 || c.Pets[0].Bags[0].String() != "sorted:x1" || c.Train.RRPriorTargets != "noisy" {
		t.Fatalf("scalar bag rule: %+v, %v", c, err)
	}
	for _, tc := range []struct{ body, want string }{
		{strings.Replace(scalar, "sorted:x1", "sorted", 1), "pets[0]"},
		{strings.Replace(scalar, "sorted:x1", "sorted:x7", 1), "pets[0].bags[0]"},
		{strings.Replace(minimal, "{mechanism: rr, epsilon: 2}", "{mechanism: rr_prior, epsilon: 2, stage_fraction: 2}", 1), "pets[0].stage_fraction"},
		{strings.Replace(minimal, "name: t", "name: t\ntrain: {rr_prior_targets: soft}", 1), "train.rr_prior_targets"},
	} {
		if _, err := loadConfig(writeConfig(t, tc.body), nil, mapEnv(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %s", err, tc.want)
		}
	}
}

// A repeated learning rate would put the same runs in runs.csv twice, and
// an explicit stage_fraction: 0 or prior_lr: 0 once silently became the
// default: each is refused naming its key, while leaving the key out still
// means the default.
func TestConfigRefusesRepeatsAndExplicitZeros(t *testing.T) {
	rrPrior := strings.Replace(minimal, "{mechanism: rr, epsilon: 2}", "{mechanism: rr_prior, epsilon: 2XX}", 1)
	for _, tc := range []struct {
		name, body string
		sets, want []string
	}{
		{"repeated learning rate", minimal, []string{"train.learning_rates=[0.01, 0.003, 0.010]"},
			[]string{"--set train.learning_rates", "train.learning_rates[2]", "repeats 0.01", "train.learning_rates[0]"}},
		{"stage_fraction 0", strings.Replace(rrPrior, "XX", ", stage_fraction: 0", 1), nil,
			[]string{"cfg.yaml", "pets[0].stage_fraction", "must be in (0, 1), got 0", "leave the key out"}},
		{"prior_lr 0", strings.Replace(rrPrior, "XX", ", prior_lr: 0", 1), nil,
			[]string{"cfg.yaml", "pets[0].prior_lr", "must be finite and > 0, got 0"}},
		{"prior_lr 0 by --set", minimal, []string{"pets=[{mechanism: rr_prior, epsilon: 1, prior_lr: 0.0}]"},
			[]string{"--set pets", "pets[0].prior_lr", "got 0"}},
		{"stage_fraction on rr", strings.Replace(minimal, "epsilon: 2}", "epsilon: 2, stage_fraction: 0}", 1), nil,
			[]string{"cfg.yaml", "pets[0].stage_fraction", "only rr_prior"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, tc.body), tc.sets, mapEnv(nil))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	cfg, err := loadConfig(writeConfig(t, strings.Replace(rrPrior, "XX", "", 1)), nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pets[0]; p.StageFraction != nil || p.PriorLR != nil {
		t.Fatalf("keys left out decoded as %v, %v; want unset", p.StageFraction, p.PriorLR)
	}
	cfg, err = loadConfig(writeConfig(t, strings.Replace(rrPrior, "XX", ", stage_fraction: 0.3, prior_lr: 0.02", 1)), nil, mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pets[0]; p.StageFraction == nil || *p.StageFraction != 0.3 || p.PriorLR == nil || *p.PriorLR != 0.02 {
		t.Fatalf("stage_fraction, prior_lr decoded as %v, %v", p.StageFraction, p.PriorLR)
	}
}

// Every config shipped in configs/ decodes and validates, and higgs.yaml
// is the paper's model on an imported Higgs slice (its comment's recipe).
func TestShippedConfigsLoad(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("configs: %v (%v)", files, err)
	}
	for _, f := range files {
		cfg, err := loadConfig(f, nil, mapEnv(nil))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if filepath.Base(f) == "higgs.yaml" {
			body, _ := os.ReadFile(f)
			if cfg.Model.Kind.String() != "higgs_mlp" || cfg.Data.Path != "data/higgs-210k" || cfg.Audit.Eta != EtaCleanModel ||
				!strings.Contains(string(body), "train data import higgs --in HIGGS-210k.csv --out data/higgs-210k") ||
				!strings.Contains(string(body), "HIGGS.csv.gz") {
				t.Errorf("higgs.yaml: %+v", cfg)
			}
		}
	}
}

// Diff names every key whose value differs between two configs, each with
// both values as config.resolved.yaml writes them; a pets entry one side
// lacks reads (none); a config agrees with its own resolved file.
func TestDiff(t *testing.T) {
	base := Defaults()
	cases := []struct {
		name string
		edit func(*Config)
		want []string
	}{
		{"same", func(*Config) {}, nil},
		{"learning rates", func(c *Config) { c.Train.LearningRates = []float64{0.001, 0.003} },
			[]string{"train.learning_rates: [0.001] → [0.001, 0.003]"}},
		{"two keys, nested and top", func(c *Config) { c.Seed, c.Audit.Samples = 7, 10 },
			[]string{"audit.samples: 2000 → 10", "seed: 1 → 7"}},
		{"a pets entry more", func(c *Config) {
			c.Pets = append(slices.Clone(c.Pets), PetConfig{Mechanism: pets.RR, Epsilon: []float64{1, 4}})
		}, []string{fmt.Sprintf("pets[%d]: (none) → {mechanism: rr, epsilon: [1, 4]}", len(base.Pets))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Defaults(), Defaults()
			a.Train.LearningRates = []float64{0.001}
			b.Train.LearningRates = []float64{0.001}
			tc.edit(&b)
			got, err := Diff(&a, &b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("Diff = %q, want %q", got, tc.want)
			}
		})
	}
	// Every leaf key is in Flat, and a written config.resolved.yaml reads
	// back to no difference.
	c := Defaults()
	c.Output = t.TempDir()
	flat, err := c.Flat()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range leafKeys() {
		if _, ok := flat[k]; !ok && k != "pets" {
			t.Errorf("Flat lacks %s", k)
		}
	}
	path, err := c.WriteResolved()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Load(Source{File: path})
	if err != nil {
		t.Fatal(err)
	}
	if d, err := Diff(&c, back); err != nil || d != nil {
		t.Fatalf("a config and its resolved file differ: %q, %v", d, err)
	}
}
