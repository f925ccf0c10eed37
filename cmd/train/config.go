package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"labelprivacy/configs"
	"labelprivacy/data"
)

// Config is the typed run configuration; its keys are the user-facing
// contract documented in README.md ("Config reference").
type Config struct {
	Name    string        `mapstructure:"name" yaml:"name"`
	Seed    uint64        `mapstructure:"seed" yaml:"seed"`
	Backend string        `mapstructure:"backend" yaml:"backend"`
	Output  string        `mapstructure:"output" yaml:"output"`
	Data    DataConfig    `mapstructure:"data" yaml:"data"`
	Model   ModelConfig   `mapstructure:"model" yaml:"model"`
	Train   TrainConfig   `mapstructure:"train" yaml:"train"`
	Pets    []PetConfig   `mapstructure:"pets" yaml:"pets"`
	Audit   AuditConfig   `mapstructure:"audit" yaml:"audit"`
	Privacy PrivacyConfig `mapstructure:"privacy" yaml:"privacy"`
	Cluster ClusterConfig `mapstructure:"cluster" yaml:"cluster"`
}

type DataConfig struct {
	Path  string      `mapstructure:"path" yaml:"path"`
	Synth SynthConfig `mapstructure:"synth" yaml:"synth"`
}

type SynthConfig struct {
	Kind     string `mapstructure:"kind" yaml:"kind"`
	Rows     int    `mapstructure:"rows" yaml:"rows"`
	TestRows int    `mapstructure:"test_rows" yaml:"test_rows"`
	Features int    `mapstructure:"features" yaml:"features"`
}

type ModelConfig struct {
	Kind   string `mapstructure:"kind" yaml:"kind"`
	Hidden []int  `mapstructure:"hidden" yaml:"hidden"`
}

type TrainConfig struct {
	Epochs        int       `mapstructure:"epochs" yaml:"epochs"`
	BatchSize     int       `mapstructure:"batch_size" yaml:"batch_size"`
	LearningRates []float64 `mapstructure:"learning_rates" yaml:"learning_rates"`
	Trials        int       `mapstructure:"trials" yaml:"trials"`
	// RRLoss trains RR models: debiased_bce (unbiased, Appendix C) or bce
	// (plain BCE on the noisy labels, a baseline).
	RRLoss string `mapstructure:"rr_loss" yaml:"rr_loss"`
	// LLPLoss trains the LLP family: propmatch (the paper) or easyllp.
	LLPLoss string `mapstructure:"llp_loss" yaml:"llp_loss"`
	// CheckpointEvery saves a checkpoint every N steps (0: only at the end
	// and on interruption) so a killed run resumes.
	CheckpointEvery int `mapstructure:"checkpoint_every" yaml:"checkpoint_every"`
}

// PetConfig is one entry of `pets:`; K and Epsilon lists expand to a grid.
type PetConfig struct {
	Mechanism string    `mapstructure:"mechanism" yaml:"mechanism"`
	K         []int     `mapstructure:"k" yaml:"k,omitempty"`
	Epsilon   []float64 `mapstructure:"epsilon" yaml:"epsilon,omitempty"`
}

type AuditConfig struct {
	Eta        string `mapstructure:"eta" yaml:"eta"`
	Examples   int    `mapstructure:"examples" yaml:"examples"`
	LabelDraws int    `mapstructure:"label_draws" yaml:"label_draws"`
	// Samples caps the (prior, posterior) pairs kept per setting for the
	// figures (posteriors.parquet).
	Samples int `mapstructure:"samples" yaml:"samples"`
	// KNNK and KNNRows configure eta: knn: the neighbours averaged and the
	// training rows searched (a seeded subsample when the set is larger).
	KNNK    int `mapstructure:"knn_k" yaml:"knn_k"`
	KNNRows int `mapstructure:"knn_rows" yaml:"knn_rows"`
}

// PrivacyConfig holds release-wide privacy settings.
type PrivacyConfig struct {
	// Secure draws PET noise from crypto/rand (and Laplace from a sampler not
	// vulnerable to the floating-point attack) instead of the seeded PCG.
	Secure bool `mapstructure:"secure" yaml:"secure"`
	// DeltaPrime is δ' of the advanced composition theorem in the ledger.
	DeltaPrime float64 `mapstructure:"delta_prime" yaml:"delta_prime"`
	// KeepRemainder keeps the n mod k leftover rows of an LLP partition as a
	// smaller last bag instead of dropping them.
	KeepRemainder bool `mapstructure:"keep_remainder" yaml:"keep_remainder"`
}

