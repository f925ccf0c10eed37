package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Keys maps the dotted key of every scalar or list of c to its value, as a
// config file writes it (pets, a list of tables, stays one key): the keys a
// file, a TRAIN_ variable or --set may name.
func (c Config) Keys() map[string]any {
	b, err := yaml.Marshal(c)
	if err != nil {
		panic(err) // programmer bug: Config holds plain values
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, val := range m {
			if sub, ok := val.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = val
		}
	}
	walk("", m)
	return out
}

// removedKeys explain keys earlier versions accepted.
var removedKeys = map[string]string{
	"privacy.secure": "releases made inside train run/fit/sweep are seeded simulations for measurement; " +
		"a release meant to leave the machine comes from `train privatize`, which draws from crypto/rand by default",
}

// CheckKey accepts a dotted key of c (Keys; a pets list element's own keys
// are checked when decoded). The error says why another is refused: a key
// earlier versions accepted, or an unknown one with the closest known key.
func (c Config) CheckKey(key string) error {
	keys := c.Keys()
	if _, ok := keys[key]; ok || key == "pets" || strings.HasPrefix(key, "pets.") || strings.HasPrefix(key, "pets[") {
		return nil
	}
	if why, ok := removedKeys[key]; ok {
		return fmt.Errorf("%s was removed: %s", key, why)
	}
	msg := fmt.Sprintf("unknown key %q", key)
	if near := c.ClosestKey(key); near != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", near)
	}
	return fmt.Errorf("%s", msg)
}

// ClosestKey is the known key (Keys) within edit distance 3 of key, dots
// and underscores alike (so it also corrects a TRAIN_ variable's name,
// lowercased), or "" when none is that close.
func (c Config) ClosestKey(key string) string {
	norm := func(s string) string { return strings.ReplaceAll(s, ".", "_") }
	var keys []string
	for k := range c.Keys() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	best, bestD := "", 4
	for _, k := range keys {
		if d := editDistance(norm(key), norm(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
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
