package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"

	"labelprivacy/configs"
	"labelprivacy/pipeline"
)

// env is the process environment (osEnv), or a map in tests.
type env interface {
	LookupEnv(key string) (string, bool)
	// Environ lists the variables as key=value.
	Environ() []string
}

// osEnv is the process environment.
type osEnv struct{}

func (osEnv) LookupEnv(k string) (string, bool) { return os.LookupEnv(k) }
func (osEnv) Environ() []string                 { return os.Environ() }

var keyInMessageRE = regexp.MustCompile(`'([a-z0-9_.\[\]]+)'`)

// configSource remembers where a config came from, to name it in errors.
type configSource struct {
	file string          // path, or the embedded default's name
	sets map[string]bool // keys given with --set
	env  env
}

// origin names where key's value came from: a --set flag, an environment
// variable, or the config file.
func (s *configSource) origin(key string) string {
	top := key
	if i := strings.IndexAny(key, "["); i >= 0 {
		top = key[:i]
	}
	for k := range s.sets {
		if k == key || k == top || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") {
			return "--set " + k
		}
	}
	if s.env != nil {
		if _, ok := s.env.LookupEnv(envName(top)); ok {
			return "$" + envName(top)
		}
	}
	return s.file
}

// envPrefix starts every environment variable that sets a config key.
const envPrefix = "TRAIN_"

func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// suggestEnv proposes the variable of the known key closest to guess (a
// variable name without TRAIN_, lowercased).
func suggestEnv(guess string, defaults pipeline.Config) string {
	if k := defaults.ClosestKey(guess); k != "" {
		return fmt.Sprintf(" (did you mean $%s?)", envName(k))
	}
	return ""
}

// loadConfig reads file (empty: the embedded quickstart), applies TRAIN_<KEY>
// environment overrides and --set key=value overrides (values parsed as
// YAML, so lists work: --set train.learning_rates=[0.01,0.001]), decodes
// strictly with UnmarshalExact into pipeline.Config and validates. Errors
// name the key and where its value came from.
func loadConfig(file string, sets []string, lookup env) (*pipeline.Config, error) {
	src := &configSource{file: file, sets: map[string]bool{}, env: lookup}
	v := viper.New()
	v.SetConfigType("yaml")
	defaults := pipeline.Defaults()
	known := map[string]bool{}
	for k, val := range defaults.Keys() {
		known[k] = true
		if k != "pets" { // a file's pets list replaces, never merges with, the default
			v.SetDefault(k, val)
		}
	}
	body := configs.Quickstart
	if file == "" {
		src.file = configs.QuickstartName
	} else {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", pipeline.ErrConfig, err)
		}
		body = b
	}
	if err := v.ReadConfig(bytes.NewReader(body)); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", pipeline.ErrConfig, src.file, err)
	}
	if err := checkKeyCase(body); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", pipeline.ErrConfig, src.file, err)
	}
	envKeys := map[string]string{} // TRAIN_<KEY> → key
	for k := range known {
		envKeys[envName(k)] = k
	}
	for _, kv := range lookup.Environ() { // a TRAIN_ variable that names no key is a typo, not a no-op
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := envKeys[name]; strings.HasPrefix(name, envPrefix) && !ok {
			guess := strings.ToLower(strings.TrimPrefix(name, envPrefix))
			return nil, fmt.Errorf("%w: $%s names no config key%s", pipeline.ErrConfig, name, suggestEnv(guess, defaults))
		}
	}
	for k := range known { // TRAIN_<KEY>, parsed as YAML like --set; --set wins
		if val, ok := lookup.LookupEnv(envName(k)); ok {
			if err := setYAML(v, k, val); err != nil {
				return nil, fmt.Errorf("%w: $%s: %v", pipeline.ErrConfig, envName(k), err)
			}
		}
	}
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return nil, fmt.Errorf("%w: --set %q: want key=value", pipeline.ErrConfig, s)
		}
		if err := defaults.CheckKey(key); err != nil || key != "pets" && strings.HasPrefix(key, "pets") {
			if err == nil {
				err = fmt.Errorf("unknown key %q (set the whole pets list)", key)
			}
			return nil, fmt.Errorf("%w: --set %s: %v", pipeline.ErrConfig, key, err)
		}
		if err := setYAML(v, key, val); err != nil {
			return nil, fmt.Errorf("%w: --set %s: %v", pipeline.ErrConfig, key, err)
		}
		src.sets[key] = true
	}
	for _, k := range v.AllKeys() {
		if err := defaults.CheckKey(k); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", pipeline.ErrConfig, src.origin(k), err)
		}
	}
	var cfg pipeline.Config
	err := v.UnmarshalExact(&cfg, func(dc *mapstructure.DecoderConfig) {
		dc.WeaklyTypedInput = false
		dc.DecodeHook = mapstructure.ComposeDecodeHookFunc(strictNumbers, scalarToText, mapstructure.TextUnmarshallerHookFunc(), scalarToList)
	})
	if err != nil {
		return nil, decodeError(src, err)
	}
	if err := cfg.Validate(); err != nil {
		var fe *pipeline.FieldError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%w: %s: %s: %s", pipeline.ErrConfig, src.origin(fe.Key), fe.Key, fe.Msg)
		}
		return nil, err
	}
	cfg.Invocation.ConfigFile = src.file
	for k := range known {
		if val, ok := lookup.LookupEnv(envName(k)); ok {
			cfg.Invocation.Env = append(cfg.Invocation.Env, envName(k)+"="+val)
		}
	}
	slices.Sort(cfg.Invocation.Env)
	return &cfg, nil
}