// defaultConfig holds the value of every key a config file may omit.
func defaultConfig() Config {
	return Config{
		Name: "run", Seed: 1, Backend: "go", Output: "results/run",
		Data:  DataConfig{Synth: SynthConfig{Kind: "logistic", Rows: 60000, TestRows: 10000, Features: 28}},
		Model: ModelConfig{Kind: "mlp", Hidden: []int{64, 64}},
		Train: TrainConfig{Epochs: 2, BatchSize: 1024, LearningRates: []float64{0.001}, Trials: 1,
			RRLoss: "debiased_bce", LLPLoss: "propmatch", CheckpointEvery: 500},
		Pets:    []PetConfig{{Mechanism: "none"}},
		Audit:   AuditConfig{Eta: "clean_model", Examples: 10000, LabelDraws: 10, Samples: 2000, KNNK: 100, KNNRows: 100000},
		Privacy: PrivacyConfig{DeltaPrime: 1e-6},
		Cluster: ClusterConfig{CPUsPerTask: 2, Mem: "8G", Time: "04:00:00"},
	}
}

var (
	backendNames   = []string{"go", "xla:cpu", "xla:cuda"}
	modelKinds     = []string{"mlp", "higgs_mlp", "kdd_embed"}
	etaSources     = []string{"clean_model", "true", "knn"}
	mechanisms     = []string{"none", "bot", "rr", "llp", "llp_lap", "llp_geom"}
	errConfig      = errors.New("config")
	keyInMessageRE = regexp.MustCompile(`'([a-z0-9_.\[\]]+)'`)
)

// configSource remembers where a config came from, to name it in errors.
type configSource struct {
	file string          // path, or the embedded default's name
	sets map[string]bool // keys given with --set
	env  func(string) (string, bool)
}

// origin names where key's value came from: a --set flag, an environment
// variable, or the config file.
func (s *configSource) origin(key string) string {
	top := key
	if i := strings.IndexAny(key, "["); i >= 0 {
		top = key[:i]
	}
	if s.sets[top] || s.sets[key] {
		return "--set " + key
	}
	if name := envName(top); s.env != nil {
		if _, ok := s.env(name); ok {
			return "$" + name
		}
	}
	return s.file
}

func envName(key string) string {
	return "TRAIN_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// loadConfig reads file (empty: the embedded quickstart), applies TRAIN_<KEY>
// environment overrides and --set key=value overrides (values parsed as
// YAML, so lists work: --set train.learning_rates=[0.01,0.001]), decodes
// with UnmarshalExact and validates. Errors name the key and its origin.
func loadConfig(file string, sets []string, env func(string) (string, bool)) (*Config, error) {
	src := &configSource{file: file, sets: map[string]bool{}, env: env}
	v := viper.New()
	v.SetConfigType("yaml")
	setDefaults(v, defaultConfig())
	if file == "" {
		src.file = configs.QuickstartName
		if err := v.ReadConfig(bytes.NewReader(configs.Quickstart)); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errConfig, src.file, err)
		}
	} else {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errConfig, err)
		}
		if err := v.ReadConfig(bytes.NewReader(b)); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errConfig, file, err)
		}
	}
	known := map[string]bool{"pets": true}
	for _, k := range leafKeys(defaultConfig()) {
		known[k] = true
	}
	// Environment overrides TRAIN_<KEY> (dots become underscores), parsed
	// as YAML like --set values; --set wins over the environment.
	for k := range known {
		if val, ok := env(envName(k)); ok {
			if err := setYAML(v, k, val); err != nil {
				return nil, fmt.Errorf("%w: $%s: %v", errConfig, envName(k), err)
			}
		}
	}
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%w: --set %q: want key=value", errConfig, s)
		}
		if !known[key] {
			return nil, fmt.Errorf("%w: --set %s: unknown key%s", errConfig, key, suggest(key, known))
		}
		if err := setYAML(v, key, val); err != nil {
			return nil, fmt.Errorf("%w: --set %s: %v", errConfig, key, err)
		}
		src.sets[key] = true
	}
	// Unknown keys in the file: report each by its full dotted name.
	for _, k := range v.AllKeys() {
		if !known[k] && !strings.HasPrefix(k, "pets") {
			return nil, fmt.Errorf("%w: %s: unknown key %q%s", errConfig, src.origin(k), k, suggest(k, known))
		}
	}
	var cfg Config
	if err := v.UnmarshalExact(&cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		boolToString, mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(",")))); err != nil {
		return nil, decodeError(src, err)
	}
	if err := cfg.validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%w: %s: %s: %s", errConfig, src.origin(fe.key), fe.key, fe.msg)
		}
		return nil, err
	}
	return &cfg, nil
}

