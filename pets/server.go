package pets

import (
	"errors"
	"fmt"
	"sync"
)

// Servers. A package of the program that serves mechanisms — makes their
// releases (release), audits them (audit), trains on them (pipeline),
// shows them (report) — says which it serves: Supports(Spec) error, nil
// or a sentence saying what it cannot do with that spec (the model is
// dp_accounting's supports(event) and UnsupportedEventError). It hands
// the function to Serve from a package-level declaration
// (var _ = pets.Serve("audit", Supports)), and Register asks every server
// before it adds a kind, so that a kind a server cannot serve is refused
// at registration, naming the server, never met as a panic in a run.

// ErrUnsupported is wrapped by every *UnsupportedError.
var ErrUnsupported = errors.New("pets: a server cannot serve the mechanism")

// UnsupportedError is Register's refusal of a kind a server cannot serve.
type UnsupportedError struct {
	Server    string // "release", "audit", "pipeline", "report"
	Mechanism string // the kind's name
	Err       error  // the server's sentence
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("pets: mechanism %q cannot be registered: the %s does not serve it: %v", e.Mechanism, e.Server, e.Err)
}

func (e *UnsupportedError) Unwrap() []error { return []error{ErrUnsupported, e.Err} }

type server struct {
	name     string
	supports func(Spec) error
}

var (
	serversMu sync.Mutex
	servers   []server
)

// Serve adds a server: name says what it is in a sentence ("audit"),
// supports whether it serves a spec. Every kind registered so far (the
// built-in kinds, at least) must be served: one that is not is a
// programmer bug of the server or the kind, and Serve panics. It returns
// true, for a package-level declaration.
func Serve(name string, supports func(Spec) error) bool {
	serversMu.Lock()
	defer serversMu.Unlock()
	for _, e := range entries() {
		if err := supports(e.spec); err != nil {
			panic((&UnsupportedError{Server: name, Mechanism: e.spec.Name, Err: err}).Error())
		}
	}
	servers = append(servers, server{name, supports})
	return true
}

// served returns the first server's refusal of sp, or nil.
func served(sp Spec) error {
	serversMu.Lock()
	defer serversMu.Unlock()
	for _, s := range servers {
		if err := s.supports(sp); err != nil {
			return &UnsupportedError{Server: s.name, Mechanism: sp.Name, Err: err}
		}
	}
	return nil
}
