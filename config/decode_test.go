package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"labelprivacy/pets"
)

// The strict decoder, value by value: what each kind of key takes, and the
// key and reason an error names.
func TestDecodeValues(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		check      func(*Config) bool // nil: an error is wanted
		want       []string           // in the error
	}{
		{"exponent integer", "train: {epochs: 1e3}", func(c *Config) bool { return c.Train.Epochs == 1000 }, nil},
		{"integer too large", "train: {epochs: 9223372036854775808}", nil, []string{"train.epochs", "out of range"}},
		{"integer overflowing float", "train: {epochs: 1e30}", nil, []string{"train.epochs", "out of range"}},
		{"seed of 2^63 refused by its range", "seed: 9223372036854775808", nil, []string{"seed", "must be in [0, 2^63)"}},
		{"number for a string", "cluster: {mem: 8}", nil, []string{"cluster.mem", "want a string, got 8 (quote it)"}},
		{"a key twice", "seed: 1\nseed: 2", nil, []string{`line 4: key "seed" repeats line 3`}},
		{"yes is no bool", "data: {standardize: yes}", nil, []string{"data.standardize", `want true or false, got "yes"`}},
		{"string for a float", "train: {learning_rates: [0.1, fast]}", nil, []string{"train.learning_rates[1]", `want a number, got "fast"`}},
		{"one value for a list", "model: {hidden: 64}", func(c *Config) bool { return slices.Equal(c.Model.Hidden, []int{64}) }, nil},
		{"one table for the pets list", "pets: {mechanism: rr, epsilon: 1}", func(c *Config) bool {
			return len(c.Pets) == 1 && c.Pets[0].Mechanism == pets.RR && slices.Equal(c.Pets[0].Epsilon, []float64{1})
		}, nil},
		{"a value for a table", "train: 5", nil, []string{"train", "want a table of keys, got 5"}},
		{"a list for an enum", "audit: {eta: [true]}", nil, []string{"audit.eta", "want one value, got a list"}},
		{"null keeps the default", "train: {epochs: null}\ndata: null", func(c *Config) bool {
			return c.Train.Epochs == Defaults().Train.Epochs && c.Data.Synth.Rows == Defaults().Data.Synth.Rows
		}, nil},
		{"keys are case-insensitive", "Seed: 3\nTRAIN: {Epochs: 4}", func(c *Config) bool { return c.Seed == 3 && c.Train.Epochs == 4 }, nil},
		{"merge keys", "train: {<<: {epochs: 3, trials: 2}, trials: 4}", func(c *Config) bool { return c.Train.Epochs == 3 && c.Train.Trials == 4 }, nil},
		{"anchors and aliases", "train: {learning_rates: &lr [0.1]}\npets: [{mechanism: rr, epsilon: *lr}]", func(c *Config) bool {
			return slices.Equal(c.Pets[0].Epsilon, []float64{0.1})
		}, nil},
		{"an alias containing itself", "model: {hidden: &h [1, *h]}", nil, []string{"alias *h contains itself"}},
		{"unknown key in a pets entry", "pets: [{mechanism: rr, eps: 1}]", nil, []string{`unknown key "pets[0].eps" (did you mean pets[0].epsilon?)`}},
		{"a table for a whole number", "train: {batch_size: {a: 1}}", nil, []string{"train.batch_size", "a table is not a whole number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadConfig(writeConfig(t, "name: t\noutput: OUT\n"+tc.yaml+"\n"), nil, nil)
			if tc.check != nil {
				if err != nil || !tc.check(cfg) {
					t.Fatalf("err %v, config %+v", err, cfg)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want a config error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// A document whose aliases expand without bound (a billion laughs) is
// refused, not expanded.
func TestDecodeRefusesAliasBombs(t *testing.T) {
	var b strings.Builder
	b.WriteString("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	_, err := loadConfig(writeConfig(t, b.String()), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "through aliases") {
		t.Fatalf("err = %v", err)
	}
}

// The keys a TRAIN_ variable or --set may name are exactly the leaves of
// the config as WriteResolved writes it (one yaml tag per field serves
// both), and include the keys README documents.
func TestLeafKeysFollowTheResolvedConfig(t *testing.T) {
	b, err := yaml.Marshal(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var want []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			want = append(want, prefix+k)
		}
	}
	walk("", m)
	slices.Sort(want)
	if got := leafKeys(); !slices.Equal(got, want) {
		t.Fatalf("leaf keys\n%v\nresolved config's\n%v", got, want)
	}
	for _, k := range []string{"seed", "train.epochs", "train.replicas", "audit.eta", "privacy.delta_prime", "cluster.mem", "pets"} {
		if checkKey(k) != nil {
			t.Errorf("%s is not a key", k)
		}
	}
	if len(want) < 40 {
		t.Fatalf("only %d keys", len(want))
	}
}

// The TRAIN_ variables applied are recorded, sorted, with the file read
// and the --set overrides in their order.
func TestLoadRecordsInvocation(t *testing.T) {
	file := writeConfig(t, minimal)
	cfg, err := loadConfig(file, []string{"seed=4"}, mapEnv{"TRAIN_TRAIN_EPOCHS": "3", "TRAIN_SEED": "2", "HOME": "/h"})
	if err != nil {
		t.Fatal(err)
	}
	want := Invocation{ConfigFile: file, Env: []string{"TRAIN_SEED=2", "TRAIN_TRAIN_EPOCHS=3"}, Sets: []string{"seed=4"}}
	if !reflect.DeepEqual(cfg.Invocation, want) || cfg.Seed != 4 || cfg.Train.Epochs != 3 {
		t.Fatalf("invocation %+v, seed %d, epochs %d", cfg.Invocation, cfg.Seed, cfg.Train.Epochs)
	}
}

// Load never panics, and every error it returns is a config error.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "train.epochs=1")
	}
	f.Add([]byte(minimal), "pets=[{mechanism: rr_prior, epsilon: 1, prior_lr: 0.0}]")
	f.Add([]byte("a: &a [*a]"), "seed=-1")
	f.Add([]byte("train: {<<: [{epochs: 2}, {trials: 3}]}"), "model.hidden=64")
	f.Fuzz(func(t *testing.T, body []byte, set string) {
		p := filepath.Join(t.TempDir(), "c.yaml")
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(Source{File: p, Sets: []string{set}})
		if err != nil && !errors.Is(err, ErrConfig) {
			t.Fatalf("error %v is not a config error", err)
		}
		if err == nil && cfg.Validate() != nil {
			t.Fatalf("Load returned an invalid config: %v", cfg.Validate())
		}
	})
}
