package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// configSep separates the key=value pairs of Run.Config.
const configSep = "; "

// ParseConfig reads Run.Config's form, "key=value; key=value", into a map
// (a part without "=" is left out; "" gives an empty map).
func ParseConfig(s string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split(s, configSep) {
		if k, v, ok := strings.Cut(part, "="); ok && strings.TrimSpace(k) != "" {
			m[strings.TrimSpace(k)] = v
		}
	}
	return m
}

// FormatConfig writes m in Run.Config's form, keys in order.
func FormatConfig(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, configSep)
}

// absent stands for a key one config does not have (e.g. model.hidden of
// a model without hidden layers).
const absent = "(none)"

// ConfigDiff lists the keys whose values differ between two configs in
// Run.Config's form, as "key: a → b" in key order (a key one side lacks
// shows "(none)" there). Nil when either is unknown ("": a result written
// before configs were recorded) or they agree.
func ConfigDiff(a, b string) []string {
	if a == "" || b == "" {
		return nil
	}
	ma, mb := ParseConfig(a), ParseConfig(b)
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		va, oka := ma[k]
		vb, okb := mb[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = absent
		}
		if !okb {
			vb = absent
		}
		out = append(out, k+": "+va+" → "+vb)
	}
	return out
}

// differingKeys returns the keys whose values are not the same in all of
// configs (known ones only; a key some lack differs), in order.
func differingKeys(configs []string) []string {
	var ms []map[string]string
	for _, c := range configs {
		if c != "" {
			ms = append(ms, ParseConfig(c))
		}
	}
	keys := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			keys[k] = true
		}
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		for _, m := range ms[1:] {
			v, ok := m[k]
			v0, ok0 := ms[0][k]
			if ok != ok0 || v != v0 {
				out = append(out, k)
				break
			}
		}
	}
	return out
}

// only keeps the keys of config (Run.Config's form) that are in keys; a
// key it lacks shows "(none)".
func only(config string, keys []string) string {
	if config == "" || len(keys) == 0 {
		return ""
	}
	m := ParseConfig(config)
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		} else {
			out[k] = absent
		}
	}
	return FormatConfig(out)
}

// joinNames joins distinct non-empty names in order.
func joinNames(names map[string]bool) string {
	var out []string
	for _, n := range sortedKeys(names) {
		if n != "" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Origin is one way results were made: a provenance shared by Runs runs
// (ConfigName is their config's name). Started is the earliest.
type Origin struct {
	Provenance
	ConfigName string
	Runs       int
}

// Origins groups runs by what made them (tool, revision, command,
// environment, config file and summary, config name), earliest first;
// runs written before provenance was recorded form one origin with an
// empty Provenance.
func Origins(runs []Run) []Origin {
	by := map[string]*Origin{}
	var out []*Origin
	for _, r := range runs {
		var p Provenance
		if r.Provenance != nil {
			p = *r.Provenance
		}
		key := strings.Join([]string{p.Tool, p.Revision, p.Command, strings.Join(p.Env, "\x00"), p.ConfigFile, p.ConfigSummary, r.ConfigName}, "\x01")
		o := by[key]
		if o == nil {
			o = &Origin{Provenance: p, ConfigName: r.ConfigName}
			by[key] = o
			out = append(out, o)
		}
		if p.Started != "" && (o.Started == "" || p.Started < o.Started) {
			o.Started = p.Started
		}
		o.Runs++
	}
	slices.SortStableFunc(out, func(a, b *Origin) int { return strings.Compare(a.Started, b.Started) })
	res := make([]Origin, len(out))
	for i, o := range out {
		res[i] = *o
	}
	return res
}

// formatFloats writes a list of numbers as a config writes it,
// "[0.001, 0.01]" (the shortest decimals that read back exactly); nil:
// "".
func formatFloats(v []float64) string {
	if v == nil {
		return ""
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.FormatFloat(x, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// parseFloats reads formatFloats' form back ("" and "[]": nil).
func parseFloats(s string) ([]float64, error) {
	in, ok := strings.CutPrefix(s, "[")
	if s == "" {
		return nil, nil
	}
	in, ok2 := strings.CutSuffix(in, "]")
	if !ok || !ok2 {
		return nil, fmt.Errorf("report: %q is not a list of numbers [a, b, …]", s)
	}
	if strings.TrimSpace(in) == "" {
		return nil, nil
	}
	var out []float64
	for _, p := range strings.Split(in, ",") {
		x, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, fmt.Errorf("report: %q is not a list of numbers: %w", s, err)
		}
		out = append(out, x)
	}
	return out, nil
}
