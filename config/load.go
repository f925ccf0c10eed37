package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"labelprivacy/configs"
)

// Env is an environment: the process's (OSEnv) or a map in tests.
type Env interface {
	LookupEnv(key string) (string, bool)
	// Environ lists the variables as key=value.
	Environ() []string
}

// OSEnv is the process environment.
type OSEnv struct{}

func (OSEnv) LookupEnv(k string) (string, bool) { return os.LookupEnv(k) }
func (OSEnv) Environ() []string                 { return os.Environ() }

// Source is where a config comes from, lowest precedence first.
type Source struct {
	// File is a YAML file; "": the embedded configs/quickstart.yaml.
	File string
	// Env holds TRAIN_<KEY> variables overriding the file (TRAIN_SEED,
	// TRAIN_TRAIN_EPOCHS); nil: none. A TRAIN_ variable naming no key is
	// an error, not a no-op.
	Env Env
	// Sets are key=value overrides applied last (--set): values are YAML,
	// so train.learning_rates=[0.01,0.001] is a list. pets is set whole.
	Sets []string
}

// envPrefix starts every environment variable that sets a config key.
const envPrefix = "TRAIN_"

// envName is the variable that sets key: TRAIN_TRAIN_EPOCHS for
// train.epochs.
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Load reads src into a Config: the defaults, overridden by the file, then
// the TRAIN_ variables, then the --set overrides (viper layers them), decoded
// strictly into the typed Config (decode) and validated. An error wraps
// ErrConfig and names the key and where its value came from: the file,
// $TRAIN_… or --set key.
func Load(src Source) (*Config, error) {
	o := &origins{file: src.File, sets: map[string]bool{}, env: src.Env}
	body := configs.Quickstart
	if src.File == "" {
		o.file = configs.QuickstartName
	} else {
		b, err := os.ReadFile(src.File)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		body = b
	}
	file, err := parseYAML(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, o.file, err)
	}
	fileMap, ok := file.(map[string]any)
	if !ok && file != nil {
		return nil, fmt.Errorf("%w: %s: want a table of keys, got %s", ErrConfig, o.file, describe(file))
	}
	v := viper.New()
	if err := v.MergeConfigMap(fileMap); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, o.file, err)
	}
	if err := o.applyEnv(v); err != nil {
		return nil, err
	}
	for _, s := range src.Sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%w: --set %q: want key=value", ErrConfig, s)
		}
		if err := checkKey(key); err != nil {
			return nil, fmt.Errorf("%w: --set %s: %v", ErrConfig, key, err)
		}
		parsed, err := parseValue(val)
		if err != nil {
			return nil, fmt.Errorf("%w: --set %s: %v", ErrConfig, key, err)
		}
		v.Set(key, parsed)
		o.sets[key] = true
	}
	cfg := Defaults()
	if err := decode(reflect.ValueOf(&cfg).Elem(), v.AllSettings(), ""); err != nil {
		return nil, o.blame(err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, o.blame(err)
	}
	cfg.Invocation = Invocation{ConfigFile: o.file, Env: o.vars, Sets: slices.Clone(src.Sets)}
	return &cfg, nil
}

// parseYAML parses a file into settings (nil when empty).
func parseYAML(b []byte) (any, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	if n.Kind == 0 {
		return nil, nil
	}
	return settingsOf(&n)
}

// parseValue parses the value of a --set or a TRAIN_ variable as YAML (3
// is a number, [1, 2] a list); an empty one or null is the empty string
// (--set data.path= clears data.path).
func parseValue(s string) (any, error) {
	v, err := parseYAML([]byte(s))
	if v == nil && err == nil {
		return "", nil
	}
	return v, err
}

// origins remembers where a config's values came from, to name it in
// errors.
type origins struct {
	file string          // path, or the embedded default's name
	sets map[string]bool // keys given with --set
	env  Env
	vars []string // the TRAIN_ variables applied, NAME=value, sorted
}

// applyEnv sets every key a TRAIN_ variable names (values parsed as YAML,
// like --set) and refuses a TRAIN_ variable that names no key.
func (o *origins) applyEnv(v *viper.Viper) error {
	if o.env == nil {
		return nil
	}
	keyOf := map[string]string{} // TRAIN_<KEY> → key
	for _, k := range leafKeys() {
		keyOf[envName(k)] = k
	}
	for _, kv := range o.env.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := keyOf[name]; strings.HasPrefix(name, envPrefix) && !ok {
			guess := strings.ToLower(strings.TrimPrefix(name, envPrefix))
			hint := ""
			if k := closestKey(guess, leafKeys()); k != "" {
				hint = fmt.Sprintf(" (did you mean $%s?)", envName(k))
			}
			return fmt.Errorf("%w: $%s names no config key%s", ErrConfig, name, hint)
		}
	}
	for _, k := range leafKeys() {
		val, ok := o.env.LookupEnv(envName(k))
		if !ok {
			continue
		}
		parsed, err := parseValue(val)
		if err != nil {
			return fmt.Errorf("%w: $%s: %v", ErrConfig, envName(k), err)
		}
		v.Set(k, parsed)
		o.vars = append(o.vars, envName(k)+"="+val)
	}
	slices.Sort(o.vars)
	return nil
}

// origin names where key's value came from: a --set flag, an environment
// variable, or the config file.
func (o *origins) origin(key string) string {
	top, _, _ := strings.Cut(key, "[")
	for k := range o.sets {
		if k == key || k == top || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") {
			return "--set " + k
		}
	}
	if o.env != nil {
		if _, ok := o.env.LookupEnv(envName(top)); ok {
			return "$" + envName(top)
		}
	}
	return o.file
}

// blame prefixes a decoding or validation error with its key's origin.
func (o *origins) blame(err error) error {
	var fe *FieldError
	var ke *keyError
	switch {
	case errors.As(err, &fe):
		return fmt.Errorf("%w: %s: %s: %s", ErrConfig, o.origin(fe.Key), fe.Key, fe.Msg)
	case errors.As(err, &ke):
		return fmt.Errorf("%w: %s: %s", ErrConfig, o.origin(ke.key), ke.msg)
	}
	return err
}
