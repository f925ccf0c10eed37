package config

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// leafKeys lists the dotted key of every scalar or list of Config, from its
// yaml tags (pets, a list of tables, is one key; Invocation is none): the
// keys a TRAIN_ variable or --set may name, sorted.
var leafKeys = sync.OnceValue(func() []string { return keysOf("", reflect.TypeFor[Config]()) })

// keysOf lists the leaf keys of a table of type t whose own key is prefix
// ("" for the top, else ending in "."), sorted.
func keysOf(prefix string, t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		name := yamlName(f)
		switch {
		case name == "":
		case isTable(f.Type):
			out = append(out, keysOf(prefix+name+".", f.Type)...)
		default:
			out = append(out, prefix+name)
		}
	}
	slices.Sort(out)
	return out
}

// yamlName is a field's key: the name of its yaml tag ("" for none or "-").
func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// isTable reports whether a config value of type t is a table of keys (a
// struct that does not parse itself from text).
func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(textUnmarshaler)
}

// removedKeys explain keys earlier versions accepted.
var removedKeys = map[string]string{
	"privacy.secure": "releases made inside train run/fit/sweep are seeded simulations for measurement; " +
		"a release meant to leave the machine comes from `train privatize`, which draws from crypto/rand by default",
}

// keyError refuses a key that names nothing: a removed key with the reason,
// or an unknown one with the closest known key.
type keyError struct{ key, msg string }

func (e *keyError) Error() string { return e.msg }

// Unwrap makes errors.Is(err, ErrConfig) true.
func (e *keyError) Unwrap() error { return ErrConfig }

// unknownKey is the error for key, which names no key; known are the keys
// valid where it stands.
func unknownKey(key string, known []string) error {
	if why, ok := removedKeys[key]; ok {
		return &keyError{key, fmt.Sprintf("%s was removed: %s", key, why)}
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if near := closestKey(key, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return &keyError{key, msg}
}

// checkKey accepts a leaf key (leafKeys) for a TRAIN_ variable or --set.
func checkKey(key string) error {
	if _, ok := slices.BinarySearch(leafKeys(), key); ok {
		return nil
	}
	if strings.HasPrefix(key, "pets.") || strings.HasPrefix(key, "pets[") {
		return &keyError{key, fmt.Sprintf("unknown key %q (set the whole pets list)", key)}
	}
	return unknownKey(key, leafKeys())
}

// closestKey is the key of known that key most likely meant, or "" when
// none is close: one whose last part starts with key's (eps for epsilon),
// else the nearest within edit distance 3, dots and underscores alike (so
// it also corrects a TRAIN_ variable's name, lowercased).
func closestKey(key string, known []string) string {
	norm := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	dir, last := splitKey(key)
	for _, k := range known {
		if d, l := splitKey(k); d == dir && len(last) >= 2 && strings.HasPrefix(l, last) {
			return k
		}
	}
	best, bestD := "", 4
	for _, k := range known {
		if d := editDistance(norm(key), norm(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// splitKey splits a dotted key before its last part.
func splitKey(key string) (dir, last string) {
	i := strings.LastIndexByte(key, '.')
	return key[:i+1], key[i+1:]
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