// commandLine is the command line that ran cmd, rebuilt from what cobra
// parsed (so it is the same in-process and from a shell): the command
// path, then every flag given, repeatable ones (--set) in their order,
// each word shell-quoted.
func commandLine(cmd *cobra.Command) string {
	words := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				words = append(words, "--"+f.Name, v)
			}
			return
		}
		if f.Value.Type() == "bool" {
			words = append(words, "--"+f.Name+"="+f.Value.String())
			return
		}
		words = append(words, "--"+f.Name, f.Value.String())
	})
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote quotes w for a POSIX shell when it holds anything but
// letters, digits and -_./:=,+@%.
func shellQuote(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// checkKeyCase refuses a mapping that holds two keys equal up to case:
// keys are case-insensitive, so one of them would be dropped silently.
func checkKeyCase(body []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(body, &root); err != nil {
		return err
	}
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		if n.Kind == yaml.MappingNode {
			seen := map[string]*yaml.Node{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				low := strings.ToLower(k.Value)
				if first, ok := seen[low]; ok {
					return fmt.Errorf("line %d: key %q repeats %q of line %d (keys are case-insensitive)", k.Line, k.Value, first.Value, first.Line)
				}
				seen[low] = k
			}
		}
		for _, c := range n.Content {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(&root)
}

var textUnmarshaler = reflect.TypeFor[interface{ UnmarshalText([]byte) error }]()

// strictNumbers refuses silent numeric coercions: a fractional number for
// an integer key (train.epochs: 1.5), a negative number for an unsigned one
// (seed: -1), or one out of the key's range.
func strictNumbers(from, to reflect.Type, v any) (any, error) {
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if f, ok := v.(float64); ok && (f != math.Trunc(f) || math.Abs(f) > 1<<62) {
			return nil, fmt.Errorf("%v is not a whole number", f)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		switch n := v.(type) {
		case float64:
			if n != math.Trunc(n) || n < 0 || n >= 1<<63 {
				return nil, fmt.Errorf("%v is not a whole number in [0, 2^63)", n)
			}
		case int:
			if n < 0 {
				return nil, fmt.Errorf("%d is negative", n)
			}
		case uint64:
			if n >= 1<<63 {
				return nil, fmt.Errorf("%d is not below 2^63", n)
			}
		}
	}
	return v, nil
}

// scalarToText hands YAML scalars to types that parse text: audit.eta: true
// (a YAML bool), train.checkpoint_every: 500 and train.replicas: 8 (YAML
// ints) become "true", "500", "8".
func scalarToText(from, to reflect.Type, v any) (any, error) {
	if !reflect.PointerTo(to).Implements(textUnmarshaler) {
		return v, nil
	}
	switch from.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.(bool)), nil
	case reflect.Int, reflect.Int64, reflect.Uint64, reflect.Float64:
		return fmt.Sprint(v), nil
	}
	return v, nil
}

// scalarToList lets a list key take one value (epsilon: 2 → [2]; a string
// only for a list of parsed values: bags: "sorted:x3" → [sorted:x3]).
func scalarToList(from, to reflect.Type, v any) (any, error) {
	textElem := to.Kind() == reflect.Slice && reflect.PointerTo(to.Elem()).Implements(textUnmarshaler) // bags: "sorted:x3"
	if to.Kind() == reflect.Slice && from.Kind() != reflect.Slice && (from.Kind() != reflect.String || textElem) && v != nil {
		return []any{v}, nil
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
		return fmt.Errorf("%w: %s: %v", pipeline.ErrConfig, src.file, err)
	}
	return fmt.Errorf("%w: %s", pipeline.ErrConfig, strings.Join(lines, "; "))
}