// boolToString keeps YAML's true/false as "true"/"false" for string keys
// (audit.eta: true), where weak typing would make them "1"/"0".
func boolToString(from, to reflect.Type, v any) (any, error) {
	if from.Kind() == reflect.Bool && to.Kind() == reflect.String {
		return strconv.FormatBool(v.(bool)), nil
	}
	return v, nil
}

// setYAML sets key to val parsed as YAML (so 3 is an int, [1, 2] a list).
func setYAML(v *viper.Viper, key, val string) error {
	var parsed any
	if err := yaml.Unmarshal([]byte(val), &parsed); err != nil {
		return err
	}
	if parsed == nil {
		parsed = ""
	}
	v.Set(key, parsed)
	return nil
}

// decodeError turns mapstructure's message into one line per problem,
// prefixed with where the offending key came from.
func decodeError(src *configSource, err error) error {
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "*"))
		if l == "" || strings.HasPrefix(l, "decoding failed") || strings.HasSuffix(l, "error(s):") {
			continue
		}
		where := src.file
		if m := keyInMessageRE.FindStringSubmatch(l); m != nil {
			where = src.origin(m[1])
		}
		lines = append(lines, where+": "+l)
	}
	if len(lines) == 0 {
		return fmt.Errorf("%w: %s: %v", errConfig, src.file, err)
	}
	return fmt.Errorf("%w: %s", errConfig, strings.Join(lines, "; "))
}

// leafKeys lists the dotted keys of every scalar or list in c (pets is a
// list of tables and stays one key).
func leafKeys(c Config) []string {
	b, _ := yaml.Marshal(c)
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	var keys []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			keys = append(keys, prefix+k)
		}
	}
	walk("", m)
	slices.Sort(keys)
	return keys
}

func setDefaults(v *viper.Viper, c Config) {
	b, _ := yaml.Marshal(c)
	var m map[string]any
	_ = yaml.Unmarshal(b, &m)
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			if sub, ok := val.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			if prefix+k == "pets" {
				continue // a file's pets list replaces, never merges with, the default
			}
			v.SetDefault(prefix+k, val)
		}
	}
	walk("", m)
}

