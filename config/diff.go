package config

import (
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Flat is c as one value per key, as config.resolved.yaml writes it: every
// leaf key (the dotted keys --set takes) with its value in YAML flow form
// ("0.001", "[64, 64]", "go"), and pets as pets[0], pets[1], … (one table
// each: "{mechanism: rr, epsilon: [1, 4]}").
func (c *Config) Flat() (map[string]string, error) {
	var root yaml.Node
	if err := root.Encode(c); err != nil {
		return nil, err
	}
	leaf := map[string]bool{}
	for _, k := range leafKeys() {
		leaf[k] = true
	}
	out := map[string]string{}
	var walk func(prefix string, n *yaml.Node) error
	walk = func(prefix string, n *yaml.Node) error {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := prefix+n.Content[i].Value, n.Content[i+1]
			switch {
			case key == "pets" && val.Kind == yaml.SequenceNode:
				for j, p := range val.Content {
					s, err := flow(p)
					if err != nil {
						return err
					}
					out[fmt.Sprintf("pets[%d]", j)] = s
				}
			case val.Kind == yaml.MappingNode && !leaf[key]:
				if err := walk(key+".", val); err != nil {
					return err
				}
			default:
				s, err := flow(val)
				if err != nil {
					return err
				}
				out[key] = s
			}
		}
		return nil
	}
	if err := walk("", &root); err != nil {
		return nil, err
	}
	return out, nil
}

// flow writes n on one line (flow style).
func flow(n *yaml.Node) (string, error) {
	var set func(*yaml.Node)
	set = func(n *yaml.Node) {
		if n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode {
			n.Style = yaml.FlowStyle
		}
		for _, c := range n.Content {
			set(c)
		}
	}
	set(n)
	b, err := yaml.Marshal(n)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// Diff lists the keys (Flat) whose values differ between a and b, as "key:
// a → b" in key order; a key one side lacks (a pets entry beyond the
// other's list) shows "(none)" there. Nil when they agree.
func Diff(a, b *Config) ([]string, error) {
	fa, err := a.Flat()
	if err != nil {
		return nil, err
	}
	fb, err := b.Flat()
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var out []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range keys {
			if !yield(k) {
				return
			}
		}
	}) {
		va, oka := fa[k]
		vb, okb := fb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(none)"
		}
		if !okb {
			vb = "(none)"
		}
		out = append(out, k+": "+va+" → "+vb)
	}
	return out, nil
}
