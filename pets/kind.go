package pets

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// builtins holds the built-in kinds' schemes by value, filled by the
// package-level declarations of their files (builtin) before init runs.
var builtins []Scheme

// builtin registers s as the built-in kind k and returns k; for the
// package-level declaration in a kind's own file.
func builtin(k Kind, s Scheme) Kind {
	for len(builtins) <= int(k) {
		builtins = append(builtins, nil)
	}
	if builtins[k] != nil {
		panic(fmt.Sprintf("pets: built-in kind %d registered twice", k))
	}
	builtins[k] = s
	return k
}

// entry is a registered kind: its scheme and its spec, read once.
type entry struct {
	scheme Scheme
	spec   Spec
}

// registry holds the entries by Kind; it is replaced, never modified, so
// that lookups need no lock. regMu serializes Register.
var (
	registry atomic.Pointer[[]entry]
	regMu    sync.Mutex
)

// init checks the built-in kinds (every value up to the last taken, each
// spec valid against the kinds before it) and opens the registry.
func init() {
	var es []entry
	for k, s := range builtins {
		if s == nil {
			panic(fmt.Sprintf("pets: no built-in kind %d", k))
		}
		sp := s.Spec()
		if err := checkSpec(sp, es); err != nil {
			panic(fmt.Sprintf("pets: built-in kind %d: %v", k, err))
		}
		es = append(es, entry{s, sp})
	}
	registry.Store(&es)
}

func entries() []entry { return *registry.Load() }

// builtinKind reports whether k is a built-in kind (its value is fixed).
func builtinKind(k Kind) bool { return int(k) < len(builtins) }

// Builtin reports whether k is a built-in kind, whose value is the same in
// every process (None … ARASummary); a kind registered from outside gets the
// next free value, which depends on registration order.
func (k Kind) Builtin() bool { return builtinKind(k) }

// Register adds a mechanism kind and returns its Kind, the next free value.
// Its Spec must have a new lowercase name (letters, digits, '_') and a
// consistent set of parameters and look (checkSpec), and every server of
// the program (Serve: release, audit, pipeline, report) must serve it: a
// kind one of them cannot serve is refused here, with its sentence (an
// *UnsupportedError), never met as a panic in a run. The registry never
// forgets a kind. Call it before the kind is used (e.g. from init or a
// test): lookups see it from then on.
func Register(s Scheme) (Kind, error) {
	regMu.Lock()
	defer regMu.Unlock()
	old := entries()
	if len(old) > 255 {
		return 0, &ParamError{Param: "mechanism", Msg: "the registry is full (256 kinds)"}
	}
	sp := s.Spec()
	if err := checkSpec(sp, old); err != nil {
		return 0, err
	}
	if err := served(sp); err != nil {
		return 0, err
	}
	es := append(old[:len(old):len(old)], entry{s, sp})
	registry.Store(&es)
	return Kind(len(old)), nil
}

// checkSpec validates what a spec says of itself against the kinds
// registered before it: its name, parameters and look. What the packages
// above make of its release and training is theirs to accept (Serve).
func checkSpec(sp Spec, before []entry) error {
	bad := func(format string, args ...any) error {
		return &ParamError{Param: "mechanism", Msg: fmt.Sprintf("%q: ", sp.Name) + fmt.Sprintf(format, args...)}
	}
	if sp.Name == "" || strings.Trim(sp.Name, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		return bad("a name is lowercase letters, digits and '_'")
	}
	for _, e := range before {
		if e.spec.Name == sp.Name {
			return bad("already registered")
		}
	}
	if sp.Look.Name == "" {
		return bad("no display name (Look.Name)")
	}
	switch {
	case sp.Privacy > DPLaplace || sp.Release > ReleaseHistogram || sp.Train.Loss > LossBagSquared || sp.Train.Target > TargetBagMean:
		return bad("an enum of its Spec is out of range")
	case sp.Release.OfValues() && !sp.Takes.Values:
		return bad("releases values and takes none (Takes.Values)")
	case sp.Takes.OptionalEpsilon && !sp.Takes.Epsilon:
		return bad("ε is optional for a kind that takes none")
	case sp.Privacy.DP() && sp.Privacy != Silent && !sp.Takes.Epsilon,
		sp.Takes.Epsilon && (sp.Privacy == NotDP || sp.Privacy == Silent):
		return bad("takes ε exactly when its privacy is ε-label-DP")
	case sp.Release.PerBag() != (sp.Takes.K || sp.Takes.KeyGroups), sp.Takes.K && sp.Takes.KeyGroups:
		return bad("takes a bag size (Params.K) or whole key groups (Takes.KeyGroups), one of them, exactly when it releases per bag")
	}
	if f := sp.Look.Family; f != "" && f != sp.Name && !nameIn(f, before) {
		return bad("its family %q is not registered", f)
	}
	return nil
}

func nameIn(name string, es []entry) bool {
	for _, e := range es {
		if e.spec.Name == name {
			return true
		}
	}
	return false
}