// suggest proposes the known key closest to a mistyped one.
func suggest(key string, known map[string]bool) string {
	best, bestD := "", 4
	for k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fieldError is a validation failure of one key.
type fieldError struct{ key, msg string }

func (e *fieldError) Error() string { return e.key + ": " + e.msg }

func bad(key, format string, args ...any) error {
	return &fieldError{key: key, msg: fmt.Sprintf(format, args...)}
}

func oneOf(key, val string, allowed []string) error {
	if !slices.Contains(allowed, val) {
		return bad(key, "%q is not one of %s", val, strings.Join(allowed, ", "))
	}
	return nil
}

// validate checks ranges and enums once; errors name the key.
func (c *Config) validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return bad("name", "must not be empty")
	}
	if err := oneOf("backend", c.Backend, backendNames); err != nil {
		return err
	}
	if strings.TrimSpace(c.Output) == "" {
		return bad("output", "must not be empty")
	}
	if c.Data.Path == "" {
		s := c.Data.Synth
		if _, err := data.ParseSynthKind(s.Kind); err != nil {
			return bad("data.synth.kind", "%q is not one of logistic, beta, uniform", s.Kind)
		}
		if s.Rows < 1 {
			return bad("data.synth.rows", "must be ≥ 1, got %d", s.Rows)
		}
		if s.TestRows < 1 {
			return bad("data.synth.test_rows", "must be ≥ 1, got %d", s.TestRows)
		}
		if s.Features < 1 {
			return bad("data.synth.features", "must be ≥ 1, got %d", s.Features)
		}
	}
	if err := oneOf("model.kind", c.Model.Kind, modelKinds); err != nil {
		return err
	}
	for i, h := range c.Model.Hidden {
		if h < 1 {
			return bad(fmt.Sprintf("model.hidden[%d]", i), "must be ≥ 1, got %d", h)
		}
	}
	if c.Train.Epochs < 1 {
		return bad("train.epochs", "must be ≥ 1, got %d", c.Train.Epochs)
	}
	if c.Train.BatchSize < 1 {
		return bad("train.batch_size", "must be ≥ 1, got %d", c.Train.BatchSize)
	}
	if len(c.Train.LearningRates) == 0 {
		return bad("train.learning_rates", "must list at least one learning rate")
	}
	for i, lr := range c.Train.LearningRates {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return bad(fmt.Sprintf("train.learning_rates[%d]", i), "must be finite and > 0, got %v", lr)
		}
	}
	if c.Train.Trials < 1 {
		return bad("train.trials", "must be ≥ 1, got %d", c.Train.Trials)
	}
	if err := oneOf("train.rr_loss", c.Train.RRLoss, []string{"debiased_bce", "bce"}); err != nil {
		return err
	}
	if err := oneOf("train.llp_loss", c.Train.LLPLoss, []string{"propmatch", "easyllp"}); err != nil {
		return err
	}
	if c.Train.CheckpointEvery < 0 {
		return bad("train.checkpoint_every", "must be ≥ 0, got %d", c.Train.CheckpointEvery)
	}
	if len(c.Pets) == 0 {
		return bad("pets", "must list at least one mechanism (e.g. {mechanism: none})")
	}
	for i, p := range c.Pets {
		key := fmt.Sprintf("pets[%d]", i)
		if err := oneOf(key+".mechanism", p.Mechanism, mechanisms); err != nil {
			return err
		}
		needK := strings.HasPrefix(p.Mechanism, "llp")
		needEps := p.Mechanism == "rr" || p.Mechanism == "llp_lap" || p.Mechanism == "llp_geom"
		switch {
		case needK && len(p.K) == 0:
			return bad(key+".k", "%s needs at least one bag size k", p.Mechanism)
		case !needK && len(p.K) > 0:
			return bad(key+".k", "%s takes no bag size", p.Mechanism)
		case needEps && len(p.Epsilon) == 0:
			return bad(key+".epsilon", "%s needs at least one epsilon", p.Mechanism)
		case !needEps && len(p.Epsilon) > 0:
			return bad(key+".epsilon", "%s takes no epsilon", p.Mechanism)
		}
		for j, k := range p.K {
			if k < 1 {
				return bad(fmt.Sprintf("%s.k[%d]", key, j), "must be ≥ 1, got %d", k)
			}
		}
		for j, e := range p.Epsilon {
			if !(e > 0) || math.IsInf(e, 0) {
				return bad(fmt.Sprintf("%s.epsilon[%d]", key, j), "must be finite and > 0, got %v", e)
			}
		}
	}
	if err := oneOf("audit.eta", c.Audit.Eta, etaSources); err != nil {
		return err
	}
	if c.Audit.Examples < 1 {
		return bad("audit.examples", "must be ≥ 1, got %d", c.Audit.Examples)
	}
	if c.Audit.LabelDraws < 1 {
		return bad("audit.label_draws", "must be ≥ 1, got %d", c.Audit.LabelDraws)
	}
	if c.Audit.KNNK < 1 {
		return bad("audit.knn_k", "must be ≥ 1, got %d", c.Audit.KNNK)
	}
	if c.Audit.KNNRows < c.Audit.KNNK {
		return bad("audit.knn_rows", "must be ≥ audit.knn_k (%d), got %d", c.Audit.KNNK, c.Audit.KNNRows)
	}
	if c.Audit.Samples < 0 {
		return bad("audit.samples", "must be ≥ 0, got %d", c.Audit.Samples)
	}
	if c.Cluster.CPUsPerTask < 1 {
		return bad("cluster.cpus_per_task", "must be ≥ 1, got %d", c.Cluster.CPUsPerTask)
	}
	if c.Cluster.GPUs < 0 {
		return bad("cluster.gpus", "must be ≥ 0, got %d", c.Cluster.GPUs)
	}
	if !(c.Privacy.DeltaPrime > 0 && c.Privacy.DeltaPrime < 1) {
		return bad("privacy.delta_prime", "must be in (0, 1), got %v", c.Privacy.DeltaPrime)
	}
	return nil
}

// writeResolved writes the effective config to <output>/config.resolved.yaml.
func writeResolved(c *Config) (string, error) {
	b, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	path := filepath.Join(c.Output, "config.resolved.yaml")
	header := []byte("# The configuration this run resolved (file + TRAIN_* environment + --set).\n")
	return path, data.WriteFileAtomic(path, append(header, b...))
}
