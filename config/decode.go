package config

import (
	"encoding"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The strict decoder. Settings (parsed YAML: maps with lowercase string
// keys, lists, and scalars as yaml.v3 resolves them: string, bool, int,
// uint64, float64, nil) are set onto a typed value field by field, by the
// fields' yaml tags, each step knowing the key it decodes, so every error
// names its key by construction:
//
//   - a table takes a map, and refuses a key none of its fields has;
//   - a type with UnmarshalText (enums, backend names, intervals, bag
//     rules) takes any scalar, as text: audit.eta: true is "true";
//   - an integer takes a whole number in its range (1.5 and 1e30 are
//     refused, 1e3 is 1000), an unsigned one no negative number, a float
//     any number, a bool true or false, a string a string;
//   - a list takes a list, or one value as a one-element list
//     (epsilon: 2 is [2]);
//   - a pointer is allocated (so pets[i].stage_fraction: 0 is an explicit
//     0, not a key left out);
//   - null leaves the default.

// settingsOf converts a parsed YAML node into settings: mapping keys
// lowercased, since keys are case-insensitive, and two keys of one mapping
// equal up to case refused (one of them would be dropped silently), naming
// both lines. Aliases are followed (a cycle, or an expansion beyond
// maxNodes nodes, is refused).
func settingsOf(n *yaml.Node) (any, error) {
	w := &walker{open: map[*yaml.Node]bool{}}
	return w.settings(n)
}

// maxNodes bounds the nodes a config expands to through aliases (a
// billion-laughs document is refused, not expanded).
const maxNodes = 1 << 20

type walker struct {
	open  map[*yaml.Node]bool // aliased nodes being expanded
	nodes int
}

func (w *walker) settings(n *yaml.Node) (any, error) {
	if w.nodes++; w.nodes > maxNodes {
		return nil, fmt.Errorf("line %d: more than %d values (through aliases)", n.Line, maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return w.settings(n.Content[0])
	case yaml.AliasNode:
		if w.open[n.Alias] {
			return nil, fmt.Errorf("line %d: alias *%s contains itself", n.Line, n.Value)
		}
		w.open[n.Alias] = true
		defer delete(w.open, n.Alias)
		return w.settings(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := w.settings(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, vn := n.Content[i], n.Content[i+1]
			v, err := w.settings(vn)
			if err != nil {
				return nil, err
			}
			if k.Tag == "!!merge" { // <<: *defaults: keys not set here
				for _, m := range mergedMaps(v) {
					for mk, mv := range m {
						if _, ok := out[mk]; !ok {
							out[mk] = mv
						}
					}
				}
				continue
			}
			low := strings.ToLower(k.Value)
			if f, ok := first[low]; ok && f.Value == k.Value {
				return nil, fmt.Errorf("line %d: key %q repeats line %d", k.Line, k.Value, f.Line)
			} else if ok {
				return nil, fmt.Errorf("line %d: key %q repeats %q of line %d (keys are case-insensitive)", k.Line, k.Value, f.Value, f.Line)
			}
			first[low] = k
			out[low] = v
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	return v, nil
}

// mergedMaps are the maps a YAML merge key names (one, or a list).
func mergedMaps(v any) []map[string]any {
	if m, ok := v.(map[string]any); ok {
		return []map[string]any{m}
	}
	var out []map[string]any
	if l, ok := v.([]any); ok {
		for _, x := range l {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// decode sets dst from the settings val found at key ("" at the top).
func decode(dst reflect.Value, val any, key string) error {
	if val == nil {
		return nil
	}
	t := dst.Type()
	if u, ok := dst.Addr().Interface().(encoding.TextUnmarshaler); ok {
		text, ok := scalarText(val)
		if !ok {
			return bad(key, "want one value, got %s", describe(val))
		}
		if err := u.UnmarshalText([]byte(text)); err != nil {
			return bad(key, "%v", err)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := val.(map[string]any)
		if !ok {
			return bad(key, "want a table of keys, got %s", describe(val))
		}
		return decodeTable(dst, m, key)
	case reflect.Slice:
		list, ok := val.([]any)
		if !ok {
			list = []any{val} // one value for a list
		}
		s := reflect.MakeSlice(t, len(list), len(list))
		for i, v := range list {
			if err := decode(s.Index(i), v, fmt.Sprintf("%s[%d]", key, i)); err != nil {
				return err
			}
		}
		dst.Set(s)
		return nil
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		if err := decode(p.Elem(), val, key); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return bad(key, "want true or false, got %s", describe(val))
		}
		dst.SetBool(b)
		return nil
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return bad(key, "want a string, got %s (quote it)", describe(val))
		}
		dst.SetString(s)
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := wholeNumber(val)
		switch {
		case !ok:
			return bad(key, "%s is not a whole number", describe(val))
		case n.huge || n.neg && n.abs > 1<<63 || !n.neg && n.abs >= 1<<63 || dst.OverflowInt(n.int64()):
			return bad(key, "%s is out of range", describe(val))
		}
		dst.SetInt(n.int64())
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := wholeNumber(val)
		switch {
		case !ok:
			return bad(key, "%s is not a whole number", describe(val))
		case n.neg && (n.abs != 0 || n.huge):
			return bad(key, "%s is negative", describe(val))
		case n.huge || dst.OverflowUint(n.abs):
			return bad(key, "%s is out of range", describe(val))
		}
		dst.SetUint(n.abs)
		return nil
	case reflect.Float32, reflect.Float64:
		var f float64
		switch v := val.(type) {
		case int:
			f = float64(v)
		case uint64:
			f = float64(v)
		case float64:
			f = v
		default:
			return bad(key, "want a number, got %s", describe(val))
		}
		dst.SetFloat(f)
		return nil
	}
	panic(fmt.Sprintf("config: %s: no decoding for %s", key, t)) // programmer bug: a field of a new kind
}

// decodeTable sets the fields of the struct dst from m, in the order of
// the keys (so the first error is the same every time).
func decodeTable(dst reflect.Value, m map[string]any, key string) error {
	prefix := key
	if prefix != "" {
		prefix += "."
	}
	fields := map[string]int{}
	for f := range dst.Type().Fields() {
		if name := yamlName(f); name != "" {
			fields[name] = f.Index[0]
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		i, ok := fields[k]
		if !ok {
			return unknownKey(prefix+k, keysOf(prefix, dst.Type()))
		}
		if err := decode(dst.Field(i), m[k], prefix+k); err != nil {
			return err
		}
	}
	return nil
}

// number is a whole number: its sign and magnitude (huge: beyond 2^64).
type number struct {
	neg  bool
	abs  uint64
	huge bool
}

func (n number) int64() int64 {
	if n.neg {
		return -int64(n.abs-1) - 1
	}
	return int64(n.abs)
}

// wholeNumber reads a YAML int, or a float with no fractional part.
func wholeNumber(val any) (number, bool) {
	switch v := val.(type) {
	case int:
		if v < 0 {
			return number{neg: true, abs: uint64(-(v + 1)) + 1}, true
		}
		return number{abs: uint64(v)}, true
	case uint64:
		return number{abs: v}, true
	case float64:
		switch {
		case v != math.Trunc(v): // also NaN, ±Inf
			return number{}, false
		case math.Abs(v) >= 1<<64:
			return number{neg: v < 0, huge: true}, true
		case v < 0:
			return number{neg: true, abs: uint64(-v)}, true
		}
		return number{abs: uint64(v)}, true
	}
	return number{}, false
}

// scalarText is a scalar as text (false for a table, a list or null).
func scalarText(val any) (string, bool) {
	switch v := val.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case int:
		return strconv.Itoa(v), true
	case uint64:
		return strconv.FormatUint(v, 10), true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}

// describe shows a settings value in an error.
func describe(val any) string {
	switch v := val.(type) {
	case map[string]any:
		return "a table"
	case []any:
		return "a list"
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(val)
}