// Kinds lists every registered Kind, in order.
func Kinds() []Kind {
	ks := make([]Kind, len(entries()))
	for i := range ks {
		ks[i] = Kind(i)
	}
	return ks
}

// Valid reports whether k is a registered kind.
func (k Kind) Valid() bool { return int(k) < len(entries()) }

// Spec returns what the kind is (the zero Spec for an invalid kind).
func (k Kind) Spec() Spec {
	if es := entries(); int(k) < len(es) {
		return es[k].spec
	}
	return Spec{}
}

// Scheme returns the kind's scheme (nil for an invalid kind).
func (k Kind) Scheme() Scheme {
	if es := entries(); int(k) < len(es) {
		return es[k].scheme
	}
	return nil
}

// String returns the canonical name ("Kind(N)" for an invalid value).
func (k Kind) String() string {
	return cmp.Or(k.Spec().Name, fmt.Sprintf("Kind(%d)", uint8(k)))
}

// IsLLP reports whether k releases one proportion per bag (llp, llp_lap,
// llp_geom).
func (k Kind) IsLLP() bool { return k.Spec().Release.PerBag() }

// NeedsEpsilon reports whether k takes a privacy parameter ε (rr, llp_lap,
// llp_geom, rr_prior, laplace, rr_bins, value_bags).
func (k Kind) NeedsEpsilon() bool { return k.Spec().Takes.Epsilon }

// OptionalEpsilon reports whether k's ε may be left out (value_bags: exact
// bags).
func (k Kind) OptionalEpsilon() bool { return k.Spec().Takes.OptionalEpsilon }

// OfValues reports whether k releases conversion values only (laplace,
// rr_bins, value_bags, value_prior); none and bot take both.
func (k Kind) OfValues() bool { sp := k.Spec(); return sp.Takes.Values && !sp.Takes.Classes }

// NeedsK reports whether k takes a bag size (the LLP family).
func (k Kind) NeedsK() bool { return k.Spec().Takes.K }

// Family is the kind whose panel k shares in figures split by mechanism
// (Look.Family): RR for rr_prior, k itself for the others.
func (k Kind) Family() Kind {
	if f := k.Spec().Look.Family; f != "" {
		if fk, err := ParseKind(f); err == nil {
			return fk
		}
	}
	return k
}

// ParseKind parses a canonical mechanism name (case-insensitive, surrounding
// space ignored). The error wraps ErrInvalidParam, names the bad value and
// lists the valid names.
func ParseKind(s string) (Kind, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	es := entries()
	names := make([]string, len(es))
	for k, e := range es {
		if t == e.spec.Name {
			return Kind(k), nil
		}
		names[k] = e.spec.Name
	}
	return 0, &ParamError{Param: "mechanism",
		Msg: fmt.Sprintf("unknown mechanism %q (valid: %s)", s, strings.Join(names, ", "))}
}

// MarshalText implements encoding.TextMarshaler (for configs and JSON).
func (k Kind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, &ParamError{Param: "mechanism", Msg: fmt.Sprintf("invalid kind %d", uint8(k))}
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler via ParseKind.
func (k *Kind) UnmarshalText(b []byte) error {
	v, err := ParseKind(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}

// ErrInvalidParam is wrapped by every parameter-validation error of this
// package; use errors.Is(err, ErrInvalidParam).
var ErrInvalidParam = errors.New("pets: invalid parameter")

// ParamError is a validation error that names the offending parameter
// ("mechanism", "kind", "k", "epsilon", "secure", "delta_prime", ...). It
// is the parameter error of the packages built on this one too (package
// audit's ParamError is this type, with Pkg "audit"): Pkg names the package
// that refused ("pets" when empty) and Err the sentinel the error wraps
// (ErrInvalidParam when nil).
type ParamError struct {
	Param string
	Msg   string
	Pkg   string
	Err   error
}

func (e *ParamError) Error() string {
	return cmp.Or(e.Pkg, "pets") + ": invalid " + e.Param + ": " + e.Msg
}

// Unwrap makes errors.Is(err, ErrInvalidParam) true, or errors.Is(err,
// e.Err) when Err is set.
func (e *ParamError) Unwrap() error { return cmp.Or(e.Err, ErrInvalidParam) }

// ValuesSpecer is a Scheme whose kind takes binary labels and conversion
// values with a different release and training on each (ara_summary:
// proportions of counts on binary conversions, means of value sums on
// values). Spec is its answer on binary labels, ValuesSpec on values; the
// two share the name, the privacy, the look and Takes but for Values.
type ValuesSpecer interface {
	ValuesSpec() Spec
}

// SpecOn returns what k is on labels of the grid g: Spec, or on values
// (g non-zero) its ValuesSpec where its scheme has one. A Mechanism's Spec
// is its kind's SpecOn its grid.
func (k Kind) SpecOn(g Grid) Spec {
	if vs, ok := k.Scheme().(ValuesSpecer); ok && !g.IsZero() {
		return vs.ValuesSpec()
	}
	return k.Spec()
}
