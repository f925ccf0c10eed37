// Package enum is the project's one implementation of typed text enums: a
// Set maps an enum's values to their configuration names, so that String,
// Parse and the text (un)marshalers of every enum (model's kinds, losses,
// inits and resident modes, data's synthetic kinds, rr_prior's targets)
// behave alike. pets.Kind is not one: its names live in the mechanism
// registry (and pets imports nothing of ours).
package enum

import (
	"fmt"
	"slices"
	"strings"
)

// Set is the names of an enum's values. The zero Set knows no value.
type Set[T comparable] struct {
	what  string // "loss", "model.init", ... for errors
	err   error  // wrapped by parse errors (nil: none)
	names []string
	vals  []T
}

// New returns the set of vals named names (same length, names lowercase
// and distinct); what names the enum in errors, which wrap err when it is
// not nil.
func New[T comparable](what string, err error, names []string, vals []T) Set[T] {
	if len(names) != len(vals) {
		panic(fmt.Sprintf("enum: %s: %d names for %d values", what, len(names), len(vals)))
	}
	return Set[T]{what: what, err: err, names: names, vals: vals}
}

// Name returns v's name (false for a value without one).
func (e Set[T]) Name(v T) (string, bool) {
	if i := slices.Index(e.vals, v); i >= 0 {
		return e.names[i], true
	}
	return "", false
}

// String returns v's name, or typ(v) for a value without one.
func (e Set[T]) String(v T, typ string) string {
	if s, ok := e.Name(v); ok {
		return s
	}
	return fmt.Sprintf("%s(%#v)", typ, v)
}

// Values lists the named values, in order (shared: do not modify).
func (e Set[T]) Values() []T { return e.vals }

// Names lists the names, comma-separated, for messages.
func (e Set[T]) Names() string { return strings.Join(e.names, ", ") }

// Parse accepts a name case-insensitively, surrounding space ignored.
func (e Set[T]) Parse(s string) (T, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if i := slices.Index(e.names, t); i >= 0 {
		return e.vals[i], nil
	}
	var zero T
	if e.err != nil {
		return zero, fmt.Errorf("%w: unknown %s %q (want %s)", e.err, e.what, s, e.Names())
	}
	return zero, fmt.Errorf("unknown %s %q (want %s)", e.what, s, e.Names())
}

// Marshal is MarshalText of v: its name, or an error for a value without.
func (e Set[T]) Marshal(v T) ([]byte, error) {
	s, ok := e.Name(v)
	if !ok {
		if e.err != nil {
			return nil, fmt.Errorf("%w: invalid %s %#v", e.err, e.what, v)
		}
		return nil, fmt.Errorf("invalid %s %#v", e.what, v)
	}
	return []byte(s), nil
}

// Unmarshal is UnmarshalText into p (p unchanged on error).
func (e Set[T]) Unmarshal(p *T, b []byte) error {
	v, err := e.Parse(string(b))
	if err == nil {
		*p = v
	}
	return err
}
